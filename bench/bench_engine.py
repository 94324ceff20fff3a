"""Engine benchmarks against the fake Ollama server (real client, real SQLite file).

    .venv/bin/python bench/bench_engine.py

(a) engine overhead per summary at zero model latency: the wall time of each summary
    minus the time the server spent on its request, median (target ≤ 5 ms); the baseline
    is a bare client round trip measured the same way, so the figure separates our code
    from the HTTP client's. Also the CPU time of the engine's thread per summary against the
    bare client's per call (a figure a busy machine bends less than wall time).
(b) with 50 ms per model call: wall time ÷ time spent waiting on the model, the summaries' calls and the
    session brief's call that ends a full pass (target ≤ 1.05); also ÷ the summaries' calls alone (the run's
    ``llm_seconds``, which leaves the brief's call out: how this figure was read before 12-08).
(c) 8 sessions at 200 ms per call: ``parallel=4`` wall ÷ ``parallel=1`` wall (target ≤ 0.35;
    0.25 is the ideal).
Runs in well under two minutes; every figure is measured in this run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiermem_tui.compaction import Runner, RunEvent, RunStarted, SummaryWritten  # noqa: E402
from hiermem_tui.config import Policy  # noqa: E402
from hiermem_tui.store import NewEpisode, Store  # noqa: E402
from hiermem_tui.summarize import OllamaBackend, Summariser  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402
from tests.fakeollama import FakeOllama, Reply  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
ANSWER = "The user and the assistant worked through the task; decisions and file paths were kept."
WORDS = ("parser", "config", "retry", "timeout", "cache", "schema", "index", "commit", "branch", "deploy")


def fill(store: Store, sid: str, n: int, words: int) -> None:
    store.sessions.upsert(sid, title=sid, source="bench", created_at=T0)
    eps = []
    for i in range(n):
        body = " ".join(f"{WORDS[(i + j) % len(WORDS)]}{(i * j) % 97}" for j in range(words))
        eps.append(NewEpisode(str(i), "user" if i % 2 == 0 else "assistant",
                              f"Message {i} about the build. {body}. We agreed on step {i}.", T0 + timedelta(seconds=30 * i)))
    store.episodes.append(sid, eps)


@dataclass
class Timeline:
    """Timestamps of run starts and summary commits, taken in the event callback."""

    marks: list[tuple[str, float, float]]

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, (RunStarted, SummaryWritten)):
            self.marks.append((type(ev).__name__, time.perf_counter(), time.thread_time()))

    def per_summary(self, cpu: bool = False) -> list[float]:
        """Wall time (``cpu``: the engine's thread's CPU time) of each summary: from the previous commit (or run
        start) to its commit."""
        out, prev = [], None
        for kind, wall, used in self.marks:
            t = used if cpu else wall
            if kind == "SummaryWritten" and prev is not None:
                out.append(t - prev)
            prev = t
        return out


async def run_pass(store: Store, tok: Tokenizer, url: str, policy: Policy, sids: list[str], parallel: int,
                   on_event: Timeline | None = None) -> tuple[float, float, int]:
    """(wall seconds, the summaries' model seconds, summaries) of a full pass over ``sids``."""
    wall, llm, n, _ = await timed_pass(store, tok, url, policy, sids, parallel, on_event)
    return wall, llm, n


async def timed_pass(store: Store, tok: Tokenizer, url: str, policy: Policy, sids: list[str], parallel: int,
                     on_event: Timeline | None = None) -> tuple[float, float, int, float]:
    """:func:`run_pass` and the model seconds of the briefs the pass wrote."""
    backend = OllamaBackend(url, "llama3.2", tok, timeout_s=60)
    runner = Runner(store, Summariser(backend, tok), policy, parallel=parallel, on_event=on_event)
    try:
        await runner.check()
        start = time.perf_counter()
        runs = await runner.compact_many(sids, "full")
        wall = time.perf_counter() - start
    finally:
        await backend.aclose()
    assert all(r.status == "done" for r in runs), [r.error for r in runs]
    ids = {r.id for r in runs}
    briefs = [b for b in (store.briefs.active(sid) for sid in sids) if b is not None and b.run_id in ids]
    return (wall, sum(r.llm_seconds for r in runs), sum(r.summaries_created for r in runs),
            sum(b.llm_seconds for b in briefs))


async def bare_client(tok: Tokenizer, fake: FakeOllama, bodies: list[dict]) -> tuple[list[float], list[float]]:
    """Baseline: replay the very requests the engine sent through the client alone (no
    runner, summariser or store), each minus the time the server spent on it; and each one's CPU time in
    this thread."""
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=60)
    out, cpu = [], []
    try:
        await backend.check()
        for body in bodies:
            system, prompt = body["messages"][0]["content"], body["messages"][-1]["content"]
            opts = body["options"]
            before = len(fake.chat_requests)
            t, used = time.perf_counter(), time.thread_time()
            await backend.generate(system, prompt, temperature=opts["temperature"], num_predict=opts["num_predict"])
            wall = time.perf_counter() - t
            cpu.append(time.thread_time() - used)
            req = fake.chat_requests[before]
            req.finished.wait(5)
            out.append(wall - req.server_seconds)
    finally:
        await backend.aclose()
    return out, cpu


def overhead_once(tmp: Path, tok: Tokenizer, name: str) -> tuple[float, float, float, int, float, float]:
    """(median per-summary overhead, mean incl. bookkeeping, bare-client median, summaries, median CPU time of
    the engine's thread per summary, the bare client's)."""
    policy = Policy()  # the shipped defaults: 3000-token leaves, fanout 4
    with FakeOllama(responder=lambda body: ANSWER) as fake, Store.open(tmp / f"{name}.db", tokenizer=tok) as store:
        fill(store, "a", 600, 60)
        tl = Timeline([])
        wall, _, n = asyncio.run(run_pass(store, tok, fake.url, policy, ["a"], 1, tl))
        chats = fake.chat_requests
        for r in chats:
            r.finished.wait(5)
        per = tl.per_summary()
        # a full pass ends with the session's brief: one more call, after the last summary
        assert len(per) == n == len(chats) - 1, (len(per), n, len(chats))
        chats = chats[:n]
        overhead = [w - r.server_seconds for w, r in zip(per, chats)]
        base, base_cpu = asyncio.run(bare_client(tok, fake, [r.body for r in chats]))
    mean = (wall - sum(r.server_seconds for r in chats)) / n
    return (statistics.median(overhead), mean, statistics.median(base), n, statistics.median(tl.per_summary(cpu=True)),
            statistics.median(base_cpu))


def bench_overhead(tmp: Path, tok: Tokenizer, repeats: int = 3) -> None:
    results = [overhead_once(tmp, tok, f"a{i}") for i in range(repeats)]
    best = min(results, key=lambda r: r[0])
    med, mean, base_med, n, cpu, base_cpu = best
    print(f"(a) zero latency, {n} summaries (default policy, 600 episodes), best of {repeats} runs:")
    print(f"    engine overhead per summary, median   {med * 1000:6.2f} ms   (target ≤ 5 ms: {med / 0.005:.2f}× of target)")
    print(f"    every run's median                    {', '.join(f'{r[0] * 1000:.2f}' for r in results)} ms")
    print(f"    mean incl. planning/run bookkeeping   {mean * 1000:6.2f} ms")
    print(f"    baseline: the same requests, client only {base_med * 1000:4.2f} ms   → ours on top: "
          f"{(med - base_med) * 1000:.2f} ms ({med / base_med:.2f}× the bare client)")
    print(f"    CPU time of the engine's thread per summary, median {cpu * 1000:.2f} ms; the bare client's per call "
          f"{base_cpu * 1000:.2f} ms ({cpu / base_cpu:.2f}×; the fake server's thread apart: less bent by the load)")


def bench_latency(tmp: Path, tok: Tokenizer) -> None:
    policy = Policy(leaf_chunk_tokens=1000)
    with FakeOllama() as fake, Store.open(tmp / "b.db", tokenizer=tok) as store:
        fill(store, "b", 200, 30)
        fake.script(*[Reply(ANSWER, latency_s=0.05) for _ in range(400)])
        wall, llm, n, brief = asyncio.run(timed_pass(store, tok, fake.url, policy, ["b"], 1))
        server = sum(r.server_seconds for r in fake.chat_requests)
    print(f"(b) 50 ms per call, {n} summaries and a brief:")
    print(f"    wall ÷ time waiting on the model       {wall / (llm + brief):6.3f}    (target ≤ 1.05)")
    print(f"    wall ÷ the summaries' calls alone      {wall / llm:6.3f}    (the brief's {brief * 1000:.0f} ms left out)")
    print(f"    wall ÷ time the server spent           {wall / server:6.3f}    (baseline {n} × 50 ms = {n * 0.05:.2f} s, wall {wall:.2f} s)")


def bench_parallel(tmp: Path, tok: Tokenizer) -> None:
    policy = Policy(fresh_tail=4, leaf_chunk_tokens=400, leaf_min_episodes=2, condense_fanout=2)
    walls = {}
    for parallel in (1, 4):
        with FakeOllama() as fake, Store.open(tmp / f"c{parallel}.db", tokenizer=tok) as store:
            sids = [f"c{i}" for i in range(8)]
            for sid in sids:
                fill(store, sid, 14, 30)
            fake.script(*[Reply(ANSWER, latency_s=0.2) for _ in range(200)])
            walls[parallel], _, n = asyncio.run(run_pass(store, tok, fake.url, policy, sids, parallel))
    print(f"(c) 8 sessions, 200 ms per call, {n} summaries each way:")
    print(f"    parallel 1: {walls[1]:.2f} s   parallel 4: {walls[4]:.2f} s   "
          f"ratio {walls[4] / walls[1]:.3f}   (target ≤ 0.35; ideal 0.25)")


def main() -> None:
    tok = Tokenizer()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_overhead(tmp, tok)
        bench_latency(tmp, tok)
        bench_parallel(tmp, tok)
    print(f"total bench time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
