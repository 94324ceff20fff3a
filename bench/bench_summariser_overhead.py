"""How much time does the summariser add on top of a bare Ollama call?

Against the zero-latency fake server, for each call: overhead = wall time − time the
server spent handling the request(s). The same is measured for a raw
``ollama.AsyncClient.chat`` stream with the same prompt and options, interleaved with the
summariser calls so both see the same machine state. The difference is the engine's own
cost (prompt building, token counting for num_ctx and the result, bookkeeping).

Run: ``.venv/bin/python bench/bench_summariser_overhead.py [calls]`` from the repo root.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ollama

from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize.prompts import build_prompt
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama


def leaf_request(tok: Tokenizer, budget: int = 3000, variant: int = 0) -> SummaryRequest:
    """A realistic leaf: ~3000 tokens of episodes (ARCHITECTURE §5 leaf_chunk_tokens), target 1200."""
    t0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)
    items: list[SourceItem] = []
    i = 0
    while sum(s.tokens for s in items) < budget:
        text = (f"Step {i}: edited src/app/module_{i}_{variant}.py, ran `pytest -k test_{i}`, saw KeyError: 'cfg_{i}' "
                "and fixed it by loading defaults first. ") * 6
        at = t0 + timedelta(minutes=i)
        items.append(SourceItem("episode", text, tok.count(text), at, at, role=("user", "assistant")[i % 2]))
        i += 1
    return SummaryRequest(0, items, 1200, prior_summary="Earlier, the user set up the project.")


async def main(calls: int) -> None:
    tok = Tokenizer()
    req = leaf_request(tok)
    prompt = build_prompt(req)
    with FakeOllama() as fake:
        backend = OllamaBackend(fake.url, "llama3.2", tok)
        summariser = Summariser(backend, tok)
        raw = ollama.AsyncClient(host=fake.url)
        options = {"temperature": prompt.temperature, "num_predict": prompt.num_predict, "num_ctx": 6144}
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.prompt}]

        async def raw_call() -> None:
            stream = await raw.chat(model="llama3.2", messages=messages, stream=True, options=options,
                                    keep_alive="10m")
            async for _ in stream:
                pass

        # a new request every call (its file names differ), as in a real pass: nothing the summariser
        # keeps between the attempts of one summary can carry over to the next one
        fresh = iter([leaf_request(tok, variant=n) for n in range(1, calls + 12)])

        async def summarise_call() -> None:
            result = await summariser.summarise(next(fresh))
            assert result.tier == "normal"

        async def measure(fn: object) -> float:
            before = len(fake.requests)
            began = time.perf_counter()
            await fn()  # type: ignore[operator]
            wall = time.perf_counter() - began
            handled = fake.requests[before:]
            for rec in handled:
                rec.finished.wait(1)
            return wall - sum(r.server_seconds for r in handled)

        for _ in range(10):  # warm-up: connections, /api/show cache, imports
            await raw_call()
            await summarise_call()
        ours: list[float] = []
        base: list[float] = []
        for _ in range(calls):
            base.append(await measure(raw_call))
            ours.append(await measure(summarise_call))
        await raw.close()
        await backend.aclose()

    def ms(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if q < 100 else max(values) * 1000

    med_ours, med_base = statistics.median(ours) * 1000, statistics.median(base) * 1000
    print(f"calls: {calls}, input ≈ {req.source_tokens} source tokens, prompt ≈ "
          f"{tok.count(prompt.system) + tok.count(prompt.prompt)} tokens")
    print(f"raw AsyncClient.chat overhead : median {med_base:.3f} ms, p90 {ms(base, 90):.3f} ms")
    print(f"Summariser.summarise overhead : median {med_ours:.3f} ms, p90 {ms(ours, 90):.3f} ms")
    print(f"engine's own cost (median diff): {med_ours - med_base:.3f} ms; ratio {med_ours / med_base:.2f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
