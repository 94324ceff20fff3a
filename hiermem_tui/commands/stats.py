"""``hiermem-tui stats [--session ID] [--json]``: what compaction bought, per session or for the file."""

from __future__ import annotations

import argparse
import json

from ..stats import Stats, compute_stats
from ..textsafe import one_line
from .common import EXIT_OK, CliContext, add_db_option
from .reading import open_existing
from ..words import counted


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stats", help="sizes, compression, summaries per depth and tier, fidelity, model time, runs")
    add_db_option(p)
    p.add_argument("--session", metavar="ID", help="one session (default: the whole file)")
    p.add_argument("--json", action="store_true", help="print a JSON object (documented in README.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    store = open_existing(ctx, args.session)
    if store is None:
        ctx.say("the database is empty: import with `hiermem-tui import PATH`")
        return EXIT_OK
    try:
        stats = compute_stats(store, args.session, threshold=ctx.settings.policy.fidelity_threshold)
    finally:
        store.close()
    if args.json:
        ctx.say(json.dumps(stats.as_json(), ensure_ascii=False, indent=1))
    else:
        for line in stats_lines(stats):
            ctx.say(line)
    return EXIT_OK


def stats_lines(s: Stats) -> list[str]:
    """The human form: a few aligned lines, then one bar per depth."""
    scope = "whole file" if s.session_id is None else f"session {one_line(s.session_id, 60)}"
    comp = "–" if s.compression is None else f"{s.compression:.1f}×"
    lines = [
        f"{scope}: {counted(s.sessions, 'session')}, {counted(s.episodes, 'episode')}, {s.coverage * 100:.0f}% under a summary",
        f"tokens       {s.raw_tokens:,} raw → {s.model_tokens:,} a model sees now (compression {comp})",
        f"summaries    {s.active:,} active, {s.superseded:,} superseded · tiers: "
        + ", ".join(f"{k} {v:,}" for k, v in s.by_tier.items()),
        f"fidelity     {s.low_fidelity:,} under {s.threshold:g} retention, {s.measured:,} measured, "
        f"{s.unmeasured:,} not measured",
        f"model time   {s.llm_seconds:,.1f} s waiting on models, {s.wall_seconds:,.1f} s of runs",
        "runs         " + (", ".join(f"{k} {v:,}" for k, v in s.runs_by_status.items() if v) or "none"),
    ]
    for e in s.engines:
        name = e.backend + (f" {one_line(e.model, 40)}" if e.model else "")
        lines.append(f"  {name}: {counted(e.runs, 'run')}, {counted(e.summaries, 'summary')}, {e.llm_seconds:,.1f} s")
    if s.by_depth:
        lines.append("per depth")
        widest = max(d.count for d in s.by_depth)
        for d in s.by_depth:
            bar = "█" * max(1, round(30 * d.count / widest))
            lines.append(f"  d{d.depth:<3} {bar:<30} {d.count:>7,} summaries · {d.tokens:>10,} tok")
    return lines
