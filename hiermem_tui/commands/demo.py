"""``hiermem-tui demo [--sessions N] [--episodes M] [--seed S]``: synthetic data at any scale.

Deterministic for a seed. Sessions are written in batches (one transaction per batch of
~20k episodes) so a million episodes stream through with bounded memory.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Iterator

from ..importers.base import ParsedSession
from ..importers import ImportReport, load_session
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option

BATCH_EPISODES = 20_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="write deterministic synthetic sessions (for trying things out and benchmarks)")
    add_db_option(p)
    p.add_argument("--sessions", type=int, default=20, metavar="N", help="number of sessions (default 20)")
    p.add_argument("--episodes", type=int, default=2000, metavar="M", help="total episodes (default 2000)")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default 1)")
    p.set_defaults(func=run)


def _batches(sessions: Iterable[ParsedSession], limit: int) -> Iterator[list[ParsedSession]]:
    """Group sessions so each write transaction holds about ``limit`` episodes."""
    batch: list[ParsedSession] = []
    size = 0
    for parsed in sessions:
        batch.append(parsed)
        size += len(parsed.episodes)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from ..demo import generate

    if args.sessions < 1 or args.episodes < args.sessions:
        raise CliError("need --sessions ≥ 1 and --episodes ≥ --sessions", EXIT_USAGE)
    store = ctx.open_writable()
    started = time.perf_counter()
    written = sessions = 0
    report = ImportReport()
    try:
        tokenizer = store.tokenizer
        # Token counting is most of the cost: a worker process counts a batch while this
        # process writes it, session by session, as the counts arrive.
        with tokenizer.parallel():
            for batch in _batches(generate(args.sessions, args.episodes, args.seed), BATCH_EPISODES):
                counts = [tokenizer.count_many_later([e.content for e in p.episodes]) for p in batch]
                with store.db.transaction():
                    for parsed, counting in zip(batch, counts):
                        load_session(store, parsed, None, report, counting.result())
                written, sessions = report.episodes_appended, report.sessions_seen
                if ctx.is_tty:
                    pct = 100 * written / max(1, args.episodes)
                    ctx.stderr.write(f"\rdemo: {sessions:,} sessions · {written:,} episodes · {pct:.0f}% ")
                    ctx.stderr.flush()
    finally:
        store.close()
    if ctx.is_tty:
        ctx.stderr.write("\r\x1b[K")
    elapsed = time.perf_counter() - started
    ctx.say(
        f"wrote {sessions:,} session(s), {written:,} new episode(s) to {ctx.settings.db_path} in {elapsed:.1f}s"
    )
    return EXIT_OK
