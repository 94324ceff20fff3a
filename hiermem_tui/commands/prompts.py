"""``hiermem-tui prompts``: the exact prompt templates summaries are made with.

The built-in defaults, overlaid with the edits in the config file (``[prompts."leaf.normal"]``
tables, or the TUI's prompts screen). ``--json``: ``{key: {"title", "version", "edited",
"system", "instruction"}}`` for the four templates; ``version`` is what a summary made with it
records.
"""

from __future__ import annotations

import argparse
import json

from ..summarize.prompts import DEFAULT_TEMPLATES, PLACEHOLDERS, PromptSet
from .common import EXIT_OK, CliContext


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("prompts", help="print the prompt templates in use (defaults and your edits)")
    p.add_argument("--json", action="store_true", help="print them as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    prompts = PromptSet(ctx.settings.prompts)
    edited = prompts.edited()
    payload = {
        key: {"title": t.title, "version": prompts.version(key), "edited": key in edited, "system": t.system,
              "instruction": t.instruction}
        for key, t in prompts.templates.items()
    }
    if args.json:
        ctx.say(json.dumps(payload, ensure_ascii=False, indent=2))
        return EXIT_OK
    ctx.say(f"Placeholders: {', '.join(PLACEHOLDERS)}; edits live in {ctx.settings.config_path or 'the config file'}")
    for key in DEFAULT_TEMPLATES:
        p = payload[key]
        state = "edited" if p["edited"] else "default"
        ctx.say(f"\n== {key} — {p['title']} ({state}, version {p['version']})")
        ctx.say("-- system:")
        ctx.say(str(p["system"]))
        ctx.say("-- instruction:")
        ctx.say(str(p["instruction"]))
    return EXIT_OK
