"""Snapshots of runs from the UI (each SVG reviewed by eye before it was accepted).

Deterministic: fixed episode times, TZ pinned, the fake Ollama server answers fixed texts,
the run is paused mid-way by a hanging model call, and the indicator's spinner frame and
tokens/s are frozen (``RunIndicator.freeze``). New summaries' write times never show: the
tree cursor sits on the fresh tail, and the compare view does not print them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.compaction import Runner
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import ExtractiveBackend, Summariser
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.compare import CompareScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.versions import VersionsScreen
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from tests.fakeollama import FakeOllama, Hang, Reply, longer_than_input
from tests.tui._session_fixtures import DAG_IDS, add_episodes, app_for, build_dag_session
from tests.tui.conftest import wait_for

SIZE = (140, 40)
POLICY = Policy(fresh_tail=16, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
                condense_fanout=3, condensed_target_tokens=80, fidelity_threshold=0.0)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    store = Store.open(tmp_path / "hiermem.db")
    add_episodes(store, "work", "Plan the garden", 30)
    build_dag_session(store)
    yield store
    store.close()
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:0.5b"), loaded=("llama3.2:latest",)) as server:
        yield server


def _app(store: Store, tmp: Path, fake: FakeOllama) -> HiermemApp:
    settings = Settings(db_path=store.path, config_path=tmp / "config.toml", ollama_host=fake.url, policy=POLICY)
    return app_for(settings, store, follow=False)


async def _open(pilot: Pilot, session_id: str) -> SessionScreen:
    app = pilot.app
    app.open_session(session_id)  # type: ignore[attr-defined]
    await pilot.pause()
    assert isinstance(app.screen, SessionScreen)
    return app.screen


async def _dialog(pilot: Pilot, key: str) -> RunDialog:
    app = pilot.app
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
    dialog = app.screen
    assert isinstance(dialog, RunDialog)
    await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing and dialog.counts is not None)
    return dialog


async def _settle(pilot: Pilot) -> None:
    pilot.app.clear_notifications()
    await pilot.pause()


def test_run_in_progress(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """A full pass paused on its third model call: 2 of 4 written (one normal, one aggressive)."""
    fake.script(Reply("Leaf one: the user planned raised beds."), longer_than_input(), Reply("Leaf two, terse."),
                Hang())

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        screen = await _open(pilot, "work")
        tail = screen.tree.node_for("t:14")
        assert tail is not None
        screen.tree.focus_node(tail)  # keep the selection on something no run changes
        await pilot.pause()
        third = Runner(store, Summariser(ExtractiveBackend(store.tokenizer), store.tokenizer), POLICY).plan_leaf("work")[2]
        await _dialog(pilot, "p")
        await pilot.press("enter")
        await fake.await_chats(4, timeout=10)
        await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 2  # type: ignore[attr-defined]
                       and app.run_state.what == third.label())  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: sum(1 for n in screen.tree.root.children  # the tree, not just the map
                                          if n.data is not None and n.data.kind == "summary") == 2)
        screen.query_one(RunIndicator).freeze(frame=0, tokens_per_s=42.0)
        await _settle(pilot)

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_run_dialog(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """The dialog: full pass planned, the models Ollama has (loaded one marked), extractive first."""

    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "work")
        await _dialog(pilot, "p")
        await _settle(pilot)

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_compare_after_resummarise(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """Old and new text of an aggressive leaf after a re-summarise, side by side with the token change."""
    fake.script(Reply("Leaf four again: the user asked about topic 4 and [bold]kept[/bold] the fix in the loader."))

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        screen = await _open(pilot, "dag")
        assert screen.tree.reveal_summary(DAG_IDS["L4"])
        await pilot.pause()
        await _dialog(pilot, "R")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), timeout=10)
        await wait_for(pilot, lambda: screen.tree.node_for(f"s:{DAG_IDS['D0']}") is None)  # the tree reloaded
        tail = screen.tree.node_for("t:44")
        assert tail is not None
        screen.tree.focus_node(tail)  # behind the dialog: the new leaf's detail has a fresh id and time
        await _settle(pilot)

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_versions_screen(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """Both versions of leaf 1, the superseded fallback highlighted with why it cannot be restored."""

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        screen = await _open(pilot, "dag")
        assert screen.tree.reveal_summary(DAG_IDS["L1"])
        await pilot.pause()
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VersionsScreen))
        await pilot.press("up")
        await _settle(pilot)

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)
