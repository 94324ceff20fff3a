"""Who goes first while a backlog runs (issue 20, item 4, headless): a promoted session gets the
next summary, an interactive job goes before the backlog's next call and the backlog resumes after
it, pause, resume and stop. Real store, real runner, the fake Ollama server on loopback; every wait
is on an event of the engine or the server, none on time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from hiermem_tui.compaction import RunFinished, SummaryStarted, SummaryWritten
from hiermem_tui.compaction.backlog import Backlog, BacklogEnded
from hiermem_tui.compaction.job import Job
from hiermem_tui.compaction.priority import BacklogControl
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, Reply

from ._cli import run as cli
from ._engine_fixtures import SMALL, add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from ._invariants import check_invariants

pytestmark = pytest.mark.usefixtures("config")
SESSIONS = ("long", "wide", "old")


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    """Newest first: ``long``, ``wide``, ``old``; each has several summaries due."""
    path = tmp_path / "priority.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "old", 0, 14)
        add_episodes(store, "wide", 0, 16, words=90)
        add_episodes(store, "long", 0, 30)
    return path


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait on the test's loop until ``condition`` holds (bounded; a generous bound for a busy machine)."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), timeout)


def settings_for(db: Path, url: str) -> Settings:
    return Settings(db_path=db, ollama_host=url, model="llama3.2", policy=SMALL, summary_format="plain")


def started(events: list[object]) -> list[str]:
    return [e.session_id for e in events if isinstance(e, SummaryStarted) and e.what != "brief"]


def all_kept(store: Store, planned: int) -> None:
    """Every planned summary made once: nothing lost, nothing doubled, the DAG's rules hold."""
    made = sum(len(store.dag.summaries(sid)) for sid in SESSIONS)
    assert made == planned
    for sid in SESSIONS:
        check_invariants(store, sid, fresh_tail=SMALL.fresh_tail)


def backlog_job(store: Store, url: str, tokenizer: Tokenizer, events: list[object]
                ) -> tuple[Job, Backlog, BacklogControl]:
    """A job, its backlog (newest first) and the control it will take its sessions from."""
    job = Job(store, settings_for(store.path, url), tokenizer=tokenizer, on_event=events.append)
    plan = job.plan()
    return job, plan, BacklogControl(s.id for s in plan.sessions)


async def test_a_promoted_session_gets_the_next_summary_and_the_one_it_interrupted_resumes(
    db: Path, tokenizer: Tokenizer
) -> None:
    events: list[object] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama() as fake:
        job, plan, control = backlog_job(store, fake.url, tokenizer, events)
        assert [s.id for s in plan.sessions] == list(SESSIONS)
        fake.script(Hang(then=Reply("The first leaf of the long session.")))
        task = asyncio.ensure_future(job.backlog(plan, control=control))
        await fake.await_chats(1)
        assert control.running() == ("long",) and control.queued() == ("wide", "old")
        assert control.promote("old") and control.queued() == ("old", "wide")
        assert not control.promote("long")  # running already: nothing to move
        fake.release()
        runs = await task
        order = started(events)
        assert order[0] == "long" and order[1] == "old"  # the opened session's summary went next
        yielded = [r for r in runs if r.session_id == "long" and r.status == "moved"]  # not cancelled (issue 36)
        assert len(yielded) == 1 and "session old moved to the front" in (yielded[0].error or "")
        assert all(r.status == "done" for r in runs if r not in yielded)
        [ended] = [e for e in events if isinstance(e, BacklogEnded)]
        assert ended.reason == "done" and ended.progress.sessions_done == 3
        assert ended.progress.summaries_done == plan.summaries == len(fake.chat_requests) - plan.briefs
        assert plan.briefs == 3 and all(store.briefs.active(sid) is not None for sid in SESSIONS)
        all_kept(store, plan.summaries)
    code, out, err = cli("doctor", "--db", str(db))
    assert code == 0, out + err


async def test_an_interactive_run_goes_before_the_backlogs_next_call_and_the_backlog_resumes(
    db: Path, tokenizer: Tokenizer
) -> None:
    backlog_events: list[object] = []
    mine: list[object] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama() as fake:
        job, plan, control = backlog_job(store, fake.url, tokenizer, backlog_events)
        fake.script(Hang(then=Reply("The backlog's first leaf.")))
        task = asyncio.ensure_future(job.backlog(plan, control=control))
        await fake.await_chats(1)
        interactive = Job(store, job.settings, tokenizer=tokenizer, on_event=mine.append)
        asked = asyncio.ensure_future(interactive.run(lambda r: r.compact("long", "full"), goes_before=control,
                                                      session_id="long"))
        await until(lambda: control.holding == 1 and control.waiting == 1)  # held; waits for the call in flight
        assert len(fake.chat_requests) == 1
        fake.release()
        run = await asked
        assert run is not None and run.status == "done" and run.summaries_created > 0
        backlog_written = [e for e in backlog_events if isinstance(e, SummaryWritten)]
        assert len(backlog_written) == 1  # no backlog call between the interactive run's calls
        runs = await task
        assert started(backlog_events)[1:] and "long" not in started(backlog_events)[1:]  # re-planned: nothing left
        [moved] = [r for r in runs if r.session_id == "long"]
        assert moved.status == "moved" and "an interactive run on this session went first" in (moved.error or "")
        assert all(r.status == "done" for r in runs if r.session_id != "long")
        assert 1 + run.summaries_created + sum(r.summaries_created for r in runs if r.session_id != "long") \
            == plan.summaries
        all_kept(store, plan.summaries)


async def test_pause_holds_the_backlog_after_the_call_in_flight_resume_goes_on_stop_ends_it(
    db: Path, tokenizer: Tokenizer
) -> None:
    events: list[object] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama() as fake:
        job, plan, control = backlog_job(store, fake.url, tokenizer, events)
        fake.script(Hang(then=Reply("Kept while paused.")))
        task = asyncio.ensure_future(job.backlog(plan, control=control))
        await fake.await_chats(1)
        control.pause()
        fake.release()
        await until(lambda: control.waiting == 1)  # the next call waits at the gate
        assert len(fake.chat_requests) == 1 and control.paused
        fake.script(Reply("Another."), Hang(then=Reply("The call in flight when it stopped.")))
        control.resume()
        await fake.await_chats(3)
        job.cancel.finish_current("paused")
        control.stop()
        fake.release()
        runs = await task
        assert len(fake.chat_requests) == 3
        assert [r.status for r in runs] == ["paused"] and runs[0].summaries_created == 3
        [ended] = [e for e in events if isinstance(e, BacklogEnded)]
        assert ended.reason == "paused" and ended.progress.summaries_done == 3
        assert [e.status for e in events if isinstance(e, RunFinished)] == ["paused"]
        for sid in SESSIONS:
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail)
