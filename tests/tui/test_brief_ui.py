"""A session's brief in the TUI: the sessions list's About column (the brief's first line), the session screen's
brief panel (the brief with its title and range, or an empty state), the panel following a full pass run from the
app against the fake Ollama server and a brief another process writes, and the room both leave on a small terminal.

Nothing of ours is mocked: briefs are written through the store as a pass writes them, or made by a real run.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Brief, NewEpisode, Store
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.brief_panel import EMPTY, BriefPanel
from hiermem_tui.tui.widgets.session_columns import COLUMNS, GAP, MIN_ABOUT, MIN_TITLE, fit_columns
from hiermem_tui.tui.widgets.sessions_table import SessionsTable
from tests.fakeollama import FakeOllama, closed_port_url, default_responder
from tests.tui._session_fixtures import (HOSTILE, IN_USE, T0, add_episodes, app_for, build_dag_session,
                                         build_empty_session)
from tests.tui.conftest import screen_shown, screen_text, wait_for, wait_for_text

pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)

GARDEN = [
    ("user", "I want to build raised garden beds this spring. Which wood should I use for the raised beds?"),
    ("assistant", "For raised garden beds use untreated cedar: it resists rot without chemicals leaching into "
                  "the soil. Pressure-treated pine is cheaper but many growers avoid it for vegetables."),
    ("user", "Let's go with untreated cedar then, because we grow vegetables. How deep should the beds be?"),
    ("assistant", "Make the raised garden beds 30 cm deep: enough for tomatoes and carrots, and the cedar boards "
                  "come in 15 cm heights, so two boards stacked."),
    ("user", "How do I keep the cedar boards from bowing outward once the beds are full of soil?"),
    ("assistant", "Put a cedar stake in each corner and one in the middle of each long side, and screw the boards "
                  "to them with stainless screws."),
    ("user", "Should I line the bottom of the raised beds with anything?"),
    ("assistant", "Lay cardboard on the grass under the raised beds: it smothers the weeds and rots away by "
                  "summer. Skip plastic, it stops drainage."),
    ("user", "What soil mix should go into the raised garden beds?"),
    ("assistant", "Fill the raised beds with 60% topsoil and 40% compost, and top them up with compost each spring."),
    ("user", "Thanks, I will buy the cedar boards and the compost this weekend."),
    ("assistant", "Good plan: measure the beds once more before you buy the cedar boards."),
]
"""A short chat a person could brief: what it was about, a decision with its reason, where it ended."""
TITLE = "Raised garden beds from untreated cedar"
ABOUT = "The user planned raised garden beds and chose untreated cedar boards because they grow vegetables."
POLICY = Policy(idle_after=IN_USE.idle_after, fresh_tail=4, leaf_chunk_tokens=200, leaf_min_episodes=2,
                leaf_target_tokens=60, condense_fanout=3, condensed_target_tokens=80, fidelity_threshold=0.0)


def brief_answer(body: dict[str, Any]) -> str:
    """The model's answers: the brief's title and about line when it is asked for them, else a short summary."""
    if "What was this chat about?" in body["messages"][-1]["content"]:
        return f"Title: {TITLE}\nAbout: {ABOUT}"
    return default_responder(body)


def add_garden(store: Store, session_id: str = "garden") -> None:
    store.sessions.upsert(session_id, title="Garden beds", source="chatgpt", created_at=T0)
    store.episodes.append(session_id, [NewEpisode(str(i), role, text, T0 + i * timedelta(minutes=3))
                                       for i, (role, text) in enumerate(GARDEN)])


def write_brief(store: Store, session_id: str, *, text: str, title: str = "Refactoring the config loader",
                first_seq: int = 0, last_seq: int = 59) -> Brief:
    """A brief as a full pass stores it (its text starts with the about line)."""
    return store.briefs.write(session_id, title=title, about=text.split("\n", 1)[0], text=text, first_seq=first_seq,
                              last_seq=last_seq, tier="normal", backend="ollama", model="llama3.2:3b",
                              prompt_version="brief-v1", tokens=60, llm_seconds=1.5, run_id=None)


DAG_BRIEF = ("About: moving the config loader to one TOML file read once at start.\n"
             "Problem: KeyError: 'db_path' on an empty file → fix: defaults for every field\n"
             "Decided: the environment wins over the file (why: the user deploys with env vars)\n"
             "Made: config.py, load_settings\n"
             "Ended: asked to add a --config flag → the argparse change, answered")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    build_dag_session(store)
    build_empty_session(store)
    yield store
    store.close()


def settings_for(tmp_path: Path, store: Store, **kw: Any) -> Settings:
    return Settings(db_path=store.path, config_path=tmp_path / "config.toml", policy=POLICY, **kw)


def about_cell(table: SessionsTable, session_id: str) -> str:
    """The About cell of a session's row, as drawn."""
    layout = table._layout(table.size.width)
    x = 1
    for column, width in layout:
        if column.key == "about":
            break
        x += width + GAP
    else:
        raise AssertionError("no About column at this width")
    row = next(i for i in range(table.row_count) if (s := table.session_at(i)) is not None and s.id == session_id)
    line = table.render_line(row + 1 - round(table.scroll_y)).text  # row 0 is the header
    return line[x:x + width].strip()


# ---------------------------------------------------------------------- the sessions list
def test_the_about_column_goes_first_and_never_squeezes_the_title() -> None:
    """About shares what the fixed columns leave with the title, and is dropped before any of them: at 120 and
    140 columns the list keeps its Source, Summ and Depth; where About shows, every column does, the title
    keeps its minimum and About its own."""
    others = {c.key for c in COLUMNS if c.key not in ("about", "state")}
    for state in (False, True):
        seen = False
        for width in range(40, 260):
            layout = fit_columns(width, "updated", state=state)
            widths = {c.key: w for c, w in layout}
            assert sum(widths.values()) + GAP * (len(layout) - 1) + 2 <= width or widths["title"] == 8, width
            if "about" in widths:
                seen = True
                assert others | ({"state"} if state else set()) <= set(widths), (width, state)
                assert widths["title"] >= MIN_TITLE and widths["about"] >= MIN_ABOUT, (width, widths)
        assert seen
    assert "about" not in {c.key for c, _ in fit_columns(120, "updated")}
    assert {"source", "summaries", "depth"} <= {c.key for c, _ in fit_columns(140, "updated")}


async def test_the_about_column_shows_the_brief_s_first_line_and_a_dot_without_one(
    tmp_path: Path, store: Store
) -> None:
    write_brief(store, "dag", text=DAG_BRIEF)
    app = app_for(settings_for(tmp_path, store), store)
    async with app.run_test(size=(170, 20)) as pilot:
        table = (await screen_shown(pilot, SessionsScreen)).table
        await wait_for(pilot, lambda: table.row_count == 2)
        # the brief's first line without its "About: " label, cut to the column
        await wait_for(pilot, lambda: about_cell(table, "dag").startswith("moving the config loader to one"),
                       show=lambda: about_cell(table, "dag"))
        assert about_cell(table, "raw") == "·"
        header = table.render_line(0).text
        assert "About" in header and "Source" in header and "Depth" in header


# ---------------------------------------------------------------------- the session screen
async def test_the_session_screen_shows_the_brief_with_its_title_and_range_or_says_there_is_none(
    tmp_path: Path, store: Store
) -> None:
    write_brief(store, "dag", text=DAG_BRIEF.replace("Made: config.py", f"Made: {HOSTILE}"), last_seq=40)
    app = app_for(settings_for(tmp_path, store), store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_session("dag")
        screen = await screen_shown(pilot, SessionScreen)
        panel = screen.query_one(BriefPanel)
        await wait_for(pilot, lambda: panel.border_title == "Refactoring the config loader")
        # range, tier and maker under it; a brief made before the chat's newest messages says so
        assert panel.border_subtitle == "#0–40 · normal · ollama llama3.2:3b · older than the chat"
        text = await wait_for_text(pilot, "About: moving the config loader to one TOML file read once at start.",
                                   "Problem: KeyError: 'db_path' on an empty file → fix: defaults for every field",
                                   "Refactoring the config loader", "#0–40 · normal")
        assert "[bold]BOLD[/bold] [@click=app.quit]quit[/]" in text  # chat text is shown literally
        assert panel.outer_size.height == 7  # five lines of the brief between its borders
        await pilot.press("escape")
        await screen_shown(pilot, SessionsScreen)
        app.open_session("raw")
        raw = await screen_shown(pilot, SessionScreen)
        empty = raw.query_one(BriefPanel)
        await wait_for(pilot, lambda: EMPTY in screen_text(app))
        assert empty.border_title == "Brief" and not empty.border_subtitle
        assert empty.outer_size.height == 3


async def test_on_80_by_24_the_brief_keeps_to_two_lines_and_the_tree_keeps_its_room(
    tmp_path: Path, store: Store
) -> None:
    write_brief(store, "dag", text=DAG_BRIEF)
    app = app_for(settings_for(tmp_path, store), store)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_session("dag")
        screen = await screen_shown(pilot, SessionScreen)
        await wait_for(pilot, lambda: screen.query_one(BriefPanel).border_title == "Refactoring the config loader")
        await wait_for_text(pilot, "About: moving the config loader")
        assert screen.query_one(BriefPanel).outer_size.height == 4  # a fifth of the rows: two lines
        # the tree's four roots show whole, with room to open one (it had 6 rows inside its border)
        assert screen.dag_tree.size.height >= 9
        await pilot.resize_terminal(140, 40)
        await wait_for(pilot, lambda: screen.query_one(BriefPanel).outer_size.height == 7)


async def test_the_brief_panel_follows_a_full_pass_run_from_the_app(tmp_path: Path, store: Store) -> None:
    add_garden(store)
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",), responder=brief_answer) as fake:
        settings = settings_for(tmp_path, store, ollama_host=fake.url, model="llama3.2:latest")
        app = app_for(settings, store)
        async with app.run_test(size=(170, 40)) as pilot:
            app.open_session("garden")
            screen = await screen_shown(pilot, SessionScreen)
            panel = screen.query_one(BriefPanel)
            await wait_for_text(pilot, EMPTY)
            await pilot.press("p")
            dialog = await screen_shown(pilot, RunDialog)
            await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing and dialog.counts is not None)
            await wait_for_text(pilot, "and the brief to write")
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.run_state is None and store.runs.of_session("garden") != [])
            # the brief the run made is shown as it lands, no key pressed
            await wait_for(pilot, lambda: panel.border_title == TITLE, show=lambda: panel.border_title)
            brief = store.briefs.active("garden")
            assert brief is not None and brief.run_id == store.runs.of_session("garden")[0].id
            assert panel.border_subtitle == f"#0–{len(GARDEN) - 1} · normal · ollama llama3.2:latest"
            await wait_for_text(pilot, f"About: {ABOUT}", "Ended:")
            # …and the sessions list's About column has its first line
            await pilot.press("escape")
            table = (await screen_shown(pilot, SessionsScreen)).table
            await wait_for(pilot, lambda: about_cell(table, "garden").startswith("The user planned raised garden"),
                           show=lambda: about_cell(table, "garden"))


async def test_the_backlog_offers_a_brief_that_is_all_a_session_waits_for(tmp_path: Path, store: Store) -> None:
    """Two messages in use: both in the fresh tail, so no leaf is due, but the session has no brief."""
    short = Store.open(tmp_path / "short.db")
    try:
        add_episodes(short, "short", "A short chat", 2)
        settings = Settings(db_path=short.path, config_path=tmp_path / "config.toml", policy=POLICY,
                            backend="extractive", ollama_host=closed_port_url())
        app = app_for(settings, short)
        async with app.run_test(size=(140, 40)) as pilot:
            await screen_shown(pilot, SessionsScreen)
            await pilot.press("B")
            dialog = await screen_shown(pilot, RunDialog)
            await wait_for(pilot, lambda: dialog.backlog is not None and not dialog.probing)
            text = await wait_for_text(pilot, "≈ 1 brief in 1 session")
            assert "Nothing is waiting" not in text
    finally:
        short.close()


async def test_a_brief_another_process_writes_shows_in_the_open_session(tmp_path: Path, store: Store) -> None:
    app = app_for(settings_for(tmp_path, store), store)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_session("dag")
        screen = await screen_shown(pilot, SessionScreen)
        await wait_for_text(pilot, EMPTY)
        with Store.open(store.path) as writer:  # another connection, as `hiermem-tui watch` has
            write_brief(writer, "dag", text=DAG_BRIEF)
        await wait_for(pilot, lambda: screen.query_one(BriefPanel).border_title == "Refactoring the config loader")
        await wait_for_text(pilot, "About: moving the config loader")
        assert EMPTY not in screen_text(app)
