"""``hiermem-tui repair``: re-make the summaries that need it, in one run per session.

A summary needs repair when it is a fallback, keeps fewer of its sources' identifiers than
``--below`` (default: the policy's fidelity threshold), or misses a pinned episode. Each
one is re-made with its ancestors, one tree per commit, so a cancel keeps every finished
tree and leaves the others as they were; the old versions stay, superseded.

``--json``: the ``compact --json`` shape (one object for exactly one ``--session``, an array
otherwise). ``--all`` takes the sessions whose stored figures say something needs repair
(any fallback, a retention under the threshold, or not measured yet). Exit codes as for
``compact``.
"""

from __future__ import annotations

import argparse

from ..compaction import UnknownSession, select_sessions
from ..compaction.job import Job
from ..store import Run, Session
from .backup import add_backup_option, check_backup_destination, take_backup
from .check import fraction
from .common import EXIT_USAGE, CliContext, CliError
from .compact import Reporter, add_backend_options, drive, exit_code, make_job, open_for_job, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("repair", help="re-make fallbacks and low-fidelity summaries (with their ancestors)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--session", metavar="ID", nargs="+", action="extend", help="session id(s) to repair")
    which.add_argument("--all", action="store_true", help="every session that needs it")
    p.add_argument("--below", metavar="R", type=fraction, help="retention under which a summary is re-made "
                   "(default: the policy's fidelity_threshold)")
    add_backend_options(p)
    add_backup_option(p)
    p.set_defaults(func=run)


def may_need_repair(s: Session, below: float) -> bool:
    """From the aggregates only: a fallback, a low retention, or summaries not measured yet."""
    if not s.summaries:
        return False
    return s.fallbacks > 0 or s.min_retention is None or s.min_retention < below


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    named = list(dict.fromkeys(args.session or []))
    below = ctx.settings.policy.fidelity_threshold if args.below is None else args.below
    check_backup_destination(ctx, args.backup)
    store = open_for_job(ctx)
    try:
        try:
            sessions = list(select_sessions(store, session_ids=named, all_sessions=args.all))
        except UnknownSession as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        if args.all:
            sessions = [s for s in sessions if may_need_repair(s, below)]
        reporter = Reporter(ctx, json_mode=args.json)
        job = make_job(ctx, store, reporter)
        ids = [s.id for s in sessions]
        take_backup(ctx, store, args.backup)

        async def work(j: Job) -> list[Run]:
            return await j.repair_many(ids, below, skip_idle=args.all)

        runs = drive(ctx, job, work, reporter)
        if args.json:
            print_json(ctx, runs, as_array=bool(args.all or len(named) > 1))
        elif not runs:
            ctx.say("nothing to repair")
        return exit_code(runs, job.cancel)
    finally:
        store.close()
