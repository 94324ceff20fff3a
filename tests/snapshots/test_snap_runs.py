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
from textual.widgets._toast import Toast

from hiermem_tui.compaction import Runner
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import ExtractiveBackend, Summariser
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.compare import CompareScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.versions import VersionsScreen
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from tests.fakeollama import FakeOllama, Hang, Reply, longer_than_input
from tests.tui._session_fixtures import DAG_IDS, add_episodes, app_for, build_dag_session
from tests.tui.conftest import screen_shown, wait_for, wait_for_chats, wait_until_shown

SIZE = (140, 40)
POLICY = Policy(idle_after=10 ** 9, fresh_tail=16, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
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
    pilot.app.open_session(session_id)  # type: ignore[attr-defined]
    return await screen_shown(pilot, SessionScreen)


async def _dialog(pilot: Pilot, key: str) -> RunDialog:
    app = pilot.app
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
    dialog = app.screen
    assert isinstance(dialog, RunDialog)
    await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing and dialog.counts is not None)
    return dialog


async def _select(pilot: Pilot, screen: SessionScreen, key: str) -> None:
    """Put the tree cursor on ``key`` and wait for the panes to follow it."""
    node = screen.dag_tree.node_for(key)
    assert node is not None
    screen.dag_tree.focus_node(node)
    await wait_for(pilot, lambda: screen.selected is not None and screen.selected.key == key)


async def _settle(pilot: Pilot, *texts: str) -> None:
    """Toasts time out, so none is photographed; then wait until the picture is the settled state
    showing ``texts`` (what this snapshot is about), on a busy machine too."""
    pilot.app.clear_notifications()
    await wait_for(pilot, lambda: not pilot.app.screen.query(Toast))
    await wait_until_shown(pilot, *texts)


def test_run_in_progress(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """A full pass paused on its third model call, the model reading its prompt: 2 of 4 written
    (one normal, one aggressive)."""
    fake.script(Reply("Leaf one: the user planned raised beds."), longer_than_input(), Reply("Leaf two, terse."),
                Hang())

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        screen = await _open(pilot, "work")
        await _select(pilot, screen, "t:14")  # keep the selection on something no run changes
        third = Runner(store, Summariser(ExtractiveBackend(store.tokenizer), store.tokenizer), POLICY).plan_leaf("work")[2]
        await _dialog(pilot, "p")
        await pilot.press("enter")
        await wait_for_chats(pilot, fake, 4)
        await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 2  # type: ignore[attr-defined]
                       and app.run_state.what == third.label())  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: sum(1 for n in screen.dag_tree.root.children  # the tree, not just the map
                                          if n.data is not None and n.data.kind == "summary") == 2)
        screen.query_one(RunIndicator).freeze(frame=0, tokens_per_s=42.0)
        await _settle(pilot, f"Summarising… {third.label()}", "2/4 · reading the prompt  ■ 1 normal", "2 summaries",
                      "#6–11 (6)", "esc Cancel run")

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_run_dialog(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """The dialog: full pass planned, the models Ollama has (loaded one marked), extractive first."""

    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "work")
        await _dialog(pilot, "p")
        await _settle(pilot, "≈ 5 summaries", "qwen2.5:0.5b", "Ollama 0.9.6 · llama3.2:latest (loaded) · 2 installed",
                      "esc Cancel")

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_compare_after_resummarise(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """Old and new text of an aggressive leaf after a re-summarise, side by side with the token change."""
    fake.script(Reply("Leaf four again: the user asked about topic 4 and [bold]kept[/bold] the fix in the loader."))

    async def run_before(pilot: Pilot) -> None:
        screen = await _open(pilot, "dag")
        assert screen.dag_tree.reveal_summary(DAG_IDS["L4"])
        await wait_for(pilot, lambda: screen.selected is not None and screen.selected.key == f"s:{DAG_IDS['L4']}")
        await _dialog(pilot, "R")
        await pilot.press("enter")
        await screen_shown(pilot, CompareScreen)
        # the session behind the dialog reloaded after the run (its new top summary is in the tree), nothing pending
        [top] = [s for s in store.dag.summaries("dag") if s.depth == 2]
        assert top.id != DAG_IDS["D0"]
        await wait_for(pilot, lambda: screen.dag_tree.node_for(f"s:{top.id}") is not None and screen._reload_timer is None)
        await _select(pilot, screen, "t:44")  # behind the dialog: the new leaf's detail has a fresh id and time
        session = store.sessions.get("dag")
        assert session is not None
        # the header behind the dialog shows the figures after the run (the photo once caught the old ones)
        await _settle(pilot, f"model sees {fmt.tokens(session.uncompacted_tokens)} tok",
                      f" {session.fallbacks} fallback", "40 → 25 tokens", "enter Keep")

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)


def test_versions_screen(snap_compare, store: Store, tmp_path: Path, fake: FakeOllama) -> None:  # type: ignore[no-untyped-def]
    """Both versions of leaf 1, the superseded fallback highlighted with why it cannot be restored."""

    async def run_before(pilot: Pilot) -> None:
        screen = await _open(pilot, "dag")
        assert screen.dag_tree.reveal_summary(DAG_IDS["L1"])
        await wait_for(pilot, lambda: screen.selected is not None and screen.selected.key == f"s:{DAG_IDS['L1']}")
        await pilot.press("v")
        versions = await screen_shown(pilot, VersionsScreen)
        await pilot.press("up")
        await wait_for(pilot, lambda: versions.current is not None and versions.current.id == DAG_IDS["L1v1"])
        await _settle(pilot, f"superseded  {DAG_IDS['L1v1']}", "not made by a run", "esc Close")

    assert snap_compare(_app(store, tmp_path, fake), terminal_size=SIZE, run_before=run_before)
