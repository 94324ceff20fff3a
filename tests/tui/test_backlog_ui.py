"""Compacting everything in the background from the TUI (issue 20, item 4), against the fake Ollama
server: ``B`` opens the run dialog with the backlog's plan, the backlog runs while the user browses,
a session opened meanwhile gets the next summary, the state column follows it, pause, resume and
stop, quitting stops after the call in flight, and the next start says what is waiting.

Nothing of ours is mocked; every wait is on the fake server's request log or on the app's state,
never on time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp, make_app
from hiermem_tui.tui.backlog_view import session_state
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.run_history import RunHistoryScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.backlog_indicator import BacklogIndicator
from tests.fakeollama import FakeOllama, Hang, Reply
from tests.tui._session_fixtures import add_episodes, app_for
from tests.tui.conftest import screen_shown, screen_text, wait_for, wait_for_chats, wait_for_text
from tests.unit._invariants import check_invariants

POLICY = Policy(idle_after=10 ** 9, fresh_tail=16, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
                condense_fanout=3, condensed_target_tokens=80, fidelity_threshold=0.0)
"""With 30 episodes a session has 3 leaves and 1 condensation due; no fidelity retries (calls are counted)."""
SESSIONS = ("alpha", "beta", "gamma")
SIZE = (150, 40)

pytestmark = pytest.mark.usefixtures("utc_tz")


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",)) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    for sid in SESSIONS:
        add_episodes(store, sid, f"Session {sid}", 30)
    yield store
    store.close()


def settings_for(tmp_path: Path, store: Store, host: str) -> Settings:
    return Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=host, policy=POLICY,
                    model="llama3.2:latest", summary_format="plain")


def notices(app: HiermemApp) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def start_backlog(app: HiermemApp, pilot: Pilot[None]) -> RunDialog:
    """``B`` on the sessions list, the dialog's plan, ``enter``."""
    await screen_shown(pilot, SessionsScreen)
    await pilot.press("B")
    dialog = await screen_shown(pilot, RunDialog)
    await wait_for(pilot, lambda: dialog.backlog is not None and dialog.status is not None and not dialog.probing)
    await wait_for_text(pilot, "≈ 12 summaries and 3 briefs in 3 sessions")  # each session's brief comes last
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.backlog.control is not None)
    return dialog


async def test_a_session_opened_during_a_backlog_gets_the_next_summary_started(
    tmp_path: Path, store: Store, fake: FakeOllama
) -> None:
    fake.script(Hang(then=Reply("The first leaf.")), Hang(then=Reply("The opened session's first leaf.")))
    app = app_for(settings_for(tmp_path, store, fake.url), store)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await start_backlog(app, pilot)
        assert dialog.backlog is not None and dialog.backlog.summaries == 12 and len(dialog.backlog.sessions) == 3
        await wait_for_chats(pilot, fake, 1)
        control = app.backlog.control
        assert control is not None
        [first] = control.running()
        target = control.queued()[-1]  # the last in the backlog's order
        await wait_for(pilot, lambda: app.backlog_run is not None and app.backlog_run.running == (first,))
        assert session_state(first, app.backlog_waiting, app.backlog_run)[0] == "running"
        assert session_state(target, app.backlog_waiting, app.backlog_run)[0] == "queued"
        app.open_session(target)
        screen = await screen_shown(pilot, SessionScreen)
        await wait_for(pilot, lambda: app.backlog_run is not None and app.backlog_run.next_up == target)
        assert "Backlog ▶ 0/12 summaries" in screen.query_one(BacklogIndicator).plain
        fake.release()  # the call in flight ends and is kept; the opened session's summary starts next
        await wait_for_chats(pilot, fake, 2)
        assert control.running() == (target,)
        await wait_for(pilot, lambda: app.backlog_run is not None and app.backlog_run.running == (target,))
        assert session_state(target, app.backlog_waiting, app.backlog_run)[0] == "running"
        assert session_state(first, app.backlog_waiting, app.backlog_run)[0] in ("queued", "next")
        await pilot.press("ctrl+x")  # stop after the call in flight
        await wait_for(pilot, lambda: app.backlog_run is not None and app.backlog_run.phase == "stopping")
        fake.release()
        await wait_for(pilot, lambda: app.backlog_run is None)
        assert any("Backlog stopped after 2 of 12 summaries" in n for n in notices(app))
        # issue 36 item 6: run history says what happened — a move to the front and a pause, not two cancels
        await pilot.press("escape")
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("h")
        history = await screen_shown(pilot, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 2)
        await wait_for_text(pilot, "moved", "paused")
        assert "cancelled" not in screen_text(app)
    assert len(fake.chat_requests) == 2
    runs = {r.session_id: r for sid in SESSIONS for r in store.runs.of_session(sid)}
    assert runs[first].status == "moved" and f"session {target} moved to the front" in (runs[first].error or "")
    assert runs[target].status == "paused" and runs[target].summaries_created == 1
    for sid in SESSIONS:
        check_invariants(store, sid, fresh_tail=POLICY.fresh_tail)


async def test_pause_resume_quit_after_the_call_in_flight_and_the_next_start_says_what_waits(
    tmp_path: Path, store: Store, fake: FakeOllama
) -> None:
    settings = settings_for(tmp_path, store, fake.url)
    fake.script(Hang(then=Reply("Made before the pause.")))
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await start_backlog(app, pilot)
        await wait_for_chats(pilot, fake, 1)
        control = app.backlog.control
        assert control is not None
        await pilot.press("B")
        await wait_for(pilot, lambda: app.backlog_run is not None and app.backlog_run.phase == "paused")
        fake.release()
        await wait_for(pilot, lambda: control.waiting == 1)  # the next call waits at the gate
        assert len(fake.chat_requests) == 1
        assert "Backlog ⏸ paused" in app.screen.query_one(BacklogIndicator).plain
        fake.script(Hang(then=Reply("In flight when the app quits.")))
        await pilot.press("B")  # resume
        await wait_for_chats(pilot, fake, 2)
        shown = control.on_change

        def release_on_stop() -> None:  # the call in flight ends only once quitting has stopped the backlog
            if shown is not None:
                shown()
            if control.stopped:
                fake.release()

        control.on_change = release_on_stop
        await app.action_quit()
    # quitting let the call in flight finish and keep its summary, started nothing more, and left no run running
    assert len(fake.chat_requests) == 2
    runs = [r for sid in SESSIONS for r in store.runs.of_session(sid)]
    assert [r.status for r in runs] == ["paused"] and runs[0].summaries_created == 2  # not cancelled (issue 36)
    for sid in SESSIONS:
        check_invariants(store, sid, fresh_tail=POLICY.fresh_tail)

    again = make_app(settings, store, probe_backend=False, plan_backlog=True)
    async with again.run_test(size=SIZE) as pilot:
        # 10 summaries and the three sessions' briefs
        await wait_for(pilot, lambda: any("13 summaries waiting in 3 sessions" in n for n in notices(again)),
                       show=lambda: (notices(again), again.backlog_waiting))
        assert any("Press B to compact them in the background" in n for n in notices(again))
        table = again.screen.query_one("#sessions")
        await wait_for(pilot, lambda: again.backlog_waiting is not None)
        assert session_state("gamma", again.backlog_waiting, None)[0].endswith("waiting")
        assert table is not None
