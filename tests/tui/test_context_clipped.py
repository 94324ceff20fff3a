"""The context screen under a budget smaller than the newest message: its head, clipped and said so."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from hiermem_tui.context import build_context, render_context
from hiermem_tui.store import NewEpisode
from hiermem_tui.tui.screens.context import ContextScreen
from hiermem_tui.tui.screens.session import SessionScreen
from tests.conftest import T0
from tests.tui._session_fixtures import app_for, open_store
from tests.tui.conftest import wait_for, wait_for_text

pytestmark = pytest.mark.usefixtures("utc_tz")
LONG = " ".join(f"line {i}: the linker ran out of memory again." for i in range(400))


async def test_a_small_budget_shows_the_newest_message_clipped(tmp_path: Path) -> None:
    settings, store = open_store(tmp_path)
    try:
        store.sessions.upsert("big", title="A long paste", source="test", created_at=T0)
        store.episodes.append("big", [NewEpisode("0", "user", "why does the build fail?", T0),
                                      NewEpisode("1", "assistant", LONG, T0)])
        app = app_for(settings, store)
        async with app.run_test(size=(120, 36)) as pilot:
            app.open_session("big")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
            await pilot.press("m")
            await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.view is not None)
            screen: ContextScreen = app.screen  # type: ignore[assignment]
            await pilot.press("b")
            budget = screen.query_one("#context-budget", Input)
            await wait_for(pilot, lambda: budget.has_focus)
            await pilot.press(*"50", "enter")
            await wait_for(pilot, lambda: screen.view is not None and screen.view.budget == 50)
            view = screen.view
            assert view is not None and view == build_context(store, "big", 50)
            clipped = view.clipped
            assert clipped is not None and len(view.items) == 1 and clipped.tokens <= 50
            head = LONG[: clipped.clip_chars]
            text = await wait_for_text(pilot, "(clipped to the budget)", "item clipped to fit",
                                       f"{clipped.tokens} of 4.8k tok", head.rsplit(" ", 1)[-1] + "…")
            assert "every episode, once" not in text
            await pilot.press("y")
            await wait_for(pilot, lambda: app.clipboard != "")
            assert app.clipboard == "".join(render_context(store, view)) and head + "…\n" in app.clipboard
    finally:
        store.close()
