"""Snapshots of the session screen (each SVG reviewed by eye before it was accepted).

Deterministic: fixed episode and summary timestamps (tests/tui/_session_fixtures.py), times
shown in UTC (TZ pinned), no backend probe, a fixed terminal size.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent
from textual.widgets._toast import Toast

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.session import SessionScreen
from tests.tui._session_fixtures import DAG_IDS, IN_USE, app_for, build_dag_session, build_empty_session
from tests.tui.conftest import screen_shown, wait_for, wait_until_shown

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
    """The app on the fixture sessions as sessions in use (``IN_USE``: the tree shows their fresh tail)."""
    settings = Settings(db_path=Path("hiermem.db"), config_path=tmp / "config.toml", policy=IN_USE)
    return app_for(settings, store, follow=False)


Step = tuple[str, Callable[[SessionScreen], bool]]
"""A key to press, and the state the screen is in once the key has been handled."""


def cursor_on(key: str) -> Callable[[SessionScreen], bool]:
    """The tree's cursor is on ``key`` and the panes show it."""
    return lambda screen: screen.selected is not None and screen.selected.key == key


def expanded(key: str) -> Callable[[SessionScreen], bool]:
    def check(screen: SessionScreen) -> bool:
        node = screen.dag_tree.node_for(key)
        return node is not None and node.is_expanded and bool(node.children)
    return check


def _open(session_id: str, steps: Sequence[Step], *shown: str):  # type: ignore[no-untyped-def]
    """Open a session, press each step's key and wait for its state, then wait until the picture
    is settled and shows ``shown`` (and the footer's keys)."""
    async def run_before(pilot: Pilot) -> None:
        pilot.app.open_session(session_id)  # type: ignore[attr-defined]
        screen = await screen_shown(pilot, SessionScreen)
        for key, done in steps:
            await pilot.press(key)
            await wait_for(pilot, lambda: done(screen), show=lambda: screen.selected)
        pilot.app.clear_notifications()  # toasts time out: keep them out of the picture
        await wait_for(pilot, lambda: not pilot.app.screen.query(Toast))
        await wait_until_shown(pilot, "R Re-summarise", "esc Back", *shown)

    return run_before


BRIEF = ("About: moving the config loader to one TOML file that is read once at start.\n"
         "Problem: KeyError: 'db_path' on an empty file → fix: a default for every field\n"
         "Decided: the environment wins over the file (why: the user deploys with env vars)\n"
         "Made: config.py, load_settings, test_config.py\n"
         "Ended: asked to add a --config flag → the argparse change, answered")


def test_session_dag_with_a_leaf_selected(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A three-level DAG with its brief on top, D0 and C0 open, the re-summarised leaf 1 selected (its old
    version listed)."""
    store.briefs.write("dag", title="Refactoring the config loader", about=BRIEF.split("\n")[0], text=BRIEF,
                       first_seq=0, last_seq=59, tier="normal", backend="ollama", model="llama3.2:3b",
                       prompt_version="brief-v1", tokens=70, llm_seconds=1.5, run_id=None)
    d0, c0 = f"s:{DAG_IDS['D0']}", f"s:{DAG_IDS['C0']}"
    run = _open("dag", [("enter", expanded(d0)), ("down", cursor_on(c0)), ("enter", expanded(c0)),
                        ("down", cursor_on(f"s:{DAG_IDS['L0']}")), ("down", cursor_on(f"s:{DAG_IDS['L1']}"))],
                "Second version of leaf 1.", "v2 s_leaf_1", "Refactoring the config loader",
                "#0–59 · normal · ollama llama3.2:3b", "Ended: asked to add a --config flag")
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run)


def test_session_fallback_in_the_transcript(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`f` found the first fallback leaf; `t` shows its episodes highlighted in the transcript."""
    def transcript_on_leaf_2(screen: SessionScreen) -> bool:
        return screen.query_one(TabbedContent).active == "tab-transcript" and screen.transcript.cursor == 12

    run = _open("dag", [("f", cursor_on(f"s:{DAG_IDS['L2']}")), ("t", transcript_on_leaf_2)],
                "#12  user", "message 17:")
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run)


def test_session_without_summaries(snap_compare, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The empty state: raw episodes only, and how to compact them."""
    run = _open("raw", [], "No summaries yet", "hiermem-tui compact --session raw", "fresh tail  #14–29")
    assert snap_compare(_app(store, tmp_path), terminal_size=SIZE, run_before=run)
