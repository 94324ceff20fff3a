"""Runs from the UI against the fake Ollama server: indicator, counters, cancel, problems, sessions list.

Nothing of ours is mocked: the app runs the real engine in its thread worker, which talks
HTTP to tests/fakeollama.py. Synchronisation is by events (the fake server's request log,
``wait_for`` on UI state), never by sleeping.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.widgets import Checkbox, OptionList
from textual.pilot import Pilot

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.run_job import RunProgress
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.run_history import RunHistoryScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.run_indicator import RunIndicator, phase_text
from tests.fakeollama import Drop, FakeOllama, Hang, Reply, closed_port_url, empty, longer_than_input, not_ollama_server
from tests.tui._session_fixtures import add_episodes, app_for, build_dag_session
from tests.tui.conftest import app_for as app_at_now
from tests.tui.conftest import (DEADLINE, NOW, screen_shown, screen_text, wait_for, wait_for_chats, wait_for_footer,
                                wait_for_text)

POLICY = Policy(idle_after=10 ** 9, fresh_tail=16, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
                condense_fanout=3, condensed_target_tokens=80, fidelity_threshold=0.0)
"""With 30 episodes: a leaf pass writes 3 leaves, a full pass 3 leaves and 1 condensation. No fidelity
retries: these tests count model calls (test_repair_ui.py covers the guard in the UI)."""
SIZE = (150, 40)


pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:0.5b"), loaded=("llama3.2:latest",)) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    add_episodes(store, "work", "Plan the garden", 30)
    build_dag_session(store)
    yield store
    store.close()


def settings_for(tmp_path: Path, store: Store, host: str, **kw: object) -> Settings:
    return Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=host, policy=POLICY,
                    **kw)  # type: ignore[arg-type]


@asynccontextmanager
async def opened(settings: Settings, store: Store, session_id: str = "work"
                 ) -> AsyncIterator[tuple[HiermemApp, Pilot, SessionScreen]]:
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        app.open_session(session_id)
        screen = await screen_shown(pilot, SessionScreen)
        yield app, pilot, screen


async def open_dialog(app: HiermemApp, pilot: Pilot, key: str) -> RunDialog:
    """Press ``key``, wait for the run dialog and for its fresh probe of the backend to land."""
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
    dialog = app.screen
    assert isinstance(dialog, RunDialog)
    await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing and dialog.counts is not None)
    return dialog


def notices(app: HiermemApp) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def indicator(screen: SessionScreen) -> RunIndicator:
    return screen.query_one(RunIndicator)


async def test_full_pass_shows_progress_counters_and_new_nodes(tmp_path: Path, store: Store, fake: FakeOllama) -> None:
    fake.script(
        Reply("Leaf one: the user planned beds."),             # normal
        longer_than_input(), Reply("Leaf two, terse."),         # normal too long → aggressive
        empty(), empty(),                                       # both model tiers fail → fallback
        Hang(),                                                 # the condensation waits for us
    )
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        assert not indicator(screen).has_class("-active")
        roots_before = [n.data.key for n in screen.dag_tree.root.children if n.data is not None]
        assert roots_before == ["g:0", "t:14"]
        dialog = await open_dialog(app, pilot, "p")
        assert dialog.action == "full" and dialog.chosen is not None and dialog.chosen.model == "llama3.2:latest"
        # the session's brief comes last, said apart from the summaries (no "d-1" row, no fifth summary)
        text = await wait_for_text(pilot, "≈ 4 summaries and the brief to write", "loaded")
        assert re.search(r"brief\s+#0–29", text) and "d-1" not in text
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and indicator(screen).has_class("-active"))
        await wait_for_chats(pilot, fake, 6)
        await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 3
                       and app.run_state.what.startswith("depth 1"))
        text = indicator(screen).plain
        assert "Summarising… depth 1 over 3 summaries" in text and "3/4" in text
        assert "1 normal" in text and "1 aggressive" in text and "1 fallback" in text
        # the condensation's call hangs before its first token: the model is reading the prompt, and no
        # tokens/s is shown while it does (issue 21 item 7: the run's figure read "3–4 tok/s" there)
        await wait_for(pilot, lambda: "reading the prompt" in indicator(screen).plain)
        assert "tok/s" not in indicator(screen).plain
        await wait_for_text(pilot, "Summarising…")
        # the tree gained the three leaves while the run is still going
        await wait_for(pilot, lambda: sum(1 for n in screen.dag_tree.root.children
                                          if n.data is not None and n.data.kind == "summary") == 3)
        assert screen.session is not None and screen.session.summaries == 3 and screen.session.fallbacks == 1
        fake.release()
        await wait_for(pilot, lambda: app.run_state is None)
        assert not indicator(screen).has_class("-active")
        [run] = store.runs.of_session("work")
        assert (run.status, run.normal, run.aggressive, run.fallback) == ("done", 2, 1, 1)
        assert any("Full pass done" in n and f"4 summaries (2 normal · 1 aggressive · 1 fallback · {run.flagged} flagged)"
                   " and the brief in" in n and "press f" in n and ("X repairs them" in n) == (run.flagged > 0)
                   for n in notices(app))
        await wait_for(pilot, lambda: [n.data.kind for n in screen.dag_tree.root.children if n.data] == ["summary", "tail"])


@pytest.mark.parametrize("cancel", [False, True])
async def test_after_a_leaf_pass_the_detail_pane_shows_the_new_tree_not_the_empty_state(
    tmp_path: Path, store: Store, fake: FakeOllama, cancel: bool
) -> None:
    """Issue 21 item 6: after a leaf pass (done or cancelled) the tree showed the new leaves but the detail
    pane still said "No summaries yet … has not been compacted" until the cursor moved."""
    fake.script(Reply("First leaf."), Reply("Second leaf."), Hang() if cancel else Reply("Third leaf."))
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        await wait_for(pilot, lambda: "No summaries yet" in screen.detail.plain)
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        if cancel:
            await wait_for_chats(pilot, fake, 3)
            await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 2)
            await pilot.press("escape")
        await wait_for(pilot, lambda: app.run_state is None and store.runs.of_session("work") != [])
        await wait_for(pilot, lambda: screen.session is not None and screen.session.summaries >= 2)
        await wait_for(pilot, lambda: "No summaries yet" not in screen.detail.plain, show=lambda: screen.detail.plain)
        ref = screen.dag_tree.cursor_ref
        assert ref is not None and screen.selected is not None and screen.selected.key == ref.key
        assert "has not been compacted" not in screen.detail.plain


async def test_the_indicator_always_shows_summarising_and_the_outcome_stays_off_the_pane_borders(
    tmp_path: Path, store: Store, fake: FakeOllama
) -> None:
    """Issue 21 item 7: at 140 columns the indicator read "Summarisi…"; the done/cancelled notice was
    drawn over the pane border."""
    from textual.widgets._toast import Toast

    fake.script(Hang())
    settings = settings_for(tmp_path, store, fake.url, model="llama3.2:latest")
    app = app_for(settings, store)
    async with app.run_test(size=(120, 34), notifications=True) as pilot:
        app.open_session("work")
        screen = await screen_shown(pilot, SessionScreen)
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        await wait_for_chats(pilot, fake, 1)
        await wait_for(pilot, lambda: "reading the prompt" in indicator(screen).plain)
        text = await wait_for_text(pilot, "0 fallback")
        [row] = [line for line in text.splitlines() if "0 fallback" in line]
        assert "Summarising…" in row and "reading the prompt" in row, row
        fake.release()  # the rest answer at once: the pass finishes and says so
        await wait_for(pilot, lambda: app.run_state is None and bool(screen.query(Toast)),
                       show=lambda: (app.run_state, notices(app)))
        await pilot.pause()
        panes = [screen.dag_tree.region, screen.query_one("#session-right").region]
        for toast in screen.query(Toast):
            box = toast.region
            for pane in panes:
                bottom_border = pane.bottom - 1
                right_border = pane.right - 1
                overlaps_x = box.x < pane.right and pane.x < box.right
                assert not (overlaps_x and box.y <= bottom_border < box.bottom), (box, pane)
                assert not (box.y < pane.bottom and pane.y < box.bottom and box.x <= right_border < box.right), (box, pane)


async def test_escape_cancels_mid_call_and_keeps_what_was_written(tmp_path: Path, store: Store,
                                                                  fake: FakeOllama) -> None:
    fake.script(Reply("First leaf."), Reply("Second leaf."), Hang())
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        phases: list[str] = []
        app.watch(app, "run_state", lambda s: phases.append(phase_text(s) if isinstance(s, RunProgress) else "idle"))
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        await wait_for_chats(pilot, fake, 3)
        await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 2)
        await wait_for_footer(pilot, "esc Cancel run")  # the footer says what esc does now
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.run_state is None)
        assert app.screen is screen  # esc cancelled the run; it did not leave the session
        # read the notice first: it times out, and the wait below may block for a while on a busy machine
        assert any("Leaf pass cancelled" in n and "2 summaries written before the cancel are kept" in n
                   for n in notices(app))
        assert "Cancelling…" in phases and phases[-1] == "idle"
        assert fake.chat_requests[2].disconnected.wait(DEADLINE), "the hanging HTTP request was not aborted"
        assert len(fake.chat_requests) == 3
        [run] = store.runs.of_session("work")
        assert run.status == "cancelled" and run.summaries_created == 2
        assert len(store.dag.summaries("work")) == 2
        assert not indicator(screen).has_class("-active")
        assert "Cancel run" not in await wait_for_footer(pilot, "esc Back")
        await pilot.press("escape")  # no run now: esc is Back again
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionScreen))


LONG_ID = "claude-code:-home-ana-src-payments-service/6f1c2b9e-8d4a-4f3e-9b7a-2c5d1e0f3a47"
"""A session id as long as Claude Code's: with it the notice of a lost host ran past its clip."""


async def test_a_host_lost_mid_run_is_named_in_a_whole_notice(tmp_path: Path, store: Store) -> None:
    """Issue 36 item 10: the warning was cut mid-word ("(gave u…") and its advice was wrong for a remote host."""
    from textual.widgets._toast import Toast

    add_episodes(store, LONG_ID, "Payments", 30)
    with FakeOllama() as a, FakeOllama() as b:
        a.script(Hang())  # the first leaf is in flight on a when a goes down
        settings = settings_for(tmp_path, store, a.url, model="llama3.2", ollama_hosts=(a.url, b.url))
        app = app_for(settings, store)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            app.open_session(LONG_ID)
            screen = await screen_shown(pilot, SessionScreen)
            await open_dialog(app, pilot, "l")
            await pilot.press("enter")
            await wait_for_chats(pilot, a, 1)
            a.stop()
            await wait_for(pilot, lambda: any(n.title == "Ollama host lost" for n in app._notifications),
                           show=lambda: notices(app))
            [lost] = [n for n in app._notifications if n.title == "Ollama host lost"]
            text = str(lost.message)
            assert re.fullmatch(
                rf"host {re.escape(a.url)} went away mid-call \(connection (closed before an answer|lost mid-answer)\): "
                rf"leaf #0–\d+ of session {re.escape(LONG_ID)} is being made again on host {re.escape(b.url)}, "
                rf"and {re.escape(a.url)} gets no more work in this job; start it with 'ollama serve'", text), text

            def toasts() -> list[Toast]:
                return [t for t in screen.query(Toast) if t._notification is lost and t.region.height > 2]

            await wait_for(pilot, toasts)
            [toast] = toasts()
            box = toast.content_region
            rows = screen_text(app).splitlines()[box.y:box.bottom]
            shown = "".join(row[box.x:box.right] for row in rows)
            assert "".join(text.split()) in "".join(shown.split())  # all of it on screen, wrapped, not clipped
            await wait_for(pilot, lambda: app.run_state is None, show=lambda: notices(app))
        [run] = store.runs.of_session(LONG_ID)
        assert run.status == "done" and len(a.chat_requests) == 1 and b.chat_requests


async def test_ollama_down_is_a_notice_and_nothing_is_recorded(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store, closed_port_url()), store) as (app, pilot, screen):
        dialog = await open_dialog(app, pilot, "l")
        await wait_for_text(pilot, "not reachable", "extractive still works")
        # with Ollama down the dialog offers extractive first, so enter would still work
        assert dialog.chosen is not None and dialog.chosen.backend == "extractive"
        options = dialog.query_one(OptionList)
        options.focus()
        await wait_for(pilot, lambda: options.has_focus)
        await pilot.press("down")  # the user insists on Ollama
        await wait_for(pilot, lambda: dialog.chosen is not None and dialog.chosen.backend == "ollama",
                       show=lambda: dialog.chosen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("not reachable" in n for n in notices(app)) and app.run_state is None)
        [notice] = [n for n in app._notifications if "not reachable" in str(n.message)]
        assert notice.severity == "error" and "ollama serve" in str(notice.message) and "\n" not in str(notice.message)
        assert store.runs.of_session("work") == [] and store.dag.summaries("work") == []


async def test_a_host_that_is_not_ollama_is_named_so_in_the_dialog_and_the_notice(tmp_path: Path, store: Store) -> None:
    """Issue 21 item 3: the TUI said "unexpected error: ModelError … <!DOCTYPE HTML>"."""
    (tmp_path / "www").mkdir()
    with not_ollama_server(tmp_path / "www") as url:
        async with opened(settings_for(tmp_path, store, url, model="llama3.2"), store) as (app, pilot, screen):
            dialog = await open_dialog(app, pilot, "l")
            await wait_for_text(pilot, f"{url} is not an Ollama server (HTTP 404 on /api/version)")
            options = dialog.query_one(OptionList)
            options.focus()
            await wait_for(pilot, lambda: options.has_focus)
            if dialog.chosen is None or dialog.chosen.backend != "ollama":
                await pilot.press("down")
            await wait_for(pilot, lambda: dialog.chosen is not None and dialog.chosen.backend == "ollama")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("is not an Ollama server" in n for n in notices(app))
                           and app.run_state is None)
            [notice] = [n for n in app._notifications if "is not an Ollama server" in str(n.message)]
            assert f"{url} is not an Ollama server (HTTP 404 on /api/tags)" in str(notice.message)
            assert "unexpected" not in str(notice.message) and "DOCTYPE" not in str(notice.message)
            assert store.runs.of_session("work") == []


async def test_missing_model_notice_lists_the_installed_ones(tmp_path: Path, store: Store, fake: FakeOllama) -> None:
    settings = settings_for(tmp_path, store, fake.url, model="nope:1b")
    async with opened(settings, store) as (app, pilot, screen):
        dialog = await open_dialog(app, pilot, "p")
        assert dialog.chosen is not None and dialog.chosen.model == "nope:1b"  # the configured one, flagged
        await wait_for_text(pilot, "not installed")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("nope:1b" in n for n in notices(app)) and app.run_state is None)
        message = next(n for n in notices(app) if "nope:1b" in n)
        assert "llama3.2:latest" in message and "qwen2.5:0.5b" in message
        assert store.runs.of_session("work") == [] and fake.chat_requests == []


async def test_server_dying_mid_run_says_why_and_what_was_kept(tmp_path: Path, store: Store,
                                                               fake: FakeOllama) -> None:
    fake.script(Reply("First leaf."), Drop(), Drop(), Drop(), Drop())
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.run_state is None and store.runs.of_session("work") != [], timeout=2 * DEADLINE)
        [run] = store.runs.of_session("work")
        assert run.status == "failed" and run.summaries_created == 1 and run.fallback == 0
        [notice] = [n for n in app._notifications if "Leaf pass failed" in n.title]
        assert notice.severity == "error"
        assert "1 summary written before the failure is kept" in str(notice.message)
        assert "not reachable" in str(notice.message) or "connection" in str(notice.message)


async def test_one_run_at_a_time_and_remembering_the_choice(tmp_path: Path, store: Store, fake: FakeOllama) -> None:
    fake.script(Hang())
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        await wait_for_chats(pilot, fake, 1)
        await pilot.press("p")  # a second run is refused while the first goes
        await wait_for(pilot, lambda: any("already going" in n for n in notices(app)), show=lambda: notices(app))
        assert not isinstance(app.screen, RunDialog)
        app.runs.cancel()
        await wait_for(pilot, lambda: app.run_state is None)
        dialog = await open_dialog(app, pilot, "l")
        await pilot.press("home", "m")  # extractive, remembered
        remember = dialog.query_one(Checkbox)
        await wait_for(pilot, lambda: dialog.chosen is not None and dialog.chosen.backend == "extractive"
                       and remember.value, show=lambda: (dialog.chosen, remember.value))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.run_state is None and len(store.runs.of_session("work")) == 2)
        assert app.settings.backend == "extractive"
        assert 'backend = "extractive"' in (tmp_path / "config.toml").read_text()
        assert sorted(r.status for r in store.runs.of_session("work")) == ["cancelled", "done"]
        assert any(r.backend == "extractive" and r.status == "done" for r in store.runs.of_session("work"))


async def test_compact_from_the_sessions_list(tmp_path: Path, store: Store) -> None:
    app = app_for(settings_for(tmp_path, store, closed_port_url(), backend="extractive"), store)
    async with app.run_test(size=SIZE) as pilot:
        table = (await screen_shown(pilot, SessionsScreen)).table
        await wait_for(pilot, lambda: table.row_count == 2)
        rows = [table.session_at(i).id for i in range(table.row_count)]  # type: ignore[union-attr]
        table.cursor_row = rows.index("work")
        dialog = await open_dialog(app, pilot, "p")
        assert dialog.session_id == "work" and dialog.action == "full"
        assert dialog.chosen is not None and dialog.chosen.backend == "extractive"  # remembered in settings
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.run_state is None and store.runs.of_session("work") != [])
        assert app.screen.id == "sessions-screen"  # never opened the session
        [run] = store.runs.of_session("work")
        assert run.status == "done" and run.summaries_created == 4
        session = store.sessions.get("work")
        assert session is not None and session.summaries == 4 and session.max_depth == 1
        await wait_for(pilot, lambda: "Full pass done" in " ".join(notices(app)))


async def test_run_keys_are_in_the_footer_the_palette_and_the_help(tmp_path: Path, store: Store) -> None:
    from textual.command import CommandList, CommandPalette

    from hiermem_tui.tui.screens.help import help_markdown

    async with opened(settings_for(tmp_path, store, closed_port_url()), store) as (app, pilot, screen):
        await wait_for_footer(pilot, "p Compact", "R Re-summarise", "v Versions", "esc Back")
        await pilot.press("R")  # the cursor is on the unsummarised gap, not a summary
        await wait_for(pilot, lambda: any("R re-summarises it" in n for n in notices(app)), show=lambda: notices(app))
        await pilot.press("v")
        await wait_for(pilot, lambda: any("v lists its versions" in n for n in notices(app)), show=lambda: notices(app))
        assert app.screen is screen  # neither opened a dialog
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        commands = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: commands.option_count > 10)
        titles = {str(commands.get_option_at_index(i).prompt).split("\n")[0] for i in range(commands.option_count)}
        for title in ("Compact: full pass", "Compact: leaf pass", "Compact: condensation pass",
                      "Re-summarise the selected summary", "Re-summarise the whole session",
                      "Versions of the selected summary"):
            assert any(t.startswith(title) for t in titles), title
    text = help_markdown()
    for row in ("`p` / `l` / `n`", "`R`", "`W`", "`v`", "cancel it (what it finished is kept)"):
        assert row in text, row


async def test_quitting_mid_run_records_it_as_cancelled(tmp_path: Path, store: Store, fake: FakeOllama) -> None:
    fake.script(Reply("First leaf."), Hang())
    async with opened(settings_for(tmp_path, store, fake.url), store) as (app, pilot, screen):
        await open_dialog(app, pilot, "l")
        await pilot.press("enter")
        await wait_for_chats(pilot, fake, 2)
        await wait_for(pilot, lambda: app.run_state is not None and app.run_state.done == 1)
    # the app has exited: its unmount cancelled the run and waited for it to record that
    assert fake.chat_requests[1].disconnected.wait(DEADLINE)
    [run] = store.runs.of_session("work")
    assert run.status == "cancelled" and run.summaries_created == 1


def test_time_left_is_the_estimate_corrected_by_the_runs_pace(tmp_path: Path) -> None:
    """Issue 20: the footer climbed from ~1 m 10 s to ~3 m 35 s on a run that took 6 s. It is now the
    shared estimator's: the run's estimate scaled by its own pace."""
    from hiermem_tui.tui.run_job import RunJob

    job = RunJob(1, "full", "work", Settings(db_path=tmp_path / "x.db"))
    start = RunProgress(job, phase="running", planned=4, est_seconds=100.0, began=1000.0)
    assert start.seconds_left(1010.0) == 90.0  # nothing landed yet: the estimate, minus the time spent
    assert start.seconds_left(1030.0) == 75.0  # the first summary overran its 25 s: the other three are left
    assert RunProgress(job, planned=4, began=1000.0).seconds_left(1030.0) is None  # no estimate, nothing done
    paced = RunProgress(job, phase="running", planned=4, done=1, est_seconds=100.0, began=1000.0, done_at=1040.0)
    # 40 s for a 25 s estimate: pace 1.6 on the 75 s left, less the 1 s in flight
    assert paced.seconds_left(1041.0) == pytest.approx(119.0)
    assert RunProgress(job, planned=4, done=4, began=1000.0, done_at=1100.0).seconds_left(1101.0) is None


@pytest.mark.parametrize("key", ["p", "R", "W"])
async def test_a_read_only_file_refuses_a_run_at_once_not_after_the_dialog(
    tmp_path: Path, store: Store, key: str
) -> None:
    """Issue 21 item 8: p, R and W opened the whole run dialog on a read-only file and refused only at Start."""
    readonly = Store.open(store.path, readonly=True)
    try:
        async with opened(settings_for(tmp_path, readonly, closed_port_url()), readonly, "dag") as (app, pilot, screen):
            await wait_for(pilot, lambda: screen.dag_tree.cursor_ref is not None
                           and screen.dag_tree.cursor_ref.kind == "summary")
            await pilot.press(key)
            await wait_for(pilot, lambda: any("read-only" in n for n in notices(app)))
            [notice] = [n for n in app._notifications if "read-only" in str(n.message)]
            assert notice.severity == "error" and "runs cannot write summaries" in str(notice.message)
            assert not isinstance(app.screen, RunDialog) and app.screen is screen
    finally:
        readonly.close()


async def test_run_history_rows_stay_aligned_when_a_run_is_of_another_year(tmp_path: Path, store: Store) -> None:
    """Issue 36 item 11: a run of another year writes its year ("Dec 7 2025 17:41"), which pushed the rest
    of its row right of the others'."""
    for status, started in (("done", NOW.replace(year=NOW.year - 1, month=12, day=17)), ("failed", NOW)):
        run = store.runs.start("work", "leaf", "ollama", "llama3.2")
        store.runs.finish(run.id, status, wall_seconds=2.0, error="gone" if status == "failed" else None)
        store.db.conn.execute("UPDATE runs SET started_at = ? WHERE id = ?",
                              (started.strftime("%Y-%m-%dT%H:%M:%S.000Z"), run.id))
    app = app_at_now(settings_for(tmp_path, store, closed_port_url()), store)  # "now" is NOW: this year's run has no year
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("h")
        history = await screen_shown(pilot, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 2)
        text = await wait_for_text(pilot, f"Dec 17 {NOW.year - 1}", "failed")
        old = next(line for line in text.splitlines() if f"Dec 17 {NOW.year - 1}" in line)
        new = next(line for line in text.splitlines() if " failed " in line)
        assert old.index("done ") == new.index("failed "), (old, new)
        assert old.index("leaf pass") == new.index("leaf pass")
