"""Bounded and faithful whatever the model does (issue 8 targets), against the fake server.

    .venv/bin/python bench/bench_bounded.py [--episodes 200]

(a) A rambling server: it ignores ``num_predict`` and answers twice the prompt. A full pass
    over one 200-episode chat must finish (target < 60 s), with every summary within its
    tier's target and the prompts bounded (total prompt tokens linear in the episodes).
    Baseline: the same pass against a well-behaved server (a short answer) in this run.
(b) A model that answers a few words and no identifiers: one call per leaf, its retention is
    what it wrote (about 0: nothing is appended to the text to lift it), the names it lost are
    the leaf's keywords, and every such leaf is flagged low-fidelity (measured with
    ``hiermem-tui check``, the command users run). Baseline: the extractive digest on the same
    chunks.
(c) A server that ignores ``num_predict`` and writes a usable report three times its target:
    every summary is kept from its first answer (one model call each), clipped to its target.
Episodes are chat messages with a name that matters now and then (paths, numbers, code).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiermem_tui.cli import main as cli  # noqa: E402
from hiermem_tui.config import Policy  # noqa: E402
from hiermem_tui.store import NewEpisode, Store  # noqa: E402
from hiermem_tui.summarize import ExtractiveBackend, OllamaBackend, Summariser  # noqa: E402
from hiermem_tui.summarize.speed import ModelSpeed  # noqa: E402
from hiermem_tui.summarize.summariser import targets_for  # noqa: E402
from hiermem_tui.summarize.types import SourceItem, SummaryRequest  # noqa: E402
from hiermem_tui.compaction import Runner  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402
from tests.fakeollama import FakeOllama, longer_than_input  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
FEW_WORDS = "The user and the assistant talked about the work."
POLICY = Policy()


def message(i: int) -> str:
    names = [f"src/app/handler_{i}.py", f"parse_item_{i}()", f"HTTP {400 + i % 100}", f"`make test-{i}`",
             f"https://tracker.example.org/issues/{2000 + i}", f"ValueError{i}", f"commit {i:07x}af"]
    prose = ("We went through the failing case again and agreed the behaviour looks wrong when the input is "
             "empty; the next step is to run it once more with logging switched on and compare the two traces, "
             "then decide whether the fix belongs in the parser or in the caller.")
    return f"{prose} This concerns {names[i % len(names)]}."


def fill(path: Path, n: int, tok: Tokenizer) -> None:
    with Store.open(path, tokenizer=tok) as store:
        store.sessions.upsert("chat", title="a long chat", source="bench", created_at=T0)
        store.episodes.append("chat", [NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", message(i),
                                                  T0 + timedelta(minutes=i)) for i in range(n)])


def within_targets(store: Store) -> tuple[int, int]:
    ok = total = 0
    for s in store.dag.summaries("chat"):
        target = POLICY.leaf_target_tokens if s.depth == 0 else POLICY.condensed_target_tokens
        t = targets_for(SummaryRequest(s.depth, [SourceItem("episode", "", s.source_tokens, T0, T0)], target))
        total += 1
        ok += s.tokens <= getattr(t, s.tier)
    return ok, total


async def full_pass(path: Path, tok: Tokenizer, fake: FakeOllama) -> tuple[float, int]:
    with Store.open(path, tokenizer=tok) as store:
        backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=30)
        backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
        runner = Runner(store, Summariser(backend, tok), POLICY)
        began = time.perf_counter()
        try:
            await runner.compact("chat", "full")
        finally:
            await backend.aclose()
        return time.perf_counter() - began, len(store.dag.summaries("chat"))


def rambling(n: int, tok: Tokenizer) -> None:
    print(f"(a) full pass over {n} episodes, rambling server vs well-behaved server")
    results = {}
    for name, fake in (("well-behaved", FakeOllama(responder=lambda body: FEW_WORDS)),
                       ("rambling", FakeOllama(honour_num_predict=False,
                                               responder=longer_than_input(2).text))):  # type: ignore[arg-type]
        path = Path(tempfile.mkdtemp()) / f"{name}.db"
        fill(path, n, tok)
        with fake:
            seconds, made = asyncio.run(full_pass(path, tok, fake))
            prompts = [sum(tok.count(m["content"]) for m in b["messages"]) for b in fake.chat_bodies]
        with Store.open(path, tokenizer=tok) as store:
            ok, total = within_targets(store)
            tiers = {t: sum(s.tier == t for s in store.dag.summaries("chat")) for t in ("normal", "aggressive", "fallback")}
            episodes_tokens = store.sessions.get("chat").tokens  # type: ignore[union-attr]
        results[name] = seconds
        print(f"  {name:<13} {seconds:6.2f} s  {made} summaries {tiers}  within target {ok}/{total}  "
              f"{len(prompts)} calls, biggest prompt {max(prompts)} tok, all prompts {sum(prompts)} tok "
              f"= {sum(prompts) / episodes_tokens:.2f}× the episodes' tokens")
    print(f"  rambling ÷ well-behaved wall time: {results['rambling'] / results['well-behaved']:.2f}×")


def guarded(n: int, tok: Tokenizer) -> None:
    print(f"(b) a model answering a few words, {n} episodes, leaf pass; figures by `hiermem-tui check`")
    with FakeOllama(responder=lambda body: FEW_WORDS) as fake:
        for name in ("ollama (few words)", "extractive"):
            path = Path(tempfile.mkdtemp()) / "guard.db"
            fill(path, n, tok)
            calls_before = len(fake.chat_bodies)
            with Store.open(path, tokenizer=tok) as store:
                backend = (ExtractiveBackend(tok) if name == "extractive"
                           else OllamaBackend(fake.url, "llama3.2", tok, timeout_s=30))
                runner = Runner(store, Summariser(backend, tok), POLICY)

                async def go() -> None:
                    try:
                        await runner.compact("chat", "leaf")
                    finally:
                        await backend.aclose()

                asyncio.run(go())
                leaves = [s for s in store.dag.summaries("chat") if s.tier == "normal"]
                compression = [s.source_tokens / s.tokens for s in leaves]
                flagged = sum(s.low_fidelity(POLICY.fidelity_threshold) for s in leaves)
                keywords = statistics.median([len(s.keywords) for s in leaves])
            out = io.StringIO()
            cli(["check", "--db", str(path), "--session", "chat", "--json"], stdout=out)
            checked = json.loads(out.getvalue())
            retention = [r["retention"] for r in checked]
            key = [r["key_retention"] for r in checked]
            calls = len(fake.chat_bodies) - calls_before
            print(f"  {name:<19} {len(leaves)} normal leaves, {calls} model calls  retention median "
                  f"{statistics.median(retention):.2f}  key names median {statistics.median(key):.2f}  flagged "
                  f"{flagged}/{len(leaves)}  keywords per leaf {keywords:.0f}  compression median "
                  f"{statistics.median(compression):.1f}×  identifiers per leaf "
                  f"{statistics.median([r['identifiers'] for r in checked]):.0f}")


def long_report(body: dict) -> str:
    """A faithful report about three times any leaf target here, about the names the request's own
    material holds, distinct sentence by sentence; a JSON object of over-long sections when the
    request asks for structured output (the default ``summary_format``), plain bullets otherwise."""
    material = body["messages"][-1]["content"]
    names = list(dict.fromkeys(re.findall(r"src/app/handler_\d+\.py", material))) or ["the parser"]
    verbs = ("reran", "traced", "profiled", "bisected", "reviewed", "patched", "logged")
    parts = ("the parser", "its caller", "the retry loop", "an empty input", "the cache", "the config reader",
             "the error path", "both traces", "the queue", "the schema", "a slow test")
    ends = ("and it passed", "which failed twice", "with logging on", "on a clean checkout", "under load",
            "after the fix", "before lunch", "for the reviewer", "against main", "with the old data",
            "in a fresh shell", "with verbose output", "behind a flag")
    lines = [f"Pass {i}: {verbs[i % 7]} {parts[i % 11]} in {names[i % len(names)]} {ends[i % 13]}."
             for i in range(120)]
    if body.get("format"):
        return json.dumps({"doing": lines[0], "decisions": lines[1:60], "names": names * 5,
                           "errors": lines[60:100], "open_questions": lines[100:]})
    return "\n".join(f"- {line}" for line in lines)


def clipped(n: int, tok: Tokenizer) -> None:
    print(f"(c) a server ignoring num_predict with a usable report 3× the target, {n} episodes, leaf pass")
    path = Path(tempfile.mkdtemp()) / "clipped.db"
    fill(path, n, tok)
    with FakeOllama(honour_num_predict=False, responder=long_report) as fake:
        seconds, made = asyncio.run(full_pass(path, tok, fake))
        calls = len(fake.chat_bodies)
    with Store.open(path, tokenizer=tok) as store:
        ok, total = within_targets(store)
        summaries = store.dag.summaries("chat")
        trimmed = sum(1 for s in summaries if s.trimmed == "clipped")
        tiers = {t: sum(s.tier == t for s in summaries) for t in ("normal", "aggressive", "fallback")}
    print(f"  {made} summaries {tiers} in {seconds:.2f} s, {calls} model calls ({calls / made:.2f} per summary), "
          f"clipped {trimmed}/{total}, within target {ok}/{total}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    args = ap.parse_args()
    tok = Tokenizer()
    rambling(args.episodes, tok)
    guarded(args.episodes, tok)
    clipped(args.episodes, tok)
    return 0


if __name__ == "__main__":
    sys.exit(main())
