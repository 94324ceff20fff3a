"""Measured speeds per host (issue 20 item 3: "the measured speeds of that model on that host"):
schema 7 keys ``model_speed`` by host, a row measured before (no host) stands for any host of
its model, the executor seeds and saves each host's speed under its host, and with several hosts
the one estimator times the work as shared among them (each at its own speed). Two real fake
servers of different speeds on loopback; no function of ours is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hiermem_tui.compaction.estimate import Estimator, HostSpeed, Shape, Speed, Work
from hiermem_tui.compaction.job import Job, offline_estimator
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize.ollama_backend import normalize_host
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply, closed_port_url, default_responder

from ._cli import run as cli
from ._engine_fixtures import add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401

pytestmark = pytest.mark.usefixtures("config")
POLICY = Policy()
MODEL = "llama3.2:latest"
OLD = ModelSpeed(4, 4000, 40.0, 400, 40.0)
"""What an earlier run measured of the model, on no host in particular."""
def test_one_host_is_exactly_the_one_host_estimate_and_several_share_the_work() -> None:
    slow = Speed(100.0, 10.0, 1.0, "measured", 4)
    fast = Speed(400.0, 40.0, 0.5, "measured", 4)
    items = [(0, 900), (0, 1200), (1, 500), (0, 300)]
    work = Work()
    for d, t in items:
        work.add(Shape(POLICY), d, t)
    one = Estimator(slow, POLICY)
    alone = Estimator.shared([HostSpeed("a", slow, 3)], POLICY)
    assert alone.hosts == ()
    assert (alone.seconds(0, 900), alone.total(items), alone.of(work)) == (
        one.seconds(0, 900), one.total(items), one.of(work))
    t_slow, t_fast = one.of(work), Estimator(fast, POLICY).of(work)
    both = Estimator.shared([HostSpeed("a", slow, 1), HostSpeed("b", fast, 1)], POLICY)
    assert both.speed == slow  # what backlog --json shows: the first host's speed
    assert both.of(work) == pytest.approx(1 / (1 / t_slow + 1 / t_fast))
    assert both.total(items) == pytest.approx(both.of(work))
    assert both.of(work) < min(t_slow, t_fast)
    # two of the same host take half the time; slots count relative to the first host's
    twin = Estimator.shared([HostSpeed("a", slow, 2), HostSpeed("b", slow, 2)], POLICY)
    assert twin.of(work) == pytest.approx(t_slow / 2)
    wide = Estimator.shared([HostSpeed("a", slow, 1), HostSpeed("b", slow, 3)], POLICY)
    assert wide.of(work) == pytest.approx(t_slow / 4)
    assert Estimator.shared([HostSpeed("a", slow), HostSpeed("b", fast)], POLICY).seconds(0, 900) == \
        pytest.approx(1 / (1 / one.seconds(0, 900) + 1 / Estimator(fast, POLICY).seconds(0, 900)))


def _speedy(n: int, prompt_tps: float, output_tps: float) -> list[Reply]:
    return [Reply(default_responder, prompt_tps=prompt_tps, output_tps=output_tps) for _ in range(n)]


def _backlog(db: Path, *hosts: str) -> dict:
    flags = [a for h in hosts for a in ("--ollama-host", h)]
    code, out, err = cli("backlog", "--db", str(db), "--json", "--model", "llama3.2", *flags)
    assert code == 0, err
    return json.loads(out)


def test_each_host_measures_its_own_speed_and_the_backlog_is_timed_as_shared(
        tmp_path: Path, tokenizer: Tokenizer) -> None:
    db = tmp_path / "speeds.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "s1", 0, 16)
        add_episodes(store, "s2", 0, 16)
        store.speeds.add("ollama", MODEL, OLD)  # measured before hosts were told apart
    with FakeOllama() as fast, FakeOllama() as slow:
        fast.script(*_speedy(300, 40000, 400))
        slow.script(*_speedy(300, 10000, 100))
        code, _, err = cli("compact", "--all", "--db", str(db), "--model", "llama3.2", "--parallel", "2",
                           "--ollama-host", fast.url, "--ollama-host", slow.url)
        assert code == 0, err
        assert fast.chat_requests and slow.chat_requests
        a, b = normalize_host(fast.url), normalize_host(slow.url)
        with Store.open(db, tokenizer=tokenizer) as store:
            got_a, got_b = (store.speeds.get("ollama", MODEL, h) for h in (a, b))
            assert store.speeds.get("ollama", MODEL) == OLD  # the host-less row is left as it was
            # each host's own row: its calls only, not the old row's nor the other host's
            assert got_a.calls == len(fast.chat_requests) and got_b.calls == len(slow.chat_requests)
            # the speeds each server reports, not the wall clock of this (maybe busy) machine: issue 36 item 12
            assert (got_a.prompt_tps, got_a.output_tps) == (pytest.approx(40000, rel=0.01), pytest.approx(400, rel=0.01))
            assert (got_b.prompt_tps, got_b.output_tps) == (pytest.approx(10000, rel=0.01), pytest.approx(100, rel=0.01))
            speed_a, speed_b = Speed.of(got_a), Speed.of(got_b)
            add_episodes(store, "s3", 0, 24)  # work left for the estimate
            settings = Settings(model="llama3.2", ollama_host=fast.url, ollama_hosts=(fast.url, slow.url),
                                parallel=2)
            # the progress line's estimator (the job's): both hosts, each at its own speed
            job = Job(store, settings, tokenizer=tokenizer)
            est = job.estimator()
            assert [(h.host, h.speed, h.parallel) for h in est.hosts] == [(a, speed_a, 2), (b, speed_b, 2)]
            # the TUI's (no call made) is the same
            assert offline_estimator(store, settings).hosts == est.hosts
        only_a, only_b, both = _backlog(db, fast.url), _backlog(db, slow.url), _backlog(db, fast.url, slow.url)
        assert only_a["summaries"] == both["summaries"] > 0
        assert only_a["speed"] == both["speed"] == speed_a.as_json()  # the first host's (contract unchanged)
        assert only_b["speed"] == speed_b.as_json()
        ta, tb = only_a["est_seconds"], only_b["est_seconds"]
        assert tb > ta
        assert both["est_seconds"] == pytest.approx(1 / (1 / ta + 1 / tb), abs=0.15)
        # the dry-run's plan shares the work the same way
        code, out, err = cli("compact", "--session", "s3", "--dry-run", "--json", "--db", str(db), "--model",
                             "llama3.2", "--ollama-host", fast.url, "--ollama-host", slow.url)
        assert code == 0, err
        plan = json.loads(out)["planned"]
        shared = sum(p["est_seconds"] for p in plan)
        assert shared == pytest.approx(both["est_seconds"], abs=0.1 * len(plan) + 0.15)
    # one host out of reach (though measured as fast): the estimate is the live host's alone
    dead = closed_port_url()
    with FakeOllama() as fast2:
        fast2.script(*_speedy(5, 40000, 400))
        with Store.open(db, tokenizer=tokenizer) as store:
            for h in (fast2.url, dead):
                store.speeds.add("ollama", MODEL, got_a, normalize_host(h))
        assert _backlog(db, fast2.url, dead)["est_seconds"] == pytest.approx(ta, abs=0.15)
