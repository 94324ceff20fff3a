"""Compacting everything in the background (issue 20, item 4): the app's :class:`BacklogController`.

Why beside :mod:`.runs` and not in it: the backlog is a second, long job that runs while the user
browses and while interactive runs (a pass on one session, a re-summarise, a repair) come and go.
It runs in its own thread worker (group ``backlog``) on its own event loop, through the engine's
:class:`~hiermem_tui.compaction.job.Job`, and takes its sessions from a
:class:`~hiermem_tui.compaction.priority.BacklogControl`, which is how the UI steers it between
model calls: opening a session promotes it, an interactive run holds it (``app.runs`` hands the
control to its job), ``B`` pauses and resumes, ``ctrl+x`` and quitting stop it after the call in
flight. As with runs, only messages cross back from the worker (:mod:`.messages`).

It also keeps what is waiting (:class:`~.backlog_view.Waiting`, the app's ``backlog_waiting``):
planned in a worker at start (the app then says "380 summaries waiting, ~3 h 10 m"), after an
import, and per session as runs change them; the sessions list's state column draws it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from textual.message import Message

from hiermem_tui.compaction import CancelToken, HostNotice, PassKind, RunFinished, SummaryWritten
from hiermem_tui.compaction.backlog import Backlog, BacklogEnded, BacklogProgress, Order
from hiermem_tui.compaction.job import Job, JobError, JobEvent
from hiermem_tui.compaction.preview import plan_pass
from hiermem_tui.compaction.priority import BacklogControl
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.backlog_view import BacklogRunState, Waiting
from hiermem_tui.tui.messages import (
    BacklogBegan,
    BacklogFinished,
    BacklogMoved,
    BacklogWaiting,
    BacklogWrote,
    HostLost,
)
from hiermem_tui.words import engine_label

if TYPE_CHECKING:
    from hiermem_tui.tui.app_base import AppBase, StoreHold
    from hiermem_tui.tui.screens.run_dialog import RunChoice

STOP_WAIT_EXTRA_S = 5.0
"""On quit, after the call in flight had its time (``settings.timeout_s``), how long an aborted call may take."""


def waiting_of(backlog: Backlog) -> Waiting:
    return Waiting({s.id: s.summaries + s.briefs for s in backlog.sessions}, backlog.summaries + backlog.briefs,
                   backlog.est_seconds,
                   guess=not backlog.speed.measured and backlog.speed.basis != "none")


async def drive_backlog(store: Store, job_id: int, settings: Settings, order: Order, pass_: PassKind,
                        if_over: int | None, cancel: CancelToken, post: Callable[[Message], object]) -> None:
    """The worker's side: plan the backlog, hand its control to the app, work through it."""

    def on_event(ev: JobEvent) -> None:
        if isinstance(ev, BacklogProgress):
            post(BacklogMoved(job_id, ev))
        elif isinstance(ev, BacklogEnded):
            post(BacklogFinished(job_id, ev.reason, ev.progress, None))
        elif isinstance(ev, SummaryWritten):
            post(BacklogWrote(job_id, ev.session_id))
        elif isinstance(ev, RunFinished):
            post(BacklogMoved(job_id, None))
        elif isinstance(ev, HostNotice):
            post(HostLost(ev.text))

    job = Job(store, settings, on_event=on_event, cancel=cancel)
    plan = job.plan(order=order, pass_=pass_, if_over=if_over)
    control = BacklogControl(s.id for s in plan.sessions)
    def changed() -> None:
        post(BacklogMoved(job_id, None))

    control.on_change = changed
    post(BacklogBegan(job_id, control, len(plan.sessions), plan.summaries))
    try:
        await job.backlog(plan, control=control)
    except JobError as exc:
        post(BacklogFinished(job_id, "failed", None, f"{exc.title}: {exc.message}"))


class BacklogController:
    """The backlog in the background and what is waiting (owned by the app as ``app.backlog``)."""

    def __init__(self, app: AppBase) -> None:
        self.app = app
        self._seq = 0
        self.control: BacklogControl | None = None
        """The running backlog's control (None: none runs, or it is still being planned)."""
        self._cancel: CancelToken | None = None
        self._hold: StoreHold | None = None

    @property
    def active(self) -> bool:
        return self.app.backlog_run is not None

    # ------------------------------------------------------------------ what is waiting
    def plan_waiting(self, *, say: bool = False) -> None:
        """Plan every summary due across the file in a worker; ``say``: tell the user what is waiting."""
        app = self.app
        app.store_worker(app, lambda: self._plan_all(say), group="backlog-plan", exclusive=True, name="backlog-plan")

    def _plan_all(self, say: bool) -> None:
        app = self.app
        plan = Job(app.store, app.settings).plan(order="newest")
        app.post_message(BacklogWaiting(waiting_of(plan), say))

    def replan(self, session_ids: Iterable[str]) -> None:
        """Re-count what is due in a few sessions (a run or another process changed them)."""
        ids = tuple(session_ids)
        if not ids or self.app.backlog_waiting is None:
            return
        app = self.app
        app.store_worker(app, lambda: self._plan_some(ids), group="backlog-replan", name="backlog-replan")

    def _plan_some(self, ids: tuple[str, ...]) -> None:
        app = self.app
        policy = app.settings.policy
        counts = {sid: len(plan_pass(app.store, policy, sid, "full")) for sid in ids}
        app.call_from_thread(self._recount, counts)

    def _recount(self, counts: dict[str, int]) -> None:
        old = self.app.backlog_waiting
        if old is None:
            return
        per = {**old.per_session, **counts}
        per = {sid: n for sid, n in per.items() if n}
        total = sum(per.values())
        est = old.est_seconds * total / old.summaries if old.summaries else 0.0
        self.app.backlog_waiting = replace(old, per_session=per, summaries=total, est_seconds=est)

    def waiting_planned(self, message: BacklogWaiting) -> None:
        app = self.app
        app.backlog_waiting = message.waiting
        if message.say and message.waiting.summaries and not self.active:
            app.notify(f"{message.waiting.line()}. Press B to compact them in the background.",
                       title="Waiting to be summarised", timeout=12, markup=False)

    # ------------------------------------------------------------------ the run
    def request(self) -> None:
        """``B``: the run dialog with the backlog's plan, then the run in the background."""
        app = self.app
        if app.store.readonly:
            app.notify(f"{app.store.path} is open read-only: runs cannot write summaries.", severity="error",
                       markup=False)
            return
        if self.active:
            app.notify("The backlog is already running: B pauses it, ctrl+x stops it.", severity="warning")
            return

        def chosen(choice: RunChoice | None) -> None:
            if choice is not None:
                if choice.remember:
                    model = choice.model if choice.backend != "extractive" else app.settings.model
                    app.update_settings(replace(app.settings, backend=choice.backend, model=model))
                self.start(choice)

        app.nav.run_dialog("backlog", "", subject="every session",
                           detail="Runs in the background while you browse: opening a session moves it to the "
                                  "front; your own runs go first. B pauses, ctrl+x stops.", on_choice=chosen)

    def start(self, choice: RunChoice) -> None:
        app = self.app
        if self.active:
            return
        self._seq += 1
        job_id = self._seq
        settings = replace(app.settings, backend=choice.backend, model=choice.model)
        pass_: PassKind = choice.action if choice.action in ("leaf", "condense") else "full"
        order = cast(Order, choice.order)
        cancel = self._cancel = CancelToken()
        self.control = None
        app.backlog_run = BacklogRunState(job_id)
        app.notify(f"Compacting everything in the background with {engine_label(choice.backend, choice.model)}.",
                   timeout=4, markup=False)

        def drive() -> None:
            asyncio.run(drive_backlog(app.store, job_id, settings, order, pass_, choice.if_over, cancel,
                                      app.post_message))

        self._hold = app.store_worker(app, drive, group="backlog", exclusive=True, name=f"backlog-{job_id}")

    def promote(self, session_id: str) -> None:
        """The user opened a session: it goes to the front of the backlog."""
        control = self.control
        if control is not None and control.promote(session_id):
            self.app.notify("This session's summaries come next in the backlog.", timeout=3)

    def pause(self) -> None:
        if self.control is not None and self.app.backlog_run is not None:
            self.control.pause()
            self.app.notify("Backlog paused after the call in flight; B resumes.", timeout=3)

    def resume(self) -> None:
        if self.control is not None and self.app.backlog_run is not None:
            self.control.resume()

    def stop(self) -> bool:
        """Stop after the call in flight (kept; the run it cuts reads ``paused``: the next backlog picks it
        up); False if no backlog runs."""
        state = self.app.backlog_run
        if state is None or self._cancel is None:
            return False
        self._cancel.finish_current("paused")
        if self.control is not None:
            self.control.stop()
        self.app.backlog_run = replace(state, phase="stopping")
        return True

    async def shutdown(self) -> None:
        """On quit: stop after the call in flight (it has the model's call time to end), then abort."""
        hold, cancel = self._hold, self._cancel
        if hold is None or hold.done or cancel is None:
            return
        self.stop()
        if not await asyncio.to_thread(hold.wait, self.app.settings.timeout_s):
            cancel.cancel()
            await asyncio.to_thread(hold.wait, STOP_WAIT_EXTRA_S)

    # ------------------------------------------------------------------ messages from the worker
    def _state(self, job: int) -> BacklogRunState | None:
        state = self.app.backlog_run
        return state if state is not None and state.job == job else None

    def began(self, message: BacklogBegan) -> None:
        state = self._state(message.job)
        if state is None:
            return
        self.control = message.steer
        self.app.backlog_run = replace(state, phase="running", sessions=message.sessions,
                                       summaries=message.summaries)
        self.moved(BacklogMoved(message.job, None))

    def moved(self, message: BacklogMoved) -> None:
        state, control = self._state(message.job), self.control
        if state is None:
            return
        if control is not None:
            queued = control.queued()
            phase = state.phase if state.phase == "stopping" else ("paused" if control.paused else "running")
            state = replace(state, phase=phase, running=control.running(), queued=frozenset(queued),
                            next_up=queued[0] if queued else None)
        p = message.progress
        if p is not None:
            state = replace(state, sessions_done=p.sessions_done, sessions=p.sessions,
                            summaries_done=p.summaries_done, summaries=p.summaries, left_s=p.left_s)
        self.app.backlog_run = state

    def wrote(self, message: BacklogWrote) -> None:
        if self._state(message.job) is not None:
            self.app.runs.store_changed(message.session_id)

    def finished(self, message: BacklogFinished) -> None:
        app = self.app
        if self._state(message.job) is None:
            return
        app.backlog_run = None
        self.control = None
        p = message.progress
        done = f"{p.summaries_done:,} of {p.summaries:,} summaries" if p is not None else "nothing"
        if message.reason == "done":
            app.notify(f"Backlog done: {done} written." if p is not None and p.summaries else "Nothing was waiting.",
                       title="Backlog", timeout=8, markup=False)
        elif message.reason == "failed":
            app.notify(message.error or f"The backlog stopped on a failed run after {done}.",
                       title="Backlog failed", severity="error", timeout=10, markup=False)
        else:
            left = "" if p is None or p.left_s is None else f"; about {fmt.duration(p.left_s)} left"
            app.notify(f"Backlog stopped after {done}{left}. B starts it again where it stopped.",
                       title="Backlog", timeout=8, markup=False)
        self.plan_waiting()
