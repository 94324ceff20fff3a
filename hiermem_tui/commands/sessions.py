"""``hiermem-tui sessions [--json]``: list sessions from the stored aggregates (no episode scans)."""

from __future__ import annotations

import argparse
import json

from ..textsafe import one_line
from .common import EXIT_OK, CliContext, add_db_option, path_state


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sessions", help="list sessions")
    add_db_option(p)
    p.add_argument("--json", action="store_true", help="print a JSON array (ARCHITECTURE §6)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    if path_state(ctx.settings.db_path) != "present":
        # Listing never creates a database as a side effect; an empty file is an empty database.
        if args.json:
            ctx.say("[]")
        else:
            ctx.say(f"no database at {ctx.settings.db_path} yet: import with `hiermem-tui import PATH`")
        return EXIT_OK
    store = ctx.open_store(readonly=True)
    try:
        out = ctx.stdout
        if args.json:
            # Streamed element by element so 10k sessions never sit in one big list.
            out.write("[")
            n = 0
            for n, s in enumerate(store.sessions.each(), start=1):
                out.write(("," if n > 1 else "") + "\n" + json.dumps(s.as_json(), ensure_ascii=False))
            out.write("\n]\n" if n else "]\n")
            return EXIT_OK
        rows = store.sessions.page(sort="updated", descending=True)
        if not rows:
            ctx.say("no sessions yet: import some with `hiermem-tui import PATH` or try `hiermem-tui --demo`")
            return EXIT_OK
        ctx.say(f"{'id':<40} {'episodes':>8} {'tokens':>9} {'summ':>5} {'depth':>5} {'cover':>6} {'fb':>3}  title")
        for s in rows:
            depth = "-" if s.max_depth is None else str(s.max_depth)
            ctx.say(
                f"{one_line(s.id, 40):<40} {s.episodes:>8} {s.tokens:>9} {s.summaries:>5} {depth:>5} "
                f"{s.coverage * 100:>5.0f}% {s.fallbacks:>3}  {one_line(s.title, 60)}"
            )
        return EXIT_OK
    finally:
        store.close()
