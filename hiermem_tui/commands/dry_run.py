"""``hiermem-tui compact … --dry-run``: the plan of a pass, written nowhere, sent to no model.

JSON (ARCHITECTURE §6): ``{"session": ID, "planned": [{"depth", "first_seq", "last_seq",
"source_tokens", "est_seconds"}]}`` per session — one object when exactly one ``--session``
was named without triggers, an array otherwise (as ``compact --json``). ``est_seconds`` comes
from the model's measured speed (earlier runs on this file) and is ``null`` while the model
has never been measured; the extractive backend costs no model time (0).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..compaction import UnknownSession, select_sessions
from ..compaction.preview import PlannedSummary, plan_pass, total_seconds
from ..store import Store
from ..summarize.speed import ModelSpeed
from ..textsafe import one_line
from ..tokens import Tokenizer
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError
from ..words import counted


def model_speed(store: Store, backend: str, model: str | None) -> ModelSpeed | None:
    """What earlier runs measured of ``model`` (``x`` and ``x:latest`` are the same model)."""
    if backend != "ollama" or not model:
        return None
    for name in (model, model if ":" in model else f"{model}:latest"):
        speed = store.speeds.get(backend, name)
        if speed.measured:
            return speed
    return None


def _human(ctx: CliContext, session_id: str, plan: list[PlannedSummary]) -> None:
    leaves = sum(p.depth == 0 for p in plan)
    total = total_seconds(plan)
    when = "" if total is None else f", about {total:.0f} s of model time"
    ctx.say(f"{one_line(session_id, 60)}: {counted(len(plan), 'summary')} planned ({leaves} leaves, "
            f"{len(plan) - leaves} condensed){when}")
    for p in plan:
        est = "?" if p.est_seconds is None else f"{p.est_seconds:.0f} s"
        ctx.say(f"  depth {p.depth}  #{p.first_seq}–{p.last_seq}  {p.source_tokens} tokens in  ~{est}")


def run_dry(args: argparse.Namespace, ctx: CliContext, named: list[str], as_array: bool) -> int:
    ctx.tokenizer = ctx.tokenizer or Tokenizer()
    store = ctx.open_store(readonly=True, create=False)
    try:
        try:
            sessions = list(select_sessions(store, session_ids=named, all_sessions=args.all,
                                            if_over=args.if_over, min_new=args.min_new))
        except UnknownSession as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        speed = model_speed(store, ctx.settings.backend, ctx.settings.model)
        out: list[dict[str, Any]] = []
        for s in sessions:
            plan = plan_pass(store, ctx.settings.policy, s.id, args.pass_, backend=ctx.settings.backend, speed=speed)
            if args.all and not plan:
                continue
            if args.json:
                out.append({"session": s.id, "planned": [p.as_json() for p in plan]})
            else:
                _human(ctx, s.id, plan)
        if args.json:
            ctx.say(json.dumps(out if as_array else (out[0] if out else []), ensure_ascii=False))
        elif not out and not sessions:
            ctx.say("nothing to compact")
        return EXIT_OK
    finally:
        store.close()
