"""``hiermem-tui doctor [--json] [--full] [--fix]``: what is wrong in a file, and repairing what is safe.

Output: one line per problem (``kind  session S  ids: detail``, ``[fixable]`` where ``--fix`` can
repair it), then a verdict line; with ``--json`` the object ``{"ok", "checked", "problems":
[{"kind", "session", "ids", "detail", "fixable"}]}`` (``--fix`` adds ``"fixed"`` and ``"backup"``).
Exit codes: 0 healthy, 1 problems found (after ``--fix``: problems left), 2 a file that is not a
readable hiermem-tui database (one line; the file is left exactly as it was).

Without ``--fix`` nothing is written, not even beside the file. ``--fix`` first takes a backup
next to it (``<name>.backup-<time>.db``), then repairs (store/health_fix.py), checks again and
keeps the result in the file for the TUI's stats screen.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..store import StoreError
from ..store.backup import backup, default_backup_path
from ..store.db import Db, probe_version
from ..store.health import Health, HealthReport
from ..store.health_session import Problem
from ..store.health_fix import HealthFix
from ..store.schema import SCHEMA_VERSION
from ..textsafe import one_line
from ..words import counted
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option
from .index_progress import IndexBar

PHASES = {"pages": "checking pages (SQLite)", "sessions": "checking sessions", "search": "checking the search index",
          "runs": "checking runs", "backup": "backing up", "index": "rebuilding the search index"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("doctor", help="check a database file for damage and broken invariants (--fix: repair)")
    add_db_option(p)
    p.add_argument("--json", action="store_true", help='print {"ok", "checked", "problems"} (see README.md)')
    p.add_argument("--full", action="store_true", help="SQLite's integrity_check instead of quick_check (slower)")
    p.add_argument("--fix", action="store_true",
                   help="after a backup beside the file, repair what is safe to repair, then check again")
    p.set_defaults(func=run)


class DoctorBar(IndexBar):
    """Progress on stderr when it is a terminal: a bar per phase (SQLite's own check has no measure:
    it shows the seconds so far)."""

    def phase(self, phase: str, done: int, total: int) -> None:
        self.draw(PHASES.get(phase, phase), done, total, "sessions" if phase == "sessions" else "",
                  measured=bool(total))

    def pages(self, done: int, total: int) -> None:
        self.draw(PHASES["backup"], done, total, "pages")

    def index(self, done: int, total: int) -> None:
        self.draw(PHASES["index"], done, total, "rows")


def problem_line(p: Problem) -> str:
    """``edges_missing  session alpha  s_1: leaf #0–7: a leaf without source edges  [fixable]``."""
    where = f"session {one_line(p.session, 60)}" if p.session is not None else "file"
    ids = f"{', '.join(one_line(i, 60) for i in p.ids[:6])}: " if p.ids else ""
    return f"{p.kind:<17} {where}  {ids}{one_line(p.detail, 300)}" + ("  [fixable]" if p.fixable else "")


def verdict(report: HealthReport) -> str:
    c = report.checked
    seen = (f"{counted(c.get('sessions', 0), 'session')}, {counted(c.get('episodes', 0), 'episode')}, "
            f"{counted(c.get('summaries', 0), 'summary')}, {counted(c.get('runs', 0), 'run')}, "
            f"{counted(c.get('pages', 0), 'page')} checked in {report.seconds:.1f} s")
    if report.ok:
        return f"ok: {seen}"
    n, fixable = len(report.problems), report.fixable
    hint = f"; {fixable:,} fixable with `hiermem-tui doctor --fix`" if fixable else ""
    return f"{n:,} problem{'s' if n != 1 else ''} ({seen}){hint}"


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    path = ctx.settings.db_path
    try:
        version = probe_version(path)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if version is None or version == 0:
        empty = HealthReport((), {"schema_version": 0, "sessions": 0, "episodes": 0, "summaries": 0})
        _print(ctx, args, empty, note="an empty database: nothing to check")
        return EXIT_OK
    bar = DoctorBar(ctx)
    db = Db(path, readonly=True, checking=True)
    try:
        report = Health(db).check(full=args.full, version=version, on_progress=bar.phase)
        bar.clear()
        if not args.fix or not report.fixable:
            note = "nothing here --fix can repair" if args.fix and not report.ok else ""
            _print(ctx, args, report, note=note)
            return EXIT_OK if report.ok else EXIT_FAILED
        dest = default_backup_path(path)
        try:
            backup(db, dest, on_progress=bar.pages)
        except StoreError as exc:
            raise CliError(f"could not take a backup before fixing ({exc}); nothing was changed", EXIT_FAILED) from None
        finally:
            bar.clear()
    finally:
        db.close()
    ctx.warn(f"hiermem-tui: backed up {path} to {dest}")
    fixed, final = _fix(ctx, args, version, report, bar)
    _print(ctx, args, final, fixed=fixed, backup_path=str(dest))
    return EXIT_OK if final.ok else EXIT_FAILED


def _fix(ctx: CliContext, args: argparse.Namespace, version: int, report: HealthReport, bar: DoctorBar
         ) -> tuple[list[str], HealthReport]:
    """Open the file for writing (which upgrades an older schema), repair, check again, keep the result."""
    store = ctx.open_store(create=False)
    try:
        if store.readonly:
            raise CliError(f"{store.path} is read-only: doctor --fix cannot repair it", EXIT_USAGE)
        fixed: list[str] = []
        health = Health(store.db)
        if version < SCHEMA_VERSION:
            fixed.append(f"upgraded the schema from {version} to {SCHEMA_VERSION}")
            report = health.check(full=args.full, on_progress=bar.phase)
        try:
            fixed += HealthFix(store.db).apply(report, on_progress=bar.index)
            final = health.check(full=args.full, on_progress=bar.phase)
        finally:
            bar.clear()
        health.record(final, fixed=len(fixed))
        return fixed, final
    finally:
        store.close()


def _print(ctx: CliContext, args: argparse.Namespace, report: HealthReport, *, note: str = "",
           fixed: list[str] | None = None, backup_path: str | None = None) -> None:
    if args.json:
        payload: dict[str, Any] = report.as_json()
        if fixed is not None:
            payload["fixed"] = fixed
            payload["backup"] = backup_path
        ctx.say(json.dumps(payload, ensure_ascii=False))
        return
    for line in fixed or ():
        ctx.say(f"fixed: {line}")
    for p in report.problems:
        ctx.say(problem_line(p))
    ctx.say(verdict(report) + (f" ({note})" if note else ""))
