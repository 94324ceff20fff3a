"""Compaction runs started from the UI: one thread worker, engine events turned into messages.

Why a thread worker with its own ``asyncio.run``: the engine writes SQLite and talks HTTP on
its own loop; in a thread it can never stall a key press, and it gets its own SQLite
connection from the store's per-thread pool. The only things that cross back are
``post_message`` calls (thread-safe) carrying the engine's frozen events, and the only
thing that crosses in is :class:`CancelToken.cancel`, which aborts the in-flight HTTP call.

One run at a time (group ``compaction``): the app's ``run_state`` is the single source
the indicators draw from, and a second job would only compete for the same model.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, cast

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from hiermem_tui.compaction import (
    CancelToken,
    RunEvent,
    RunFinished,
    RunRefused,
    RunStarted,
    SummaryAttempt,
    SummaryStarted,
    SummaryWritten,
    TierCounts,
    make_runner,
)
from hiermem_tui.config import Settings
from hiermem_tui.store import Run, Store
from hiermem_tui.summarize import BackendUnavailable, ModelMissing
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import (
    RunAttempted,
    RunBegan,
    RunEnded,
    RunNotStarted,
    RunSummaryStarted,
    RunSummaryWritten,
    SessionsChanged,
)

if TYPE_CHECKING:
    from hiermem_tui.tui.app import HiermemApp

RunAction = Literal["leaf", "condense", "full", "resummarize-summary", "resummarize-session", "repair"]
PASSES: tuple[RunAction, ...] = ("leaf", "condense", "full")
ACTION_LABELS: dict[str, str] = {
    "leaf": "Leaf pass",
    "condense": "Condensation pass",
    "full": "Full pass",
    "resummarize-summary": "Re-summarise",
    "resummarize-session": "Session re-summarise",
    "repair": "Repair",
}
CHANGED_EVERY_S = 0.5
"""While a run writes, the screens are told about it at most this often (the end is always told)."""
SHUTDOWN_WAIT_S = 5.0
"""On quit, how long to wait for a cancelled run to record itself as cancelled."""


def engine_label(backend: str, model: str | None) -> str:
    """``ollama/llama3.2:latest``, ``ollama/(loaded model)`` or ``extractive``: what will write."""
    if backend == "extractive":
        return "extractive"
    return f"{backend}/{one_line(model, 60) if model else '(the loaded model)'}"


@dataclass(frozen=True, slots=True)
class RunJob:
    """One thing the user asked for. ``settings`` carry the backend and model chosen for it."""

    id: int
    action: RunAction
    session_id: str
    settings: Settings
    summary_id: str | None = None

    @property
    def label(self) -> str:
        return ACTION_LABELS[self.action]

    @property
    def engine(self) -> str:
        return engine_label(self.settings.backend, self.settings.model)


@dataclass(frozen=True, slots=True)
class RunProgress:
    """What the indicators show; replaced (never mutated) as messages arrive."""

    job: RunJob
    phase: Literal["checking", "running", "cancelling"] = "checking"
    run_id: str | None = None
    what: str = ""
    attempt: str = ""
    done: int = 0
    planned: int = 0
    tiers: TierCounts = field(default_factory=TierCounts)
    tokens_per_s: float | None = None
    model: str | None = None
    est_seconds: float | None = None  # the planned work at the model's measured speed (None: unknown)
    began: float = 0.0  # time.monotonic() when the run was recorded
    done_at: float = 0.0  # time.monotonic() when the last summary landed

    def seconds_left(self, now: float) -> float | None:
        """What is left: the pace of this run once a summary has landed, else the measured-speed estimate."""
        if not self.planned or self.done >= self.planned:
            return None
        if self.done and self.done_at > self.began:
            return (self.done_at - self.began) / self.done * (self.planned - self.done)
        if self.est_seconds is not None:
            return max(0.0, self.est_seconds - (now - self.began))
        return None


def wrap_event(job: RunJob, event: RunEvent) -> Message:
    """The UI message for one engine event."""
    if isinstance(event, RunStarted):
        return RunBegan(job, event)
    if isinstance(event, SummaryStarted):
        return RunSummaryStarted(job, event)
    if isinstance(event, SummaryAttempt):
        return RunAttempted(job, event)
    if isinstance(event, SummaryWritten):
        return RunSummaryWritten(job, event)
    return RunEnded(job, cast(RunFinished, event))


async def drive_job(store: Store, job: RunJob, cancel: CancelToken, post: Callable[[Message], object]) -> Run | None:
    """Run ``job`` to its end on the current loop; every outcome is posted as a message.

    The backend check runs as a task attached to ``cancel`` so a cancel aborts it too, and a
    cancel that lands before the run is recorded records nothing.
    """
    runner = make_runner(store, job.settings, on_event=lambda ev: post(wrap_event(job, ev)), cancel=cancel)
    try:
        check: asyncio.Future[None] = asyncio.ensure_future(runner.check())
        cancel.attach(check)  # type: ignore[arg-type]
        try:
            await check
        except asyncio.CancelledError:
            if not cancel.cancelled:
                raise
        finally:
            cancel.detach(check)  # type: ignore[arg-type]
        if cancel.cancelled:
            post(RunNotStarted(job, "Cancelled before the run started: nothing was written.", "information",
                               "Run cancelled"))
            return None
        if job.action == "resummarize-summary":
            return await runner.resummarize_summary(job.summary_id or "")
        if job.action == "resummarize-session":
            return await runner.resummarize_session(job.session_id)
        if job.action == "repair":
            repaired = await runner.repair(job.session_id, skip_idle=True)
            if repaired is None:
                post(RunNotStarted(job, "Nothing to repair: no fallback, no summary under the fidelity threshold, "
                                        "no missing pin.", "information", "Nothing to do"))
            return repaired
        run = await runner.compact(job.session_id, job.action, skip_idle=True)  # type: ignore[arg-type]
        if run is None:
            post(RunNotStarted(job, nothing_due(job.action), "information", "Nothing to do"))
        return run
    except (BackendUnavailable, ModelMissing) as exc:
        post(RunNotStarted(job, one_line(str(exc), 400), "error", "Backend not ready — nothing ran"))
    except RunRefused as exc:
        post(RunNotStarted(job, one_line(str(exc), 400), "error", "Run refused"))
    except Exception as exc:  # noqa: BLE001 - a store error or a bug: one line, never a traceback
        post(RunNotStarted(job, one_line(f"unexpected error: {type(exc).__name__}: {exc}", 400), "error",
                           f"{job.label} failed"))
    finally:
        await runner.summariser.backend.aclose()
    return None


def nothing_due(action: str) -> str:
    if action == "leaf":
        return "Nothing to summarise: every episode outside the fresh tail is under a leaf (or waits for more)."
    if action == "condense":
        return "Nothing to condense: no depth has enough contiguous summaries without a parent."
    return "Nothing to compact: the session is as compact as the policy allows."


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def outcome(job: RunJob, run: Run, error: str | None) -> tuple[str, str, str]:
    """(title, message, severity) for a finished run, saying why it ended and what was kept."""
    n = run.summaries_created
    tiers = f"{run.normal} normal · {run.aggressive} aggressive · {run.fallback} fallback"
    if job.action == "resummarize-summary":
        kept_note = "nothing was changed (a re-summarised chain is written all at once)"
    elif n:
        kept_note = f"{_count(n, 'summary', 'summaries')} written before the {{why}} {'is' if n == 1 else 'are'} kept"
    else:
        kept_note = "nothing had been written yet"
    if run.status == "done":
        text = f"{_count(n, 'summary', 'summaries')} ({tiers}) in {fmt.duration(run.wall_seconds)}"
        if run.fallback:
            text += f"; {_count(run.fallback, 'fallback', 'fallbacks')}: press f in the session to find them"
        if job.action in ("resummarize-session", "repair"):
            text += "; the previous summaries are kept as superseded"
        if run.rejections:
            worst = sorted(run.rejections.items(), key=lambda p: -p[1])[:3]
            text += "; answers rejected: " + ", ".join(f"{reason.replace('_', ' ')} {n}" for reason, n in worst)
        return f"{job.label} done", text, "warning" if run.fallback else "information"
    if run.status == "cancelled":
        return f"{job.label} cancelled", _sentence(kept_note.replace("{why}", "cancel")) + ".", "warning"
    reason = one_line(error or run.error or "unknown error", 300)
    return f"{job.label} failed", f"{reason}. {_sentence(kept_note.replace('{why}', 'failure'))}.", "error"


class RunsMixin:
    """Mixed into :class:`HiermemApp`: start, follow and cancel the one compaction run.

    State lives in the app's ``run_state`` reactive (a :class:`RunProgress` or None);
    indicators on every screen watch it. Store changes reach the screens as
    ``SessionsChanged`` (the tree and the map reload); a finished re-summarise of one
    summary opens the compare view (:meth:`open_compare`).
    """

    _run_seq: int = 0
    _run_cancel: CancelToken | None = None
    _run_done: threading.Event | None = None
    _changed_at: float = 0.0
    _changed_timer: Timer | None = None

    @property
    def _hmapp(self) -> HiermemApp:
        return cast("HiermemApp", self)

    # ------------------------------------------------------------------ starting / stopping
    @property
    def run_active(self) -> bool:
        return self._hmapp.run_state is not None

    def watch_run_state(self, old: RunProgress | None, new: RunProgress | None) -> None:
        if (old is None) != (new is None):
            self._hmapp.refresh_bindings()  # the footer's "esc" says Cancel run only while one goes

    def start_run(self, action: RunAction, session_id: str, *, backend: str, model: str | None,
                  summary_id: str | None = None) -> RunJob | None:
        """Start a job in the compaction worker; None (with a notice) if one is going or writing is refused."""
        app = self._hmapp
        if app.run_state is not None:
            app.notify("A run is already going: wait for it, or press esc to cancel it.", title="One run at a time",
                       severity="warning")
            return None
        if app.store.readonly:
            app.notify(f"{app.store.path} is open read-only: runs cannot write summaries.", severity="error",
                       markup=False)
            return None
        self._run_seq += 1
        job = RunJob(self._run_seq, action, session_id, replace(app.settings, backend=backend, model=model), summary_id)
        self._run_cancel = CancelToken()
        self._run_done = threading.Event()
        app.run_state = RunProgress(job)
        self._compaction_worker(job, self._run_cancel, self._run_done)
        return job

    def cancel_run(self) -> bool:
        """Ask the running job to stop (the in-flight model call is aborted); False if none runs."""
        app = self._hmapp
        state = app.run_state
        if state is None or self._run_cancel is None:
            return False
        if state.phase != "cancelling":
            app.run_state = replace(state, phase="cancelling")
        self._run_cancel.cancel()
        return True

    async def shutdown_runs(self) -> None:
        """On quit: cancel a running job and give it a moment to record itself as cancelled."""
        done = self._run_done
        if self._run_cancel is not None:
            self._run_cancel.cancel()
        if done is not None and not done.is_set():
            await asyncio.to_thread(done.wait, SHUTDOWN_WAIT_S)

    @work(thread=True, exclusive=True, group="compaction", exit_on_error=False)
    def _compaction_worker(self, job: RunJob, cancel: CancelToken, done: threading.Event) -> None:
        app = self._hmapp
        try:
            asyncio.run(drive_job(app.store, job, cancel, app.post_message))
        finally:
            app.store.release_thread()
            done.set()

    # ------------------------------------------------------------------ messages from the worker
    def _state_for(self, job: RunJob) -> RunProgress | None:
        state = self._hmapp.run_state
        return state if state is not None and state.job.id == job.id else None

    def on_run_began(self, message: RunBegan) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            phase = "cancelling" if state.phase == "cancelling" else "running"
            self._hmapp.run_state = replace(state, phase=phase, run_id=ev.run_id, planned=ev.planned, model=ev.model,
                                            est_seconds=ev.est_seconds, began=time.monotonic())

    def on_run_summary_started(self, message: RunSummaryStarted) -> None:
        state = self._state_for(message.job)
        if state is not None:
            self._hmapp.run_state = replace(state, what=message.event.what, planned=message.event.planned, attempt="")

    def on_run_attempted(self, message: RunAttempted) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            note = f"retry {ev.attempt}: server not answering" if ev.retry else (
                "" if ev.tier == "normal" else f"{ev.tier} try")
            self._hmapp.run_state = replace(state, attempt=note)

    def on_run_summary_written(self, message: RunSummaryWritten) -> None:
        state = self._state_for(message.job)
        ev = message.event
        if state is not None:
            rate = ev.tokens_per_s if ev.tokens_per_s is not None else state.tokens_per_s
            self._hmapp.run_state = replace(state, done=ev.done, planned=ev.planned, tiers=ev.tiers,
                                          tokens_per_s=rate, attempt="", done_at=time.monotonic())
        self._store_changed(ev.session_id)

    def _store_changed(self, session_id: str) -> None:
        """Tell the screens (tree, map, sessions list) at most every ``CHANGED_EVERY_S``: a fast
        run writes several summaries a second, and each broadcast re-reads pages."""
        app = self._hmapp
        if self._changed_timer is not None:
            return
        wait = CHANGED_EVERY_S - (time.monotonic() - self._changed_at)
        if wait <= 0:
            self._changed_at = time.monotonic()
            app.post_message(SessionsChanged((session_id,)))
            return

        def fire() -> None:
            self._changed_timer = None
            self._changed_at = time.monotonic()
            app.post_message(SessionsChanged((session_id,)))

        self._changed_timer = app.set_timer(wait, fire)

    def on_run_ended(self, message: RunEnded) -> None:
        app = self._hmapp
        if self._state_for(message.job) is not None:
            app.run_state = None
        ev = message.event
        title, text, severity = outcome(message.job, ev.run, ev.error)
        app.notify(text, title=title, severity=severity, markup=False,  # type: ignore[arg-type]
                   timeout=10 if severity == "error" else 6)
        app.post_message(SessionsChanged((ev.session_id,)))
        if message.job.action == "resummarize-summary" and ev.status == "done":
            self.open_compare(message.job.summary_id or "", ev.run_id)

    def on_run_not_started(self, message: RunNotStarted) -> None:
        app = self._hmapp
        if self._state_for(message.job) is not None:
            app.run_state = None
        app.notify(message.reason, title=message.title, severity=message.severity, markup=False,  # type: ignore[arg-type]
                   timeout=10 if message.severity == "error" else 5)

    def compaction_worker_changed(self, event: Worker.StateChanged) -> None:
        """Safety net: the worker itself failed (not a run failing, which is reported as a message)."""
        if event.state == WorkerState.ERROR:
            app = self._hmapp
            app.run_state = None
            error = event.worker.error
            app.notify(one_line(f"The compaction worker stopped: {type(error).__name__}: {error}", 300),
                       title="Run failed", severity="error", markup=False)

    # ------------------------------------------------------------------ after a re-summarise
    def open_compare(self, summary_id: str, run_id: str) -> None:
        """Show old and new text of a re-summarised summary (keep or revert)."""
        from hiermem_tui.tui.screens.compare import CompareScreen

        app = self._hmapp
        old = app.store.get_summary(summary_id)
        new = app.store.get_summary(old.superseded_by) if old is not None and old.superseded_by else None
        if old is None or new is None:
            app.notify("The re-summarised version could not be found; press r in the session to refresh.",
                       severity="warning")
            return
        app.push_screen(CompareScreen(old, new, run_id), callback=lambda _reverted: self.reload_session(old.session_id))

    def reload_session(self, session_id: str) -> None:
        """Re-read a session screen at once (not deferred): after the user closed a dialog about it."""
        from hiermem_tui.tui.screens.session import SessionScreen

        for screen in self._hmapp.screen_stack:
            if isinstance(screen, SessionScreen) and screen.session_id == session_id:
                screen.reload()
