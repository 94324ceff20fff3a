"""Switching theme re-resolves every Line-API widget's palette (no stale colours)."""

from __future__ import annotations

from pathlib import Path

from hiermem_tui.config import Settings
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.widgets.coverage_map import CoverageMap
from hiermem_tui.tui.widgets.dag_tree import DagTree
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.transcript import Transcript
from tests.tui._session_fixtures import app_for, build_dag_session, open_store
from tests.tui.conftest import screen_shown, wait_for


async def test_theme_change_refreshes_palettes(tmp_path: Path) -> None:
    _, store = open_store(tmp_path)
    build_dag_session(store)
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml")
    app = app_for(settings, store)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            app.open_session("dag")
            screen = await screen_shown(pilot, SessionScreen)
            widgets = [screen.query_one(cls) for cls in (CoverageMap, DagTree, DetailPane, Transcript)]
            before = [w.palette for w in widgets]
            app.theme = "textual-light"
            await wait_for(pilot, lambda: all(w.palette is not old for w, old in zip(widgets, before)))
            after = [w.palette for w in widgets]
            for w, old, new in zip(widgets, before, after):
                assert new is not old, type(w).__name__
                assert new == type(new).from_app(app)
            assert before[0] != after[0]  # a light theme really has other colours
    finally:
        store.close()
