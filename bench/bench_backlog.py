"""The backlog (issue 20) against the fake Ollama server and on a big file.

    .venv/bin/python bench/bench_backlog.py [--db PATH] [--quick]

(a) ``--db PATH`` (the 10k-session / 1M-episode file ``bench_scale.py --keep PATH`` makes):
    ``hiermem-tui backlog --json`` as a whole process, wall time and peak RSS, against
    ``sessions --json`` on the same file (the baseline: every session's row read and printed).
    Targets: ≤ 2 s, ≤ 150 MB.
(b) model-busy share: a backlog of 8 sessions against a fake answering each call after 0.5 s
    (``--quick``: 0.2 s): the time the server was answering ÷ the backlog's wall time from its
    first call's start to its last call's end (target ≥ 98 %); baseline: a bare client sending
    the same number of calls back to back.
(c) ETA: the same backlog's time-left figure after each summary against what was really left,
    from the 5th summary on (target within ±20 %), with ``plain`` (one call a summary) and
    ``notes`` (a call per step); baseline: the footer's old rule (this run's average time per
    summary × summaries left). Twice: against a fake of constant speed (its time grows with the
    prompt's and the answer's tokens, as a model's does: ``--eta-only`` runs only this one) and
    against the 0.5 s fake of (b).
(d) ``--for``: a budget of 4 calls' time; how far past the budget the job ended, in calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ollama  # noqa: E402

from hiermem_tui.compaction.backlog import BacklogProgress  # noqa: E402
from hiermem_tui.compaction.job import Job  # noqa: E402
from hiermem_tui.config import Policy, Settings  # noqa: E402
from hiermem_tui.store import NewEpisode, Store  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402
from tests.fakeollama import FakeOllama, Reply  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
POLICY = Policy(fresh_tail=4, leaf_chunk_tokens=600, leaf_min_episodes=2, leaf_target_tokens=120,
                condense_fanout=4, condensed_target_tokens=200)
ANSWER = "The user and the assistant worked through the build; they kept the cache and the retry."
WORDS = ("parser", "config", "retry", "timeout", "cache", "schema", "index", "commit", "branch", "deploy")


def fill(store: Store, sid: str, n: int, minutes: int) -> None:
    store.sessions.upsert(sid, title=sid, source="bench", created_at=T0)
    store.episodes.append(sid, [
        NewEpisode(str(i), "user" if i % 2 == 0 else "assistant",
                   f"Message {i}. " + " ".join(f"{WORDS[(i + j) % 10]}{(i * j) % 97}" for j in range(40))
                   + f". Step {i} agreed.", T0 + timedelta(minutes=minutes + i))
        for i in range(n)])


def peak_rss_of(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of a whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024


def bench_plan(db: Path) -> None:
    exe = str(ROOT / ".venv" / "bin" / "hiermem-tui")
    runs: dict[str, list[tuple[float, float]]] = {"backlog": [], "sessions": []}
    for _ in range(3):  # interleaved
        runs["backlog"].append(peak_rss_of([exe, "backlog", "--db", str(db), "--json", "--backend", "extractive"]))
        runs["sessions"].append(peak_rss_of([exe, "sessions", "--db", str(db), "--json"]))
    out = subprocess.run([exe, "backlog", "--db", str(db), "--json", "--backend", "extractive"],
                         capture_output=True, text=True, cwd=ROOT).stdout
    plan = json.loads(out)
    b = statistics.median(w for w, _ in runs["backlog"])
    s = statistics.median(w for w, _ in runs["sessions"])
    rss_b = max(r for _, r in runs["backlog"])
    rss_s = max(r for _, r in runs["sessions"])
    print(f"(a) backlog on {db.name}: {len(plan['sessions']):,} sessions, {plan['summaries']:,} summaries due, "
          f"{plan['input_tokens']:,} tokens in")
    print(f"    backlog --json {b:.2f} s (target ≤ 2 s), peak RSS {rss_b:.1f} MB (target ≤ 150 MB); "
          f"sessions --json {s:.2f} s, {rss_s:.1f} MB; ratio {b / s:.2f}x time, {rss_b / rss_s:.2f}x RSS")


def make_db(folder: Path, tok: Tokenizer, sessions: int, episodes: int) -> Path:
    path = folder / f"backlog-{time.monotonic_ns()}.db"
    with Store.open(path, tokenizer=tok) as store:
        for k in range(sessions):
            fill(store, f"s{k}", episodes, minutes=10_000 * k)
    return path


async def backlog_run(db: Path, tok: Tokenizer, url: str, fmt: str, budget: float | None = None
                      ) -> tuple[list[BacklogProgress], float, Job]:
    progress: list[BacklogProgress] = []
    settings = Settings(db_path=db, ollama_host=url, model="llama3.2", policy=POLICY, summary_format=fmt)
    with Store.open(db, tokenizer=tok) as store:
        job = Job(store, settings, tokenizer=tok,
                  on_event=lambda e: progress.append(e) if isinstance(e, BacklogProgress) else None)
        plan = job.plan()
        started = time.perf_counter()
        await job.backlog(plan, budget_s=budget)
        wall = time.perf_counter() - started
    return progress, wall, job


def busy_share(fake: FakeOllama, stamps: list[float]) -> tuple[float, float, int]:
    chats = fake.chat_requests
    busy = sum(r.server_seconds for r in chats)
    span = (stamps[-1] + chats[-1].server_seconds) - stamps[0]
    return busy / span, span - busy, len(chats)


async def bare_calls(url: str, n: int) -> None:
    client = ollama.AsyncClient(host=url)
    for _ in range(n):
        await client.chat(model="llama3.2", messages=[{"role": "user", "content": "hello"}], stream=False)


def bench_busy_and_eta(latency: float, tok: Tokenizer, folder: Path) -> None:
    for fmt in ("plain", "notes"):
        stamps: list[float] = []

        def answer(body: dict[str, Any]) -> str:
            stamps.append(time.perf_counter())
            return ANSWER

        db = make_db(folder, tok, 8, 40)
        with FakeOllama(responder=answer) as fake:
            fake.script(*[Reply(answer, latency_s=latency) for _ in range(2000)])
            progress, wall, _ = asyncio.run(backlog_run(db, tok, fake.url, fmt))
            share, gaps, calls = busy_share(fake, stamps)
        base_stamps: list[float] = []

        def bare_answer(body: dict[str, Any]) -> str:
            base_stamps.append(time.perf_counter())
            return ANSWER

        with FakeOllama() as bare_fake:
            bare_fake.script(*[Reply(bare_answer, latency_s=latency) for _ in range(calls)])
            asyncio.run(bare_calls(bare_fake.url, calls))
            bare_share, _, _ = busy_share(bare_fake, base_stamps)
        print(f"(b) [{fmt}] model-busy {share * 100:.2f} % of {calls} calls' span (target ≥ 98 %), gaps "
              f"{gaps * 1000:.0f} ms in all ({gaps / max(1, calls - 1) * 1000:.1f} ms a call); bare client "
              f"{bare_share * 100:.2f} %; ratio {share / bare_share:.4f}")
        eta_errors(f"{fmt}, every call {latency} s", progress, wall)


def eta_errors(label: str, progress: list[BacklogProgress], wall: float) -> None:
    """The time left after each summary from the 5th on against what was really left, and the old rule's."""
    errors, naive, where = [], [], []
    for p in progress:
        if p.summaries_done < 5 or p.left_s is None or p.summaries_done >= p.summaries:
            continue
        actual = wall - p.elapsed_s
        if actual <= 0:
            continue
        errors.append((p.left_s - actual) / actual)
        where.append(p.summaries_done)
        per = p.elapsed_s / p.summaries_done
        naive.append((per * (p.summaries - p.summaries_done) - actual) / actual)
    if not errors:
        return
    worst = max(range(len(errors)), key=lambda k: abs(errors[k]))
    inside = sum(abs(e) <= 0.2 for e in errors)
    print(f"(c) [{label}] ETA from the 5th summary on ({len(errors)} readings): worst {errors[worst] * 100:+.1f} % "
          f"(after summary {where[worst]} of {progress[-1].summaries}), median |error| "
          f"{statistics.median(map(abs, errors)) * 100:.1f} %, {inside} of {len(errors)} within ±20 % (target ±20 %); "
          f"old rule (average per summary) worst {max(naive, key=abs) * 100:+.1f} %, median "
          f"{statistics.median(map(abs, naive)) * 100:.1f} %")


PROMPT_TPS, OUTPUT_TPS = 1500.0, 40.0
"""(c) against a model of constant speed: the fake reads a prompt's fresh words at this pace and streams
its answer at that one, so a call's time grows with its tokens (a bigger leaf, a condensation of four)."""
PLAIN_WORDS = ("the", "user", "assistant", "agreed", "changed", "build", "kept", "tests", "cache", "retry",
               "config", "later", "then", "decided", "reviewed", "plan", "parser", "schema", "index", "branch",
               "deploy", "timeout", "fixed", "asked", "next", "step", "because", "failed", "passed", "notes")


def sized_answer(body: dict[str, Any]) -> str:
    """An answer about as long as asked (four fifths of ``num_predict`` words), as a model writes to its
    target, in plain sentences the content rules accept (no names, nothing repeated)."""
    ask = int((body.get("options") or {}).get("num_predict") or 60)
    words = max(8, ask * 4 // 5)
    seed = sum(len(str(m.get("content", ""))) for m in body.get("messages") or [])
    out: list[str] = []
    while len(out) < words:
        n = 8 + seed % 5
        sentence = [PLAIN_WORDS[(seed * 7 + k * k * 3 + k * seed) % len(PLAIN_WORDS)] for k in range(n)]
        out += [sentence[0].capitalize(), *sentence[1:-1], sentence[-1] + "."]
        seed += 13
    return " ".join(out[:words]).rstrip(".") + "."


def bench_eta_paced(tok: Tokenizer, folder: Path) -> None:
    for fmt in ("plain", "notes"):
        db = make_db(folder, tok, 8, 40)
        with FakeOllama(responder=sized_answer) as fake:
            fake.script(*[Reply(sized_answer, prompt_tps=PROMPT_TPS, output_tps=OUTPUT_TPS) for _ in range(2000)])
            progress, wall, job = asyncio.run(backlog_run(db, tok, fake.url, fmt))
            print(f"    [{fmt}] {len(fake.chat_requests)} calls, {wall:.0f} s")
        eta_errors(f"{fmt}, constant speed {PROMPT_TPS:.0f} / {OUTPUT_TPS:.0f} tok/s", progress, wall)


def bench_budget(latency: float, tok: Tokenizer, folder: Path) -> None:
    db = make_db(folder, tok, 4, 40)
    budget = 4 * latency
    with FakeOllama() as fake:
        fake.script(*[Reply(ANSWER, latency_s=latency) for _ in range(500)])
        progress, wall, job = asyncio.run(backlog_run(db, tok, fake.url, "plain", budget))
        calls = len(fake.chat_requests)
    over = wall - budget
    print(f"(d) --for {budget:.1f} s at {latency} s a call: stopped after {wall:.2f} s, {calls} calls, "
          f"{over:+.2f} s past the budget = {over / latency:+.2f} calls (target ≤ 1); spent={job.budget_spent}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path, help="the 1M-episode file for (a)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plan-only", action="store_true", help="only (a)")
    ap.add_argument("--eta-only", action="store_true", help="only (c) against the constant-speed fake")
    args = ap.parse_args()
    if args.db:
        bench_plan(args.db)
    else:
        print("(a) skipped: no --db given (the 1M-episode file bench_scale.py --keep makes)", flush=True)
    if args.plan_only:
        return
    tok = Tokenizer()
    latency = 0.2 if args.quick else 0.5
    with tempfile.TemporaryDirectory() as folder:
        bench_eta_paced(tok, Path(folder))
        if args.eta_only:
            return
        bench_busy_and_eta(latency, tok, Path(folder))
        bench_budget(latency, tok, Path(folder))


if __name__ == "__main__":
    main()
