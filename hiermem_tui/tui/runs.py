"""Compaction runs started from the UI: one thread worker, engine events turned into messages.

Why a thread worker with its own ``asyncio.run``: the engine writes SQLite and talks HTTP on
its own loop; in a thread it can never stall a key press, and it gets its own SQLite
connection from the store's per-thread pool. The only things that cross back are
``post_message`` calls (thread-safe) carrying the engine's frozen events, and the only
thing that crosses in is :class:`CancelToken.cancel`, which aborts the in-flight HTTP call.

One run at a time (group ``compaction``): the app's ``run_state`` is the single source
the indicators draw from, and a second job would only compete for the same model.

This module is the app's side, a :class:`RunController` the app owns (``app.runs``): every key
that starts a run goes through :meth:`RunController.request` (dialog, confirmation, backup, run); the job
and progress values are in :mod:`.run_job`, what the worker thread runs in :mod:`.run_drive`,
the notices' wording in :mod:`.run_notices`. The app hands each of a run's messages to the
method here that takes it (``HiermemApp.relays``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.timer import Timer
from textual.worker import Worker, WorkerState

from hiermem_tui.compaction import CancelToken
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.messages import (
    HostLost,
    ReloadSession,
    RunAttempted,
    RunBegan,
    RunCallProgress,
    RunEnded,
    RunNotStarted,
    RunSummaryStarted,
    RunSummaryWritten,
    SessionsChanged,
)
from hiermem_tui.tui.run_drive import drive_job
from hiermem_tui.tui.run_job import CallState, RunAction, RunJob, RunPhase, RunProgress
from hiermem_tui.tui.run_notices import outcome

if TYPE_CHECKING:
    from rich.text import Text

    from hiermem_tui.tui.app_base import AppBase, StoreHold
    from hiermem_tui.tui.screens.run_dialog import RunChoice

CHANGED_EVERY_S = 0.5
"""While a run writes, the screens are told about it at most this often (the end is always told)."""
SHUTDOWN_WAIT_S = 5.0
"""On quit, how long to wait for a cancelled run to record itself as cancelled."""


class RunController:
    """The app's one compaction run: start, follow and cancel it (owned by the app as ``app.runs``).

    State lives in the app's ``run_state`` reactive (a :class:`RunProgress` or None);
    indicators on every screen watch it. While the app follows the file (``follow``), the
    store follower tells the screens what a run wrote, as it tells them what anyone else
    writes; otherwise (snapshots) the controller does, at most every ``CHANGED_EVERY_S``. A
    finished re-summarise of one summary opens the compare view.
    """

    def __init__(self, app: AppBase, *, announce_changes: bool) -> None:
        self.app = app
        self.announce_changes = announce_changes
        self._seq = 0
        self._cancel: CancelToken | None = None
        self._hold: StoreHold | None = None
        self._changed_at = 0.0
        self._changed_timer: Timer | None = None

    # ------------------------------------------------------------------ starting / stopping
    @property
    def active(self) -> bool:
        return self.app.run_state is not None

    def request(self, action: RunAction, session_id: str, *, subject: str, detail: Text | str = "",
                summary_id: str | None = None, confirm: Callable[[RunChoice], Text] | None = None) -> None:
        """What every key that starts a run does: the run dialog (pass, backend, model), then, if
        ``confirm`` says what will be replaced, a yes/no, then the backup when one was asked for,
        then the run. Refused at once (not after the dialog) while another run goes or the file is
        read-only."""
        app = self.app

        def go(choice: RunChoice) -> None:
            if choice.remember:
                model = choice.model if choice.backend != "extractive" else app.settings.model
                app.update_settings(replace(app.settings, backend=choice.backend, model=model))

            def start() -> None:
                self.start(choice.action, session_id, backend=choice.backend, model=choice.model,
                           summary_id=summary_id)

            if choice.backup is None:
                start()
                return
            # the run starts only once the copy is whole; a failed or stopped backup has said so, and nothing runs
            app.nav.backup(choice.backup, on_done=lambda copied: start() if copied is not None else None)

        def chosen(choice: RunChoice | None) -> None:
            if choice is None:
                return
            if confirm is None:
                go(choice)
                return
            app.nav.confirm("Re-summarise the whole session?", confirm(choice), confirm="Supersede and run",
                            danger=True,
                            on_answer=lambda yes: go(choice) if yes else app.notify("Nothing was changed.", timeout=2))

        if app.store.readonly:
            app.notify(f"{app.store.path} is open read-only: runs cannot write summaries.", severity="error",
                       markup=False)
            return
        if self.active:
            app.notify("A run is already going: wait for it, or press esc to cancel it.", title="One run at a time",
                       severity="warning")
            return
        app.nav.run_dialog(action, session_id, subject=subject, detail=detail, on_choice=chosen)

    def start(self, action: RunAction, session_id: str, *, backend: str, model: str | None,
              summary_id: str | None = None) -> RunJob | None:
        """Start a job in the compaction worker; None (with a notice) if one is going or writing is refused."""
        app = self.app
        if app.run_state is not None:
            app.notify("A run is already going: wait for it, or press esc to cancel it.", title="One run at a time",
                       severity="warning")
            return None
        if app.store.readonly:
            app.notify(f"{app.store.path} is open read-only: runs cannot write summaries.", severity="error",
                       markup=False)
            return None
        self._seq += 1
        job = RunJob(self._seq, action, session_id, replace(app.settings, backend=backend, model=model), summary_id)
        cancel = self._cancel = CancelToken()
        app.run_state = RunProgress(job)
        self._hold = app.store_worker(app, lambda: self._drive(job, cancel), group="compaction", exclusive=True,
                                      name=f"run-{job.id}")
        return job

    def cancel(self) -> bool:
        """Ask the running job to stop (the in-flight model call is aborted); False if none runs."""
        app = self.app
        state = app.run_state
        if state is None or self._cancel is None:
            return False
        if state.phase != "cancelling":
            app.run_state = replace(state, phase="cancelling")
        self._cancel.cancel()
        return True

    async def shutdown(self) -> None:
        """On quit: cancel a running job and give it a moment to record itself as cancelled."""
        hold = self._hold
        if self._cancel is not None:
            self._cancel.cancel()
        if hold is not None and not hold.done:
            await asyncio.to_thread(hold.wait, SHUTDOWN_WAIT_S)

    def _drive(self, job: RunJob, cancel: CancelToken) -> None:
        """The worker thread: the job on its own event loop; everything it tells the app is a message."""
        app = self.app
        # a backlog running in the background lets this job go before its next call
        asyncio.run(drive_job(app.store, job, cancel, app.post_message, goes_before=app.backlog.control))

    # ------------------------------------------------------------------ messages from the worker
    def _state_for(self, job: RunJob) -> RunProgress | None:
        state = self.app.run_state
        return state if state is not None and state.job.id == job.id else None

    def began(self, message: RunBegan) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            phase: RunPhase = "cancelling" if state.phase == "cancelling" else "running"
            self.app.run_state = replace(state, phase=phase, run_id=ev.run_id, planned=ev.planned, model=ev.model,
                                         est_seconds=ev.est_seconds, began=time.monotonic())

    def summary_started(self, message: RunSummaryStarted) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            self.app.run_state = replace(state, what=ev.what, span=ev.span, planned=ev.planned, attempt="", call=None)

    def attempted(self, message: RunAttempted) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            note = f"retry {ev.attempt}: server not answering" if ev.retry else (
                "" if ev.tier == "normal" else f"{ev.tier} try")
            if ev.parts > 1 and not ev.retry:
                note = " ".join(x for x in (f"part {ev.part}/{ev.parts}", note) if x)
            self.app.run_state = replace(state, attempt=note, call=None)

    def call_progress(self, message: RunCallProgress) -> None:
        state = self._state_for(message.job)
        if state is not None:
            ev = message.event
            call = CallState(ev.phase, ev.tokens, ev.thinking_tokens, ev.tokens_per_s, ev.left_s, time.monotonic())
            self.app.run_state = replace(state, call=call)

    def summary_written(self, message: RunSummaryWritten) -> None:
        state = self._state_for(message.job)
        ev = message.event
        if state is not None:
            rate = ev.tokens_per_s if ev.tokens_per_s is not None else state.tokens_per_s
            state = replace(state, done=ev.done, planned=ev.planned, tiers=ev.tiers, tokens_per_s=rate,
                            done_at=time.monotonic())
            if ev.span == state.span:  # its calls are over; the next summary's, asked before it was written, are not
                state = replace(state, attempt="", call=None)
            self.app.run_state = state
        self.store_changed(ev.session_id)

    def store_changed(self, session_id: str) -> None:
        """Tell the screens (tree, map, sessions list) at most every ``CHANGED_EVERY_S``: a fast
        run writes several summaries a second, and each broadcast re-reads pages. Only when the app does
        not follow the file (its follower tells them otherwise); the backlog's writes come here too."""
        app = self.app
        if not self.announce_changes:
            return
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

    def ended(self, message: RunEnded) -> None:
        app = self.app
        if self._state_for(message.job) is not None:
            app.run_state = None
        ev = message.event
        brief = app.store.briefs.active(ev.session_id)
        title, text, severity = outcome(message.job, ev.run, ev.error,
                                        brief=brief is not None and brief.run_id == ev.run_id)
        app.notify(text, title=title, severity=severity, markup=False,  # type: ignore[arg-type]
                   timeout=10 if severity == "error" else 6)
        if self.announce_changes:
            app.post_message(SessionsChanged((ev.session_id,)))
        if message.job.action == "resummarize-summary" and ev.status == "done":
            self.open_compare(message.job.summary_id or "", ev.run_id)

    def not_started(self, message: RunNotStarted) -> None:
        app = self.app
        if self._state_for(message.job) is not None:
            app.run_state = None
        app.notify(message.reason, title=message.title, severity=message.severity, markup=False,  # type: ignore[arg-type]
                   timeout=10 if message.severity == "error" else 5)

    def host_lost(self, message: HostLost) -> None:
        """A job (a run, or the backlog) lost one of several hosts: the engine's line, as a warning."""
        openai = any(message.text.startswith(f"host {url} ") for url in self.app.settings.base_urls())
        title = "OpenAI-compatible host lost" if openai else "Ollama host lost"
        self.app.notify(message.text, title=title, severity="warning", markup=False, timeout=10)

    def worker_changed(self, event: Worker.StateChanged) -> None:
        """Safety net: the worker itself failed (not a run failing, which is reported as a message)."""
        if event.state == WorkerState.ERROR:
            app = self.app
            app.run_state = None
            error = event.worker.error
            app.notify(one_line(f"The compaction worker stopped: {type(error).__name__}: {error}", 300),
                       title="Run failed", severity="error", markup=False)

    # ------------------------------------------------------------------ after a re-summarise
    def open_compare(self, summary_id: str, run_id: str) -> None:
        """Show old and new text of a re-summarised summary (keep or revert); when it closes,
        the session's screen is asked to re-read itself."""
        app = self.app
        old = app.store.dag.get(summary_id)
        new = app.store.dag.get(old.superseded_by) if old is not None and old.superseded_by else None
        if old is None or new is None:
            app.notify("The re-summarised version could not be found; press r in the session to refresh.",
                       severity="warning")
            return
        session_id = old.session_id
        app.nav.compare(old, new, run_id, on_close=lambda: app.post_message(ReloadSession(session_id)))
