"""The demo as the app shows it: the model's recorded summaries, the extractive ones beside them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from hiermem_tui.config import Settings
from hiermem_tui.demo.replay import REPLAY_BACKEND, Recording, answers_path
from hiermem_tui.demo_db import build_demo_db
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.versions import VersionsScreen
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.widgets.backend_status import BackendIndicator
from tests.fakeollama import closed_port_url
from tests.tui._session_fixtures import app_for
from tests.tui.conftest import screen_shown, wait_for, wait_for_text

pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_demo_db(tmp_path / "demo.db")  # it runs its own event loop: not inside the test's


async def test_the_demo_shows_who_made_a_summary_and_its_extractive_version(tmp_path: Path, db: Path) -> None:
    model = Recording.load(answers_path()).model
    store = Store.open(db)
    try:
        leaf = next(s for s in store.dag.summaries("demo-flaky-retry-test") if s.depth == 0)
        assert leaf.backend == REPLAY_BACKEND
        app = app_for(Settings(db_path=db, config_path=tmp_path / "config.toml"), store)
        async with app.run_test(size=(150, 40)) as pilot:
            app.open_session("demo-flaky-retry-test")
            screen = await screen_shown(pilot, SessionScreen)
            await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(leaf.id))
            await wait_for_text(pilot, f"{REPLAY_BACKEND} · {model}")
            # the detail pane counts the extractive version a whole-session redo replaced (no link joins them)
            await wait_for_text(pilot, "2 versions · 1 superseded")
            await pilot.press("v")
            versions = await screen_shown(pilot, VersionsScreen)
            await wait_for(pilot, lambda: len(versions.versions) == 2)
            old, new = versions.versions
            assert (old.status, old.backend, new.status, new.id) == ("superseded", "extractive", "active", leaf.id)
            assert versions.query_one(OptionList).option_count == 2
            await wait_for_text(pilot, f"{REPLAY_BACKEND}/{model}", "extractive", "○ superseded", "● active")
    finally:
        store.close()


async def test_the_demo_says_it_replays_recorded_answers_instead_of_warning_that_ollama_is_down(
    tmp_path: Path, db: Path
) -> None:
    """Issue 36 item 11: ``--demo`` needs no model, yet its top bar warned "Ollama not reachable"."""
    store = Store.open(db)
    try:
        settings = Settings(db_path=db, config_path=tmp_path / "config.toml", ollama_host=closed_port_url())
        app = make_app(settings, store, demo=True, follow=False)  # probes Ollama as the CLI's app does
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: app.backend_state is not None and not app.backend_probing)
            assert app.backend_state is not None and not app.backend_state.reachable
            text = await wait_for_text(pilot, "demo: replays a model's recorded answers, no model needed")
            assert "not reachable" not in text and "▲" not in text
            indicator = app.screen.query_one(BackendIndicator)
            assert indicator.has_class("-ok") and not indicator.has_class("-warn")
    finally:
        store.close()
