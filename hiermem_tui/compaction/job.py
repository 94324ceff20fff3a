"""One compaction job, headless: what the CLI's ``compact`` / ``resummarize`` / ``repair`` and the
TUI's runs all drive (issue 20).

A :class:`Job` builds the runner from the settings, checks the backend (cancellably, when asked
to before anything else), turns what refuses a job into one :class:`JobError` — a kind, a title
and one line — and closes the backend however the job ends. Those four things live here only;
the front ends map a :class:`JobError` to an exit code or a notice.

Its events are the runner's (``RunStarted`` re-timed by :mod:`.estimate`, so every front end
shows the same estimate) and, for a backlog, :class:`~.backlog.BacklogProgress` after each
summary and :class:`~.backlog.BacklogEnded` at the end. A backlog given a time budget stops
after the summary in flight when it is spent (:meth:`CancelToken.finish_current`): everything
finished is kept, and the next backlog resumes from it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal, TypeVar, Union

from ..config import Server, Settings
from ..store import Run, Store
from ..summarize import Backend, BackendUnavailable, ModelMissing, SummariserError
from ..summarize.speed import ModelSpeed
from ..textsafe import one_line
from ..tokens import Tokenizer
from .factories import make_backend, make_runner
from .backlog import Backlog, BacklogEnded, BacklogEvent, BacklogTracker, EndReason, Order, plan_backlog
from .estimate import Estimator, HostSpeed, Speed, known_speed, measure, speed_offline
from .events import (
    BriefWritten,
    CancelToken,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryStarted,
    SummaryWritten,
)
from .executor import host_key
from .preview import plan_pass
from .priority import BacklogControl
from .runner import PassKind, Runner, RunRefused
from .select import UnknownSession

T = TypeVar("T")
JobEvent = Union[RunEvent, BacklogEvent]
ErrorKind = Literal["backend", "refused", "cancelled", "unexpected"]
PASS_KINDS = ("leaf", "condense", "full")

_TITLES: dict[str, str] = {
    "backend": "Backend not ready — nothing ran",
    "refused": "Run refused",
    "cancelled": "Run cancelled",
    "unexpected": "Run failed",
}


class JobError(Exception):
    """Why a job did not run (or stopped outside any run), in one line.

    ``backend``: the server is unreachable or the model missing (nothing was written);
    ``refused``: asked for something that is not there; ``cancelled``: cancelled before the
    first run was recorded; ``unexpected``: a bug or a store error outside a run.
    """

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message

    @property
    def title(self) -> str:
        return _TITLES[self.kind]

    @property
    def severity(self) -> Literal["information", "error"]:
        return "information" if self.kind == "cancelled" else "error"


class Job:
    """One job over one store (see the module docstring). ``on_event`` gets every
    :data:`JobEvent` on the job's loop thread; ``cancel`` may be fired from any thread."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        tokenizer: Tokenizer | None = None,
        on_event: Callable[[JobEvent], None] | None = None,
        cancel: CancelToken | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.settings = settings
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self.clock = clock
        self.runner: Runner = make_runner(store, settings, tokenizer=tokenizer, on_event=self._event,
                                          cancel=self.cancel)
        self.budget_spent = False
        """A backlog's time budget ran out (it stopped after the summary in flight)."""
        self._tracker: BacklogTracker | None = None
        self._making: dict[str, tuple[int, int, int]] = {}
        """The summary each run is making (its span): the one its model calls are for."""

    # ------------------------------------------------------------------ estimates
    def speed(self) -> Speed:
        """The model's speed on the first live host as this job knows it: measured now or earlier, else a guess."""
        return self._host_speed(self.runner.summariser.backend)

    def _host_speed(self, backend: Backend) -> Speed:
        if backend.name == "extractive":
            return Speed.none()
        live = getattr(backend, "speed", None)
        if isinstance(live, ModelSpeed) and live.measured:
            return Speed.of(live)
        model = backend.model or self.settings.model
        return known_speed(self.store.speeds, backend.name, model, host_key(backend)) or Speed.guess(model)

    def estimator(self) -> Estimator:
        """The one estimator, the work shared among the live hosts (each at its own speed)."""
        pool = self.runner.executor.hosts
        live = pool.live() or pool.hosts[:1]
        return Estimator.shared([HostSpeed(h.name, self._host_speed(h.summariser.backend), pool.parallel)
                                 for h in live], self.runner.policy, self.settings.summary_format)

    def loads(self) -> float:
        """Seconds the model spent loading in this job so far, on every host (no part of a speed)."""
        speeds = (getattr(h.summariser.backend, "speed", None) for h in self.runner.executor.hosts.hosts)
        return sum(s.load_seconds for s in speeds if isinstance(s, ModelSpeed))

    def _run_estimate(self, ev: RunStarted) -> float:
        est = self.estimator()
        if ev.kind in PASS_KINDS:
            plan = plan_pass(self.store, self.runner.policy, ev.session_id, ev.kind)  # type: ignore[arg-type]
            return est.total((p.depth, p.source_tokens) for p in plan)
        return ev.planned * est.seconds(0, self.runner.policy.leaf_chunk_tokens)

    # ------------------------------------------------------------------ events
    def emit(self, ev: JobEvent) -> None:
        if self.on_event is not None:
            self.on_event(ev)

    def _event(self, ev: RunEvent) -> None:
        if isinstance(ev, RunStarted):
            ev = replace(ev, est_seconds=self._run_estimate(ev))
        self.emit(ev)
        tracker = self._tracker
        if tracker is None:
            return
        if isinstance(ev, SummaryStarted):  # a run's calls are its latest started summary's, until the next starts
            self._making[ev.run_id] = ev.span
        elif isinstance(ev, SummaryAttempt) and not ev.retry:  # a model call (a retry event only says one failed)
            tracker.called(ev.run_id, self._making.get(ev.run_id))
        elif isinstance(ev, SummaryWritten):
            tracker.written(ev.summary.depth, ev.summary.source_tokens, self.clock(), ev.run_id, ev.session_id,
                            ev.span)
            self.emit(tracker.progress(self.clock()))
        elif isinstance(ev, BriefWritten):
            tracker.brief_written(self.clock(), ev.run_id, ev.session_id)
        elif isinstance(ev, RunFinished):
            self._making.pop(ev.run_id, None)
            if ev.status in ("done", "failed"):  # a moved session comes again
                tracker.finished_session(ev.session_id)
                self.emit(tracker.progress(self.clock()))

    # ------------------------------------------------------------------ running
    async def run(self, work: Callable[[Runner], Awaitable[T]], *, check_first: bool = False,
                  goes_before: BacklogControl | None = None, session_id: str | None = None) -> T:
        """``work(runner)`` with every refusal mapped to a :class:`JobError`; the backend is
        closed after, whatever happened. ``check_first``: check the backend before ``work``, as
        a task the cancel token aborts (a cancel then records nothing). ``goes_before``: a backlog
        running beside this job, held from before the first call to the end (its call in flight
        ends first; it re-plans ``session_id`` if it was in it, ``priority.py``)."""
        try:
            if check_first:
                await self._check()
            if goes_before is None:
                return await work(self.runner)
            goes_before.hold(session_id)
            try:
                await goes_before.idle()
                return await work(self.runner)
            finally:
                goes_before.release()
        except JobError:
            raise
        except (BackendUnavailable, ModelMissing) as exc:
            raise JobError("backend", one_line(str(exc), 400)) from None
        except (RunRefused, UnknownSession) as exc:
            raise JobError("refused", one_line(str(exc), 400)) from None
        except Exception as exc:  # a store error or a bug outside a run: one line, never a traceback
            raise JobError("unexpected", one_line(f"unexpected error: {type(exc).__name__}: {exc}", 400)) from None
        finally:
            await self.runner.aclose()

    async def _check(self) -> None:
        check: asyncio.Future[None] = asyncio.ensure_future(self.runner.check())
        self.cancel.attach(check)  # type: ignore[arg-type]
        try:
            await check
        except asyncio.CancelledError:
            if not self.cancel.cancelled:
                raise
        finally:
            self.cancel.detach(check)  # type: ignore[arg-type]
        if self.cancel.cancelled:
            raise JobError("cancelled", "Cancelled before the run started: nothing was written.")

    async def compact_many(self, session_ids: Iterable[str], pass_: PassKind, *, skip_idle: bool = False) -> list[Run]:
        """Passes over named sessions (``compact --session``)."""
        return await self.run(lambda r: r.compact_many(session_ids, pass_, skip_idle=skip_idle))

    async def resummarize(self, session_id: str, summary_id: str | None = None) -> Run:
        """A new version of one summary and its ancestors, or (no ``summary_id``) of the whole session."""
        return await self.run(lambda r: r.remake.summary(summary_id) if summary_id is not None
                              else r.remake.session(session_id))

    async def repair_many(self, session_ids: Iterable[str], below: float | None = None, *,
                          skip_idle: bool = False) -> list[Run]:
        """The summaries that need it re-made, one run per session (``repair``)."""
        return await self.run(lambda r: r.remake.repair_many(session_ids, below, skip_idle=skip_idle))

    # ------------------------------------------------------------------ the backlog
    def plan(self, *, order: Order = "newest", pass_: PassKind = "full", if_over: int | None = None,
             min_new: int | None = None) -> Backlog:
        """The backlog as this job would work through it (no model contacted)."""
        return plan_backlog(self.store, self.runner.policy, self.estimator(), order=order, pass_=pass_,
                            if_over=if_over, min_new=min_new, model=self.runner.summariser.backend.model
                            or self.settings.model)

    async def backlog(self, backlog: Backlog, *, budget_s: float | None = None,
                      control: BacklogControl | None = None) -> list[Run]:
        """Work through ``backlog`` in its order (``parallel`` sessions at once), reporting
        :class:`~.backlog.BacklogProgress`; with ``budget_s``, stop after the summary in flight once
        that many seconds have passed. Nothing due: no run, no server contacted. ``control``: the
        queue and gate other threads steer it with (``priority.py``: promote, hold, pause, stop),
        made from the plan's order when not given."""

        async def work(runner: Runner) -> list[Run]:
            if not backlog.sessions:
                return []
            await runner.check()
            timed = backlog.timed(self.estimator(), runner.summariser.backend.model)
            tracker = BacklogTracker(timed, self.estimator, self.clock(), loads=self.loads)
            self._tracker = tracker
            loop = asyncio.get_running_loop()
            timer = loop.call_later(budget_s, self._spend) if budget_s is not None else None
            queue = control if control is not None else BacklogControl(s.id for s in timed.sessions)
            runner.executor.gate = queue
            try:
                runs = await runner.compact_many(queue, timed.pass_, skip_idle=True, on_done=queue.session_ended)
            finally:
                if timer is not None:
                    timer.cancel()
                self._tracker = None
                runner.executor.gate = None
            reason: EndReason = "done"
            if self.budget_spent:
                reason = "budget"
            elif self.cancel.cancelled:
                reason = self.cancel.reason or "cancelled"
            elif any(r.status == "failed" for r in runs):
                reason = "failed"
            self.emit(BacklogEnded(reason, tracker.progress(self.clock())))
            return runs

        return await self.run(work)

    def _spend(self) -> None:
        self.budget_spent = True
        self.cancel.finish_current("budget")


def offline_estimator(store: Store, settings: Settings, engine: tuple[str, str | None] | None = None) -> Estimator:
    """The estimator of ``engine`` (backend, model; default: the settings') with no call made: each
    host's measured speed (else a guess from the model's size), the work shared among them."""
    backend, model = engine or (settings.backend, settings.model)
    servers = replace(settings, backend=backend).servers() if backend != "extractive" else ()
    if not servers:
        return Estimator(speed_offline(store.speeds, backend, model), settings.policy, settings.summary_format)
    keys = dict.fromkeys((s.backend, _server_key(s)) for s in servers)
    hosts = [HostSpeed(key, speed_offline(store.speeds, kind, model, key), settings.parallel) for kind, key in keys]
    return Estimator.shared(hosts, settings.policy, settings.summary_format)


def _server_key(server: Server) -> str:
    """The URL a server's speeds are kept under: what its backend's ``host`` will be."""
    if server.backend == "ollama":
        from ..summarize.ollama_backend import normalize_host

        return normalize_host(server.url)
    return server.url


async def model_speed(store: Store, settings: Settings, tokenizer: Tokenizer, *, probe: bool = True
                      ) -> tuple[Speed, str | None]:
    """The speed every estimate of a job with ``settings`` starts from on its first host, and the
    model it is of (:func:`host_speeds`' first)."""
    speeds = await host_speeds(store, settings, tokenizer, probe=probe)
    return speeds.hosts[0].speed, speeds.model


@dataclass(frozen=True)
class HostSpeeds:
    """What :func:`host_speeds` found: the hosts the work is shared among, the model, and what to
    tell a user of the hosts that could not be asked, a line each: every one left out while another
    answered, else the first one's trouble (the times then a guess)."""

    hosts: list[HostSpeed]
    model: str | None
    warnings: list[str]


async def host_speeds(store: Store, settings: Settings, tokenizer: Tokenizer, *, probe: bool = True
                      ) -> HostSpeeds:
    """The speed of the model on each host a job with ``settings`` would share its work among
    (:meth:`Estimator.shared`), and the model: what earlier runs measured on that host (else
    without a host); else (``probe``) one short measuring call, kept as a measurement when the
    file is writable; else — the server out of reach — a guess from the model's size. With
    several hosts (and ``probe``) each is checked, and those out of reach are left out while
    another answers (the job leaves them out too); one host is asked only when its speed is unknown."""
    if settings.backend == "extractive":
        return HostSpeeds([HostSpeed("", Speed.none())], None, [])
    servers = settings.servers()
    several = probe and len(servers) > 1
    got = await asyncio.gather(*(_host_speed(store, settings, tokenizer, s, probe, several) for s in servers))
    live = [g for g in got if g[2] is None]
    if live:
        warnings = [f"host {key} left out: {problem}" for _, _, problem, key in got if problem is not None]
    else:
        live, warnings = list(got), [f"{got[0][2]} — the times are a guess from the model's size"]
    hosts = [HostSpeed(key, speed, settings.parallel) for speed, _, _, key in live]
    return HostSpeeds(hosts, live[0][1], warnings)


def _check_failed(exc: Exception, host: str, timeout: float) -> str:
    """One line for a host whose check failed: our error's own words, else what went wrong."""
    if isinstance(exc, SummariserError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return f"the server at {host} did not answer within {timeout:g} s"
    return f"the server at {host} could not be asked ({type(exc).__name__}: {exc})"


async def _host_speed(store: Store, settings: Settings, tokenizer: Tokenizer, host: Server, probe: bool,
                      check: bool) -> tuple[Speed, str | None, str | None, str]:
    """(speed, model, why the server could not be asked — None when it answered or was not
    asked —, host key) of one host (see :func:`host_speeds`); ``check``: ask the server even when
    its speed is known (is it live?)."""
    backend = make_backend(settings, tokenizer, host)
    key = host_key(backend) or host.url
    try:
        known = known_speed(store.speeds, backend.name, settings.model, key)
        if (known is not None and not check) or not probe:
            return known or Speed.guess(settings.model), settings.model, None, key
        timeout = min(15.0, settings.timeout_s)
        try:
            await asyncio.wait_for(backend.check(), timeout=timeout)
        except Exception as exc:  # unreachable, the wrong server or key, no such model, no answer in time: a guess
            return Speed.guess(settings.model), settings.model, one_line(_check_failed(exc, key, timeout), 400), key
        model = backend.model
        known = known_speed(store.speeds, backend.name, model, key)
        if known is not None:
            return known, model, None, key
        probed = await measure(backend)
        if probed is None:
            return Speed.guess(model), model, None, key
        if not store.readonly:
            store.speeds.add(backend.name, model, probed, key)
        return Speed.of(probed, "probe"), model, None, key
    finally:
        await backend.aclose()
