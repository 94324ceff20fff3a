"""Title asks side by side on the probe set's parts, against a real model (issue 19, stop 30; not in CI).

    .venv/bin/python bench/probe_titles.py --ollama-host URL --model NAME OUT [--variants A B …] [--only LEAF …]

Every part of every leaf (``notes.parts_for``) is shown to the model as the app shows it
(``prompts.build_part_prompt``: the same system text and material) and asked each variant's ask in
turn, so the server's prompt cache serves the material and only the ask is evaluated anew. Each
answer is kept as the app keeps a title (``notes.gist`` of ``notes.note_text``). OUT (JSON) gets, per
leaf and part, the part's material and every variant's title, to be judged true or false beside the
material (``probe_blind.py titles``) and counted with ``probe_blind.py count``.

Why: across j8–j13 the app's titles added 0 ± 1 reader points over the key lines and carried every
false statement found (2–3 per 10 leaves): wrong relations between names the part holds ("… with
940 nm PIR Trigger", "LoRaWAN Radio Settings …"). The ask pointed out the part's names and asked
for them "exact" in the title; these variants ask for less. ``app`` is the ask as the app sends it
now (since stop 30 it is ``topic``'s, greedy); the lab's own rows in bench/README.md were made with the
stop-29 ask under that name.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from probeset import lab_parser, load_leaves

from hiermem_tui.summarize import acceptance, notes
from hiermem_tui.summarize.ollama_backend import OllamaBackend
from hiermem_tui.summarize.prompts import build_part_prompt
from hiermem_tui.tokens import Tokenizer

VARIANTS: dict[str, str] = {
    "app": "",  # the app's ask as it is (notes.ask), at the app's temperature
    "nohints": (
        "This is part {index} of {count}. Give this part of the {what} a title of at most twelve words that names "
        "what it is about: the thing asked about, worked on, found or decided in it, with its exact names. "
        "Write only the title."
    ),
    "want": (
        "This is part {index} of {count}. Give this part of the {what} a short title, at most eight words, that "
        "says what the user asked for in it or what was worked on. Write only the title."
    ),
    "topic": (
        "This is part {index} of {count}. What is this part of the {what} about? Answer with a short title of at "
        "most eight words, using the words it uses. Write only the title."
    ),
    "label": (
        "This is part {index} of {count}. What is this part of the {what} about? Answer with a label of two to four "
        "words, using the words it uses. Write only the label."
    ),
}
LAB_TEMPERATURE = 0.2
"""Every variant but ``app`` is asked at this (the app's part temperature before stop 30) …"""
TEMPERATURES = {"topic0": 0.0}
"""… except these, another variant's ask at another temperature (``topic0``: ``topic`` greedy)."""
ASKED = (
    "Give this request a title of at most eight words that names what the user asks for, with its exact "
    "names. Write only the title."
)
"""The ``asked`` variant: a part a user opens is titled from the user's message alone (``notes.said``),
so the title can only say what was asked, never what was decided or done; other parts as ``app``."""


def asked_prompt(base_system: str, part: notes.Part) -> str | None:
    said = "\n\n".join(x for x in (notes.said(s) for s in part.items if s.role == "user") if x)
    if part.opened_by != "user" or not said:
        return None
    return f"The user's message:\n<message>\n{said}\n</message>\n\n{ASKED}"


def ask_for(name: str, part: notes.Part) -> str:
    name = name.rstrip("0") if name in TEMPERATURES else name
    if name == "app":
        return notes.ask(part)
    what = "report" if part.opened_by == "summary" else "log"
    text = VARIANTS[name]
    for key, value in (("{index}", str(part.index)), ("{count}", str(part.count)), ("{what}", what)):
        text = text.replace(key, value)
    return text


async def run(args: argparse.Namespace) -> int:
    tok = Tokenizer()
    backend = OllamaBackend(args.ollama_host, args.model, tok, timeout_s=900)
    out: dict[str, Any] = {"model": args.model, "variants": {v: ASKED if v == "asked" else ask_for(v, notes.Part(
        1, 1, (), "user", 40)) for v in args.variants}, "leaves": []}
    started = time.monotonic()
    for leaf in load_leaves():
        if args.only and leaf.key not in args.only:
            continue
        parts_out = []
        for part in notes.parts_for(leaf.sources, 0):
            base = build_part_prompt(0, part, tokenizer=tok)
            material = base.prompt.replace(base.ask or "", "").strip()
            titles: dict[str, Any] = {}
            for name in args.variants:
                if name == "asked":
                    prompt = asked_prompt(base.system, part) or base.prompt
                else:
                    prompt = base.prompt.replace(base.ask or "", ask_for(name, part)) if name != "app" else base.prompt
                gen = await backend.generate(base.system, prompt, temperature=base.temperature if name == "app" else TEMPERATURES.get(name, LAB_TEMPERATURE),
                                             num_predict=base.num_predict)
                title = notes.gist(notes.note_text(acceptance.strip_preamble(gen.text)))
                titles[name] = {"title": title, "seconds": round(gen.seconds, 2), "eval": gen.eval_count}
            parts_out.append({"index": part.index, "opened_by": part.opened_by, "material": material,
                              "titles": titles})
            print(f"{leaf.key} part {part.index}/{len(notes.parts_for(leaf.sources, 0))}: "
                  + " | ".join(f"{k}: {v['title']}" for k, v in titles.items()), flush=True)
        out["leaves"].append({"leaf": leaf.key, "parts": parts_out})
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    out["wall_seconds"] = round(time.monotonic() - started, 1)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out} in {out['wall_seconds']} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = lab_parser(__doc__)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=[*VARIANTS, *TEMPERATURES, "asked"])
    return asyncio.run(run(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
