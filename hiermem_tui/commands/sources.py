"""``hiermem-tui sources [--json]``: the chat histories found at their standard places on this machine."""

from __future__ import annotations

import argparse
import json

from ..importers.discover import PLACES_HELP, discover
from ..textsafe import one_line
from .common import EXIT_OK, CliContext


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sources", help="list the chat histories found on this machine (Claude Code, Codex, …)",
                       description="The chat histories at their tools' standard places on this machine: format, "
                                   "sessions, path. Their files are only read.",
                       epilog=PLACES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help='print a JSON array of {"format", "path", "sessions"}')
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    found = discover()
    if args.json:
        ctx.say(json.dumps([s.as_json() for s in found], ensure_ascii=False, indent=1))
        return EXIT_OK
    if not found:
        ctx.say("no chat histories found at the standard places; import a file or folder with `hiermem-tui import PATH`")
        return EXIT_OK
    width = max(len(s.format) for s in found)
    for s in found:
        ctx.say(f"{s.format:<{width}}  {s.count_label:>14}  {one_line(str(s.path), 200)}")
    ctx.say("import them all with `hiermem-tui import --discover`")
    return EXIT_OK
