"""``hiermem-tui search QUERY [--session ID] [--limit N] [--json]``: full-text search, best first."""

from __future__ import annotations

import argparse
import json

from ..search import RANK_WINDOW, QueryError, SearchHit, search
from ..search.query import SYNTAX_HELP
from ..textsafe import one_line, visible
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option, is_tty
from .index_progress import ensure_search_index
from .reading import check_limit, open_existing

MAX_LIMIT = 10_000
SYNTAX = "query syntax:\n" + "".join(f"  {typed:<30} {finds}\n" for typed, finds in SYNTAX_HELP) + (
    "Punctuation inside a word is fine (foo-bar, what?, C++): it matches the words in it.\n"
    "Case and accents are ignored. Superseded summaries are searched only with --all-versions.\n"
    f"When more than {RANK_WINDOW:,} rows match, the newest {RANK_WINDOW:,} of them are ranked."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "search", help="full-text search over episodes and summaries", epilog=SYNTAX,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db_option(p)
    p.add_argument("query", metavar="QUERY", help="what to look for (see the query syntax below)")
    p.add_argument("--session", metavar="ID", help="search only this session")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (default 20)")
    p.add_argument("--all-versions", action="store_true", help="also search superseded summaries")
    p.add_argument("--json", action="store_true",
                   help='print a JSON list of {"session", "kind", "id", "first_seq", "last_seq", "snippet"}')
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    check_limit(args.limit, MAX_LIMIT)
    store = open_existing(ctx, args.session)
    if store is None:
        ctx.say("[]" if args.json else "no matches (the database is empty)")
        return EXIT_OK
    try:
        ensure_search_index(ctx, store)
        try:
            result = search(store, args.query, session_id=args.session, limit=args.limit,
                            include_superseded=args.all_versions)
        except QueryError as exc:
            raise CliError(f"bad query {one_line(args.query, 60)!r}: {exc}", EXIT_USAGE) from None
        if args.json:
            ctx.stdout.write(json.dumps([h.as_json() for h in result.hits], ensure_ascii=False, indent=1) + "\n")
            return EXIT_OK
        if not result.hits:
            ctx.say("no matches")
            return EXIT_OK
        bold = is_tty(ctx.stdout)
        for n, hit in enumerate(result.hits, 1):
            ctx.say(f"{n:>3}. {_where(hit)}")
            ctx.say("     " + _snippet(hit, bold))
        if result.capped:
            ctx.warn(f"note: more than {RANK_WINDOW:,} rows matched; only the newest {RANK_WINDOW:,} were ranked")
        return EXIT_OK
    finally:
        store.close()


def _where(hit: SearchHit) -> str:
    span = f"#{hit.first_seq}" if hit.first_seq == hit.last_seq else f"#{hit.first_seq}–{hit.last_seq}"
    what = f"episode {span} ({hit.role})" if hit.kind == "episode" else (
        f"summary d{hit.depth} {span}" + ("" if hit.active else " (superseded)"))
    return f"{one_line(hit.session_id, 60)} · {what} · {hit.id if hit.kind == 'summary' else hit.created_at}"


def _snippet(hit: SearchHit, bold: bool) -> str:
    """The snippet made visible (chat text is never a terminal escape); matches bold on a terminal."""
    out = []
    for piece, marked in hit.snippet.parts():
        text = visible(piece)
        out.append(f"\x1b[1m{text}\x1b[22m" if marked and bold else text)
    return "".join(out)
