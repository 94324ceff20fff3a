"""Estimates that hold from the first second (issue 38 item 3): a speed is the warm model's (a load is kept apart:
Ollama reports it, elsewhere the first call's excess shows it), a server whose durations do not account for a
call's time (a queued or remote host) is timed by the wall clock, and a run's pace leaves the loads out. Against
the fake Ollama server on loopback; no function of ours is mocked, and no test asserts how long anything took:
where a fake's call takes a while, only what it must at least take is asserted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hiermem_tui.compaction.backlog import Backlog, BacklogProgress, BacklogSession, BacklogTracker
from hiermem_tui.compaction.estimate import BRIEF_DEPTH, Estimator, Speed, measure
from hiermem_tui.compaction.job import Job
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import OllamaBackend, notes
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.types import Generation
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply, default_responder

from ._cli import run as cli
from ._engine_fixtures import SMALL, add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401

pytestmark = pytest.mark.usefixtures("config")


def gen(seconds: float, prompt: int = 100, prompt_s: float | None = None, out: int = 20, eval_s: float | None = None,
        load: float | None = None) -> Generation:
    return Generation("A title.", prompt, out, seconds, prompt_seconds=prompt_s, eval_seconds=eval_s,
                      prompt_tokens=prompt, load_seconds=load)


def test_the_wall_clock_counts_what_a_server_s_durations_leave_out() -> None:
    """A queued or remote host reports its runner's milliseconds for a call that took a second: the second is
    the call's, and every estimate counts it (before: ~0 s for calls that took 88 s)."""
    speed = ModelSpeed()
    for _ in range(3):
        speed.observe(gen(1.0, prompt_s=0.001, eval_s=0.002, load=0.0005), 100)
    assert speed.calls == 3 and speed.wait_seconds == pytest.approx(3 * (1.0 - 0.0035))
    assert Speed.of(speed).call_s == pytest.approx(0.9965)
    assert Estimator(Speed.of(speed), Policy(), "notes").seconds(0, 3000) >= 0.99
    # a server whose durations account for its calls adds only what the HTTP round trip takes
    local = ModelSpeed()
    local.observe(gen(2.003, prompt_s=1.0, eval_s=1.0, load=0.001), 100)
    assert local.wait_seconds == pytest.approx(0.002)


def test_a_reported_load_is_no_part_of_the_speed() -> None:
    speed = ModelSpeed()
    speed.observe(gen(12.0, prompt_s=1.0, eval_s=1.0, load=10.0), 100)
    assert speed.load_seconds == 10.0 and speed.model_seconds == pytest.approx(2.0)
    assert speed.prompt_tps == pytest.approx(100) and speed.output_tps == pytest.approx(20)


def test_the_first_call_s_excess_is_a_load_where_the_server_does_not_say() -> None:
    """No load reported: the first call waits for the next, whose pace says what the first should have taken."""
    speed = ModelSpeed()
    speed.observe(gen(11.0, prompt_s=10.0, eval_s=1.0), 100)  # cold: 10 s to read 100 tokens
    assert speed.calls == 0 and not speed.measured  # held: one call cannot tell a load from a slow model
    assert speed.settled().calls == 1  # a run that ends now keeps it as it came
    speed.observe(gen(2.0, prompt_s=1.0, eval_s=1.0), 100)
    assert speed.calls == 2 and speed.load_seconds == pytest.approx(9.0)
    assert speed.prompt_tps == pytest.approx(100) and speed.output_tps == pytest.approx(20)
    # a first call as fast as the next is kept as it came; later calls are never held
    even = ModelSpeed()
    for seconds in (2.4, 2.0, 9.0):
        even.observe(gen(seconds, prompt_s=seconds / 2, eval_s=seconds / 2), 100)
    assert even.calls == 3 and even.load_seconds == 0 and even.model_seconds == pytest.approx(13.4)


def test_a_backend_keeps_the_load_ollama_reports_apart(tokenizer: Tokenizer) -> None:
    async def two_calls(url: str) -> tuple[OllamaBackend, list[Generation]]:
        backend = OllamaBackend(url, "llama3.2", tokenizer)
        try:
            return backend, [await backend.generate("sys", f"Summarise this, {i}.", temperature=0.0, num_predict=16)
                             for i in range(2)]
        finally:
            await backend.aclose()

    with FakeOllama() as fake:
        fake.script(Reply(default_responder, load_s=0.3), Reply(default_responder))
        backend, gens = asyncio.run(two_calls(fake.url))
    speed = backend.speed
    assert [g.load_seconds for g in gens] == [pytest.approx(0.301), pytest.approx(0.001)]
    assert speed.calls == 2 and speed.load_seconds == pytest.approx(0.302)
    # the calls' wall time is their load, their model's time and their wait: the sums hold all but the load
    assert speed.model_seconds == pytest.approx(sum(g.seconds for g in gens) - 0.302, abs=0.01)


def test_measuring_times_the_call_after_the_one_that_lets_the_model_load(tokenizer: Tokenizer) -> None:
    """The measuring call comes after a one-token call, whose time (a cold model's load, said or not) is not
    part of the speed: here it claims five seconds of model time, and the speed knows nothing of them."""
    async def probe(url: str) -> ModelSpeed | None:
        backend = OllamaBackend(url, "llama3.2", tokenizer)
        try:
            return await measure(backend)
        finally:
            await backend.aclose()

    with FakeOllama() as fake:
        fake.script(Reply(default_responder, report_load=False, reported_s=5.0), Reply(default_responder))
        got = asyncio.run(probe(fake.url))
        first, second = fake.chat_bodies
    assert first["options"]["num_predict"] == 1 and second["options"]["num_predict"] == 32
    assert got is not None and got.calls == 1
    assert got.prompt_seconds + got.output_seconds < 1.0  # the second call's reported time, not the first's 5 s


def test_backlog_times_a_server_whose_calls_take_longer_than_it_reports(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """``backlog --json`` against a server whose every call takes 0.2 s but reports a millisecond: the estimate
    is at least the calls' 0.2 s each (it said ~0 s), and its speed says what a call waits."""
    db = tmp_path / "slow.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "s1", 0, 24)
    with FakeOllama() as fake:
        fake.script(*[Reply(default_responder, latency_s=0.2, reported_s=0.001) for _ in range(4)])
        code, out, err = cli("backlog", "--db", str(db), "--json", "--model", "llama3.2", "--ollama-host", fake.url)
    assert code == 0, err
    plan = json.loads(out)
    calls = plan["summaries"] + plan["briefs"]
    assert calls > 0 and plan["speed"]["measured"] is True
    assert plan["speed"]["call_s"] >= 0.2
    assert plan["est_seconds"] >= 0.2 * calls - 0.05  # the JSON's seconds are rounded to a tenth


def test_the_time_left_leaves_the_model_s_load_out_of_the_run_s_pace() -> None:
    """A summary that took 10 s more because the model loaded does not make the rest look 10 s slower each."""
    items = ((0, 3000),) * 4 + ((BRIEF_DEPTH, 350),)
    est = Estimator(Speed(1000.0, 20.0, 0.0, "measured", 5), Policy(), "notes")
    backlog = Backlog("newest", "full", "m", est.speed, (BacklogSession("a", "a", items, est.total(items)),))
    loaded = [0.0]
    tracker = BacklogTracker(backlog, lambda: est, 0.0, loads=lambda: loaded[0])
    one = est.seconds(0, 3000)
    loaded[0] = 10.0
    tracker.written(0, 3000, now=one + 10.0)  # the first summary paid the load
    left = tracker.progress(one + 10.0).left_s
    assert left == pytest.approx(3 * one + est.seconds(BRIEF_DEPTH, 350))
    tracker.written(0, 3000, now=2 * one + 10.0)
    tracker.written(0, 3000, now=3 * one + 10.0)
    tracker.written(0, 3000, now=4 * one + 10.0)
    assert tracker.progress(4 * one + 10.0).left_s == pytest.approx(est.seconds(BRIEF_DEPTH, 350))
    tracker.brief_written(now=4 * one + 10.0 + est.seconds(BRIEF_DEPTH, 350))  # the brief is in the plan too
    assert tracker.done.summaries == tracker.planned.summaries


def one_session(est: Estimator, items: tuple[tuple[int, int], ...]) -> Backlog:
    return Backlog("newest", "full", "m", est.speed, (BacklogSession("a", "a", items, est.total(items)),))


def test_a_refused_leaf_title_asked_again_costs_the_leaves_a_call_not_the_kinds_not_seen_yet() -> None:
    """Every leaf's title was refused and asked again (two calls each, at its estimate): what is left, two
    condensed summaries and the brief, goes at one call each (before: at the leaves' two, twice what it took)."""
    est = Estimator(Speed(1000.0, 20.0, 0.5, "measured", 5), Policy(), "notes")
    items = ((0, 3000),) * 6 + ((1, 2400),) * 2 + ((BRIEF_DEPTH, 350),)
    tracker = BacklogTracker(one_session(est, items), lambda: est, 0.0)
    leaf, condensed, brief = est.seconds(0, 3000), est.seconds(1, 2400), est.seconds(BRIEF_DEPTH, 350)
    now = 0.0
    for _ in range(6):
        tracker.called("r1")
        tracker.called("r1")
        now += 2 * leaf
        tracker.written(0, 3000, now, "r1")
    assert tracker.progress(now).left_s == pytest.approx(2 * condensed + brief)
    tracker.called("r1")
    now += condensed
    tracker.written(1, 2400, now, "r1")  # one condensed summary: its kind's own pace from now on
    assert tracker.progress(now).left_s == pytest.approx(condensed + brief)


def test_each_kind_of_call_goes_at_its_own_pace() -> None:
    """The briefs take three times what the plan says of them, the leaves what it says: what is left is each
    kind at its own pace (before: every kind at the blend of both, here 1.4 times what was left)."""
    est = Estimator(Speed(1000.0, 20.0, 0.5, "measured", 5), Policy(), "notes")
    leaf, brief = est.seconds(0, 3000), est.seconds(BRIEF_DEPTH, 350)
    short = tuple(BacklogSession(s, s, ((0, 3000), (BRIEF_DEPTH, 350)), 0.0) for s in "ab")
    long = tuple(BacklogSession(s, s, ((0, 3000),) * 4 + ((BRIEF_DEPTH, 350),), 0.0) for s in "cd")
    tracker = BacklogTracker(Backlog("newest", "full", "m", est.speed, short + long), lambda: est, 0.0)
    now = 0.0
    for _ in short:
        now += leaf
        tracker.written(0, 3000, now)
        now += 3 * brief
        tracker.brief_written(now)
    assert tracker.progress(now).left_s == pytest.approx(8 * leaf + 2 * 3 * brief)


def test_a_load_found_after_a_summary_of_another_kind_comes_off_the_first() -> None:
    """A server that does not report its load: the first call (a leaf's) paid 10 s, found only when the next
    call (a brief's) ended. The load is no part of either kind's pace, and each keeps its own."""
    est = Estimator(Speed(1000.0, 20.0, 0.5, "measured", 5), Policy(), "notes")
    leaf, brief = est.seconds(0, 3000), est.seconds(BRIEF_DEPTH, 350)
    sessions = (BacklogSession("a", "a", ((0, 3000), (BRIEF_DEPTH, 350)), 0.0),
                BacklogSession("b", "b", ((0, 3000),) * 4 + ((BRIEF_DEPTH, 350),), 0.0))
    loaded = [0.0]
    tracker = BacklogTracker(Backlog("newest", "full", "m", est.speed, sessions), lambda: est, 0.0,
                             loads=lambda: loaded[0])
    tracker.written(0, 3000, leaf + 10.0)
    loaded[0] = 10.0
    tracker.brief_written(leaf + 10.0 + 2 * brief)  # the brief took twice its estimate
    assert tracker.progress(leaf + 10.0 + 2 * brief).left_s == pytest.approx(4 * leaf + 2 * brief)


def refused_leaf_titles(body: dict[str, object]) -> str:
    """Every leaf's first title is refused (an empty answer) and asked again; nothing else is."""
    text = str((body.get("messages") or [{}])[-1].get("content", ""))  # type: ignore[union-attr, index]
    if "Title:" in text:
        return "Title: Episodes of the session\nAbout: What they said."
    return "" if notes.LEAF_ASK in text else "Episodes of the session and what they said"


ANSWER_AFTER = 0.2
"""The fake answers after this long, as a model does: the summary before is committed while the next call runs
(``Executor.make_in_turn``), and the job's clock — the calls answered — does not count that call yet."""


def test_a_backlog_counts_the_calls_each_summary_made(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """On the job's clock every call takes a second (the clock is the calls the server has answered); every leaf's title
    is refused once and asked again, the condensed summaries' and the brief's are not. While ten calls or more are
    still to come, the time left is within a fifth of them (before: the condensed summaries at the leaves' two
    calls each, up to 1.7 times)."""
    db = tmp_path / "refused.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "s", 0, 76)
    progress: list[BacklogProgress] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama(responder=refused_leaf_titles) as fake:
        fake.script(*[Reply(refused_leaf_titles, reported_s=1.0, latency_s=ANSWER_AFTER) for _ in range(200)])
        job = Job(store, Settings(db_path=db, ollama_host=fake.url, model="llama3.2", policy=SMALL), tokenizer=tokenizer,
                  on_event=lambda e: progress.append(e) if isinstance(e, BacklogProgress) else None,
                  clock=lambda: float(fake.chats_answered))
        plan = job.plan()
        asyncio.run(job.backlog(plan))
        calls = len(fake.chat_requests)
    leaves = sum(d == 0 for s in plan.sessions for d, _ in s.items)
    assert leaves >= 10 and plan.summaries > leaves + 10
    assert calls == 2 * leaves + (plan.summaries - leaves) + plan.briefs
    readings = [(p.left_s, calls - p.elapsed_s) for p in progress
                if p.summaries_done >= 5 and p.left_s is not None and calls - p.elapsed_s >= 10]
    assert len(readings) > 20
    assert all(abs(left - truth) <= 0.2 * truth for left, truth in readings), readings


def test_what_is_left_is_the_plan_not_made_yet_session_by_session() -> None:
    """A condensed summary's real sources were smaller than the plan guessed, and its session needed one condensed
    summary fewer: once that session is finished, what is left is the next session's plan, at the pace the plan's
    sizes went at (before: the difference and the summary never made stayed behind as time left)."""
    est = Estimator(Speed(1000.0, 20.0, 0.5, "measured", 5), Policy(), "plain")
    items = ((0, 3000), (1, 1500), (1, 1500), (BRIEF_DEPTH, 350))
    sessions = tuple(BacklogSession(s, s, items, est.total(items)) for s in "ab")
    tracker = BacklogTracker(Backlog("newest", "full", "m", est.speed, sessions), lambda: est, 0.0)
    now = est.seconds(0, 3000)
    tracker.written(0, 3000, now, session_id="a")
    now += est.seconds(1, 1500)  # what the plan said, though it read 600 tokens
    tracker.written(1, 600, now, session_id="a")
    now += est.seconds(BRIEF_DEPTH, 350)
    tracker.brief_written(now, session_id="a")
    tracker.finished_session("a")
    assert tracker.progress(now).left_s == pytest.approx(est.total(items))


def short_answers(body: dict[str, object]) -> str:
    text = str((body.get("messages") or [{}])[-1].get("content", ""))  # type: ignore[union-attr, index]
    if "Title:" in text:
        return "Title: Episodes of the session\\nAbout: What they said."
    return "The episodes said what they said."


def test_a_backlog_follows_its_plan_session_by_session(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """Three sessions in ``plain``, whose condensed summaries read far less than the plan guessed (the answers
    are a few words); on the job's clock every call takes a second. Once a session is finished, the time left
    is within a tenth of the calls still to come (before: up to 8.5 s for the last one)."""
    db = tmp_path / "plan.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        for sid in "abc":
            add_episodes(store, sid, 0, 30)
    progress: list[BacklogProgress] = []
    with Store.open(db, tokenizer=tokenizer) as store, FakeOllama(responder=short_answers) as fake:
        fake.script(*[Reply(short_answers, reported_s=1.0, latency_s=ANSWER_AFTER) for _ in range(200)])
        settings = Settings(db_path=db, ollama_host=fake.url, model="llama3.2", policy=SMALL, summary_format="plain")
        job = Job(store, settings, tokenizer=tokenizer,
                  on_event=lambda e: progress.append(e) if isinstance(e, BacklogProgress) else None,
                  clock=lambda: float(fake.chats_answered))
        plan = job.plan()
        asyncio.run(job.backlog(plan))
        calls = len(fake.chat_requests)
        made = [s.source_tokens for s in store.dag.summaries("a") if s.depth == 1]
    planned = [t for d, t in plan.sessions[0].items if d == 1]
    assert calls == plan.summaries + plan.briefs and made and sum(made) < sum(planned) / 2
    readings = [(p.left_s, calls - p.elapsed_s) for p in progress if p.sessions_done >= 1 and p.left_s is not None]
    assert len(readings) > 20
    assert all(abs(left - truth) <= 0.1 * truth for left, truth in readings), readings
