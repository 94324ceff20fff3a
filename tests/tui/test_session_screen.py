"""The session screen: tree, coverage map, detail pane, transcript, keys, hostile text, scale."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import OptionList, Static, TabbedContent

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, Store, SummaryWrite
from hiermem_tui.tui.app import HiermemApp, make_app
from hiermem_tui.tui.format import Palette
from hiermem_tui.tui.messages import SessionsChanged
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.widgets.coverage_map import LABEL_WIDTH
from hiermem_tui.tui.widgets.dag_tree import EPISODE_PAGE
from hiermem_tui.tui.screens.chain import ChainPicker
from hiermem_tui.tui.widgets.transcript import MAX_WINDOW, PAGE, Transcript
from tests.tui._session_fixtures import (
    DAG_IDS,
    HOSTILE_TITLE,
    IN_USE,
    T0,
    add_episodes,
    app_for,
    build_big_session,
    build_dag_session,
    build_empty_session,
    open_store,
    summary,
)
from tests.tui.conftest import screen_shown, screen_text, wait_for, wait_for_footer, wait_for_text, wait_painted

IDS = DAG_IDS


pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    settings, store = open_store(tmp_path)
    build_dag_session(store)
    build_empty_session(store)
    store.sessions.upsert("evil", title=HOSTILE_TITLE, source="jsonl")
    yield store
    store.close()


@asynccontextmanager
async def opened(tmp_path: Path, store: Store, session_id: str = "dag", size: tuple[int, int] = (140, 40)
                 ) -> AsyncIterator[tuple[HiermemApp, Pilot, SessionScreen]]:
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml", policy=IN_USE)
    app = app_for(settings, store)
    async with app.run_test(size=size) as pilot:
        app.open_session(session_id)
        yield app, pilot, await screen_shown(pilot, SessionScreen)


def root_keys(screen: SessionScreen) -> list[str]:
    return [n.data.key for n in screen.dag_tree.root.children if n.data is not None]


def child_keys(screen: SessionScreen, key: str) -> list[str]:
    node = screen.dag_tree.node_for(key)
    assert node is not None
    return [c.data.key for c in node.children if c.data is not None]


async def test_roots_are_top_summaries_gap_and_fresh_tail_in_coverage_order(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        assert root_keys(screen) == [f"s:{IDS['D0']}", f"s:{IDS['L6']}", "g:40", "t:44"]
        labels = [n.label.plain for n in screen.dag_tree.root.children]
        assert "d2" in labels[0] and "#0–35 (36)" in labels[0] and "150 tok" in labels[0]
        assert "Jul 3 10:02 → 11:47" in labels[0]
        assert "unsummarised" in labels[2] and "#40–43 (4)" in labels[2]
        assert "fresh tail" in labels[3] and "#44–59 (16)" in labels[3]
        text = screen_text(app)
        assert "60 episodes" in text and "10 summaries" in text and "depth 2" in text and "67% covered" in text
        assert "2 fallbacks" in text and "model sees 868 tok" in text


async def test_expanding_loads_children_lazily_down_to_episodes(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        tree = screen.dag_tree
        d0 = tree.node_for(f"s:{IDS['D0']}")
        assert d0 is not None and not d0.children  # nothing fetched before the user asks
        await pilot.press("enter")
        await wait_for(pilot, lambda: child_keys(screen, f"s:{IDS['D0']}") == [f"s:{IDS['C0']}", f"s:{IDS['C1']}"])
        assert tree.node_for(f"s:{IDS['L3']}") is None  # grandchildren still not loaded
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: child_keys(screen, f"s:{IDS['C1']}") == [f"s:{IDS[k]}" for k in ("L3", "L4", "L5")])
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: child_keys(screen, f"s:{IDS['L3']}") == [f"r:{IDS['L3']}"])
        rng = tree.node_for(f"r:{IDS['L3']}")
        assert rng is not None and rng.label.plain == "episodes #18–23 (6)"
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: child_keys(screen, f"r:{IDS['L3']}") == [f"e:{i}" for i in range(18, 24)])


async def test_selecting_updates_detail_map_and_transcript(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        assert screen.dag_tree.reveal_summary(IDS["C1"])
        await wait_for(pilot, lambda: "covers episodes #18–35 (18)" in screen.detail.plain)
        plain = screen.detail.plain
        assert "d1   fallback  condensed summary" in plain
        assert IDS["L3"] in plain and IDS["L5"] in plain  # sources
        assert f"parent: {IDS['D0']}" in plain
        assert screen.map.selected == f"s:{IDS['C1']}"
        assert screen.transcript.highlight == (18, 35) and screen.transcript.cursor == 18
        # the superseded first version of leaf 1 is counted and listed
        assert screen.dag_tree.reveal_summary(IDS["L1"])
        await wait_for(pilot, lambda: "2 versions · 1 superseded" in screen.detail.plain)
        assert IDS["L1v1"] in screen.detail.plain


async def test_f_and_shift_f_walk_the_fallbacks(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        def cursor() -> str | None:
            ref = screen.dag_tree.cursor_ref
            return ref.key if ref else None

        async def jump(key: str, to: str) -> None:
            await pilot.press(key)
            await wait_for(pilot, lambda: cursor() == to and screen.detail.key == to, show=cursor)
            assert "fallback" in screen.detail.plain

        await jump("f", f"s:{IDS['L2']}")  # opened D0 and C0 to get there
        await jump("f", f"s:{IDS['C1']}")
        await jump("f", f"s:{IDS['L2']}")  # wrapped around
        await jump("F", f"s:{IDS['C1']}")


@pytest.mark.parametrize("after, tail", [(timedelta(hours=3), True), (timedelta(days=2), False)])
async def test_a_finished_chat_has_no_fresh_tail_its_last_episodes_wait_for_a_leaf(
    tmp_path: Path, store: Store, after: timedelta, tail: bool
) -> None:
    """Under the default policy a session a day unchanged is idle: a leaf pass summarises it to its end, so the
    tree, the map and the detail pane show its newest episodes as unsummarised, not as a fresh tail kept raw.
    The dag session's newest episode is at T0 + 2 h 57 m; the app's clock says when "now" is."""
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml")
    app = make_app(settings, store, probe_backend=False, clock=lambda: T0 + after)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_session("dag")
        screen = await screen_shown(pilot, SessionScreen)
        roots = [f"s:{IDS['D0']}", f"s:{IDS['L6']}"]
        await wait_for(pilot, lambda: root_keys(screen) == roots + (["g:40", "t:44"] if tail else ["g:40"]),
                       show=lambda: root_keys(screen))
        labels = [n.label.plain for n in screen.dag_tree.root.children]
        assert ("#40–43 (4)" if tail else "#40–59 (20)") in labels[2]
        assert any("fresh tail" in label for label in labels) == tail
        assert screen.map.rows[-1].kinds[-1] == ("tail" if tail else "gap")  # the episode row ends with it
        screen.dag_tree.reveal_key("g:40")
        await wait_for(pilot, lambda: screen.detail.key == "gap:40", show=lambda: screen.detail.key)
        assert ("covers episodes #40–43" if tail else "covers episodes #40–59") in screen.detail.plain
        assert "not under any leaf summary yet" in screen.detail.plain


async def test_transcript_highlights_the_covered_episodes(tmp_path: Path, store: Store) -> None:
    # 44 rows: the transcript shows #24 to #30 below the brief panel
    async with opened(tmp_path, store, size=(140, 44)) as (app, pilot, screen):
        assert screen.dag_tree.reveal_summary(IDS["L4"])
        await wait_for(pilot, lambda: screen.transcript.highlight == (24, 29))
        transcript = await show_transcript(pilot, screen)
        await wait_for_text(pilot, "#24  user", "message 24:")
        await wait_painted(pilot)
        palette = Palette.from_app(app)
        bg = {}
        for y in range(transcript.size.height):
            strip = transcript.render_line(y)
            text = strip.text.strip()
            if text.startswith(("▎ #", "▌ #", "#")):
                seq = int(text.lstrip("▎▌ ").split()[0][1:])
                bg[seq] = {seg.style.bgcolor for seg in strip if seg.style is not None}
        assert 24 in bg and 25 in bg and 30 in bg
        assert palette.highlight.rich_color in bg[25]
        assert palette.highlight.rich_color not in bg[30]


async def test_covering_chain_from_an_episode_jumps_to_a_summary(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        transcript = await show_transcript(pilot, screen)
        await focus(pilot, transcript)
        transcript.jump_to(19)
        await pilot.press("down")  # the user moves the cursor: #20
        await wait_for(pilot, lambda: transcript.cursor == 20, show=lambda: transcript.cursor)
        await pilot.press("c")
        picker = await screen_shown(pilot, ChainPicker)
        assert [s.id for s in picker.chain] == [IDS["L3"], IDS["C1"], IDS["D0"]]
        options = picker.query_one(OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == picker_ids(picker)
        await pilot.press("down", "enter")
        # picked: the tree has the cursor and the focus again, and the panes follow it
        c1 = f"s:{IDS['C1']}"
        await wait_for(pilot, lambda: app.screen is screen and screen.dag_tree.has_focus and screen.detail.key == c1)
        assert screen.dag_tree.cursor_ref is not None and screen.dag_tree.cursor_ref.key == c1
        # an episode of the gap has no chain, and the picker says so
        transcript.jump_to(41)
        await focus(pilot, transcript)
        await pilot.press("down", "c")
        picker = await screen_shown(pilot, ChainPicker)
        assert picker.seq == 42 and picker.chain == []
        await wait_for_text(pilot, "unsummarised gap")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)


async def show_transcript(pilot: Pilot, screen: SessionScreen) -> Transcript:
    """Press ``t`` and wait until the transcript tab is shown, laid out and focusable."""
    await pilot.press("t")
    transcript = screen.transcript
    await wait_for(pilot, lambda: screen.query_one(TabbedContent).active == "tab-transcript"
                   and transcript.size.height > 0)
    return transcript


async def focus(pilot: Pilot, widget: Widget) -> None:
    widget.focus()
    await wait_for(pilot, lambda: widget.has_focus)


def picker_ids(picker: ChainPicker) -> list[str]:
    return [s.id for s in picker.chain]


async def test_hostile_content_is_shown_literally_and_never_acts(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        assert screen.dag_tree.reveal_summary(IDS["L3"])
        await wait_for(pilot, lambda: screen.detail.key == f"s:{IDS['L3']}")
        body = screen.query_one("#detail-body", Static)
        assert "[bold]BOLD[/bold] [@click=app.quit]quit[/]" in screen.detail.plain
        assert "␛[31mred␛[0m" in screen.detail.plain and "␇" in screen.detail.plain
        screen.detail.scroll_end(animate=False)
        text = await wait_for_text(pilot, "[bold]BOLD[/bold]", "[@click=app.quit]quit[/]")
        assert "\x1b" not in text and "\x07" not in text
        await pilot.click(body, offset=(22, 0))  # on the would-be click target
        # the episode with the same text, in the tree and in the transcript; the app handles this key
        # after the click, so had the click quit the app, it would be gone by now
        transcript = await show_transcript(pilot, screen)
        assert app.is_running and app.screen is screen
        transcript.jump_to(5)
        text = await wait_for_text(pilot, "[@click=app.quit]quit[/]", "]8;;http://evil.example")
        assert "\x1b" not in text
    async with opened(tmp_path, store, "evil") as (app, pilot, screen):
        text = screen_text(app)
        assert "[bold red]Evil[/] title ␛[2J" in text
        assert "No episodes" in screen.detail.plain


async def test_empty_session_says_how_to_compact(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store, "raw") as (app, pilot, screen):
        assert root_keys(screen) == ["g:0", "t:14"]
        assert "No summaries yet" in screen.detail.plain
        assert "hiermem-tui compact --session raw" in screen_text(app)
        assert [len(r) for r in screen.map.rows] == [2]  # only the episode row: gap + fresh tail


async def test_reload_keeps_open_nodes_and_selection(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        assert screen.dag_tree.reveal_summary(IDS["L4"])
        await wait_for(pilot, lambda: screen.detail.key == f"s:{IDS['L4']}")
        store.dag.write([SummaryWrite(summary("dag", "s_new_leaf", 0), episode_range=(40, 43))])
        screen.reload()
        assert screen.dag_tree.cursor_ref is not None and screen.dag_tree.cursor_ref.key == f"s:{IDS['L4']}"
        assert screen.dag_tree.node_for(f"s:{IDS['C1']}").is_expanded  # type: ignore[union-attr]
        assert root_keys(screen) == [f"s:{IDS['D0']}", f"s:{IDS['L6']}", "s:s_new_leaf", "t:44"]
        await wait_for_text(pilot, "11 summaries")


async def test_map_click_and_keys_select_in_the_tree(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        cmap = screen.map
        bar_w = cmap.size.width - LABEL_WIDTH
        x = LABEL_WIDTH + int(bar_w * 27 / 60)  # inside C1 (#18–35 of 60), row d1
        await pilot.click(cmap, offset=(x + 1, 1 + 1))  # +1: the map's border

        async def selected(key: str) -> None:
            """The tree's cursor, the detail pane and the map all on ``key``."""
            await wait_for(pilot, lambda: screen.detail.key == key and cmap.selected == key, show=lambda: cmap.selected)
            assert screen.dag_tree.cursor_ref is not None and screen.dag_tree.cursor_ref.key == key

        await selected(f"s:{IDS['C1']}")
        await focus(pilot, cmap)
        await pilot.press("left")
        await selected(f"s:{IDS['C0']}")
        await pilot.press("up")
        await selected(f"s:{IDS['D0']}")
        await pilot.press("s")
        await wait_for(pilot, lambda: cmap.scale == "time" and "time axis" in str(cmap.border_subtitle))


async def test_keys_toggle_view_cycle_focus_and_go_back(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        await wait_for(pilot, lambda: app.focused is screen.dag_tree)
        for key, pane in (("tab", screen.map), ("tab", screen.detail), ("t", screen.transcript), ("tab", screen.dag_tree)):
            await pilot.press(key)
            await wait_for(pilot, lambda: app.focused is pane, show=lambda: app.focused)
        await wait_for_footer(pilot, "Pane", "Transcript", "Fallback", "Chain", "Scale", "Refresh", "Back")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionScreen))


async def test_a_20k_episode_session_opens_and_the_transcript_pages(tmp_path: Path) -> None:
    settings, store = open_store(tmp_path)
    build_big_session(store, "big", 20_000, leaves=25)
    app = app_for(settings, store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_session("big")
        screen = await screen_shown(pilot, SessionScreen)
        assert root_keys(screen)[-2:] == ["g:100", "t:19984"]
        transcript = screen.transcript
        assert transcript.loaded <= PAGE + PAGE // 4
        await show_transcript(pilot, screen)
        await focus(pilot, transcript)
        await pilot.press("end")
        await wait_for(pilot, lambda: transcript.window is not None and transcript.window[1] == 19_999
                       and transcript.cursor == 19_999, show=lambda: transcript.window)
        assert transcript.window is not None
        first = transcript.window[0]
        for _ in range(16):
            await pilot.press("pageup")
        # earlier pages were fetched as we scrolled
        await wait_for(pilot, lambda: transcript.window is not None and transcript.window[0] < first - PAGE,
                       show=lambda: transcript.window)
        assert transcript.loaded <= MAX_WINDOW
        assert transcript.cursor is not None and transcript.cursor < 19_999
        # the gap node pages its 19,884 episodes too
        gap = screen.dag_tree.node_for("g:100")
        assert gap is not None
        screen.dag_tree.focus_node(gap)
        gap.expand()
        await wait_for(pilot, lambda: len(gap.children) == EPISODE_PAGE + 1, show=lambda: len(gap.children))
        keys = [c.data.key for c in gap.children if c.data is not None]
        assert len(keys) == EPISODE_PAGE + 1 and keys[-1] == f"m:g:100:{100 + EPISODE_PAGE}"
        screen.dag_tree.select_node(gap.children[-1])
        await wait_for(pilot, lambda: len(gap.children) == 2 * EPISODE_PAGE + 1, show=lambda: len(gap.children))
    store.close()


async def test_new_episodes_show_up_on_reload(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store, "raw") as (app, pilot, screen):
        add_episodes(store, "raw", "Plan the garden", 40)  # same keys 0..29 are skipped; 30..39 appended
        screen.reload()  # synchronous: what it read is there when it returns
        assert screen.transcript.total == 40
        assert root_keys(screen) == ["g:0", "t:24"]



async def test_sessions_changed_message_reloads_once_the_burst_settles(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store) as (app, pilot, screen):
        for i in range(3):  # a run writing summaries one by one: three messages, one reload
            screen.post_message(SessionsChanged(("dag",)))
        store.dag.write([SummaryWrite(summary("dag", "s_late_leaf", 0), episode_range=(40, 43))])
        await wait_for(pilot, lambda: "s:s_late_leaf" in root_keys(screen))  # after the coalescing timer
        assert screen.session is not None and screen.session.summaries == 11


async def test_unknown_session_says_so(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store, "no-such-session") as (app, pilot, screen):
        assert "Session not found" in screen.detail.plain
        assert root_keys(screen) == []


async def test_long_episodes_fold_and_expand_in_the_transcript(tmp_path: Path, store: Store) -> None:
    long_text = "\n".join(f"line {i} [red]not markup[/red]" for i in range(40))
    store.episodes.append("raw", [NewEpisode("long", "assistant", long_text, T0 + timedelta(days=1))])
    async with opened(tmp_path, store, "raw") as (app, pilot, screen):
        transcript = await show_transcript(pilot, screen)
        await focus(pilot, transcript)
        transcript.jump_to(30)
        text = await wait_for_text(pilot, "line 7 [red]not markup[/red]", "more characters · enter: show all")
        assert "line 8 " not in text
        await pilot.press("enter")
        await wait_for(pilot, lambda: 30 in transcript.expanded)
        transcript.jump_to(30)
        await wait_painted(pilot)
        transcript.scroll_to(y=transcript.max_scroll_y, animate=False)
        await wait_for_text(pilot, "line 39 [red]not markup[/red]", "enter: collapse")


async def test_a_leaf_names_its_episode_range_and_the_source_message_ids(tmp_path: Path, store: Store) -> None:
    """Episode ids are "<session>/<key>": the detail shows the keys that tell them apart, not the session
    id again (a Claude Code id clipped to "claude-code:6dc88126-2048-…" said nothing)."""
    store.sessions.upsert("cc", title="Claude Code chat", source="claude-code", created_at=T0)
    store.episodes.append("cc", [NewEpisode(f"msg-{c}", "user", f"message {c}", T0 + timedelta(minutes=i))
                                 for i, c in enumerate("abcd")])
    store.dag.write([SummaryWrite(summary("cc", "s_cc_leaf", 0), episode_range=(0, 3))])
    async with opened(tmp_path, store, "cc") as (app, pilot, screen):
        assert screen.dag_tree.reveal_summary("s_cc_leaf")
        text = await wait_for_text(pilot, "4 episodes, #0–3 · ids msg-a … msg-d")
        assert "cc/msg-a" not in text


async def test_j_k_g_and_G_move_in_the_summary_tree(tmp_path: Path, store: Store) -> None:
    """Issue 21 item 5: help says j/k/g/G work "in any list"; the tree took none of them."""
    async with opened(tmp_path, store) as (app, pilot, screen):
        tree = screen.dag_tree
        await wait_for(pilot, lambda: tree.has_focus and tree.cursor_ref is not None)
        assert tree.cursor_ref is not None and tree.cursor_ref.key == f"s:{IDS['D0']}"
        await pilot.press("j")
        await wait_for(pilot, lambda: tree.cursor_ref is not None and tree.cursor_ref.key == f"s:{IDS['L6']}")
        await pilot.press("G")
        await wait_for(pilot, lambda: tree.cursor_ref is not None and tree.cursor_ref.key == "t:44")
        await pilot.press("k")
        await wait_for(pilot, lambda: tree.cursor_ref is not None and tree.cursor_ref.key == "g:40")
        await pilot.press("g")
        await wait_for(pilot, lambda: tree.cursor_ref is not None and tree.cursor_ref.key == f"s:{IDS['D0']}")


async def test_an_imported_summary_says_imported_not_zero_seconds(tmp_path: Path) -> None:
    """Issue 21 item 10: a lossless-claw summary showed "0.0 s (model 0.0 s)"."""
    from hiermem_tui.importers import import_paths

    store = Store.open(tmp_path / "imported.db")
    try:
        import_paths(store, [Path(__file__).resolve().parents[1] / "fixtures" / "lossless_claw" / "lcm.db"],
                     parallel=False)
        blog = max(store.sessions.each(), key=lambda s: s.episodes)
        top = store.dag.top(blog.id)[0]
        async with opened(tmp_path, store, blog.id) as (app, pilot, screen):
            await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(top.id))
            await wait_for(pilot, lambda: screen.detail.key == f"s:{top.id}")
            plain = screen.detail.plain
            assert "imported (made by another tool: no time recorded)" in plain
            assert "0.0 s (model 0.0 s)" not in plain and "(model " not in plain
    finally:
        store.close()


async def test_tree_rows_longer_than_the_pane_end_with_an_ellipsis(tmp_path: Path, store: Store) -> None:
    """Issue 21 item 10: tree rows were cut at the pane edge, mid-word, with nothing to say so."""
    from tests.tui.conftest import screen_text

    async with opened(tmp_path, store) as (app, pilot, screen):
        tree = screen.dag_tree
        await pilot.press("enter")  # open the top summary: deeper rows, longer guides
        await wait_for(pilot, lambda: len(child_keys(screen, f"s:{IDS['D0']}")) == 2)
        region = tree.content_region
        def rows() -> list[str]:
            lines = screen_text(app).splitlines()[region.y:region.bottom]
            return [line[region.x:region.right] for line in lines]
        await wait_for(pilot, lambda: any(r.rstrip().endswith("…") for r in rows()), show=rows)
        full = [r for r in rows() if len(r.rstrip()) >= region.width - 1]
        assert full and all(r.rstrip().endswith("…") for r in full), full


async def test_a_huge_message_is_read_part_by_part_to_its_end(tmp_path: Path, store: Store) -> None:
    """Issue 21 item 10: "show all" on a 50 MB message revealed ~118k characters, then "… 49,590,221 more
    characters" with no way on. Enter now goes on part by part (backspace back), and folds after the last."""
    import re

    words = " ".join(f"w{i:06d}" for i in range(40_000))  # 320k characters, no newline: parts by size
    store.episodes.append("raw", [NewEpisode("huge", "user", words, T0 + timedelta(days=2))])
    async with opened(tmp_path, store, "raw") as (app, pilot, screen):
        transcript = await show_transcript(pilot, screen)
        await focus(pilot, transcript)
        seq = store.sessions.get("raw").episodes - 1  # type: ignore[union-attr]
        transcript.jump_to(seq)
        await wait_for_text(pilot, "more characters · enter: show all")

        def where() -> tuple[int, int, int] | None:
            found = re.search(r"characters ([\d,]+)–([\d,]+) of ([\d,]+)", screen_text(app))
            return tuple(int(g.replace(",", "")) for g in found.groups()) if found else None  # type: ignore[return-value]

        seen: list[tuple[int, int, int]] = []
        await pilot.press("enter")
        for _ in range(50):
            await wait_for(pilot, lambda: where() is not None and where() not in seen, show=where)
            seen.append(where())  # type: ignore[arg-type]
            if "enter: collapse" in screen_text(app):
                break
            await pilot.press("enter")
        starts = [s for s, _e, _w in seen]
        assert starts[0] == 1 and all(b == a_end + 1 for (_s, a_end, _w), b in zip(seen, starts[1:]))
        assert seen[-1][1] == seen[-1][2] == len(words) and len(seen) >= 3  # read to the very end
        await pilot.press("backspace")
        await wait_for(pilot, lambda: where() == seen[-2])
        await pilot.press("enter", "enter")  # the last part again, then folded
        await wait_for(pilot, lambda: seq not in transcript.expanded)
        await wait_for_text(pilot, "more characters · enter: show all")
