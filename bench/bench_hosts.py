"""Two Ollama hosts sharing one backlog (issue 20, item 5), against two fake servers.

    .venv/bin/python bench/bench_hosts.py [--sessions N] [--slow PROMPT_TPS,OUTPUT_TPS]

Two fakes of constant speed (``Reply.prompt_tps`` / ``output_tps``: a call's time grows with its
prompt and its answer, as a model's does), one twice as fast as the other. The same backlog (a
fresh copy of one file each time, ``plain`` summaries: one call each) is run three times in this
process: on the slow host alone, on the fast host alone, and on both (``--parallel 1`` = one slot
on each). Throughput is summaries made per second of the backlog's wall time; the figure is the
pair's ÷ (slow alone + fast alone). Target ≥ 0.9.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiermem_tui.compaction.job import Job  # noqa: E402
from hiermem_tui.config import Policy, Settings  # noqa: E402
from hiermem_tui.store import NewEpisode, Store  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402
from tests.fakeollama import FakeOllama, Reply  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
POLICY = Policy(fresh_tail=4, leaf_chunk_tokens=600, leaf_min_episodes=2, leaf_target_tokens=120,
                condense_fanout=4, condensed_target_tokens=200)
WORDS = ("parser", "config", "retry", "timeout", "cache", "schema", "index", "commit", "branch", "deploy")
PLAIN = ("the", "user", "asked", "assistant", "changed", "build", "kept", "tests", "then", "reviewed", "plan",
         "fixed", "step", "because", "failed", "passed", "notes", "later", "decided", "next")


def answer(body: dict[str, Any]) -> str:
    """About as long as asked, plain sentences the content rules accept."""
    ask = int((body.get("options") or {}).get("num_predict") or 60)
    words = max(8, ask * 4 // 5)
    seed = sum(len(str(m.get("content", ""))) for m in body.get("messages") or [])
    out: list[str] = []
    while len(out) < words:
        sentence = [PLAIN[(seed * 7 + k * k * 3 + k * seed) % len(PLAIN)] for k in range(8 + seed % 5)]
        out += [sentence[0].capitalize(), *sentence[1:-1], sentence[-1] + "."]
        seed += 13
    return " ".join(out[:words]).rstrip(".") + "."


def make_db(path: Path, tok: Tokenizer, sessions: int, episodes: int) -> Path:
    with Store.open(path, tokenizer=tok) as store:
        for k in range(sessions):
            sid = f"s{k}"
            store.sessions.upsert(sid, title=sid, source="bench", created_at=T0)
            store.episodes.append(sid, [
                NewEpisode(str(i), "user" if i % 2 == 0 else "assistant",
                           f"Message {i}. " + " ".join(f"{WORDS[(i + j) % 10]}{(i * j) % 97}" for j in range(40)),
                           T0 + timedelta(minutes=10_000 * k + i))
                for i in range(episodes)
            ])
    return path


async def run(db: Path, tok: Tokenizer, hosts: list[str]) -> tuple[int, float]:
    settings = Settings(db_path=db, ollama_host=hosts[0], ollama_hosts=tuple(hosts) if len(hosts) > 1 else (),
                        model="llama3.2", policy=POLICY, summary_format="plain")
    with Store.open(db, tokenizer=tok) as store:
        job = Job(store, settings, tokenizer=tok)
        plan = job.plan()
        started = time.perf_counter()
        runs = await job.backlog(plan)
        wall = time.perf_counter() - started
    assert all(r.status == "done" for r in runs), [r.error for r in runs if r.status != "done"]
    return sum(r.summaries_created for r in runs), wall


def fake(prompt_tps: float, output_tps: float) -> FakeOllama:
    f = FakeOllama(responder=answer).start()
    f.script(*[Reply(answer, prompt_tps=prompt_tps, output_tps=output_tps) for _ in range(5000)])
    return f


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=24)
    ap.add_argument("--episodes", type=int, default=30)
    ap.add_argument("--slow", default="1500,100", help="the slow host's prompt and answer words a second")
    args = ap.parse_args()
    p_tps, o_tps = (float(x) for x in args.slow.split(","))
    tok = Tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        base = make_db(Path(tmp) / "base.db", tok, args.sessions, args.episodes)
        slow, quick = fake(p_tps, o_tps), fake(2 * p_tps, 2 * o_tps)
        try:
            rates: dict[str, float] = {}
            for label, hosts in (("slow alone", [slow.url]), ("fast alone", [quick.url]),
                                 ("pair", [quick.url, slow.url])):
                db = Path(tmp) / f"{label.replace(' ', '-')}.db"
                shutil.copy(base, db)
                before = {u: len(f.chat_requests) for u, f in ((slow.url, slow), (quick.url, quick))}
                made, wall = asyncio.run(run(db, tok, hosts))
                calls = {("slow" if u == slow.url else "fast"): len(f.chat_requests) - before[u]
                         for u, f in ((slow.url, slow), (quick.url, quick))}
                rates[label] = made / wall
                print(f"{label:>10}: {made} summaries in {wall:6.2f} s = {rates[label]:.3f}/s   calls {calls}")
        finally:
            slow.stop()
            quick.stop()
    total = rates["slow alone"] + rates["fast alone"]
    print(f"pair ÷ (slow alone + fast alone) = {rates['pair']:.3f} ÷ {total:.3f} = {rates['pair'] / total:.3f} "
          f"(target ≥ 0.9)")


if __name__ == "__main__":
    main()
