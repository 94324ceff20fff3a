"""Search, "what the model sees", stats and run history in the TUI: keys, palette, jumps, literal text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from hiermem_tui.config import Settings
from hiermem_tui.context import build_context, render_context
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.context import ContextScreen
from hiermem_tui.tui.screens.run_history import RunHistoryScreen
from hiermem_tui.tui.screens.search import LIMIT, SearchScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.screens.stats import StatsScreen
from hiermem_tui.tui.screens.versions import VersionsScreen
from tests.tui._session_fixtures import DAG_IDS, app_for, build_dag_session, build_empty_session, open_store
from tests.tui.conftest import save_with_w, screen_text, wait_for, wait_for_text

SIZE = (120, 36)


pytestmark = pytest.mark.usefixtures("utc_tz")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Settings, Store]]:
    settings, store = open_store(tmp_path)
    build_dag_session(store)
    build_empty_session(store)
    yield settings, store
    store.close()


async def open_dag(app, pilot) -> SessionScreen:  # type: ignore[no-untyped-def]
    app.open_session("dag")
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.selected is not None)
    return app.screen  # type: ignore[return-value]


async def type_query(pilot, app, text: str) -> SearchScreen:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    screen: SearchScreen = app.screen  # type: ignore[assignment]
    screen.query_one("#search-input", Input).value = text
    return screen


# ---------------------------------------------------------------- search
async def test_search_from_the_list_shows_hits_literally_and_opens_an_episode(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        screen = await type_query(pilot, app, "BOLD quit")
        await wait_for(pilot, lambda: "[bold]BOLD[/bold]" in screen_text(app))  # the hits drawn
        text = screen_text(app)
        assert "[@click=app.quit]quit[/]" in text  # markup shown, not applied
        assert "\x1b" not in text and "␛[31mred" in text
        assert {h.id for h in screen.hits} >= {"dag/5", DAG_IDS["L3"]}
        episode = next(i for i, h in enumerate(screen.hits) if h.id == "dag/5")
        results = screen.query_one("#search-results", OptionList)
        results.focus()
        results.highlighted = episode
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.transcript.cursor == 5)
        session: SessionScreen = app.screen  # type: ignore[assignment]
        assert session.selected is not None and session.selected.key == f"s:{DAG_IDS['L0']}"  # its leaf, in the tree
        assert session.focus_episode(2)  # under the leaf already selected: no highlight message comes, it jumps now
        await wait_for(pilot, lambda: session.transcript.cursor == 2)
        await pilot.press("escape")  # back to the hits
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))


async def test_a_summary_hit_opens_in_the_tree_and_a_superseded_one_in_its_versions(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        screen = await type_query(pilot, app, "\"second version\"")
        await wait_for(pilot, lambda: [h.id for h in screen.hits] == [DAG_IDS["L1"]])
        screen.query_one("#search-results").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.dag_tree.cursor_ref is not None
                       and app.screen.dag_tree.cursor_ref.key == f"s:{DAG_IDS['L1']}")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        screen.query_one("#search-input", Input).value = "topic 1"
        await wait_for(pilot, lambda: bool(screen.hits))
        assert DAG_IDS["L1v1"] not in {h.id for h in screen.hits}  # superseded: not by default
        screen.query_one("#search-results").focus()
        await pilot.press("v")
        await wait_for(pilot, lambda: DAG_IDS["L1v1"] in {h.id for h in screen.hits})
        screen.query_one("#search-results", OptionList).highlighted = next(
            i for i, h in enumerate(screen.hits) if h.id == DAG_IDS["L1v1"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, VersionsScreen))
        assert app.screen.summary_id == DAG_IDS["L1v1"]  # type: ignore[attr-defined]


async def test_search_in_a_session_stays_in_it_until_widened(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await open_dag(app, pilot)
        await pilot.press("slash")
        screen = await type_query(pilot, app, "message")
        await wait_for(pilot, lambda: bool(screen.hits))
        assert {h.session_id for h in screen.hits} == {"dag"}
        screen.query_one("#search-results").focus()
        await pilot.press("a")
        await wait_for(pilot, lambda: {h.session_id for h in screen.hits} == {"dag", "raw"})
        await pilot.press("a")
        await wait_for(pilot, lambda: {h.session_id for h in screen.hits} == {"dag"})
        screen.query_one("#search-results", OptionList).highlighted = next(
            i for i, h in enumerate(screen.hits) if h.id == "dag/50")
        await pilot.press("enter")  # the session below: the search closes and the jump happens there
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.transcript.cursor == 50)
        assert len(app.screen_stack) == 2
        assert app.screen.selected is not None and app.screen.selected.kind == "tail"  # type: ignore[union-attr]


async def test_a_bad_query_says_why_and_nothing_breaks(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        screen = await type_query(pilot, app, "retry OR")
        await wait_for(pilot, lambda: "a word is missing after OR" in screen_text(app))
        assert not screen.hits
        screen.query_one("#search-input", Input).value = "zzzzqx"
        await wait_for(pilot, lambda: "No matches for “zzzzqx”" in screen_text(app))
        screen.query_one("#search-input", Input).value = ""
        await wait_for(pilot, lambda: "every word must appear" in screen_text(app))  # the empty state: syntax help


async def test_an_upgraded_file_gets_its_index_built_with_progress(tmp_path: Path) -> None:
    from hiermem_tui.store.search_index import search_index_status
    from hiermem_tui.tui.messages import IndexProgress
    from tests.unit.test_search_index import write_version_2

    path = tmp_path / "v2.db"
    write_version_2(path, episodes=40)
    store = Store.open(path)
    assert search_index_status(store).pending  # make_app skips the launch, which would have built it
    app = app_for(Settings(db_path=path, config_path=tmp_path / "c.toml"), store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        screen = await type_query(pilot, app, "pelican")
        await wait_for(pilot, lambda: len(screen.hits) == LIMIT, timeout=10)  # 80 match: the index was finished
        assert screen.indexing is None and not search_index_status(store).pending
        await wait_for(pilot, lambda: f"{LIMIT}+ hits" in screen_text(app))
        screen.post_message(IndexProgress(5, 10))  # what the build worker posts, as it draws it
        await wait_for(pilot, lambda: "Indexing for search: 50% · 5 of 10 rows" in screen_text(app))
    store.close()


# ---------------------------------------------------------------- what the model sees
async def test_context_view_lists_the_items_copies_and_saves_the_same_text(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await open_dag(app, pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ContextScreen) and app.screen.view is not None)
        screen: ContextScreen = app.screen  # type: ignore[assignment]
        expected = build_context(store, "dag")
        assert screen.view == expected and len(screen.rows) == len(expected.items)
        await wait_for(pilot, lambda: "every episode, once" in screen_text(app))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.clipboard != "")
        assert app.clipboard == "".join(render_context(store, expected))
        assert await save_with_w(pilot, tmp_path / "ctx.md") == app.clipboard
        await pilot.press("b")
        budget = screen.query_one("#context-budget", Input)
        await wait_for(pilot, lambda: budget.has_focus)
        await pilot.press(*"100", "enter")
        await wait_for(pilot, lambda: screen.view is not None and screen.view.budget == 100)
        assert screen.view.left_out
        await wait_for(pilot, lambda: "left out to fit" in screen_text(app))
        assert screen.view.total_tokens <= 100
        first = screen.rows[0]
        screen.query_one("#context-items", OptionList).highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        await wait_for(pilot, lambda: app.screen.transcript.cursor == first.first_seq)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- stats and run history
async def test_stats_for_the_file_and_for_a_session(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))
        # every pane is drawn a layout pass after the figures arrive (the doctor pane with them): wait for all
        await wait_for_text(pilot, "compression", "2 sessions", "90 episodes", "Summaries per depth", "fallback 2",
                            "1 superseded", "Not checked yet")
        await pilot.press("escape")
        await open_dag(app, pilot)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen) and "60 episodes" in screen_text(app))
        assert "session: Refactor the [config] loader" in screen_text(app)  # the title, literally


async def test_one_of_a_thing_is_said_in_the_singular(tmp_path: Path) -> None:
    """Issue 21 item 10: "1 runs", "1 summaries", "1 episodes"."""
    from datetime import datetime, timezone

    from hiermem_tui.store import NewEpisode

    settings, store = open_store(tmp_path)
    when = datetime(2025, 7, 3, 10, 0, tzinfo=timezone.utc)
    store.sessions.upsert("one", title="One", source="jsonl", created_at=when)
    store.episodes.append("one", [NewEpisode("0", "user", "hello there", when)])
    run = store.runs.start("one", "leaf", "extractive", None)
    store.runs.finish(run.id, "done", wall_seconds=1.0)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))
        text = await wait_for_text(pilot, "1 session · 1 episode ·", "1 run ")
        assert "1 runs" not in text and "1 episodes" not in text and "1 sessions" not in text
    store.close()


async def test_empty_file_stats_and_history_say_what_to_do(tmp_path: Path) -> None:
    settings, store = open_store(tmp_path)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        app.screen.action_stats()  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: "No sessions yet" in screen_text(app))
        await pilot.press("escape")
        app.screen.action_history()  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: "No runs yet" in screen_text(app))
    store.close()


async def test_run_history_says_why_and_opens_what_a_run_made(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    done = store.runs.start("dag", "leaf", "ollama", "llama3.2")
    store.db.conn.execute("UPDATE summaries SET run_id = ? WHERE id IN (?, ?)", (done.id, DAG_IDS["L6"], DAG_IDS["L1v1"]))
    store.runs.finish(done.id, "done", wall_seconds=4.0)
    failed = store.runs.start("dag", "full", "ollama", "llama3.2")
    store.runs.finish(failed.id, "failed", wall_seconds=1.0, error="the server went away")
    store.db.conn.execute("UPDATE runs SET started_at = '2026-01-01T00:00:00.000Z' WHERE id = ?", (done.id,))
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await open_dag(app, pilot)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen) and len(app.screen.runs) == 2)
        screen: RunHistoryScreen = app.screen  # type: ignore[assignment]
        await wait_for(pilot, lambda: "the server went away" in screen_text(app))  # the newest, failed, says why
        screen.query_one("#history-runs", OptionList).highlighted = 1
        await wait_for(pilot, lambda: len(screen.made) == 2)
        assert [m.active for m in screen.made] == [False, True]
        await pilot.press("tab")
        made = screen.query_one("#history-made", OptionList)
        await wait_for(pilot, lambda: made.has_focus)
        made.highlighted = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.dag_tree.cursor_ref is not None
                       and app.screen.dag_tree.cursor_ref.key == f"s:{DAG_IDS['L6']}")
        assert len(app.screen_stack) == 2  # the history closed over the session it came from


async def test_j_k_g_and_G_move_in_run_history_and_search_results(env) -> None:  # type: ignore[no-untyped-def]
    """Issue 21 item 5: help says j/k/g/G work "in any list"; these lists took none of them."""
    from hiermem_tui.store.search_index import build_search_index

    settings, store = env
    for i in range(3):
        run = store.runs.start("dag", "leaf", "extractive", None)
        store.runs.finish(run.id, "done", wall_seconds=float(i))
    build_search_index(store)  # no build on opening the search: it would run the query again mid-test
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen) and len(app.screen.runs) == 3)
        runs = app.screen.query_one("#history-runs", OptionList)
        await wait_for(pilot, lambda: runs.has_focus and runs.highlighted == 0)
        for key, expected in (("j", 1), ("G", 2), ("k", 1), ("g", 0)):
            await pilot.press(key)
            await wait_for(pilot, lambda: runs.highlighted == expected, show=lambda: runs.highlighted)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await pilot.press("f")
        screen = await type_query(pilot, app, "dag OR BOLD OR quit OR the")
        await wait_for(pilot, lambda: len(screen.hits) >= 3)
        results = screen.query_one("#search-results", OptionList)
        results.focus()
        await wait_for(pilot, lambda: results.has_focus and results.highlighted == 0)
        last = results.option_count - 1
        for key, expected in (("j", 1), ("G", last), ("k", last - 1), ("g", 0)):
            await pilot.press(key)
            await wait_for(pilot, lambda: results.highlighted == expected, show=lambda: results.highlighted)


async def test_palette_and_help_list_the_new_screens(env) -> None:  # type: ignore[no-untyped-def]
    from hiermem_tui.tui.palette import collect_commands
    from hiermem_tui.tui.screens.help import help_markdown

    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        titles = {c.title for c in collect_commands(app.screen, app)}
        assert {"Search all sessions", "Stats of the whole file", "Run history"} <= titles
        screen = await open_dag(app, pilot)
        titles = {c.title for c in collect_commands(screen, app)}
        assert {"Search this session", "What the model sees", "Session stats", "Run history of this session"} <= titles
    help_text = help_markdown()
    for words in ("search every session", "what the model sees", "stats", "run history"):
        assert words in help_text.lower(), words
