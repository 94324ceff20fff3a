"""The app follows the file while it is open: another connection (a second Store on the same
file, or a ``hiermem-tui watch`` process) appends episodes and summaries, and the sessions list,
the tree, the coverage map and the transcript show them — updated in place, with the selection,
open nodes and scroll position left where the user had them. Each test waits for the row or
node it needs with a deadline (the app notices commits by polling ``PRAGMA data_version``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, Store, SummaryWrite
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.coverage_map import CoverageMap
from tests.tui._session_fixtures import (DAG_IDS, IN_USE, T0, add_episodes, app_for, build_dag_session, open_store,
                                         summary)
from tests.tui.conftest import wait_for

IDS = DAG_IDS
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    _, store = open_store(tmp_path)
    build_dag_session(store)
    add_episodes(store, "raw", "Plan the garden", 30)
    yield store
    store.close()


@pytest.fixture
def writer(store: Store) -> Iterator[Store]:
    """Another connection to the same file, as another process has."""
    other = Store.open(store.path)
    yield other
    other.close()


@asynccontextmanager
async def running(tmp_path: Path, store: Store,
                  size: tuple[int, int] = (140, 40)) -> AsyncIterator[tuple[HiermemApp, Pilot]]:
    app = app_for(Settings(db_path=store.path, config_path=tmp_path / "config.toml", policy=IN_USE), store)
    async with app.run_test(size=size) as pilot:
        yield app, pilot


@asynccontextmanager
async def opened(tmp_path: Path, store: Store, session_id: str = "dag",
                 size: tuple[int, int] = (140, 40)) -> AsyncIterator[tuple[HiermemApp, Pilot, SessionScreen]]:
    """The app with ``session_id`` open (composed and loaded)."""
    async with running(tmp_path, store, size) as (app, pilot):
        app.open_session(session_id)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session is not None)
        assert isinstance(app.screen, SessionScreen)
        yield app, pilot, app.screen


def roots(screen: SessionScreen) -> list[str]:
    return [n.data.key for n in screen.dag_tree.root.children if n.data is not None]


def map_is_what_a_rebuild_draws(screen: SessionScreen) -> None:
    """The map updated in place holds exactly what ``set_data`` builds from a fresh read."""
    fresh = CoverageMap()
    extras = [screen._extra(ref) for ref in screen.dag_tree.roots if ref.kind in ("gap", "tail")]
    fresh.set_data(screen.store.dag.spans(screen.session_id), extras, screen.map.total)

    def shape(m: CoverageMap) -> list[tuple]:
        return [(r.label, r.keys, r.kinds, r.tiers, r.first, r.last, r.start, r.end, r.hi_max) for r in m.rows]

    assert shape(screen.map) == shape(fresh) and screen.map._by_key == fresh._by_key


def more_episodes(store: Store, session_id: str, start: int, count: int) -> None:
    store.episodes.append(session_id, [
        NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", f"late message {i}",
                   T0 + timedelta(hours=5, minutes=i))
        for i in range(start, start + count)
    ])


async def test_summaries_from_another_connection_land_in_the_tree_in_place(
    tmp_path: Path, store: Store, writer: Store
) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        tree = screen.dag_tree
        assert roots(screen) == [f"s:{IDS['D0']}", f"s:{IDS['L6']}", "g:40", "t:44"]
        top = tree.node_for(f"s:{IDS['D0']}")
        assert top is not None
        tree.ensure_loaded(top)
        top.expand()
        assert tree.reveal_key(f"s:{IDS['L6']}")
        await pilot.pause()

        writer.dag.write([SummaryWrite(summary("dag", "s_leaf_7", 0), episode_range=(40, 43))])
        await wait_for(pilot, lambda: roots(screen) == [f"s:{IDS['D0']}", f"s:{IDS['L6']}", "s:s_leaf_7", "t:44"])
        assert tree.node_for(f"s:{IDS['D0']}") is top and top.is_expanded  # kept, not rebuilt
        assert tree.cursor_ref is not None and tree.cursor_ref.key == f"s:{IDS['L6']}"
        assert screen.map.item("s:s_leaf_7") is not None and screen.map.item("g:40") is None
        map_is_what_a_rebuild_draws(screen)

        writer.dag.write([SummaryWrite(summary("dag", "s_cond_2", 1), source_ids=[IDS["L6"], "s_leaf_7"])])
        await wait_for(pilot, lambda: roots(screen) == [f"s:{IDS['D0']}", "s:s_cond_2", "t:44"])
        # the selected summary was adopted: still selected, now shown under its new parent
        assert tree.cursor_ref is not None and tree.cursor_ref.key == f"s:{IDS['L6']}"
        assert tree.cursor_node is not None and tree.cursor_node.parent is tree.node_for("s:s_cond_2")
        assert screen.selected is not None and screen.selected.key == f"s:{IDS['L6']}"
        assert tree.node_for(f"s:{IDS['D0']}") is top and top.is_expanded
        assert screen.session is not None and screen.session.summaries == 12  # the header figures too
        map_is_what_a_rebuild_draws(screen)


async def test_new_episodes_grow_the_tail_the_gap_the_map_and_the_transcript(
    tmp_path: Path, store: Store, writer: Store
) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        screen.action_toggle_view()
        transcript = screen.transcript
        transcript.focus()
        await pilot.press("G")  # the last episode
        await wait_for(pilot, lambda: transcript.cursor == 59)
        scrolled = transcript.scroll_y
        tail = screen.dag_tree.node_for("t:44")
        assert tail is not None

        more_episodes(writer, "dag", 60, 3)
        await wait_for(pilot, lambda: transcript.window is not None and transcript.window[1] == 62)
        assert roots(screen) == [f"s:{IDS['D0']}", f"s:{IDS['L6']}", "g:40", "t:47"]
        assert screen.dag_tree.node_for("t:47") is tail  # the fresh tail slid forward: the same node
        assert transcript.cursor == 59 and transcript.scroll_y == scrolled  # nothing moved under the reader
        assert transcript.total == 63 and "of 63" in str(transcript.border_title)
        item = screen.map.item("t:47")
        assert item is not None and (item.first, item.last) == (47, 62)
        map_is_what_a_rebuild_draws(screen)
        assert screen.session is not None and screen.session.episodes == 63


async def test_the_cursor_keeps_its_height_when_roots_above_it_collapse(tmp_path: Path, store: Store,
                                                                        writer: Store) -> None:
    add_episodes(store, "many", "Many roots", 200)
    store.dag.write([SummaryWrite(summary("many", f"s_m_{k}", 0), episode_range=(2 * k, 2 * k + 1))
                           for k in range(80)])
    async with opened(tmp_path, store, "many", size=(120, 30)) as (app, pilot, screen):
        tree = screen.dag_tree
        node = tree.node_for("s:s_m_60")
        assert node is not None
        tree.focus_node(node)
        await wait_for(pilot, lambda: tree.scroll_y > 0)
        height = node.line - round(tree.scroll_y)
        before = tree.scroll_y

        writer.dag.write([SummaryWrite(summary("many", "s_m_top", 1),
                                             source_ids=[f"s_m_{k}" for k in range(4)])])
        await wait_for(pilot, lambda: "s:s_m_top" in roots(screen))
        await wait_for(pilot, lambda: tree.scroll_y == before - 3)  # the view is kept after a refresh
        assert tree.cursor_node is node and tree.cursor_ref is not None and tree.cursor_ref.key == "s:s_m_60"
        assert node.line - round(tree.scroll_y) == height  # same row on screen
        assert tree.scroll_y == before - 3  # four roots became one, above the view
        map_is_what_a_rebuild_draws(screen)


async def test_a_run_in_the_app_updates_the_tree_in_place(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        top = screen.dag_tree.node_for(f"s:{IDS['D0']}")
        assert top is not None
        screen.dag_tree.ensure_loaded(top)
        top.expand()
        app.runs.start("leaf", "dag", backend="extractive", model=None)
        await wait_for(pilot, lambda: app.run_state is None and "g:40" not in roots(screen))
        assert len(roots(screen)) == 4 and roots(screen)[2].startswith("s:")  # the gap became a leaf
        assert screen.dag_tree.node_for(f"s:{IDS['D0']}") is top and top.is_expanded
        map_is_what_a_rebuild_draws(screen)


async def test_the_sessions_list_keeps_its_selection_while_sessions_move(
    tmp_path: Path, store: Store, writer: Store
) -> None:
    async with running(tmp_path, store) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        table = screen.table
        await wait_for(pilot, lambda: table.row_count == 2)
        assert [table.session_at(i).id for i in range(2)] == ["dag", "raw"]  # newest first
        await pilot.press("j")
        await wait_for(pilot, lambda: table.current is not None and table.current.id == "raw")

        more_episodes(writer, "dag", 60, 2)  # "dag" stays on top …
        add_episodes(writer, "new", "A session written elsewhere", 4)  # … "new" is older than both
        await wait_for(pilot, lambda: table.row_count == 3)
        assert table.current is not None and table.current.id == "raw"
        assert table.session_at(0).episodes == 62

        more_episodes(writer, "raw", 30, 200)  # now "raw" is the newest: it moves to the top …
        await wait_for(pilot, lambda: table.session_at(0) is not None and table.session_at(0).id == "raw")
        assert table.cursor_row == 0 and table.current.id == "raw"  # … and the cursor goes with it


async def test_a_watch_process_feeds_the_open_app(tmp_path: Path, store: Store) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [{"session": "watched", "title": "From the watcher", "role": "user", "content": "hello"},
             {"session": "watched", "role": "assistant", "content": "hi there"}]
    (logs / "chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    async with running(tmp_path, store) as (app, pilot):
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_for(pilot, lambda: screen.table.row_count == 2)
        env = dict(os.environ, PYTHONPATH=str(ROOT), HIERMEM_CONFIG=str(tmp_path / "config.toml"))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hiermem_tui.cli", "watch", "--db", str(store.path), str(logs), "--once",
            "--no-compact", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        assert b"imported 2 episodes into session watched (new session)" in out
        await wait_for(pilot, lambda: screen.table.row_count == 3)
        ids = [screen.table.session_at(i).id for i in range(3)]  # type: ignore[union-attr]
        assert "watched" in ids


async def test_quitting_waits_for_the_follower_to_let_go_of_the_store(tmp_path: Path, store: Store) -> None:
    """The store is closed after the app returns; a follower thread still stepping its connection then
    crashed the test process (a segfault in ``ChangeFeed.poll`` under ``store.close``, once in CI)."""
    async with running(tmp_path, store) as (app, pilot):
        await wait_for(pilot, lambda: app.follower.hold is not None and not app.follower.hold.done
                       and any(w.name == "follow-store" and w.state.name == "RUNNING" for w in app.workers))
    hold = app.follower.hold
    assert hold is not None and hold.done
    assert not any(w.name == "follow-store" and not w.is_finished for w in app.workers)
