"""``hiermem-tui import [--format FMT] PATH...``: bring chat history into the database."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from ..importers import FORMATS, FormatError, ImportReport, import_paths
from ..importers.discover import discover
from ..importers.folders import plan_auto
from ..store import StoreError
from ..textsafe import one_line
from ..words import counted, duration
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option, path_state


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("import", help="import chat history (ChatGPT, Claude, Claude Code, Codex, …)")
    add_db_option(p)
    p.add_argument(
        "--format", default="auto", choices=["auto", *FORMATS],
        help="input format (default: auto-detect)", metavar="FMT",
    )
    p.add_argument("--discover", action="store_true",
                   help="also import every history `hiermem-tui sources` finds, each with its own format")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to import")
    p.set_defaults(func=run)


PROGRESS_AFTER_S = 2.0
"""Off a terminal (a log, a pipe), an import that has run this long starts saying how far it is."""
PROGRESS_EVERY_S = 5.0
"""Off a terminal, at most one progress line this often (a terminal's line is redrawn ten times a second)."""
PROGRESS_WIDTH = 150
"""Characters a progress line is clipped to (a terminal's line must not wrap, or ``\\r`` cannot redraw it)."""


class _Progress:
    """How far an import is, on stderr. On a terminal, one line redrawn in place from the start; otherwise
    a line every PROGRESS_EVERY_S once the import has run PROGRESS_AFTER_S (a short import says nothing).
    What it says comes from the importer (``ImportReport.doing``: reading, counting tokens, writing)."""

    def __init__(self, ctx: CliContext, total_paths: int) -> None:
        self.ctx = ctx
        self.total = total_paths
        self.index = 0
        self.live = ctx.is_tty
        self.after = 0.0 if self.live else PROGRESS_AFTER_S
        self.every = 0.1 if self.live else PROGRESS_EVERY_S
        self.started = time.monotonic()
        self._last: float | None = None

    def __call__(self, path: str, report: ImportReport) -> None:
        now = time.monotonic()
        if now - self.started < self.after or (self._last is not None and now - self._last < self.every):
            return
        self._last = now
        episodes = report.episodes_appended + report.episodes_present
        what = report.doing or f"{counted(report.sessions_seen, 'session')}, {counted(episodes, 'episode')} so far"
        took = duration(now - self.started)
        if self.live:
            width = 24
            done = int(width * self.index / max(1, self.total))
            bar = "█" * done + "░" * (width - done)
            line = f"{bar} file {self.index + 1}/{self.total} · {what} · {took}"
            self.ctx.stderr.write("\r" + one_line(line, min(PROGRESS_WIDTH, _columns() - 1)) + "\x1b[K")
            self.ctx.stderr.flush()
        else:
            where = f"{one_line(Path(path).name, 80)}, file {self.index + 1} of {self.total}"
            self.ctx.warn(one_line(f"hiermem-tui: importing {where}, {took}: {what}", PROGRESS_WIDTH))

    def clear(self) -> None:
        if self.live:
            self.ctx.stderr.write("\r\x1b[K")
            self.ctx.stderr.flush()


def _columns() -> int:
    return shutil.get_terminal_size((PROGRESS_WIDTH + 1, 24)).columns


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    paths = [Path(p).expanduser() for p in args.paths]
    if not paths and not args.discover:
        raise CliError("the following arguments are required: PATH, or --discover (see --help)", EXIT_USAGE,
                       prog="hiermem-tui import")
    for p in paths:
        if path_state(p) == "missing":
            raise CliError(f"{p} does not exist", EXIT_USAGE)
    skipped: list[tuple[Path, list[Path]]] = []
    planned: list[tuple[Path, str]] = [(p, args.format) for p in paths]
    if args.format == "auto":  # a folder holding several kinds of export is imported entry by entry
        planned = []
        for p in paths:
            try:
                plan = plan_auto(p)
            except FormatError as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
            planned.extend(plan.parts)  # with the format already detected: not detected twice
            if plan.skipped:
                skipped.append((p, plan.skipped))
    if args.discover:
        found = discover()
        if not found:
            ctx.warn("hiermem-tui: no chat histories found at the standard places (see `hiermem-tui sources`)")
        planned.extend((s.path, s.format) for s in found)
    if not planned:
        return EXIT_OK
    store = ctx.open_writable()
    progress = _Progress(ctx, len(planned))
    total = ImportReport()
    try:
        for i, (path, fmt) in enumerate(planned):
            progress.index = i
            try:
                report = import_paths(store, [path], fmt, on_progress=progress)
            except FormatError as exc:
                progress.clear()
                raise CliError(str(exc), EXIT_USAGE) from None
            except StoreError as exc:
                progress.clear()
                raise CliError(f"{path}: {exc}", EXIT_USAGE) from None
            total.sessions_seen += report.sessions_seen
            total.sessions_created += report.sessions_created
            total.episodes_appended += report.episodes_appended
            total.episodes_present += report.episodes_present
            total.episodes_revised += report.episodes_revised
            total.problems.merge(report.problems)
            progress.clear()
            ctx.say(f"{path} ({report.formats.get(str(path), args.format)}): {report.describe()}")
    finally:
        store.close()
    for folder, passed in skipped:  # a mixed folder's README, licence, notes: each named, none silently dropped
        names = [one_line(p.relative_to(folder).as_posix(), 200) for p in passed]
        head = f"hiermem-tui: {one_line(str(folder), 200)}: skipped {counted(len(names), 'entry')} no importer recognises:"
        if len(names) == 1:
            ctx.warn(f"{head} {names[0]}")
        else:  # one per line: a list a terminal shows whole and a script can read
            ctx.warn(head)
            for name in names:
                ctx.warn(f"  {name}")
    if total.problems.count:
        ctx.warn(total.problems.summary())
        for example in total.problems.examples:
            ctx.warn(f"  {example}")
    return EXIT_FAILED if skipped else EXIT_OK  # something under a folder was left out: say so
