"""``hiermem-tui check``: how much of what its sources named each summary kept.

Every active summary of the session is measured against its sources (those made before
fidelity was measured are measured now and the result is stored, when the file is
writable), pinned episodes are verified, and the summaries are listed worst first.

``--json`` (docs/ARCHITECTURE.md, contracts): a list of ``{"summary_id", "depth", "tier",
"identifiers", "kept", "retention", "lost", "key_retention"}`` (the last added in schema 4:
the share of its key names kept, what the low-fidelity flag judges). ``--below R``: only
summaries keeping under R of their key names (fallbacks and summaries missing a pinned
episode are always listed with it). Exit 0 whatever is found; 2 for an unknown session or a
bad threshold.
"""

from __future__ import annotations

import argparse
import json

from ..compaction.check import CheckRow, check_session
from ..textsafe import one_line
from ..tokens import Tokenizer
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, not {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, not {value:g}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="which identifiers each summary kept of its sources, worst first")
    add_db_option(p)
    p.add_argument("--session", metavar="ID", required=True, help="the session to check")
    p.add_argument("--below", metavar="R", type=fraction,
                   help="only summaries keeping less than R (0–1) of their key names")
    p.add_argument("--json", action="store_true", help="print a JSON list (ARCHITECTURE §6)")
    p.set_defaults(func=run)


def human(row: CheckRow) -> str:
    s, fid = row.summary, row.fidelity
    lost = ", ".join(one_line(x, 40) for x in fid.lost[:8]) + (" …" if len(fid.lost) > 8 else "")
    extra = []
    if fid.novel:
        extra.append(f"{len(fid.novel)} not in any source: {', '.join(one_line(x, 30) for x in fid.novel[:4])}")
    if row.pins_missing:
        extra.append(f"missing pinned {', '.join(row.pins_missing)}")
    if s.trimmed:
        extra.append(f"answer {s.trimmed} to its target")
    tail = f"  [{'; '.join(extra)}]" if extra else ""
    return (f"{fid.retention:6.0%}  {s.tier:<10} d{s.depth} #{s.first_seq}–{s.last_seq}  "
            f"{fid.kept}/{fid.identifiers} kept, {fid.key_kept}/{fid.key} key names  {s.id}"
            + (f"\n        lost: {lost}" if lost else "") + tail)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    ctx.tokenizer = ctx.tokenizer or Tokenizer()
    store = ctx.open_store(create=False)
    try:
        if store.sessions.get(args.session) is None:
            raise CliError(f"no session {one_line(args.session, 80)} in this database (see 'hiermem-tui sessions')",
                           EXIT_USAGE)
        rows = check_session(store, args.session, below=args.below)
        if args.json:
            ctx.say(json.dumps([r.as_json() for r in rows], ensure_ascii=False))
        elif not rows:
            ctx.say("no summaries to check" if args.below is None else f"no summary keeps less than {args.below:g}")
        else:
            for r in rows:
                ctx.say(human(r))
        return EXIT_OK
    finally:
        store.close()
