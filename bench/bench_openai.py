"""The OpenAI-compatible backend beside the Ollama one: the same model, the same leaves (not in CI).

    .venv/bin/python bench/bench_openai.py --base-url http://127.0.0.1:11720 \\
        --ollama-host http://127.0.0.1:11721 --ollama-model qwen2.5-coder:1.5b-instruct-q4_K_M \\
        [--openai-model ID] [--only codex-fix ...] [--leaves N] [--concurrent] [--json-out FILE]

``--fakes N`` measures the two backends' own cost instead: N calls each, alternating, against the test
suite's fake servers on loopback (zero model time; the same answer, one word a chunk), the median
milliseconds a call takes from the app's side: what either backend adds to a model's time.

Without ``--base-url`` (or ``--fakes``), or when the server there does not answer, it prints one
"skipped: …" line and exits 0 (``run_all.py`` runs it that way); without ``--ollama-host`` it measures the OpenAI-compatible
server alone.

The leaves are the probe set's (``lab/probes``, ``lab/probeset.py``'s ``load_leaves``: each leaf's sources exactly as
the app's leaf request builds them), the first ``--leaves`` of the files named with ``--only``. Each leaf
is summarised by the app's own :class:`Summariser` (the shipped prompts and ``notes`` format) once through
each backend, the order alternating from leaf to leaf so a drift in the machine's load falls on both;
``--concurrent`` sends both at once instead, so on a machine whose other load comes and goes both calls
meet the same load (each then also slows the other). Each backend first makes one short call that is
not counted (the model loaded and warm on both).

Printed per leaf and in total, measured in this run: the tier each backend reached, the model seconds
(``llm_seconds``) and their ratio (OpenAI ÷ Ollama), whether the two texts are the same, and how many
of the leaf's probes each text answers by the automatic pre-check (``Probe.present``). The targets
(issue 38): the same tiers within one leaf, the seconds within 10 %.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "lab"))  # the probe set's leaves are the lab's (lab/probeset.py)

from probeset import Leaf, ProbeError, load_leaves  # noqa: E402

from hiermem_tui.config import Policy  # noqa: E402
from hiermem_tui.summarize import Summariser, SummariserError, SummaryRequest, SummaryResult  # noqa: E402
from hiermem_tui.summarize.ollama_backend import OllamaBackend  # noqa: E402
from hiermem_tui.summarize.openai_backend import OpenAIBackend  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402

WARM_PROMPT = "Say in five words what a summary is."


async def warm(backend: OllamaBackend | OpenAIBackend) -> float:
    """Check the server and make one short call (the model's load is paid here); its seconds."""
    await backend.check()
    began = time.monotonic()
    await backend.generate("You answer briefly.", WARM_PROMPT, temperature=0.0, num_predict=16)
    return time.monotonic() - began


async def summarise(summariser: Summariser, leaf: Leaf, policy: Policy) -> SummaryResult:
    return await summariser.summarise(SummaryRequest(0, leaf.sources, policy.leaf_target_tokens))


def answered(leaf: Leaf, text: str) -> int:
    return sum(p.present(text) for p in leaf.probes)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tok = Tokenizer()
    policy = Policy()
    openai = OpenAIBackend(args.base_url, args.openai_model, tok, timeout_s=args.timeout)
    backends: dict[str, OllamaBackend | OpenAIBackend] = {"openai": openai}
    if args.ollama_host:
        backends["ollama"] = OllamaBackend(args.ollama_host, args.ollama_model, tok, timeout_s=args.timeout)
    try:
        warmed = {name: await warm(b) for name, b in backends.items()}
        print("warm-up call: " + ", ".join(f"{n} {s:.1f} s ({backends[n].model})" for n, s in warmed.items()),
              file=sys.stderr)
        leaves = load_leaves(only=args.only or None)[: args.leaves]
        summarisers = {name: Summariser(b, tok, summary_format="notes") for name, b in backends.items()}
        rows: list[dict[str, Any]] = []
        for i, leaf in enumerate(leaves):
            order = list(summarisers) if i % 2 == 0 else list(reversed(summarisers))
            got: dict[str, SummaryResult] = {}
            print(f"  {leaf.key} ({leaf.source_tokens:,} tok in) via {' and '.join(order)}"
                  f"{' at once' if args.concurrent else ''}…", file=sys.stderr)
            if args.concurrent:
                made = await asyncio.gather(*(summarise(summarisers[name], leaf, policy) for name in order))
                got = dict(zip(order, made))
            for name in order if not args.concurrent else ():
                got[name] = await summarise(summarisers[name], leaf, policy)
            row: dict[str, Any] = {"leaf": leaf.key, "source_tokens": leaf.source_tokens, "probes": len(leaf.probes)}
            for name, res in got.items():
                row[name] = {"tier": res.tier, "llm_seconds": round(res.llm_seconds, 2), "calls": res.attempts,
                             "answered": answered(leaf, res.text), "text": res.text}
            if "ollama" in got:
                row["same_tier"] = got["openai"].tier == got["ollama"].tier
                row["same_text"] = got["openai"].text == got["ollama"].text
                row["ratio"] = (got["openai"].llm_seconds / got["ollama"].llm_seconds
                                if got["ollama"].llm_seconds > 0 else None)
            rows.append(row)
        return {"warm_s": warmed, "models": {n: b.model for n, b in backends.items()}, "leaves": rows,
                "concurrent": args.concurrent}
    finally:
        for b in backends.values():
            await b.aclose()


async def overhead(calls: int) -> dict[str, float]:
    """Median ms per call of each backend against its fake server (see the module docstring)."""
    from tests.fakeollama import FakeOllama
    from tests.fakeopenai import FakeOpenAI

    tok = Tokenizer()
    prompt = "Summarise this log.\n\n" + " ".join(f"line {i}: the build failed at step {i}." for i in range(300))
    times: dict[str, list[float]] = {"ollama": [], "openai": []}
    with FakeOllama(models=["m:latest"]) as ollama, FakeOpenAI(models=["m:latest"]) as openai:
        backends: dict[str, OllamaBackend | OpenAIBackend] = {
            "ollama": OllamaBackend(ollama.url, "m:latest", tok), "openai": OpenAIBackend(openai.url, "m:latest", tok)}
        try:
            for b in backends.values():
                await b.check()
            for i in range(calls):
                for name in (("ollama", "openai") if i % 2 == 0 else ("openai", "ollama")):
                    began = time.perf_counter()
                    await backends[name].generate("You summarise.", prompt, temperature=0.2, num_predict=64,
                                                  on_chunk=lambda p: None)
                    times[name].append((time.perf_counter() - began) * 1000)
        finally:
            for b in backends.values():
                await b.aclose()
    return {name: statistics.median(t) for name, t in times.items()}


def report(result: dict[str, Any]) -> None:
    rows = result["leaves"]
    both = all("ollama" in r for r in rows)
    print(f"models: {', '.join(f'{k} {v}' for k, v in result['models'].items())}"
          f"{'; both backends called at once' if result.get('concurrent') else '; one backend at a time'}")
    head = f"{'leaf':<28} {'tok in':>7}  {'openai':>14}"
    print(head + (f"  {'ollama':>14}  {'ratio':>6}  same text" if both else ""))
    for r in rows:
        o = r["openai"]
        line = f"{r['leaf'][:28]:<28} {r['source_tokens']:>7,}  {o['tier']:>8} {o['llm_seconds']:>5.1f}s"
        if both:
            a = r["ollama"]
            ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "–"
            line += f"  {a['tier']:>8} {a['llm_seconds']:>5.1f}s  {ratio:>6}  {'yes' if r['same_text'] else 'no'}"
        print(line)
    total_o = sum(r["openai"]["llm_seconds"] for r in rows)
    probes = sum(r["probes"] for r in rows)
    print(f"openai: {total_o:.1f} model s over {len(rows)} leaves; probes answered "
          f"{sum(r['openai']['answered'] for r in rows)}/{probes}")
    if both:
        total_a = sum(r["ollama"]["llm_seconds"] for r in rows)
        ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
        print(f"ollama: {total_a:.1f} model s; probes answered {sum(r['ollama']['answered'] for r in rows)}/{probes}")
        print(f"same tier in {sum(r['same_tier'] for r in rows)}/{len(rows)} leaves, same text in "
              f"{sum(r['same_text'] for r in rows)}/{len(rows)}; seconds openai ÷ ollama: total "
              f"{total_o / total_a:.2f}, median per leaf {statistics.median(ratios):.2f} "
              f"(range {min(ratios):.2f}–{max(ratios):.2f})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", help="the OpenAI-compatible server (llama-cpp-python's, llama.cpp's, vLLM …)")
    p.add_argument("--openai-model", help="its model id (default: the one it serves)")
    p.add_argument("--ollama-host", help="an Ollama(-shaped) server with the same model, to compare with")
    p.add_argument("--ollama-model", default="qwen2.5-coder:1.5b-instruct-q4_K_M")
    p.add_argument("--only", nargs="*", default=["codex-fix"], help="probe files to take leaves from")
    p.add_argument("--leaves", type=int, default=3, help="how many leaves (each costs a call per backend)")
    p.add_argument("--concurrent", action="store_true", help="both backends on each leaf at once (see above)")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json-out", type=Path)
    p.add_argument("--fakes", type=int, default=0, metavar="N", help="measure each backend's own cost, N calls")
    args = p.parse_args(argv)
    if args.fakes:
        ms = asyncio.run(overhead(args.fakes))
        print(f"ms a call against a fake server (median of {args.fakes}): ollama {ms['ollama']:.2f}, "
              f"openai {ms['openai']:.2f} (openai ÷ ollama {ms['openai'] / ms['ollama']:.2f})")
        return 0
    if not args.base_url:
        print("skipped: no --base-url (an OpenAI-compatible server to measure)")
        return 0
    try:
        result = asyncio.run(run(args))
    except SummariserError as exc:
        print(f"skipped: {str(exc).splitlines()[0]}")
        return 0
    except ProbeError as exc:
        print(f"bench_openai: {exc}", file=sys.stderr)
        return 2
    report(result)
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
