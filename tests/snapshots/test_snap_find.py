"""Snapshots of search, stats, "what the model sees" and run history (each SVG reviewed by eye).

Deterministic: the DAG fixture pins every episode and summary time, TZ is UTC, runs get fixed
start times, and each picture is taken once the screen shows the rows it is about.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.context import ContextScreen
from hiermem_tui.tui.screens.run_history import RunHistoryScreen
from hiermem_tui.tui.screens.search import SearchScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.screens.stats import StatsScreen
from tests.tui._session_fixtures import DAG_IDS, app_for, build_dag_session
from tests.tui.conftest import screen_shown, wait_for, wait_until_shown

SIZE = (120, 36)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)  # a stable relative DB path in the header
    store = Store.open(Path("hiermem.db"))
    build_dag_session(store)
    yield store
    store.close()
    monkeypatch.undo()
    time.tzset()


def _app(store: Store, tmp: Path) -> HiermemApp:
    return app_for(Settings(db_path=Path("hiermem.db"), config_path=tmp / "config.toml"), store, follow=False)


async def _open_dag(pilot: Pilot) -> SessionScreen:
    await screen_shown(pilot, SessionsScreen)
    pilot.app.open_session("dag")  # type: ignore[attr-defined]
    screen = await screen_shown(pilot, SessionScreen)
    await wait_for(pilot, lambda: screen.selected is not None)
    return screen


def test_search_hits(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Hits for a word every leaf has, with literal markup in the snippets and the preview."""

    async def run_before(pilot: Pilot) -> None:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("f")
        screen = await screen_shown(pilot, SearchScreen)
        box = screen.query_one("#search-input", Input)
        box.cursor_blink = False
        box.value = "BOLD quit"
        await wait_for(pilot, lambda: len(screen.hits) > 0)
        await wait_until_shown(pilot, "[bold]BOLD[/bold]")

    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run_before)


def test_stats_of_the_session(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Raw vs. what a model sees, summaries per depth as bars, tiers, fidelity and runs."""

    async def run_before(pilot: Pilot) -> None:
        await _open_dag(pilot)
        await pilot.press("i")
        await screen_shown(pilot, StatsScreen)
        await wait_until_shown(pilot, "per depth", "compression")

    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run_before)


def test_what_the_model_sees(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The top summaries and the raw tail in order, each with its tokens and what it covers."""

    async def run_before(pilot: Pilot) -> None:
        await _open_dag(pilot)
        await pilot.press("m")
        screen = await screen_shown(pilot, ContextScreen)
        await wait_for(pilot, lambda: screen.view is not None and len(screen.rows) > 0)
        screen.query_one("#context-budget", Input).cursor_blink = False
        await wait_until_shown(pilot, "budget", "Items, oldest first")

    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run_before)


def test_run_history(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The newest run (a repair) with its rejections and the summaries it made; an older failed one."""
    failed = store.runs.start("dag", "full", "ollama", "llama3.2")
    store.runs.finish(failed.id, "failed", wall_seconds=1.0, error="the server went away: [b]gone[/b]")
    repair = store.runs.start("dag", "repair", "ollama", "llama3.2", planned=2)
    store.runs.finish(repair.id, "done", wall_seconds=42.0)
    with store.db.transaction() as conn:  # fixed ids and times: the picture must not depend on the clock
        conn.execute("UPDATE runs SET id = 'r_failed', started_at = '2026-01-01T09:00:00.000Z', finished_at = "
                     "'2026-01-01T09:00:01.000Z' WHERE id = ?", (failed.id,))
        conn.execute("UPDATE runs SET id = 'r_repair', started_at = '2026-01-02T10:00:00.000Z', finished_at = "
                     "'2026-01-02T10:00:42.000Z', summaries_created = 2, normal = 1, aggressive = 1, llm_seconds = 38.5,"
                     " rejections = '{\"echo\": 2, \"cut_off\": 1}' WHERE id = ?", (repair.id,))
        conn.execute("UPDATE summaries SET run_id = 'r_repair' WHERE id IN (?, ?)", (DAG_IDS["L6"], DAG_IDS["L1v1"]))

    async def run_before(pilot: Pilot) -> None:
        await _open_dag(pilot)
        await pilot.press("h")
        screen = await screen_shown(pilot, RunHistoryScreen)
        await wait_for(pilot, lambda: len(screen.runs) == 2 and len(screen.made) == 2)
        await wait_until_shown(pilot, "cut_off ×1, echo ×2", "r_repair")

    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run_before)


def test_stats_with_a_doctor_result(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole file's stats with the last doctor result kept in the file: two problems, by session and id."""
    from dataclasses import replace

    leaf = store.db.conn.execute(
        "SELECT id FROM summaries WHERE session_id = 'dag' AND depth = 0 AND status = 'active' ORDER BY first_seq"
    ).fetchone()[0]
    store.db.conn.execute("DELETE FROM summary_sources WHERE summary_id = ?", (leaf,))
    store.db.conn.execute("UPDATE sessions SET token_count = token_count + 1 WHERE id = 'dag'")
    report = store.health.check()
    assert {p.kind for p in report.problems} >= {"aggregates", "edges_missing"}
    store.health.record(replace(report, seconds=1.25), at="2026-05-02T10:00:00Z")  # a fixed time and duration

    async def run_before(pilot: Pilot) -> None:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("i")
        await screen_shown(pilot, StatsScreen)
        await wait_until_shown(pilot, "per depth", "fixable")

    assert snap_compare(_app(store, tmp_path), terminal_size=(120, 44), run_before=run_before)
