"""``hiermem-tui backlog``: what ``compact --all`` would do, in its order, with the time it should take (issue 20).

Output contract (ARCHITECTURE §6), ``--json``: ``{"order", "model", "speed": {"prompt_tps",
"output_tps", "measured"}, "summaries", "input_tokens", "est_seconds", "sessions": [{"id", "title",
"summaries", "input_tokens", "est_seconds"}]}``, sessions in the order ``compact --all --order``
takes them. Times come from the one estimator (``compaction/estimate.py``): the model's measured
speed, one short measuring call for a model never used, or — Ollama out of reach — a guess from the
model's size (``measured`` false; the human output says so, and one line on stderr says why). Writes
nothing to the file.

Exit codes: 0 (also when the times are a guess); 2 bad usage or a file that is not a hiermem-tui database.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from ..compaction.backlog import ORDERS, plan_backlog
from ..compaction.estimate import Estimator, describe_hosts
from ..compaction.job import HostSpeeds, host_speeds
from ..store import Store
from ..textsafe import one_line
from ..tokens import Tokenizer
from ..words import counted, duration, engine_label
from .common import EXIT_OK, CliContext
from .compact import _non_negative, add_backend_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("backlog", help="every summary due across the file, in order, with the time it should take")
    p.add_argument("--order", choices=ORDERS, default="newest",
                   help="newest activity first (default), oldest first, or largest (most uncompacted tokens) first")
    p.add_argument("--if-over", metavar="TOKENS", type=_non_negative,
                   help="only sessions whose uncompacted tokens exceed TOKENS")
    p.add_argument("--pass", dest="pass_", choices=("leaf", "condense", "full"), default="full",
                   help="the pass compact --all would run (default: full)")
    add_backend_options(p)
    p.set_defaults(func=run)


def host_speeds_said(ctx: CliContext, store: Store) -> HostSpeeds:
    """The speeds the estimates start from (:func:`host_speeds`), a host that could not be asked
    said in one line on stderr (the estimate goes on: a host left out, or a guess)."""
    assert ctx.tokenizer is not None
    speeds = asyncio.run(host_speeds(store, ctx.settings, ctx.tokenizer))
    for line in speeds.warnings:
        ctx.warn(f"hiermem-tui: {one_line(line, 1000)}")
    return speeds


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    ctx.tokenizer = ctx.tokenizer or Tokenizer()
    store = ctx.open_store(readonly=True, create=False)
    try:
        speeds = host_speeds_said(ctx, store)
        hosts, model = speeds.hosts, speeds.model
        estimator = Estimator.shared(hosts, ctx.settings.policy, ctx.settings.summary_format)
        backlog = plan_backlog(store, ctx.settings.policy, estimator, order=args.order, pass_=args.pass_,
                               if_over=args.if_over, model=model)
        if args.json:
            ctx.say(json.dumps(backlog.as_json(), ensure_ascii=False))
            return EXIT_OK
        if not backlog.sessions:
            ctx.say("nothing waiting: every session is up to date")
            return EXIT_OK
        engine = engine_label(ctx.settings.backend, model)
        briefs = f" and {counted(backlog.briefs, 'brief')}" if backlog.briefs else ""
        ctx.say(f"{counted(backlog.summaries, 'summary')}{briefs} waiting in {counted(len(backlog.sessions), 'session')}, "
                f"{backlog.input_tokens:,} tokens in, ~{duration(backlog.est_seconds)} with {one_line(engine, 60)} "
                f"({args.order} first)")
        ctx.say(f"times: {describe_hosts(hosts)}")
        for s in backlog.sessions:
            ctx.say(f"  {one_line(s.id, 40):<40} {s.summaries:>4} × {s.input_tokens:>9,} tok  "
                    f"~{duration(s.est_seconds):>9}  {one_line(s.title, 60)}")
        return EXIT_OK
    finally:
        store.close()
