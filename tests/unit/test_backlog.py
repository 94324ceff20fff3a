"""The backlog (issue 20): every summary due across the file in an order, ``backlog --json``,
``compact --all --order / --for``, and the one job both front ends drive. Real store, real
runner, the fake Ollama server on loopback."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from hiermem_tui.compaction.backlog import (
    Backlog,
    BacklogEnded,
    BacklogProgress,
    BacklogSession,
    BacklogTracker,
    plan_backlog,
)
from hiermem_tui.compaction.estimate import TITLE_TOKENS, Estimator, Speed
from hiermem_tui.compaction.job import Job, JobError
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, Reply, closed_port_url

from ._cli import run as cli
from ._engine_fixtures import SMALL, add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from ._invariants import check_invariants

pytestmark = pytest.mark.usefixtures("config")
BACKLOG_KEYS = {"order", "model", "speed", "summaries", "input_tokens", "est_seconds", "sessions", "briefs"}
SESSION_KEYS = {"id", "title", "summaries", "input_tokens", "est_seconds", "briefs"}


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    """Four sessions: ``long`` is the newest, ``wide`` the largest, ``old`` the oldest activity,
    ``tiny`` has only its brief due (all of its episodes are the fresh tail)."""
    path = tmp_path / "backlog.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "old", 0, 12)
        add_episodes(store, "wide", 0, 16, words=90)
        add_episodes(store, "long", 0, 30)
        add_episodes(store, "tiny", 0, 3)
    return path


def test_backlog_json_has_the_issues_shape_in_each_order(db: Path) -> None:
    host = closed_port_url()
    code, out, err = cli("backlog", "--db", str(db), "--json", "--model", "qwen2.5:1.5b", "--ollama-host", host)
    assert code == 0, err
    plan = json.loads(out)
    assert set(plan) == BACKLOG_KEYS and plan["order"] == "newest" and plan["model"] == "qwen2.5:1.5b"
    assert set(plan["speed"]) == {"prompt_tps", "output_tps", "call_s", "measured"} and plan["speed"]["measured"] is False
    assert [s["id"] for s in plan["sessions"]] == ["long", "wide", "old", "tiny"]  # tiny: its brief only
    assert all(set(s) == SESSION_KEYS and s["briefs"] == 1 and s["est_seconds"] > 0 for s in plan["sessions"])
    assert [s["summaries"] for s in plan["sessions"]][-1] == 0 and plan["briefs"] == 4
    assert plan["summaries"] == sum(s["summaries"] for s in plan["sessions"])
    assert plan["input_tokens"] == sum(s["input_tokens"] for s in plan["sessions"])
    assert plan["est_seconds"] == pytest.approx(sum(s["est_seconds"] for s in plan["sessions"]), abs=0.5)
    orders = {}
    for order in ("oldest", "largest"):
        code, out, _ = cli("backlog", "--db", str(db), "--json", "--order", order, "--ollama-host", host)
        orders[order] = [s["id"] for s in json.loads(out)["sessions"]]
    assert orders == {"oldest": ["tiny", "old", "wide", "long"], "largest": ["wide", "long", "old", "tiny"]}
    wide = next(s for s in plan["sessions"] if s["id"] == "wide")
    code, out, _ = cli("backlog", "--db", str(db), "--json", "--if-over", "2000", "--ollama-host", host)
    assert [s["id"] for s in json.loads(out)["sessions"]] == ["wide"] and wide["input_tokens"] > 2000
    code, out, _ = cli("backlog", "--db", str(db), "--model", "qwen2.5:1.5b", "--ollama-host", host)
    assert code == 0 and out.startswith(f"{plan['summaries']} summaries and 4 briefs waiting in 4 sessions")
    assert "a guess from the model's size (1.5B;" in out  # offline: said plainly, never "~?"


def test_the_backlog_is_what_compact_all_then_makes_in_that_order(db: Path) -> None:
    code, out, _ = cli("backlog", "--db", str(db), "--json", "--backend", "extractive", "--order", "largest")
    plan = json.loads(out)
    assert plan["speed"]["measured"] is False and plan["est_seconds"] == 0
    code, out, err = cli("compact", "--db", str(db), "--all", "--order", "largest", "--backend", "extractive", "--json")
    assert code == 0, err
    runs = json.loads(out)
    assert [r["session"] for r in runs] == [s["id"] for s in plan["sessions"]]
    assert [r["summaries_created"] for r in runs] == [s["summaries"] for s in plan["sessions"]]
    code, out, _ = cli("backlog", "--db", str(db), "--json", "--backend", "extractive")
    assert json.loads(out)["sessions"] == []
    code, out, _ = cli("compact", "--db", str(db), "--all", "--backend", "extractive")
    assert code == 0 and out.strip() == "nothing to compact"


@pytest.mark.parametrize(("argv", "message"), [
    (("--session", "old", "--for", "30m"), "--for works through the backlog: use it with --all"),
    (("--all", "--for", "soon"), "expected a duration like 30m, 2h or 1h30m"),
    (("--all", "--order", "random"), "invalid choice"),
])
def test_bad_backlog_options_are_usage_errors(db: Path, argv: tuple[str, ...], message: str) -> None:
    code, out, err = cli("compact", "--db", str(db), *argv, "--backend", "extractive")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


async def until(condition: Callable[[], bool]) -> None:
    """Wait, on the test's loop, until ``condition`` holds (the caller bounds it)."""
    while not condition():
        await asyncio.sleep(0.01)


def settings_for(db: Path, url: str) -> Settings:
    return Settings(db_path=db, ollama_host=url, model="llama3.2", policy=SMALL, summary_format="plain")


async def test_a_spent_budget_stops_after_the_call_in_flight_and_the_next_backlog_resumes(
    db: Path, tokenizer: Tokenizer
) -> None:
    events: list[object] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama() as fake:
        settings = settings_for(db, fake.url)
        job = Job(store, settings, tokenizer=tokenizer, on_event=events.append)
        plan = job.plan()
        assert plan.summaries > 3
        fake.script(Reply("The first leaf was summarised."), Hang(then=Reply("The second leaf, kept.")))
        task = asyncio.ensure_future(job.backlog(plan, budget_s=0.2))
        await fake.await_chats(2)  # the second call hangs until the budget is spent
        await asyncio.wait_for(until(lambda: job.budget_spent), 10)
        fake.release()  # the call in flight finishes and is kept; no other starts
        runs = await task
        assert len(fake.chat_requests) == 2
        assert [r.status for r in runs] == ["budget"] and runs[0].summaries_created == 2
        [ended] = [e for e in events if isinstance(e, BacklogEnded)]
        assert ended.reason == "budget" and ended.progress.summaries_done == 2
        progress = [e for e in events if isinstance(e, BacklogProgress)]
        assert [p.summaries_done for p in progress][:2] == [1, 2] and all(p.summaries == plan.summaries
                                                                          for p in progress)
        first_ids = {s.id for sid in ("long", "wide", "old") for s in store.dag.summaries(sid)}

        again = Job(store, settings, tokenizer=tokenizer)
        rest = again.plan()
        assert rest.summaries == plan.summaries - 2
        runs = await again.backlog(rest)
        assert all(r.status == "done" for r in runs) and sum(r.summaries_created for r in runs) == rest.summaries
        assert again.plan().summaries == 0
        for sid in ("long", "wide", "old"):
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail)
        kept = {s.id for sid in ("long", "wide", "old") for s in store.dag.summaries(sid)}
        assert first_ids <= kept  # nothing the stopped run made was made again
        assert len(fake.chat_requests) == 2 + rest.summaries + rest.briefs  # a call per summary, one per brief
    code, out, err = cli("doctor", "--db", str(db))
    assert code == 0, out + err


async def test_a_run_that_made_all_it_had_to_reads_done_though_the_budget_ran_out_during_its_last_call(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """A run is ``budget`` only when the budget left something of it undone (issue 36 item 6): one whose
    last call (its brief) was in flight when the time ran out made everything and reads ``done``."""
    db = tmp_path / "one.db"
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, "one", 0, 8)
        job = Job(store, settings_for(db, fake.url), tokenizer=tokenizer)
        plan = job.plan()
        assert (plan.summaries, plan.briefs) == (1, 1)  # one leaf, nothing to condense after it, then the brief
        fake.script(Reply("The only leaf."), Hang(then=Reply("Title: One\nAbout: Episodes of one.")))
        task = asyncio.ensure_future(job.backlog(plan, budget_s=0.05))
        await fake.await_chats(2)
        await asyncio.wait_for(until(lambda: job.budget_spent), 10)
        fake.release()
        runs = await task
        assert [(r.status, r.summaries_created) for r in runs] == [("done", 1)]


def test_compact_all_for_records_a_run_the_spent_budget_stopped_as_budget_not_cancelled(db: Path) -> None:
    """Issue 36 item 6: a ``--for`` budget running out is a normal stop. The run it cut reads ``budget``
    in ``compact --json`` and ``runs --json`` (``cancelled`` stays for a user's cancel), the command exits
    0, and ``doctor`` finds the file healthy."""
    got: list[tuple[int, str, str]] = []
    with FakeOllama() as fake:
        fake.script(Hang(then=Reply("The first leaf, finished after the budget ran out.")))
        argv = ("compact", "--db", str(db), "--all", "--for", "0.5s", "--json", "--model", "llama3.2",
                "--ollama-host", fake.url)
        command = threading.Thread(target=lambda: got.append(cli(*argv)))
        command.start()
        try:
            fake.wait_for_chats(1, timeout=60)
            arrived = time.monotonic()
            # The budget is time itself: its timer was set before this first call went out, so once its
            # length has passed since the call arrived it is spent (the command's loop, idle while the
            # call hangs, runs the timer when it is due). Only then does the call in flight end.
            threading.Event().wait(0.55 - (time.monotonic() - arrived))
        finally:
            fake.release()
            command.join(60)
        assert len(fake.chat_requests) >= 1
    [(code, out, err)] = got
    assert code == 0, err
    runs = json.loads(out)
    assert [r["status"] for r in runs] == ["budget"] and runs[0]["summaries_created"] == 1
    assert "the time budget (0.5s) is spent" in err and "Traceback" not in err
    code, out, _ = cli("runs", "--db", str(db), "--json")
    assert code == 0 and [r["status"] for r in json.loads(out)] == ["budget"]
    code, out, _ = cli("runs", "--db", str(db))
    assert "budget" in out and "time budget" in out
    code, out, err = cli("doctor", "--db", str(db), "--full")
    assert code == 0, out + err


async def test_the_job_maps_what_refuses_it_in_one_place(db: Path, tokenizer: Tokenizer) -> None:
    with Store.open(db, tokenizer=tokenizer) as store:
        job = Job(store, settings_for(db, closed_port_url()), tokenizer=tokenizer)
        with pytest.raises(JobError) as down:
            await job.backlog(job.plan())
        assert down.value.kind == "backend" and down.value.title == "Backend not ready — nothing ran"
        assert "not reachable" in down.value.message and store.runs.of_session("long") == []
        with FakeOllama() as fake:
            job = Job(store, settings_for(db, fake.url), tokenizer=tokenizer)
            with pytest.raises(JobError) as refused:
                await job.run(lambda runner: runner.compact("nope", "leaf"))
            assert refused.value.kind == "refused" and "no session nope" in refused.value.message
            job = Job(store, replace(settings_for(db, fake.url), model="missing"), tokenizer=tokenizer)
            job.cancel.cancel()
            with pytest.raises(JobError) as cancelled:
                await job.run(lambda runner: runner.compact("long", "leaf"), check_first=True)
            assert cancelled.value.kind == "cancelled" and cancelled.value.severity == "information"


def test_the_estimate_is_never_unknown_and_notes_are_timed_as_one_title_call(tokenizer: Tokenizer, db: Path) -> None:
    """A summary in notes is one call over its key lines (its budget, well under the leaf) for a title."""
    guess = Speed.guess("qwen2.5:1.5b")
    assert guess.basis == "guess" and guess.params_b == 1.5 and not guess.measured
    notes, plain = Estimator(guess, SMALL, "notes"), Estimator(guess, SMALL, "plain")
    prompt, answer = notes.shape.call(0, 3000)
    assert answer == TITLE_TOKENS and prompt < 3000 // 2
    assert notes.seconds(0, 3000) == pytest.approx(guess.call_seconds(prompt, answer))
    assert notes.seconds(0, 3000) < plain.seconds(0, 3000)
    with Store.open(db, tokenizer=tokenizer) as store:
        plan = plan_backlog(store, SMALL, notes)
    assert plan.est_seconds > 0 and all(s.est_seconds > 0 for s in plan.sessions)


def test_the_time_left_follows_the_speed_once_it_is_measured_and_the_runs_own_pace() -> None:
    """The tracker re-times what is left at the speed the estimator now knows (a plan made from a
    guess, then the model measured), scaled by the run's pace: here the run goes exactly at the
    measured speed, so what is left is that speed's estimate of the rest."""
    items = ((0, 3000), (0, 3000), (1, 1200), (0, 800))
    guess = Estimator(Speed.guess("qwen2.5:7b"), SMALL, "plain")
    backlog = Backlog("newest", "full", "m", guess.speed, (BacklogSession("a", "a", items, guess.total(items)),))
    measured = Estimator(Speed(3000.0, 30.0, 0.2, "measured", 5), SMALL, "plain")
    now: list[Estimator] = [guess]
    tracker = BacklogTracker(backlog, lambda: now[0], 0.0)
    first = measured.seconds(*items[0])
    tracker.written(*items[0], now=first)  # the first summary took what the measured speed says
    at_guess = tracker.progress(first).left_s
    now[0] = measured
    at_measured = tracker.progress(first).left_s
    rest = sum(measured.seconds(d, t) for d, t in items[1:])
    assert at_measured == pytest.approx(rest, rel=1e-6)
    assert at_guess is not None and at_guess != pytest.approx(rest, rel=0.2)  # the guess's shape was off
    tracker.written(*items[1], now=2 * first * 2)  # the run slows to half the speed: what is left doubles
    slow = tracker.progress(4 * first).left_s
    assert slow == pytest.approx(2 * sum(measured.seconds(d, t) for d, t in items[2:]), rel=1e-6)
