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

from hiermem_tui.compaction.backlog import Backlog, BacklogSession, BacklogTracker
from hiermem_tui.compaction.estimate import BRIEF_DEPTH, Estimator, Speed, measure
from hiermem_tui.config import Policy
from hiermem_tui.store import Store
from hiermem_tui.summarize import OllamaBackend
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.types import Generation
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply, default_responder

from ._cli import run as cli
from ._engine_fixtures import add_episodes
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
