"""``hiermem-tui compact``: leaf / condensation / full passes over sessions (ARCHITECTURE §6).

Output contract:

* ``--json``: one object per run ``{"run_id", "session", "status", "summaries_created",
  "tiers": {...}, "flagged", "llm_seconds", "wall_seconds"}``. It is a single object when exactly one
  ``--session`` was named and no trigger (``--if-over`` / ``--min-new``) was given — the
  cases where exactly one run is certain — and an array otherwise (``--all``, several
  sessions, or triggers, which may select none). The array is written as it grows: each run's
  object the moment the run finishes (a long ``--all`` is not silent for minutes), ``]`` at the
  end, so the whole output is still one JSON array; also when the job stops half-way.
* without ``--json``: one line per run on stdout.
* when stderr is a terminal: a live progress line there (``\\r`` rewrites, nothing fancy),
  wiped before anything else is printed.
* a failed run also prints its error as one line on stderr.

Which sessions get a run: every named session that passes the triggers (a run with 0
summaries if nothing is due); with ``--all``, only sessions where something is due.

Exit codes: 0 all runs done, or stopped by a spent ``--for`` budget (the run it cut reads
``budget``); 130 interrupted by Ctrl-C (runs read ``cancelled``, what they
finished is kept); 1 a run failed, or Ollama is unreachable / the model is missing (checked
before any run is recorded: nothing is written); 2 bad usage (unknown session id, …).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ..compaction import (
    CancelToken,
    RunFinished,
    RunStarted,
    HostNotice,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
    UnknownSession,
    select_sessions,
)
from ..compaction.backlog import ORDERS, BacklogEnded, BacklogProgress
from ..compaction.job import Job, JobError, JobEvent

from ..store import Run, Store
from ..summarize import Backend
from ..textsafe import one_line
from ..tokens import Tokenizer
from ..config import BACKENDS, SUMMARY_WAYS
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option
from ..words import counted, duration

EXIT_INTERRUPTED = 130
T = TypeVar("T")


MODEL_HELP = ("model (default: the one Ollama has loaded, or the one an OpenAI-compatible server serves when it "
              "serves one)")
BASE_URL_HELP = ("OpenAI-compatible server (llama.cpp, LM Studio, vLLM, LiteLLM, Ollama's /v1; default: "
                 "$OPENAI_BASE_URL), its key in $OPENAI_API_KEY; repeat it for several. Named with the other "
                 "backend, it shares that job")


def add_backend_options(p: argparse.ArgumentParser, *, way: bool = True) -> None:
    """Options shared with ``resummarize``. SUPPRESS: cli.main reads them into Settings. ``way``: the command
    summarises, so ``--summary-way`` may override how."""
    add_db_option(p)
    p.add_argument("--backend", choices=BACKENDS, default=argparse.SUPPRESS,
                   help="what writes summaries: ollama (default), openai (an OpenAI-compatible server at "
                        "--base-url) or extractive (no model)")
    p.add_argument("--model", metavar="NAME", default=argparse.SUPPRESS, help=MODEL_HELP)
    p.add_argument("--ollama-host", metavar="URL", action="append", default=argparse.SUPPRESS,
                   help="Ollama server (default: $OLLAMA_HOST or 127.0.0.1:11434); repeat it to share the "
                        "job among several, each with its own --parallel slots")
    p.add_argument("--base-url", metavar="URL", action="append", default=argparse.SUPPRESS, help=BASE_URL_HELP)
    if way:
        p.add_argument("--summary-way", choices=SUMMARY_WAYS, default=argparse.SUPPRESS,
                       help="how the model summarises: as calibrated for it (measured, the default), titles over "
                            "the chat's key lines, or writes the summary itself")
    p.add_argument("--json", action="store_true", help="print one JSON object per run (ARCHITECTURE §6)")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number ≥ 0, not {value}")
    return value


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected a number ≥ 1")
    return value


def parse_duration(text: str) -> float:
    """``90s``, ``30m``, ``2h``, ``1h30m`` (a bare number is minutes) → seconds."""
    raw = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        raw += "m"
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([hms])", raw)
    if not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([hms])", "", raw).strip():
        raise argparse.ArgumentTypeError(f"expected a duration like 30m, 2h or 1h30m, not {text!r}")
    seconds = sum(float(n) * {"h": 3600, "m": 60, "s": 1}[unit] for n, unit in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError("a duration must be more than 0")
    return seconds


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("compact", help="summarise sessions into the summary DAG")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--session", metavar="ID", nargs="+", action="extend", help="session id(s) to compact")
    which.add_argument("--all", action="store_true", help="every session (with triggers: every matching one)")
    p.add_argument("--pass", dest="pass_", choices=("leaf", "condense", "full"), default="full",
                   help="leaf, condense, or full = leaf then condense until nothing is eligible (default)")
    add_backend_options(p)
    p.add_argument("--parallel", metavar="N", type=_positive, default=argparse.SUPPRESS,
                   help="summaries made at once (different sessions, condensation groups of one depth)")
    p.add_argument("--if-over", metavar="TOKENS", type=_non_negative,
                   help="only sessions whose uncompacted tokens exceed TOKENS")
    p.add_argument("--min-new", metavar="N", type=_non_negative,
                   help="only sessions with at least N episodes after the last summary")
    p.add_argument("--order", choices=ORDERS, default="newest",
                   help="with --all: the backlog's order: newest activity first (default), oldest, or largest")
    p.add_argument("--for", dest="for_text", metavar="DURATION",
                   help="with --all: stop after the summary in flight once DURATION (30m, 2h) is spent; "
                        "the next 'compact --all' resumes")
    p.add_argument("--dry-run", action="store_true",
                   help="write nothing: print the summaries the pass would make, with time estimates")
    p.set_defaults(func=run)


# ---------------------------------------------------------------- shared with resummarize
def run_json(run: Run) -> dict[str, Any]:
    """The ``compact --json`` / ``resummarize --json`` / ``repair --json`` object (ARCHITECTURE §6),
    exactly these keys; ``rejections`` counts rejected model answers by reason (issue 8)."""
    return {
        "run_id": run.id,
        "session": run.session_id,
        "status": run.status,
        "summaries_created": run.summaries_created,
        "tiers": run.tiers,
        "flagged": run.flagged,
        "llm_seconds": round(run.llm_seconds, 3),
        "wall_seconds": round(run.wall_seconds, 3),
        "rejections": dict(sorted(run.rejections.items())),
    }


def human_line(run: Run) -> str:
    t = run.tiers
    rejected = ""
    if run.rejections:
        parts = ", ".join(f"{reason} {n}" for reason, n in sorted(run.rejections.items(), key=lambda p: -p[1]))
        rejected = f"; rejected answers: {parts}"
    return (
        f"{one_line(run.session_id, 60)}: {run.status} — {counted(run.summaries_created, 'summary')} "
        f"(normal {t['normal']}, aggressive {t['aggressive']}, fallback {t['fallback']}; flagged {run.flagged}{rejected}) "
        f"in {run.wall_seconds:.1f}s, model {run.llm_seconds:.1f}s [run {run.id}]"
    )


def call_text(ev: SummaryProgress) -> str:
    """``writing 120 tok 11 tok/s ~1m10s left`` for the progress line."""
    if ev.phase == "prompt":
        text = "reading the prompt"
    elif ev.phase == "thinking":
        text = f"thinking {ev.thinking_tokens} tok"
    else:
        text = f"writing {ev.tokens} tok"
    if ev.tokens_per_s is not None and ev.phase != "prompt":
        text += f" {ev.tokens_per_s:.0f} tok/s"
    if ev.left_s is not None:
        minutes, seconds = divmod(int(ev.left_s + 0.5), 60)
        text += f" ~{minutes}m{seconds:02d}s left" if minutes else f" ~{seconds}s left"
    return text


class JsonStream:
    """A JSON array on stdout, one run's object at a time as runs finish (``compact --all --json``)."""

    def __init__(self, ctx: CliContext) -> None:
        self.ctx = ctx
        self.written: set[str] = set()

    @property
    def opened(self) -> bool:
        return bool(self.written)

    def add(self, run: Run) -> None:
        if run.id in self.written:
            return
        # one whole line per run, ending with it: a reader can take each as it comes ("," leads the next)
        lead = "," if self.written else "[\n"
        self.ctx.stdout.write(lead + json.dumps(run_json(run), ensure_ascii=False) + "\n")
        self.ctx.stdout.flush()
        self.written.add(run.id)

    def close(self) -> None:
        self.ctx.stdout.write("]\n" if self.written else "[]\n")
        self.ctx.stdout.flush()


class Reporter:
    """Turns runner events into the CLI's output: human lines, errors, the progress line, and
    (``stream``) each run's JSON object as it finishes."""

    def __init__(self, ctx: CliContext, *, json_mode: bool, stream: JsonStream | None = None) -> None:
        self.ctx = ctx
        self.json_mode = json_mode
        self.stream = stream
        self.live = ctx.is_tty  # stderr: harmless next to JSON on stdout
        self.planned: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.tiers: dict[str, dict[str, int]] = {}
        self.rate: float | None = None
        self.what = ""
        self.call = ""
        self.part = ""
        self.span: tuple[int, int, int] | None = None  # the summary ``call`` is of
        self.backlog: BacklogProgress | None = None
        self._width = 0

    def __call__(self, ev: JobEvent) -> None:
        if isinstance(ev, BacklogProgress):
            self.backlog = ev
        elif isinstance(ev, BacklogEnded):
            self.backlog = ev.progress
            return
        elif isinstance(ev, RunStarted):
            self.planned[ev.run_id] = ev.planned
            self.done[ev.run_id] = 0
        elif isinstance(ev, SummaryStarted):
            self.planned[ev.run_id] = ev.planned
            self.what = f"{one_line(ev.session_id, 24)} {ev.what}"
            self.span = ev.span
            self.call = ""
        elif isinstance(ev, SummaryAttempt):
            self.part = f"part {ev.part}/{ev.parts}" if ev.parts > 1 else ""
            self.call = self.part
        elif isinstance(ev, SummaryProgress):
            self.call = " ".join(x for x in (self.part, call_text(ev)) if x)
        elif isinstance(ev, SummaryWritten):
            if ev.span == self.span:  # the next summary's call may be under way already: it stays on the line
                self.call = ""
            self.planned[ev.run_id] = ev.planned
            self.done[ev.run_id] = ev.done
            self.tiers[ev.run_id] = ev.tiers.as_dict() | {"flagged": ev.tiers.flagged}
            self.rate = ev.tokens_per_s if ev.tokens_per_s is not None else self.rate
        elif isinstance(ev, HostNotice):
            self.clear()
            self.ctx.warn(f"hiermem-tui: {one_line(ev.text, 1000)}")
        elif isinstance(ev, RunFinished):
            self.clear()
            if self.stream is not None:
                self.stream.add(ev.run)
            elif not self.json_mode:
                self.ctx.say(human_line(ev.run))
            if ev.status == "failed":
                self.ctx.warn(f"hiermem-tui: session {one_line(ev.session_id, 60)}: {one_line(ev.error or 'failed', 300)}")
        if self.live and not isinstance(ev, RunFinished):
            self.draw()

    def draw(self) -> None:
        done, total = sum(self.done.values()), sum(self.planned.values())
        whole = ""
        if self.backlog is not None:  # one line for the whole backlog (issue 20)
            b = self.backlog
            done, total = b.summaries_done, b.summaries
            eta = "" if b.left_s is None else f" ~{duration(b.left_s)} left"
            whole = f" · {b.sessions_done}/{counted(b.sessions, 'session')}{eta}"
        tiers = [sum(t[k] for t in self.tiers.values()) for k in ("normal", "aggressive", "fallback", "flagged")]
        width = 20
        filled = width * done // total if total else 0
        rate = f" {self.rate:.0f} tok/s" if self.rate and not self.call else ""
        call = f"  {self.call}" if self.call else ""
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}{whole} "
                f"n:{tiers[0]} a:{tiers[1]} f:{tiers[2]} flagged:{tiers[3]}{rate}  {self.what}{call}")[:170]
        pad = " " * max(0, self._width - len(line))
        self.ctx.stderr.write("\r" + line + pad)
        self.ctx.stderr.flush()
        self._width = len(line)

    def clear(self) -> None:
        if self.live and self._width:
            self.ctx.stderr.write("\r" + " " * self._width + "\r")
            self.ctx.stderr.flush()
            self._width = 0


async def with_sigint(cancel: CancelToken, ctx: CliContext, work: Awaitable[T]) -> T:
    """Await ``work`` with Ctrl-C mapped to the CancelToken.

    A second Ctrl-C falls back to Python's default (KeyboardInterrupt): the run then reads
    ``running`` until the next open marks it ``interrupted``.
    """
    loop = asyncio.get_running_loop()

    def on_sigint() -> None:
        ctx.warn("\nhiermem-tui: cancelling (Ctrl-C again to quit at once)…")
        cancel.cancel()
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        installed = False
    try:
        return await work
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


async def run_job(backends: Sequence[Backend], cancel: CancelToken, ctx: CliContext,
                  job: Callable[[], Awaitable[T]]) -> T:
    """``watch``'s long job (its backends, one per host, outlive many runners): Ctrl-C mapped, the
    backends closed after."""
    try:
        return await with_sigint(cancel, ctx, job())
    finally:
        for backend in backends:
            await backend.aclose()


def exit_code(runs: list[Run], cancel: CancelToken, *, budget_spent: bool = False) -> int:
    """0 all done (or stopped by a spent time budget), 130 cancelled, 1 a run failed."""
    if budget_spent:
        return EXIT_FAILED if any(r.status == "failed" for r in runs) else EXIT_OK
    if cancel.cancelled or any(r.status == "cancelled" for r in runs):
        return EXIT_INTERRUPTED
    if any(r.status != "done" for r in runs):
        return EXIT_FAILED
    return EXIT_OK


JOB_EXIT = {"backend": EXIT_FAILED, "refused": EXIT_USAGE, "cancelled": EXIT_INTERRUPTED, "unexpected": EXIT_FAILED}
"""What a job that could not run exits with (ARCHITECTURE §6)."""


def make_job(ctx: CliContext, store: Store, reporter: Reporter) -> Job:
    """The job of this invocation (backend, summariser and runner from ``ctx.settings``)."""
    return Job(store, ctx.settings, tokenizer=ctx.tokenizer, on_event=reporter)


def drive(ctx: CliContext, job: Job, work: Callable[[Job], Awaitable[T]], reporter: Reporter) -> T:
    """Run ``work(job)`` to completion; a job that cannot run becomes one line and its exit code."""
    try:
        return asyncio.run(with_sigint(job.cancel, ctx, work(job)))
    except JobError as exc:
        raise CliError(exc.message, JOB_EXIT[exc.kind]) from None
    finally:
        reporter.clear()


def print_json(ctx: CliContext, runs: list[Run], *, as_array: bool) -> None:
    payload: Any = [run_json(r) for r in runs] if as_array or not runs else run_json(runs[0])
    ctx.say(json.dumps(payload, ensure_ascii=False))


def open_for_job(ctx: CliContext) -> Store:
    """The writable store, sharing one tokenizer with the backend."""
    if ctx.tokenizer is None:
        ctx.tokenizer = Tokenizer()
    return ctx.open_writable()


# ---------------------------------------------------------------- compact
def run(args: argparse.Namespace, ctx: CliContext) -> int:
    named = list(dict.fromkeys(args.session or []))
    args.for_ = None
    if args.for_text is not None:
        if not args.all:
            raise CliError("--for works through the backlog: use it with --all", EXIT_USAGE)
        try:
            args.for_ = parse_duration(args.for_text)
        except argparse.ArgumentTypeError as exc:
            raise CliError(f"argument --for: {exc}", EXIT_USAGE) from None
    triggers = args.if_over is not None or args.min_new is not None
    as_array = bool(args.all or len(named) > 1 or triggers)
    if args.dry_run:
        from .dry_run import run_dry

        return run_dry(args, ctx, named, as_array)
    store = open_for_job(ctx)
    try:
        stream = JsonStream(ctx) if args.json and as_array else None
        reporter = Reporter(ctx, json_mode=args.json, stream=stream)
        job = make_job(ctx, store, reporter)
        ids: list[str] = []
        if not args.all:
            try:
                sessions = select_sessions(store, session_ids=named, if_over=args.if_over, min_new=args.min_new)
            except UnknownSession as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
            ids = [s.id for s in sessions]

        async def work(j: Job) -> list[Run]:
            if not args.all:
                return await j.compact_many(ids, args.pass_)
            backlog = j.plan(order=args.order, pass_=args.pass_, if_over=args.if_over, min_new=args.min_new)
            return await j.backlog(backlog, budget_s=args.for_)

        try:
            runs = drive(ctx, job, work, reporter)
        except BaseException:
            if stream is not None and stream.opened:
                stream.close()  # what was written stays one valid array
            raise
        if stream is not None:
            for r in runs:  # (each was written as it finished; this only adds one no event announced)
                stream.add(r)
            stream.close()
        elif args.json:
            print_json(ctx, runs, as_array=as_array)
        elif not runs:
            ctx.say("nothing to compact")
        if job.budget_spent:
            left = job.plan(order=args.order, pass_=args.pass_, if_over=args.if_over, min_new=args.min_new)
            ctx.warn(f"hiermem-tui: the time budget ({args.for_text}) is spent: stopped after the summary in flight; "
                     f"{counted(left.summaries, 'summary')} still waiting ('compact --all' resumes)")
        return exit_code(runs, job.cancel, budget_spent=job.budget_spent)
    finally:
        store.close()
