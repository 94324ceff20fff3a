"""Key lines the model picks (issue 19 experiment, needs a model): extract, let the model choose, show quotes.

    probe_select.py NEW --base RUN --ollama-host URL --model NAME [--pool 2] [--questions] [--only LEAF …]

For each leaf of the probe set, the app's key lines at ``--pool`` times the leaf's target are numbered
and shown to the model, which is asked for the numbers of the lines a reader needs most, most
important first. The summary is those lines (quoted, in chat order) up to the target, then the
heuristic's own key lines for whatever budget is left. Every line is still a quote of the chat, so
the model can choose badly but cannot state anything false: the question is whether a 1.5B model
chooses better than ``quotes.py``'s fixed order. Condensed rows are re-made over the new leaves as
``probe_posthoc.py keylines`` makes them. Each call's seconds and token counts are kept in ``calls``.
``--questions`` asks instead one question a call (decisions, errors and fixes, what was made, the last
request), each for at most 3 line numbers, on the same prefix (the prompt cache serves the 2nd–4th).

Tried on the rig (2026-12-03, Qwen2.5-Coder-1.5B, ext-tabs#12-25, a pool of 64 lines): asked for 17, it
answered "1, 2, 3, …, 16" — the first 16 lines, 16 s. With ``--questions`` (12.8 s, then 1.7 s each from
the cache): decisions "1, 2, 3", what was made "1, 2, 3, 4, 5, 6", errors "1. 50" (line 50 is the
QUOTA_BYTES_PER_ITEM error, which a regex finds), the last request "line 61" (its answer). The model counts
from the top instead of choosing, so no full run was made: a choice by position is what ``quotes.py``'s
order already does better.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import time
from datetime import datetime, timezone
from typing import Any

import ollama
from probe_posthoc import RUNS, T0, condensed_target, leaf_target, write_run
from probeset import load_leaves

from hiermem_tui.summarize import keylines
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

SYSTEM = ("You choose lines from a chat log for a reader who will see only the lines you choose. "
          "You answer with line numbers only.")
ASK = ("Above are {n} numbered lines quoted from a stretch of a chat between a user and an assistant. A reader "
       "who never saw the chat will ask: what the user wanted; what was made or found, with its exact names "
       "and numbers; what was decided and why; which errors happened and how they were fixed; what the user "
       "asked last and what comes next. Choose the {k} lines that answer these best, most important first. "
       "Answer with their numbers only, separated by commas.")


QUESTIONS = ("Which lines say what the user decided or chose?",
             "Which lines quote an error, and which line says how it was fixed?",
             "Which lines name the files, settings, parts or numbers that were produced?",
             "Which line is the user's last request, and which line answers it?")
SYSTEM_Q = ("You find lines in a numbered chat log. You answer with at most 3 line numbers, separated by commas, "
            "nothing else.")


def _numbers(text: str, size: int, chosen: list[int]) -> None:
    for m in re.findall(r"\d+", text):
        n = int(m)
        if 1 <= n <= size and n - 1 not in chosen:
            chosen.append(n - 1)


def pick(client: ollama.Client, model: str, lines: list[str], k: int,
         questions: bool = False) -> tuple[list[int], dict[str, Any]]:
    numbered = "\n".join(f"{n}. {ln.removeprefix('- ')}" for n, ln in enumerate(lines, 1))
    asks = [(SYSTEM_Q, q, 16) for q in QUESTIONS] if questions else [(SYSTEM, ASK.format(n=len(lines), k=k), 4 * k + 16)]
    t0 = time.monotonic()
    chosen: list[int] = []
    answers, prompt_eval, evals = [], 0, 0
    for system, ask, limit in asks:
        r = client.chat(model=model, messages=[{"role": "system", "content": system},
                                               {"role": "user", "content": f"{numbered}\n\n{ask}"}],
                        options={"temperature": 0, "num_predict": limit})
        answers.append(r["message"]["content"][:200])
        prompt_eval += r.get("prompt_eval_count") or 0
        evals += r.get("eval_count") or 0
        _numbers(r["message"]["content"], len(lines), chosen)
    call = {"seconds": round(time.monotonic() - t0, 2), "prompt_eval_count": prompt_eval, "eval_count": evals,
            "answers": answers, "pool": len(lines), "valid": len(chosen)}
    return chosen, call


def compose(pool: list[str], chosen: list[int], fallback: list[str], budget: int, tok: Tokenizer) -> str:
    """The chosen lines (in the model's order) while they fit, then the heuristic's; shown in chat order."""
    keep: set[int] = set()
    used = 0
    order = chosen + [pool.index(ln) for ln in fallback if ln in pool]
    for i in order:
        cost = tok.count(pool[i]) + 1
        if i in keep or used + cost > budget:
            continue
        keep.add(i)
        used += cost
    return "\n".join(pool[i] for i in sorted(keep))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new")
    ap.add_argument("--base", default="keylines6")
    ap.add_argument("--ollama-host", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--pool", type=float, default=2.0)
    ap.add_argument("--questions", action="store_true")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args(argv)
    tok = Tokenizer()
    client = ollama.Client(host=args.ollama_host)
    leaves = {leaf.key: leaf for leaf in load_leaves()}
    out = copy.deepcopy(json.loads((RUNS / f"{args.base}.json").read_text(encoding="utf-8")))
    out.update(label=args.new, date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), backend="ollama",
               model=args.model, summary_format=f"key lines chosen by the model (pool ×{args.pool})", speed=None)
    started = time.monotonic()
    rows = [r for r in out["leaves"] if not args.only or r["leaf"] in args.only]
    for row in rows:
        sources = leaves[row["leaf"]].sources
        target = leaf_target(int(row["source_tokens"]))
        pool = keylines.key_lines(sources, int(target * args.pool), tok).splitlines()
        fallback = keylines.key_lines(sources, target, tok).splitlines()
        k = max(4, len(fallback) // 2)
        chosen, call = pick(client, args.model, pool, k, args.questions)
        text = compose(pool, chosen, fallback, target, tok)
        kept = set(text.splitlines())
        call.update(chosen_kept=sum(pool[i] in kept for i in chosen),
                    differs_from_heuristic=len(kept - set(fallback)))
        row.update(text=text, tokens=tok.count(text), tier="normal", calls=[call], rejections=[],
                   llm_seconds=call["seconds"])
        print(f"{row['leaf']}: pool {len(pool)}, asked {k}, valid {call['valid']}, {call['seconds']} s, "
              f"{call['differs_from_heuristic']} lines not in the heuristic's", flush=True)
    by_leaf = {x["leaf"]: x for x in out["leaves"]}
    for row in out["condensed"]:
        src = [SourceItem("summary", by_leaf[k]["text"], by_leaf[k]["tokens"], T0, T0, depth=0, label=k)
               for k in row["sources"] if k in by_leaf]
        row.update(text=keylines.key_lines(src, condensed_target(src), tok), tier="normal", calls=[], rejections=[])
        row["tokens"] = tok.count(row["text"])
    out["wall_seconds"] = round(time.monotonic() - started, 1)
    print(f"wrote {write_run(args.new, out)} in {out['wall_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
