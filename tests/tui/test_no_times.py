"""Sources that keep no times (ShareGPT, oterm, some JSONL): the times the store filled in are shown
as unknown, never as "Jan 1 2000", and such sessions are listed by when they were imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from hiermem_tui.config import Settings
from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import app_for, screen_shown, screen_text, wait_for, wait_for_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = pytest.mark.usefixtures("utc_tz")


def test_filled_in_times_format_as_unknown() -> None:
    assert fmt.timestamp("2000-01-01T00:00:07.000Z") == "—"
    assert fmt.time_range("2000-01-01T00:00:00.000Z", "2000-01-01T00:03:00.000Z") == "no times"
    assert fmt.timestamp("2024-03-01T09:00:05.000Z", ref_year=2024) == "Mar 1 09:00"  # real times unchanged


def test_untimed_sessions_carry_their_import_time(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "h.db")
    try:
        import_paths(store, [FIXTURES / "jsonl" / "two_sessions.jsonl"])
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])
        listed = store.sessions.page(sort="updated", descending=True)
        kinds = [(s.source, s.times_known) for s in listed]
        # imported last and now: first in the activity order, ahead of the 2024 chats
        assert kinds[0] == ("sharegpt", False) and kinds[-1] == ("jsonl", True)
        assert all(known == (source == "jsonl") for source, known in kinds)
        untimed = [s for s in listed if not s.times_known]
        assert all(s.created_at.startswith("2000-01-01") and not s.updated_at.startswith("2000") for s in untimed)
        before = [(s.id, s.updated_at) for s in store.sessions.page()]
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])  # again: nothing moves
        assert [(s.id, s.updated_at) for s in store.sessions.page()] == before
    finally:
        store.close()


async def test_the_list_and_the_time_axis_say_the_times_are_unknown(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "h.db")
    try:
        import_paths(store, [FIXTURES / "jsonl" / "two_sessions.jsonl"])
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])
        untimed = next(s for s in store.sessions.page() if not s.times_known)
        app = app_for(Settings(db_path=store.path, config_path=tmp_path / "config.toml"), store)
        async with app.run_test(size=(140, 36)) as pilot:
            table = (await screen_shown(pilot, SessionsScreen)).table
            await wait_for(pilot, lambda: table.row_count == store.sessions.count())
            text = await wait_for_text(pilot, "sharegpt", "Planning the vegetable beds", "no times (listed by import)")
            assert "2000" not in text and "Jan 1" not in text
            rows = [line for line in text.splitlines() if "  sharegpt  " in line]  # the table's rows
            assert rows and all("—" in line and "ago" not in line for line in rows), rows
            app.open_session(untimed.id)
            screen = await screen_shown(pilot, SessionScreen)
            await wait_for(pilot, lambda: screen.session is not None)
            await pilot.press("s")
            await wait_for(pilot, lambda: any("time axis cannot apply" in n.message for n in app._notifications),
                           show=lambda: [n.message for n in app._notifications])
            assert screen.map.scale == "episodes"
            assert "Jan 1" not in screen_text(app)
    finally:
        store.close()
