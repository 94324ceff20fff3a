"""``hiermem-tui context --session ID [--budget TOKENS] [--json]``: what a model would be given now."""

from __future__ import annotations

import argparse
import json
import sys

from ..context import build_context, render_context
from ..textsafe import visible
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option, is_tty
from .reading import open_existing


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "context", help="what a model would be given from a session now (top summaries + raw tail)",
        description="The session's top summaries and the episodes under no summary, in order. With --budget, "
                    "the newest part that fits: the raw tail first, then the most recent summaries, back to the "
                    "first item that does not fit (older items are left out and the header says which).",
    )
    add_db_option(p)
    p.add_argument("--session", required=True, metavar="ID")
    p.add_argument("--budget", type=int, metavar="TOKENS", help="at most this many tokens (default: no limit)")
    p.add_argument("--json", action="store_true",
                   help='print {"session", "budget", "total_tokens", "items": [{"kind", "id", "depth", '
                        '"first_seq", "last_seq", "tokens"}]} instead of the text')
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    if args.budget is not None and args.budget < 0:
        raise CliError(f"--budget must be zero or more tokens, not {args.budget}", EXIT_USAGE)
    store = open_existing(ctx, args.session)
    assert store is not None  # an empty file has no session: open_existing said so
    try:
        view = build_context(store, args.session, args.budget)
        out = ctx.stdout
        if args.json:
            out.write(json.dumps(view.as_json(), ensure_ascii=False, indent=1) + "\n")
            return EXIT_OK
        if out is sys.stdout and hasattr(out, "reconfigure"):
            out.reconfigure(encoding="utf-8")
        # Exact text when it goes to a file or a pipe (that is what a model is given); on a
        # terminal, control characters are shown as visible stand-ins, never acted on.
        safe = visible if is_tty(out) else str
        for piece in render_context(store, view):
            out.write(safe(piece))
        return EXIT_OK
    finally:
        store.close()

