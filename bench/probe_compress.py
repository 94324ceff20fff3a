"""Lab: can the model say a leaf's key lines in fewer tokens, so more of them fit its target? (issue 19,
stop 32; against a real model, not in CI)

    .venv/bin/python bench/probe_compress.py OUT --ollama-host URL --model NAME [--only LEAF …] [--factor 2.0]

Each leaf's key lines are picked at ``factor`` × its target (``quotes.key_lines``), shown to the model as
the app shows a leaf's lines (``prompts.build_part_prompt``: the same system text and material) and the
model is asked to rewrite them as short notes, keeping every name, number and error as written, greedy.
OUT (JSON) holds each leaf's lines, the answer, their token counts and seconds, to be read side by side.
Why: at the same target, key lines answer 70–71% of the probes and the model's title adds a point; a
reader's misses are mostly details past the budget ("no $166.17 or project total"). Notes twice as dense
as the lines would let twice as many details in, if the model kept them true.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from probe_posthoc import leaf_target
from probeset import lab_parser, load_leaves

from hiermem_tui.summarize import keylines, notes
from hiermem_tui.summarize.ollama_backend import OllamaBackend
from hiermem_tui.summarize.prompts import build_part_prompt
from hiermem_tui.tokens import Tokenizer

ASK = ("Rewrite these lines as short notes, one note per line, in the order given. Keep every name, number, "
       "file, command and error exactly as written, and who said it. Drop filler words. Write only the notes.")


async def run(args: argparse.Namespace) -> int:
    tok = Tokenizer()
    backend = OllamaBackend(args.ollama_host, args.model, tok, timeout_s=900)
    out: list[dict[str, object]] = []
    for leaf in load_leaves():
        if args.only and leaf.key not in args.only:
            continue
        target = leaf_target(sum(s.tokens for s in leaf.sources))
        lines = keylines.key_lines(leaf.sources, int(target * args.factor), tok)
        part = notes.parts_for(leaf.sources, 0, lines)[0]
        prompt = build_part_prompt(0, part, tokenizer=tok)
        started = time.monotonic()
        gen = await backend.generate(prompt.system, prompt.prompt.replace(prompt.ask or "", ASK), temperature=0.0,
                                     num_predict=int(target * 1.3))
        out.append({"leaf": leaf.key, "target": target, "lines_tokens": tok.count(lines),
                    "notes_tokens": tok.count(gen.text), "seconds": round(time.monotonic() - started, 1),
                    "lines": lines, "notes": gen.text})
        print(f"{leaf.key}: target {target}, lines {out[-1]['lines_tokens']} → notes {out[-1]['notes_tokens']} "
              f"tokens in {out[-1]['seconds']} s", flush=True)
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = lab_parser(__doc__)
    ap.add_argument("--factor", type=float, default=2.0, help="the key lines shown, × the leaf's target")
    return asyncio.run(run(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
