"""``hiermem-tui import [--format FMT] PATH...``: bring chat history into the database."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..importers import FORMATS, FormatError, ImportReport, import_paths
from ..importers.discover import discover
from ..importers.folders import plan_auto
from ..store import StoreError
from ..textsafe import one_line
from ..words import counted
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


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


class _Progress:
    """A one-line live counter on a terminal; silent otherwise."""

    def __init__(self, ctx: CliContext, total_paths: int) -> None:
        self.ctx = ctx
        self.total = total_paths
        self.index = 0
        self.enabled = ctx.is_tty
        self._last = 0.0

    def __call__(self, path: str, report: ImportReport) -> None:
        if not self.enabled:
            return
        n = report.episodes_appended + report.episodes_present
        now = time.monotonic()
        if self._last and now - self._last < 0.1:  # the first update shows at once, then 10 a second
            return
        self._last = now
        width = 24
        done = int(width * self.index / max(1, self.total))
        bar = "█" * done + "░" * (width - done)
        self.ctx.stderr.write(
            f"\r{bar} file {self.index + 1}/{self.total} · {_plural(report.sessions_seen, 'session')} · "
            f"{_plural(n, 'episode')} "
        )
        self.ctx.stderr.flush()

    def clear(self) -> None:
        if self.enabled:
            self.ctx.stderr.write("\r\x1b[K")
            self.ctx.stderr.flush()


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
            if progress.enabled:  # a big JSON export is parsed whole before sessions stream: say so
                ctx.stderr.write(f"\rreading {one_line(str(path), 60)} ")
                ctx.stderr.flush()
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
