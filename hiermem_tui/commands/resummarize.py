"""``hiermem-tui resummarize``: a new version of one summary (and its ancestors), or of a whole session.

``--summary ID``: the summary is re-made from the same sources and every ancestor is
re-condensed with the new child; the chain commits at once, so a cancel or failure before
the end writes nothing. Without it: every active summary of the session is superseded and
a full pass rebuilds the DAG (``revert_run`` restores the old one). Either way the old
versions stay in the file as ``superseded``.

``--json`` prints one object (ARCHITECTURE §6). Exit codes as for ``compact``: 0 done, 130
Ctrl-C, 1 failed or Ollama not ready (nothing recorded), 2 bad usage (unknown session or
summary, a summary of another session, an already superseded summary).
"""

from __future__ import annotations

import argparse

from ..compaction.job import Job
from ..store import Run
from ..textsafe import one_line
from .backup import add_backup_option, check_backup_destination, take_backup
from .common import EXIT_USAGE, CliContext, CliError
from .compact import Reporter, add_backend_options, drive, exit_code, make_job, open_for_job, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("resummarize", help="re-make a summary (and its ancestors) or a whole session")
    p.add_argument("--session", metavar="ID", required=True, help="the session")
    p.add_argument("--summary", metavar="SUMMARY_ID", help="one active summary of it (default: the whole session)")
    add_backend_options(p)
    add_backup_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    check_backup_destination(ctx, args.backup)
    store = open_for_job(ctx)
    try:
        if store.sessions.get(args.session) is None:
            raise CliError(f"no session {one_line(args.session, 80)} in this database (see 'hiermem-tui sessions')", EXIT_USAGE)
        if args.summary is not None:
            target = store.dag.get(args.summary)
            if target is None or target.session_id != args.session:
                raise CliError(f"session {one_line(args.session, 80)} has no summary {one_line(args.summary, 80)}", EXIT_USAGE)
            if target.status != "active":
                newer = f" (its replacement is {target.superseded_by})" if target.superseded_by else ""
                raise CliError(f"summary {args.summary} is superseded{newer}: re-summarise an active one", EXIT_USAGE)
        reporter = Reporter(ctx, json_mode=args.json)
        job = make_job(ctx, store, reporter)
        take_backup(ctx, store, args.backup)
        summary_id = args.summary

        async def work(j: Job) -> Run:
            return await j.resummarize(args.session, summary_id)

        run_ = drive(ctx, job, work, reporter)
        if args.json:
            print_json(ctx, [run_], as_array=False)
        return exit_code([run_], job.cancel)
    finally:
        store.close()
