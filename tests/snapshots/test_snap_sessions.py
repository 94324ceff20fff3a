"""Snapshots of the home screen, its empty state and the help screen (reviewed by eye before accepting).

Deterministic on purpose: fixed timestamps and a fixed clock (no "x minutes ago" against the
real now), a relative DB path (the header shows it), no backend probe (a fixed status is set).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.backend_status import BackendStatus
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.backlog_view import BacklogRunState, Waiting
from hiermem_tui.tui.screens.help import HelpScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.sessions_table import SessionsTable
from tests.tui.conftest import NOW, STANDARD, SessionSpec, app_for, build_db, screen_shown, wait_for, wait_until_shown

SIZE = (120, 36)
OK_BACKEND = BackendStatus(
    host="http://127.0.0.1:11434", reachable=True, version="0.9.6",
    installed=("llama3.2:latest", "qwen2.5:3b"), loaded=("llama3.2:latest",),
)
MORE = [
    SessionSpec(
        "delta", "Delta: migrate the payments service from Flask to FastAPI without downtime (part 2)", 64,
        NOW - timedelta(days=9), "claude",
        leaves=[(i * 8, i * 8 + 7, "normal") for i in range(6)], condense=[(0, 1, 2, 3)],
    ),
    SessionSpec("epsilon", "Epsilon: 日本語のタイトル — wide characters", 12, NOW - timedelta(hours=2), "chatgpt"),
    SessionSpec(
        "zeta", "Zeta: fully compacted research thread", 48, NOW - timedelta(days=420), "sharegpt",
        leaves=[(i * 8, i * 8 + 7, "aggressive" if i == 2 else "normal") for i in range(6)],
    ),
    SessionSpec(
        "eta", "Eta: model down all afternoon", 30, NOW - timedelta(days=3, hours=2), "codex",
        leaves=[(0, 9, "fallback"), (10, 19, "fallback")],
    ),
    SessionSpec("theta", "", 3, NOW - timedelta(days=60), "jsonl"),
]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Work in tmp_path so the header shows a stable relative DB path."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def _app(store: Store, tmp: Path) -> HiermemApp:
    return app_for(Settings(db_path=Path("hiermem.db"), config_path=tmp / "config.toml"), store, follow=False)


async def _table(pilot: Pilot, rows: int) -> SessionsTable:
    """The sessions screen with its footer, its table holding ``rows`` rows and its title counting them."""
    table = (await screen_shown(pilot, SessionsScreen)).table
    await wait_for(pilot, lambda: table.row_count == rows)
    await wait_until_shown(pilot, f"Sessions {rows}")
    return table


def _measure(store: Store) -> None:
    """Fidelity figures: zeta lost much of what its sources named (flagged), delta kept it."""
    for sid, kept in (("zeta", 7), ("delta", 19)):
        for s in store.dag.summaries(sid):
            store.dag.set_fidelity(s.id, Fidelity(20, kept if s.first_seq == 16 else 20, ("lost_name",), ()))


def test_sessions_screen_with_data(snap_compare, in_tmp: Path) -> None:
    store = build_db(Path("hiermem.db"), [*STANDARD, *MORE])
    _measure(store)

    async def run_before(pilot: Pilot) -> None:
        table = await _table(pilot, 8)
        pilot.app.backend_state = OK_BACKEND  # type: ignore[attr-defined]
        await pilot.press("j")
        await wait_for(pilot, lambda: table.cursor_row == 1)
        await wait_until_shown(pilot, "● Ollama 0.9.6 · llama3.2:latest (loaded)", "id beta · source chatgpt", "⏎ Open")

    assert snap_compare(_app(store, in_tmp), terminal_size=SIZE, run_before=run_before)
    store.close()


def test_sessions_screen_with_a_backlog_in_the_background(snap_compare, in_tmp: Path) -> None:
    """The state column (up to date · N waiting · queued · next · running) and the backlog's line."""
    store = build_db(Path("hiermem.db"), [*STANDARD, *MORE])

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, HiermemApp)
        await _table(pilot, 8)
        app.backend_state = OK_BACKEND
        app.backlog_waiting = Waiting({"delta": 3, "eta": 4, "epsilon": 2, "alpha": 1}, 10, 1234.0, guess=False)
        app.backlog_run = BacklogRunState(1, "running", running=("delta",), queued=frozenset({"eta", "epsilon"}),
                                          next_up="eta", sessions_done=1, sessions=4, summaries_done=2,
                                          summaries=12, left_s=1100.0)
        await wait_until_shown(pilot, "State", "running", "queued",
                               "Backlog ▶ 2/12 summaries", "Stop backlog")

    assert snap_compare(_app(store, in_tmp), terminal_size=SIZE, run_before=run_before)
    store.close()


def test_sessions_screen_empty_state(snap_compare, in_tmp: Path) -> None:
    store = Store.open(Path("hiermem.db"))

    async def run_before(pilot: Pilot) -> None:
        await screen_shown(pilot, SessionsScreen)
        await wait_until_shown(pilot, "No sessions yet", "hiermem-tui --demo", "q Quit")

    assert snap_compare(_app(store, in_tmp), terminal_size=SIZE, run_before=run_before)
    store.close()


def test_sessions_screen_narrow_and_backend_down(snap_compare, in_tmp: Path) -> None:
    store = build_db(Path("hiermem.db"), [*STANDARD, *MORE])

    async def run_before(pilot: Pilot) -> None:
        table = await _table(pilot, 8)
        pilot.app.backend_state = BackendStatus(  # type: ignore[attr-defined]
            host="http://127.0.0.1:11434", reachable=False,
            error="Ollama not reachable at http://127.0.0.1:11434 (connection refused)",
        )
        await pilot.press("s")  # last activity → title
        await wait_for(pilot, lambda: table.sort == "title")
        await pilot.press("s")  # title → source
        await wait_for(pilot, lambda: table.sort == "source")
        await wait_until_shown(pilot, "▲ Ollama not reachable", "Source ▲", "Beta: plan the garden", "⏎ Open")

    assert snap_compare(_app(store, in_tmp), terminal_size=(80, 24), run_before=run_before)
    store.close()


def test_help_screen(snap_compare, in_tmp: Path) -> None:
    store = build_db(Path("hiermem.db"), STANDARD)

    async def run_before(pilot: Pilot) -> None:
        await _table(pilot, 3)
        await pilot.press("question_mark")
        await screen_shown(pilot, HelpScreen)
        # the help is Markdown: its blocks are mounted a while after the screen
        await wait_until_shown(pilot, "hierarchical summary DAG", "first / last row", "esc Close")

    assert snap_compare(_app(store, in_tmp), terminal_size=SIZE, run_before=run_before)
    store.close()
