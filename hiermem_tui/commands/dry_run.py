"""``hiermem-tui compact … --dry-run``: the plan of a pass, written nowhere.

JSON (ARCHITECTURE §6): ``{"session": ID, "planned": [{"depth", "first_seq", "last_seq",
"source_tokens", "est_seconds"}]}`` per session — one object when exactly one ``--session``
was named without triggers, an array otherwise (as ``compact --json``); with ``--all`` in the
backlog's order (``--order``), as ``compact --all`` would take them. ``est_seconds`` comes from
the one estimator (``compaction/estimate.py``): the model's measured speed; for a model never
used, one short measuring call; with the server out of reach, a guess from the model's size
(the human output says which, and one line on stderr says why). The extractive backend costs no
model time (0).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any

from ..compaction import UnknownSession, select_sessions
from ..compaction.backlog import due_sessions
from ..compaction.estimate import Estimator, describe_hosts
from ..compaction.preview import PlannedSummary, plan_pass, total_seconds
from ..store import Session
from ..textsafe import one_line
from ..tokens import Tokenizer
from .backlog import host_speeds_said
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError
from ..words import counted


def _human(ctx: CliContext, session_id: str, plan: list[PlannedSummary]) -> None:
    leaves = sum(p.kind == "leaf" for p in plan)
    brief = any(p.kind == "brief" for p in plan)
    made = len(plan) - brief
    total = total_seconds(plan)
    when = "" if total is None else f", about {total:.0f} s of model time"
    ctx.say(f"{one_line(session_id, 60)}: {counted(made, 'summary')} planned ({leaves} leaves, "
            f"{made - leaves} condensed){' and the brief' if brief else ''}{when}")
    for p in plan:
        est = "?" if p.est_seconds is None else f"{p.est_seconds:.0f} s"
        where = "brief  " if p.kind == "brief" else f"depth {p.depth}"
        ctx.say(f"  {where}  #{p.first_seq}–{p.last_seq}  {p.source_tokens} tokens in  ~{est}")


def run_dry(args: argparse.Namespace, ctx: CliContext, named: list[str], as_array: bool) -> int:
    ctx.tokenizer = ctx.tokenizer or Tokenizer()
    store = ctx.open_store(readonly=True, create=False)
    policy = ctx.settings.policy
    try:
        sessions: Iterable[Session]
        if args.all:
            sessions = due_sessions(store, policy, args.order, args.pass_, if_over=args.if_over, min_new=args.min_new)
        else:
            try:
                sessions = list(select_sessions(store, session_ids=named, if_over=args.if_over, min_new=args.min_new))
            except UnknownSession as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
        hosts = host_speeds_said(ctx, store).hosts
        estimator = Estimator.shared(hosts, policy, ctx.settings.summary_format)
        out: list[dict[str, Any]] = []
        for s in sessions:
            plan = plan_pass(store, policy, s.id, args.pass_, estimator=estimator)
            if args.all and not plan:
                continue
            if args.json:
                out.append({"session": s.id, "planned": [p.as_json() for p in plan]})
            else:
                out.append({})
                _human(ctx, s.id, plan)
        if args.json:
            ctx.say(json.dumps(out if as_array else (out[0] if out else []), ensure_ascii=False))
        elif not out:
            ctx.say("nothing to compact")
        elif estimator.speed.basis != "none":
            ctx.say(f"times: {describe_hosts(hosts)}")
        return EXIT_OK
    finally:
        store.close()
