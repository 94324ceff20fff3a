"""Snapshots of the session screen (each SVG reviewed by eye before it was accepted).

Deterministic: fixed episode and summary timestamps (tests/tui/_session_fixtures.py), times
shown in UTC (TZ pinned), no backend probe, a fixed terminal size.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from tests.tui._session_fixtures import app_for, build_dag_session, build_empty_session

SIZE = (140, 40)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)
    store = Store.open(tmp_path / "hiermem.db")
    build_dag_session(store)
    build_empty_session(store)
    yield store
    store.close()
    monkeypatch.undo()
    time.tzset()


def _app(store: Store, tmp: Path) -> HiermemApp:
    return app_for(Settings(db_path=Path("hiermem.db"), config_path=tmp / "config.toml"), store, follow=False)


def _open(session_id: str, *keys: str):  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        pilot.app.open_session(session_id)  # type: ignore[attr-defined]
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        pilot.app.clear_notifications()  # toasts time out: keep them out of the picture
        await pilot.pause()

    return run_before


def test_session_dag_with_a_leaf_selected(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A three-level DAG, D0 and C0 open, the re-summarised leaf 1 selected (its old version listed)."""
    run = _open("dag", "enter", "down", "enter", "down", "down")
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run)


def test_session_fallback_in_the_transcript(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`f` found the first fallback leaf; `t` shows its episodes highlighted in the transcript."""
    run = _open("dag", "f", "t")
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run)


def test_session_without_summaries(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The empty state: raw episodes only, and how to compact them."""
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=_open("raw"))
