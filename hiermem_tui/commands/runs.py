"""``hiermem-tui runs [--session ID] [--limit N] [--json]``: the run history, newest first."""

from __future__ import annotations

import argparse
import json

from ..run_history import PASS_LABELS, duration, list_runs, run_json, why
from ..textsafe import one_line
from .common import EXIT_OK, CliContext, add_db_option
from .reading import check_limit, open_existing

MAX_LIMIT = 100_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("runs", help="compaction runs, newest first: pass, engine, outcome, tiers, why it stopped")
    add_db_option(p)
    p.add_argument("--session", metavar="ID", help="one session (default: the whole file)")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N runs (default 50)")
    p.add_argument("--json", action="store_true", help="print a JSON list (the export's run objects, plus more)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    check_limit(args.limit, MAX_LIMIT)
    store = open_existing(ctx, args.session)
    if store is None:
        ctx.say("[]" if args.json else "no runs yet")
        return EXIT_OK
    try:
        page = list_runs(store, args.session, limit=args.limit)
    finally:
        store.close()
    if args.json:
        ctx.say(json.dumps([run_json(r) for r in page.runs], ensure_ascii=False, indent=1))
        return EXIT_OK
    if not page.runs:
        ctx.say("no runs yet")
        return EXIT_OK
    for r in page.runs:
        took = duration(r)
        engine = r.backend + (f" {one_line(r.model, 30)}" if r.model else "")
        ctx.say(
            f"{r.started_at[:19].replace('T', ' ')}  {r.status:<11} {PASS_LABELS.get(r.kind, r.kind):<20} "
            f"{engine:<24} {'–' if took is None else f'{took:,.1f} s':>9}  {r.summaries_created:>4} made "
            f"(n {r.normal} · a {r.aggressive} · f {r.fallback} · flagged {r.flagged})  {one_line(r.session_id, 40)}"
        )
        reason = why(r)
        if reason:
            ctx.say(f"    {one_line(reason, 160)}")
    if page.more:
        ctx.say(f"(older runs not shown: --limit {args.limit * 2})")
    return EXIT_OK
