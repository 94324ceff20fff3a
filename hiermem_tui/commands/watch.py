"""``hiermem-tui watch``: follow chat files and folders, import what is new, compact what is due.

The following is :class:`hiermem_tui.watch.Watcher` (one tick = stats, then one transaction
per changed file); which sessions to compact is :class:`~hiermem_tui.watch.CompactionQueue`
(triggers on the session aggregates). Compaction reuses ``compact``'s machinery: the runner
factory, its progress line (:class:`Reporter`), Ctrl-C handling (:func:`run_job`) and exit codes.

Ticks run in one worker thread so the event loop stays free: Ctrl-C is noticed at once, a
compaction round goes on while new files are read, and the tick stops between files. A round
that cannot run (Ollama down, model missing) or that fails is one log line and one line on stderr;
the watcher keeps importing and tries again after a growing pause.

Output: one line per action on stdout (``HH:MM:SS`` first), or with ``--json`` one JSON object
per line ``{"event": "watching"|"imported"|"skipped"|"refused"|"failed"|"gone"|"compacted"|
"postponed"|"stopped", …}`` (a ``compacted`` object carries the ``compact --json`` keys).

Exit codes: 130 after Ctrl-C (a run in flight reads ``cancelled``, every import is whole);
with ``--once``: 0, or 1 when compaction could not run or a run failed; 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from ..compaction import CancelToken, RunEvent, RunFinished, make_backend, make_runner
from ..importers import FORMATS
from ..store import Run, Store, StoreError
from ..summarize import Backend, BackendUnavailable, ModelMissing
from ..textsafe import one_line
from ..watch import DEFAULT_SETTLE_S, CompactionQueue, TickReport, Watcher, default_min_new
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError, path_state
from .compact import (
    EXIT_INTERRUPTED,
    Reporter,
    _non_negative,
    _positive,
    add_backend_options,
    human_line,
    open_for_job,
    run_job,
    run_json,
)
from ..words import counted, engine_label

DEFAULT_INTERVAL_S = 2.0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("watch", help="follow chat files and folders: import what is new, compact what is due")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files (any format) or folders (their *.jsonl files: Claude Code projects, Codex sessions)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS], metavar="FMT",
                   help="input format of every file (default: auto-detect each)")
    add_backend_options(p)
    for action in p._actions:
        if action.dest == "json":
            action.help = "one JSON object per action and line, instead of the log lines"
    p.add_argument("--pass", dest="pass_", choices=("leaf", "condense", "full"), default="full",
                   help="the pass a due session gets (default: full)")
    p.add_argument("--parallel", metavar="N", type=_positive, default=argparse.SUPPRESS,
                   help="summaries made at once")
    p.add_argument("--if-over", metavar="TOKENS", type=_non_negative,
                   help="compact a session once its uncompacted tokens exceed TOKENS")
    p.add_argument("--min-new", metavar="N", type=_non_negative,
                   help="compact a session once it has N episodes after its last summary "
                        "(default without any trigger: the fresh tail plus four small leaves)")
    p.add_argument("--no-compact", action="store_true", help="only import")
    p.add_argument("--interval", metavar="SECONDS", type=_seconds, default=DEFAULT_INTERVAL_S,
                   help=f"how often files are checked (default {DEFAULT_INTERVAL_S:g})")
    p.add_argument("--settle", metavar="SECONDS", type=_seconds, default=DEFAULT_SETTLE_S,
                   help="quiet time after which a file's last line or last message counts as final "
                        f"(default {DEFAULT_SETTLE_S:g})")
    p.add_argument("--once", action="store_true", help="one round (import, then compact what is due) and exit")
    p.set_defaults(func=run)


class WatchLog:
    """One line per action: ``HH:MM:SS text`` for people, or a JSON object per line."""

    def __init__(self, ctx: CliContext, reporter: Reporter, *, json_mode: bool) -> None:
        self.ctx = ctx
        self.reporter = reporter
        self.json_mode = json_mode
        self.episodes = 0
        self.summaries = 0

    def emit(self, text: str, **fields: Any) -> None:
        self.reporter.clear()  # a live progress line on stderr is wiped first
        if self.json_mode:
            line = json.dumps(fields, ensure_ascii=False)
        else:
            line = f"{time.strftime('%H:%M:%S')} {text}"
        print(line, file=self.ctx.stdout, flush=True)

    def tick(self, report: TickReport) -> None:
        for done in report.imports:
            shown = one_line(str(done.path), 120)
            for land in done.landed:
                if not land.appended:
                    continue
                self.episodes += land.appended
                new = " (new session)" if land.created else ""
                self.emit(f"imported {land.appended} episode{'s' * (land.appended != 1)} into session "
                          f"{one_line(land.session_id, 80)}{new} from {shown} [{done.fmt}]",
                          event="imported", file=str(done.path), format=done.fmt, session=land.session_id,
                          episodes=land.appended, new_session=land.created)
            if done.skipped:
                n = sum(done.skipped.values())
                top = ", ".join(f"{one_line(r, 60)} ({c})" for r, c in done.skipped.most_common(3))
                self.emit(f"skipped {n} malformed record{'s' * (n != 1)} in {shown}: {top}",
                          event="skipped", file=str(done.path), records=n, reasons=dict(done.skipped))
        for path, reason in report.refused:
            self.emit(f"not following {one_line(str(path), 120)}: {one_line(reason, 200)}",
                      event="refused", file=str(path), reason=reason)
        for path, reason in report.failed:
            self.emit(f"could not import {one_line(str(path), 120)} this time: {one_line(reason, 200)}; trying again",
                      event="failed", file=str(path), reason=reason)
        for path in report.gone:
            self.emit(f"{one_line(str(path), 120)} is gone", event="gone", file=str(path))

    def run_finished(self, run: Run) -> None:
        self.summaries += run.summaries_created
        self.emit(f"compacted {human_line(run)}", event="compacted", **run_json(run))

    def postponed(self, reason: str, retry_in: float) -> None:
        self.emit(f"compaction postponed: {one_line(reason, 300)}; trying again in {retry_in:g}s",
                  event="postponed", reason=reason, retry_in=retry_in)


class WatchJob:
    """The loop: tick in a worker thread, start a compaction round when sessions are due, nap."""

    def __init__(self, ctx: CliContext, store: Store, args: argparse.Namespace, backends: Sequence[Backend]) -> None:
        self.ctx, self.store, self.args = ctx, store, args
        self.backend, *self.more_backends = backends
        self.cancel = CancelToken()
        self.reporter = Reporter(ctx, json_mode=True)  # json_mode: run lines are ours (WatchLog)
        self.log = WatchLog(ctx, self.reporter, json_mode=args.json)
        self.watcher = Watcher(store, [Path(p).expanduser() for p in args.paths], fmt=args.format,
                               settle_s=args.settle, should_stop=lambda: self.cancel.cancelled)
        self.queue: CompactionQueue | None = None
        if not args.no_compact:
            min_new = args.min_new
            if min_new is None and args.if_over is None:
                min_new = default_min_new(ctx.settings.policy)
            self.queue = CompactionQueue(store, if_over=args.if_over, min_new=min_new)
        self.runs: list[Run] = []
        self.stuck = False  # --once: compaction could not run

    def on_event(self, ev: RunEvent) -> None:
        if isinstance(ev, RunFinished):
            self.reporter.clear()
            self.runs.append(ev.run)
            self.log.run_finished(ev.run)
            if ev.status == "failed":
                reason = one_line(ev.error or "failed", 300)
                self.ctx.warn(f"hiermem-tui: session {one_line(ev.session_id, 60)}: {reason}")
        else:
            self.reporter(ev)

    async def compact(self, session_ids: list[str]) -> None:
        """One round over the due sessions; trouble is one line and a back-off, never the end."""
        assert self.queue is not None
        runner = make_runner(self.store, self.ctx.settings, tokenizer=self.ctx.tokenizer, on_event=self.on_event,
                             cancel=self.cancel, backend=self.backend, more_backends=self.more_backends)
        first = len(self.runs)
        try:
            await runner.compact_many(session_ids, self.args.pass_, skip_idle=True)
        except Exception as exc:  # a watcher outlives one bad round; it says why, on stderr too
            known = isinstance(exc, (BackendUnavailable, ModelMissing, StoreError))
            reason = str(exc) if known else f"unexpected error: {type(exc).__name__}: {exc}"
            self.stuck = True
            self.ctx.warn(f"hiermem-tui: {one_line(reason, 1000)}")
            self.log.postponed(reason, self.queue.failed())
            return
        statuses = {r.session_id: r.status for r in self.runs[first:]}
        delay = self.queue.finished(session_ids, statuses)
        if delay is not None:
            self.stuck = True
            self.log.postponed("a run failed (see above)", delay)

    async def nap(self, seconds: float) -> None:
        """Sleep, cut short by Ctrl-C (the token cancels the tasks attached to it)."""
        task = asyncio.ensure_future(asyncio.sleep(seconds))
        self.cancel.attach(task)
        try:
            await task
        except asyncio.CancelledError:
            if not self.cancel.cancelled:
                raise
        finally:
            self.cancel.detach(task)

    async def __call__(self) -> int:
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(1, thread_name_prefix="hiermem-watch")
        compaction: asyncio.Future[None] | None = None
        first = True
        try:
            self._started(await loop.run_in_executor(pool, self.watcher.scan))
            while not self.cancel.cancelled:
                report = await loop.run_in_executor(pool, self.watcher.tick)
                self.log.tick(report)
                if first:
                    self._refuse_bad_files(report)
                if self.queue is not None:
                    self.queue.add(report.seen if first else report.sessions)
                    if compaction is None or compaction.done():
                        due = self.queue.due()
                        compaction = asyncio.ensure_future(self.compact(due)) if due else None
                first = False
                if self.args.once:
                    break
                await self.nap(self.args.interval)
        finally:
            if compaction is not None:
                await compaction  # after Ctrl-C the round ends at once, its run marked cancelled
            await loop.run_in_executor(pool, self.store.release_thread)
            pool.shutdown(wait=True)
        if self.cancel.cancelled:
            self.log.emit(f"stopped: {counted(self.log.episodes, 'episode')} imported, {counted(self.log.summaries, 'summary')} written",
                          event="stopped", episodes=self.log.episodes, summaries=self.log.summaries)
            return EXIT_INTERRUPTED
        if any(r.status == "cancelled" for r in self.runs):
            return EXIT_INTERRUPTED
        return EXIT_FAILED if self.stuck or any(r.status != "done" for r in self.runs) else EXIT_OK

    def _refuse_bad_files(self, report: TickReport) -> None:
        """A file named on the command line that is no chat history at all is bad input (exit 2),
        as with ``import``; files found in folders are only logged (folders collect strays)."""
        named = {Path(p).expanduser() for p in self.args.paths}
        bad = [(path, reason) for path, reason in report.refused if path in named]
        if bad:
            raise CliError(one_line(bad[0][1], 300), EXIT_USAGE)

    def _started(self, report: TickReport) -> None:
        a, s = self.args, self.ctx.settings
        if self.queue is None:
            plan = "importing only (--no-compact)"
        else:
            triggers = [f"{self.queue.min_new}+ new episodes" if self.queue.min_new is not None else "",
                        f"over {self.queue.if_over} uncompacted tokens" if self.queue.if_over is not None else ""]
            engine = engine_label(s.backend, s.model)
            plan = f"compacting sessions with {' and '.join(t for t in triggers if t)} ({a.pass_} pass, {engine})"
        every = "once" if a.once else f"every {a.interval:g}s"
        self.log.emit(f"watching {report.files} file{'s' * (report.files != 1)} in {report.folders} "
                      f"folder{'s' * (report.folders != 1)} ({every}); {one_line(plan, 200)}",
                      event="watching", files=report.files, folders=report.folders)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    for text in args.paths:
        if path_state(Path(text).expanduser()) == "missing":
            raise CliError(f"{text} does not exist", EXIT_USAGE)
    if args.no_compact and (args.min_new is not None or args.if_over is not None):
        raise CliError("--no-compact cannot be combined with --min-new or --if-over", EXIT_USAGE)
    if hasattr(ctx.stdout, "reconfigure"):
        ctx.stdout.reconfigure(line_buffering=True)  # a log read through a pipe sees each line at once
    store = open_for_job(ctx)
    try:
        tok = ctx.tokenizer or store.tokenizer
        servers = ctx.settings.servers() or (None,)
        backends = [make_backend(ctx.settings, tok, h) for h in servers]  # one per server, for the watcher's life
        job = WatchJob(ctx, store, args, backends)
        return asyncio.run(run_job(backends, job.cancel, ctx, job))
    finally:
        store.close()
