"""Making summaries inside a run: the one piece the passes and the re-making share.

An :class:`Executor` holds what a job needs to talk to the model and the store — the
summariser, the policy, the cancel token, the event callback, the concurrency limit — and
does the two things every kind of run does: record a run and finish it whatever happens
(:meth:`execute`), and make and write summaries. :meth:`make` is the one path a summary is made
by — a slot, the started event, the request built from the store (``requests.py``), the
summariser's calls as their own task so the cancel token can abort the model call, the row with its
fidelity — and :meth:`commit` the one that writes what was made and counts it on the run;
:meth:`make_in_turn` makes and commits summaries whose requests do not depend on each other along the same
path, the next one's calls begun as soon as the calls of the one before are over. The
passes (:class:`~.passes.Passes`) and the re-making (:class:`~.remake.Remaker`) say *what* to
make; this says *how*.

Job outcomes, by design:

* backend not ready (``BackendUnavailable`` / ``ModelMissing`` from :meth:`check`): raised
  before any run is recorded — nothing is written;
* ``CancelToken.cancel()``: in-flight model calls are aborted, the run is ``cancelled``;
  ``CancelToken.finish_current(reason)``: the summary in flight is finished and kept, and the run
  is ``budget`` or ``paused`` (the token's reason, also when a ``cancel()`` follows);
* a backlog's gate moving the session behind another (``priority.Yielded``): the run is ``moved``;
* any error during a run: the run is ``failed`` with a one-line ``error``; when it is the
  server going away (``RunAborted``), the job also starts no further sessions.

With several hosts (``hosts.py``: Ollama or OpenAI-compatible servers) each has its own ``parallel`` slots; :meth:`check`
checks each and leaves out one that is not ready (a :class:`~.events.HostNotice`), failing as
one host does only when none is; a host that goes away mid-call has that summary made again on
another (a :class:`~.events.HostNotice` says where), and the job fails only with the last.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TypeVar

from ..config import Policy
from ..store import NewSummary, Run, Store, StoreError, Summary, SummaryWrite, new_id
from ..summarize import (
    Answered,
    BackendUnavailable,
    ModelMissing,
    RunAborted,
    Summariser,
    SummariserError,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
)
from ..summarize.local_host import is_local, start_advice
from ..summarize.stream import InFlight
from ..summarize.types import SourceItem
from ..textsafe import one_line
from ..summarize.prompts import num_predict_for
from ..summarize.speed import ModelSpeed
from ..summarize.summariser import CONTEXT_SLACK, PROMPT_MARGIN, SOURCE_FRACTION
from .events import (
    BriefWritten,
    CancelToken,
    HostNotice,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
)
from .hosts import Host, HostPool
from .priority import BacklogControl, Yielded
from .requests import BriefReading, brief_material, condensed_request, leaf_prior, leaf_request
from .state import Cancelled, RunState

_T = TypeVar("_T")

PREPARE_AFTER_S = 0.005
"""How long after a summary's call starts the next summary's request is worked out (its request is on the wire
by then: the work ahead must not delay it)."""
PROGRESS_EVERY_S = 0.25
"""A streaming answer reports its tokens at most this often (each report repaints a footer)."""
LEAF_PROMPT_OVERHEAD = 400
"""Tokens a leaf prompt adds around its chunk (instructions, the clipped prior summary, role
prefixes): what a small model's context must hold besides the episodes."""
MIN_CHUNK_TOKENS = 256


@dataclass(frozen=True, slots=True)
class Making:
    """One summary to make: a leaf over episodes ``first_seq..last_seq`` (``sources`` None) or a
    condensed summary of ``depth`` over ``sources`` (``(id, item)`` in coverage order: the item is
    what the model is given of that source), replacing the active summaries ``supersede``."""

    what: str
    """How events name it ("leaf #0–23")."""
    depth: int
    first_seq: int
    last_seq: int
    sources: Sequence[tuple[str, SourceItem]] | None = None
    supersede: Sequence[str] = ()


def moved_text(gone: str, to: str, what: str, session_id: str, exc: SummariserError, kind: str = "ollama") -> str:
    """The one line for a host lost mid-call: the host, what happened to the connection, the
    summary and where it is made again; starting the server (``ollama serve`` for an Ollama host,
    ``kind``) advised only for a host on this machine."""
    unavailable = exc.unavailable if isinstance(exc, RunAborted) else exc
    reason = getattr(unavailable, "reason", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    advice = f"; {start_advice(gone, kind)}" if is_local(gone) else ""
    return (f"host {gone} went away mid-call ({reason}): {what} of session {one_line(session_id, 80)} is being made "
            f"again on host {to}, and {gone} gets no more work in this job{advice}")


def server_gone(exc: BaseException) -> bool:
    """The server went away (or the model did): other sessions of the job would fail the same way."""
    leaves = flatten(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return any(isinstance(e, (RunAborted, BackendUnavailable, ModelMissing)) for e in leaves)


def flatten(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(flatten(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def host_key(backend: object) -> str | None:
    """The host a backend's speeds are kept under (``model_speed``): its server's URL; None: none."""
    return getattr(backend, "host", None) or None


class Executor:
    """Runs and summaries for one job (see the module docstring). ``on_event`` is called on the
    loop's thread with small immutable events; ``cancel`` may be fired from any thread."""

    def __init__(
        self,
        store: Store,
        summariser: Summariser,
        policy: Policy,
        *,
        parallel: int = 1,
        on_event: Callable[[RunEvent], None] | None = None,
        cancel: CancelToken | None = None,
        more_hosts: Sequence[Summariser] = (),
    ) -> None:
        self.store = store
        self.policy = policy
        self.hosts = HostPool([summariser, *more_hosts], max(1, int(parallel)))
        """The servers this job's summaries are made on (one, unless several hosts were given)."""
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self.stop_job = False
        """Set when the server went away: a job starts no further sessions."""
        self._checked = False
        self._check_error: SummariserError | None = None
        self._speed_saved: dict[int, ModelSpeed] = {}
        self._checking: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self.gate: BacklogControl | None = None
        """A backlog run's gate (``priority.py``): each summary waits at it before its call."""

    @property
    def summariser(self) -> Summariser:
        """The first live host's summariser: what names the backend and model of a run."""
        live = self.hosts.live()
        return (live[0] if live else self.hosts.hosts[0]).summariser

    @property
    def parallel(self) -> int:
        """Summaries made at once: ``parallel`` on each live host."""
        return self.hosts.slots

    @property
    def prompts_show_prior(self) -> bool:
        """Some live host's leaf prompts show the previous leaf's text (``Summariser.shows_prior``)."""
        return any(h.summariser.shows_prior for h in self.hosts.live())

    def backends(self) -> list[object]:
        return [h.summariser.backend for h in self.hosts.hosts]

    async def aclose(self) -> None:
        """Close every host's backend."""
        for h in self.hosts.hosts:
            await h.summariser.backend.aclose()

    @property
    def check_failed(self) -> bool:
        return self._check_error is not None

    # ------------------------------------------------------------------ the backend
    async def check(self) -> None:
        """Fail fast: raises BackendUnavailable / ModelMissing with a one-line message.

        Called before the first run is recorded; the answer (success or the error) is kept
        for the life of this Executor, so concurrent sessions do not each probe the server (they
        wait for the one check in progress: a host is left out once).
        """
        async with self._check_lock():
            if self._checked:
                return
            if self._check_error is not None:
                raise self._check_error
            try:
                await self._check_hosts()
            except SummariserError as exc:
                self._check_error = exc
                self.stop_job = True
                raise
            self._checked = True
            self._seed_speed()
            self._fit_chunks_to_context()

    def _check_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._checking is None or self._checking[0] is not loop:
            self._checking = (loop, asyncio.Lock())
        return self._checking[1]

    async def _check_hosts(self) -> None:
        """Each host's check at once; one not ready is left out with a notice. One host, or
        none ready: the (first) host's error, as a job on one server raises it."""
        hosts = self.hosts.hosts
        if len(hosts) == 1:
            await hosts[0].summariser.backend.check()
            return
        got = await asyncio.gather(*(h.summariser.backend.check() for h in hosts), return_exceptions=True)
        failed = [(h, e) for h, e in zip(hosts, got, strict=True) if isinstance(e, BaseException)]
        for _, e in failed:
            if not isinstance(e, SummariserError):
                raise e
        if len(failed) == len(hosts):
            raise failed[0][1]
        for h, e in failed:
            self.hosts.leave_out(h, e)  # type: ignore[arg-type]  # a SummariserError (checked above)
            self.emit(HostNotice(h.name, f"host {h.name} left out: {str(e).splitlines()[0]}"))

    def _fit_chunks_to_context(self) -> None:
        """Shrink the leaf chunk budget when the model's context cannot hold a full chunk, its
        prompt and its answer (a small model with a 2k context, say): every prompt must fit, on
        every host (the smallest context of them)."""
        for host in self.hosts.live():
            self._fit_to(host.summariser)

    def _fit_to(self, summariser: Summariser) -> None:
        limit = getattr(summariser.backend, "context_limit", None)
        if not limit:
            return
        answer = num_predict_for(self.policy.leaf_target_tokens, sections=summariser.use_sections)
        answer += summariser.thinking_headroom()
        fits = int((limit - answer - CONTEXT_SLACK) / PROMPT_MARGIN) - LEAF_PROMPT_OVERHEAD
        if fits < self.policy.leaf_chunk_tokens:
            self.policy = replace(self.policy, leaf_chunk_tokens=max(MIN_CHUNK_TOKENS, fits))

    def _speed(self, summariser: Summariser | None = None) -> ModelSpeed | None:
        speed = getattr((summariser or self.summariser).backend, "speed", None)
        return speed if isinstance(speed, ModelSpeed) else None

    def _seed_speed(self) -> None:
        """Each host's backend starts from what earlier runs measured of this model on that host
        (else without a host: ``store.speeds``), once per Executor."""
        for i, host in enumerate(self.hosts.hosts):
            backend = host.summariser.backend
            speed = self._speed(host.summariser)
            if not host.alive or speed is None or i in self._speed_saved:
                continue
            merged = self.store.speeds.get(backend.name, backend.model, host_key(backend)).merged(speed)
            backend.speed = merged  # type: ignore[attr-defined]  # a model backend has one (checked above)
            self._speed_saved[i] = replace(merged)

    def _save_speed(self) -> None:
        for i, host in enumerate(self.hosts.hosts):  # a host lost mid-run keeps what it measured
            backend = host.summariser.backend
            speed = self._speed(host.summariser)
            saved = self._speed_saved.get(i)
            if speed is None or saved is None:
                continue
            now = speed.settled()  # a first call still held counts as it came (the next call may judge it)
            try:
                self.store.speeds.add(backend.name, backend.model, now.minus(saved), host_key(backend))
            except StoreError:
                return  # a measurement is not worth failing a run for
            self._speed_saved[i] = now

    # ------------------------------------------------------------------ a run
    def emit(self, event: RunEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def estimate(self, planned: int, source_tokens: Sequence[int]) -> float | None:
        """Model seconds for ``planned`` summaries, from the model's measured speed: the known
        inputs (``source_tokens``, the leaves) as they are, the rest as condensations of a full
        condensed target. None while the model has never been measured."""
        speed = self._speed()
        if speed is None or not speed.measured:
            return None
        known = sum(speed.expected_seconds(t + LEAF_PROMPT_OVERHEAD,
                                           min(self.policy.leaf_target_tokens, t // SOURCE_FRACTION))
                    for t in source_tokens)
        rest = max(0, planned - len(source_tokens))
        condensed = self.policy.condensed_target_tokens
        return known + rest * speed.expected_seconds(condensed * 2 + LEAF_PROMPT_OVERHEAD, condensed // 2)

    async def execute(
        self, session_id: str, kind: str, target: str | None, planned: int,
        body: Callable[[RunState], Awaitable[None]], est_source_tokens: Sequence[int] = (),
    ) -> Run:
        """Record a run, do ``body``, and finish the run whatever happened (see the module docstring)."""
        backend = self.summariser.backend
        run = self.store.runs.start(session_id, kind, backend.name, backend.model, target, planned=planned)
        st = RunState(run=run, planned=planned, started=time.monotonic())
        self.emit(RunStarted(run.id, session_id, kind, planned, backend.name, backend.model,
                             self.estimate(planned, est_source_tokens)))
        status, error = "done", None
        try:
            await body(st)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            self._finish(st, "cancelled", "the job was cancelled")
            raise
        except BaseException as exc:  # classified into a run status below
            status, error = self._classify(exc)
            if server_gone(exc):
                self.stop_job = True  # other sessions would only fail the same way
        return self._finish(st, status, error)

    def _finish(self, st: RunState, status: str, error: str | None) -> Run:
        self.drop_ahead(st)
        self._save_speed()
        run = self.store.runs.finish(st.run.id, status, wall_seconds=time.monotonic() - st.started, error=error)
        self.emit(RunFinished(run.id, run.session_id, status, run, error))
        return run

    def _classify(self, exc: BaseException) -> tuple[str, str | None]:
        """(status, error) for what ended a run; a failure wins over a cancel in a group."""
        if isinstance(exc, BaseExceptionGroup):
            parts = [self._classify(e) for e in exc.exceptions]
            failed = [p for p in parts if p[0] == "failed"]
            return failed[0] if failed else parts[0]
        if isinstance(exc, Yielded):
            return "moved", str(exc)
        if isinstance(exc, Cancelled):
            return self.cancel.reason or "cancelled", None
        if isinstance(exc, (SummariserError, StoreError)):
            return "failed", str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return "failed", f"unexpected error: {type(exc).__name__}: {exc}".splitlines()[0]

    # ------------------------------------------------------------------ one summary
    def check_cancel(self) -> None:
        if self.cancel.cancelled:
            raise Cancelled()

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[Host]:
        """One of the ``parallel`` places a summary may be made in, on the first host free."""
        host = await self.hosts.take()
        began, made = time.monotonic(), False
        try:
            self.check_cancel()
            yield host
            made = True
        finally:
            await self.hosts.give_back(host, time.monotonic() - began if made else None)

    async def _summarise(self, st: RunState, what: str, request: SummaryRequest, summariser: Summariser,
                         then: Making | None = None, written: Callable[[], None] | None = None) -> Answered:
        """Run the summariser's calls (``Summariser.answer``) as their own task so the CancelToken can abort the
        HTTP call (the task is let go when they are over: what is left is kept whatever is cancelled); ``then``'s
        request is worked out while they run (:meth:`ahead`); ``written`` is called once the first call's request
        is on the wire."""
        sid = st.run.session_id
        sent_at, sent_phase = 0.0, ""  # when the last progress event went out, and its phase

        def forward(ev: SummaryEvent) -> None:
            nonlocal sent_at, sent_phase
            if ev.kind != "progress":
                self.emit(SummaryAttempt(st.run.id, sid, what, ev.tier, ev.attempt, ev.kind == "retry", ev.message,
                                         ev.part, ev.parts))
                return
            now = time.monotonic()
            if now - sent_at < PROGRESS_EVERY_S and ev.phase == sent_phase:
                return  # a phase change always goes out; tokens at most every PROGRESS_EVERY_S
            sent_at, sent_phase = now, ev.phase
            self.emit(SummaryProgress(st.run.id, sid, what, ev.tier, ev.attempt, ev.phase, ev.chunks,
                                      ev.thinking_tokens, ev.tokens_per_s, ev.left_s))

        calls = getattr(summariser.backend, "calls", None)
        if written is not None and isinstance(calls, InFlight):
            calls.when_written(written)
        task = asyncio.ensure_future(summariser.answer(request, on_event=forward))
        if then is not None:
            self.ahead(st, then, summariser)
        elif st.brief is not None and not st.brief.done:
            self.drop_ahead(st)
            st.ahead = asyncio.ensure_future(self._brief_ahead(st.brief))
        self.cancel.attach(task)
        try:
            return await task
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if (me is None or not me.cancelling()) and self.cancel.cancelled:
                raise Cancelled() from None
            raise
        finally:
            self.cancel.detach(task)

    @asynccontextmanager
    async def gated(self, st: RunState) -> AsyncIterator[None]:
        """A summary's call and its commit, behind a backlog's gate when this job has one: it waits
        while interactive work or a pause holds the backlog, and yields to a promoted session."""
        gate = self.gate
        if gate is None or not await gate.enter(st.run.session_id):
            yield
            return
        try:
            yield
        finally:
            gate.leave()

    def _request(self, session_id: str, job: Making) -> SummaryRequest:
        """``job``'s request as the store has it now (``requests.py``)."""
        if job.sources is None:
            return leaf_request(self.store, session_id, job.first_seq, job.last_seq, self.policy.leaf_target_tokens)
        return condensed_request(self.store, session_id, job.depth, [item for _, item in job.sources],
                                 job.first_seq, job.last_seq, self.policy.condensed_target_tokens)

    def ahead(self, st: RunState, job: Making, summariser: Summariser) -> None:
        """Have ``job`` (the summary a pass makes next) read from the store and its first call worked out while the
        model answers the call in flight (``Summariser.prepare``), so its request is ready when that answer ends.
        It only works ahead: ``job`` is made as ever when its turn comes (its request read again then, with what
        the store has by then), whether this finished or not."""
        self.drop_ahead(st)
        st.ahead = asyncio.ensure_future(self._ahead(st.run.session_id, job, summariser))

    async def _ahead(self, session_id: str, job: Making, summariser: Summariser) -> None:
        await asyncio.sleep(PREPARE_AFTER_S)
        try:
            await summariser.prepare(self._request(session_id, job))
        except Exception:  # work ahead only: whatever failed here fails, and is said, when the summary is made
            return

    async def _brief_ahead(self, reading: BriefReading) -> None:
        """The session's brief material read a few episodes at a time while the model answers the pass's last
        calls (what :meth:`make_brief` has not to read then)."""
        await asyncio.sleep(PREPARE_AFTER_S)
        try:
            while reading.step(self.store):
                await asyncio.sleep(0)
        except Exception:  # work ahead only: the brief reads what is left when it is made
            return

    @staticmethod
    def drop_ahead(st: RunState) -> None:
        """Stop working ahead (a summary's turn came, or the run ended)."""
        if st.ahead is not None and not st.ahead.done():
            st.ahead.cancel()
        st.ahead = None

    async def _on_a_host(self, st: RunState, what: str, depth: int, first: int, last: int,
                         call: Callable[[Host], Awaitable[_T]]) -> _T:
        """``call`` on the first host free, said as started; a host lost mid-call, with others left to go to, has
        it made again on another, said as moved."""
        lost: tuple[Host, SummariserError] | None = None
        while True:
            async with self._slot() as host:
                if lost is not None:
                    self._moved(st.run.session_id, what, lost, host)
                self._started(st, what, depth, first, last)
                try:
                    return await call(host)
                except (RunAborted, BackendUnavailable) as exc:
                    if not self.hosts.several or not await self.hosts.lose(host, exc):
                        raise
                    lost = (host, exc)

    async def make(self, st: RunState, job: Making, then: Making | None = None) -> SummaryWrite:
        """Make one summary (see the module docstring): the write for :meth:`commit`, alone or
        with the rest of its tree; ``then``: the summary made next, worked out ahead while this one's call runs."""
        return self._write(st, job, (await self._answer(st, job, then)).finish())

    async def _answer(self, st: RunState, job: Making, then: Making | None = None,
                      written: Callable[[], None] | None = None) -> Answered:
        """``job``'s calls, on the first host free, from its request as the store has it now (see
        :meth:`_summarise`)."""
        sid = st.run.session_id
        self.drop_ahead(st)
        return await self._on_a_host(
            st, job.what, job.depth, job.first_seq, job.last_seq,
            lambda host: self._summarise(st, job.what, self._request(sid, job), host.summariser, then, written))

    def _write(self, st: RunState, job: Making, res: SummaryResult) -> SummaryWrite:
        ns = self._new(st, job.depth, res)
        if job.sources is None:
            return SummaryWrite(ns, episode_range=(job.first_seq, job.last_seq), supersede=list(job.supersede))
        return SummaryWrite(ns, source_ids=[i for i, _ in job.sources], supersede=list(job.supersede))

    async def make_in_turn(self, st: RunState, jobs: Sequence[Making]) -> None:
        """Make and commit ``jobs`` in order, each behind the backlog's gate (:meth:`gated`), the model never
        waiting on the app: a summary's calls begin as soon as the calls of the one before are over, and what is
        left of that one (``Answered.finish``: its text, key lines and fidelity) and its commit are done once the
        new request is on the wire, while the model answers it. The jobs' requests must not depend on each
        other's results (a leaf's finishing reads the leaf before it from the store, committed by then). A job
        that fails or is cancelled ends the run after the summary answered before it is committed."""
        waiting: tuple[Making, Answered, bool] | None = None
        task: asyncio.Future[tuple[Making, Answered, bool]] | None = None
        try:
            for i, job in enumerate(jobs):
                handoff = asyncio.Event()
                task = asyncio.ensure_future(self._turn(st, job, jobs[i + 1] if i + 1 < len(jobs) else None, handoff))
                if waiting is not None:
                    try:
                        await handoff.wait()
                    finally:  # even when the run is cancelled meanwhile: an answer that is in is kept
                        kept, waiting = waiting, None
                        self._keep(st, *kept)
                waiting = await task
                task = None
            if waiting is not None:
                kept, waiting = waiting, None
                self._keep(st, *kept)
        finally:
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _turn(self, st: RunState, job: Making, then: Making | None,
                    handoff: asyncio.Event) -> tuple[Making, Answered, bool]:
        """``job``'s calls behind the gate (the gate left when it is committed, :meth:`_keep`); ``handoff`` is set
        once its first request is on the wire or it made none."""
        entered = False
        try:
            entered = self.gate is not None and await self.gate.enter(st.run.session_id)
            answered = await self._answer(st, job, then, handoff.set)
        except BaseException:
            if entered and self.gate is not None:
                self.gate.leave()
            raise
        finally:
            handoff.set()
        return job, answered, entered

    def _keep(self, st: RunState, job: Making, answered: Answered, entered: bool) -> None:
        """Finish an answered summary and commit it; a leaf is finished with the leaf before it as the store has
        it now."""
        try:
            request = answered.request
            if job.sources is None:
                request = replace(request, prior_summary=leaf_prior(self.store, st.run.session_id, job.first_seq))
            self.commit(st, [self._write(st, job, answered.finish(request))])
        finally:
            if entered and self.gate is not None:
                self.gate.leave()

    async def make_brief(self, st: RunState, last_seq: int) -> None:
        """Make the session's brief (one model call at most, on the first host free) and store it, the brief
        it had superseded; a host lost mid-call has it made again on another, as a summary is."""
        sid = st.run.session_id
        self.drop_ahead(st)
        writes = any(h.summariser.way == "writes" for h in self.hosts.live())
        material = brief_material(self.store, sid, st.brief, summaries=writes)
        st.brief = None
        made = await self._on_a_host(st, "brief", 0, 0, last_seq, lambda host: host.summariser.brief(material))
        st.llm_seconds += made.llm_seconds
        brief = self.store.briefs.write(
            sid, title=made.title, about=made.about, text=made.text, first_seq=max(0, material.first_seq),
            last_seq=last_seq, tier=made.tier, backend=made.backend, model=made.model,
            prompt_version=made.prompt_version, tokens=made.tokens, llm_seconds=made.llm_seconds, run_id=st.run.id)
        self.emit(BriefWritten(st.run.id, sid, brief))

    def commit(self, st: RunState, writes: Sequence[SummaryWrite],
               unchanged: dict[str, str | None] | None = None) -> None:
        """Write what :meth:`make` made in one transaction (``unchanged``: only onto the tree as it
        was planned, ``{id: parent_id}``, see ``Dag.write_unchanged``) and count it on the run."""
        rows = self.store.dag.write(writes) if unchanged is None else self.store.dag.write_unchanged(writes, unchanged)
        self._written(st, rows)

    def _moved(self, session_id: str, what: str, lost: tuple[Host, SummariserError], to: Host) -> None:
        """Say, whole, which host went away mid-call, how, and where its summary went."""
        gone, exc = lost
        text = moved_text(gone.name, to.name, what, session_id, exc, gone.summariser.backend.name)
        self.emit(HostNotice(gone.name, text, moved_to=to.name))

    def _started(self, st: RunState, what: str, depth: int, first: int, last: int) -> None:
        st.planned = max(st.planned, st.done + 1)
        self.emit(SummaryStarted(st.run.id, st.run.session_id, what, depth, first, last, st.planned))

    def _new(self, st: RunState, depth: int, res: SummaryResult) -> NewSummary:
        """The row to write for a result (its counters added to the run's)."""
        st.out_tokens += res.output_tokens
        st.llm_seconds += res.llm_seconds
        return NewSummary(
            id=new_id("s"), session_id=st.run.session_id, depth=depth, tier=res.tier, backend=res.backend,
            model=res.model, prompt_version=res.prompt_version, content=res.text, tokens=res.tokens,
            input_tokens=res.input_tokens, output_tokens=res.output_tokens, duration_s=res.duration_s,
            llm_seconds=res.llm_seconds, run_id=st.run.id,
            fidelity=res.fidelity, fid_added=bool(res.keywords), fid_pins_missing=res.pins_missing,
            rejections=[r.as_dict() for r in res.rejections], keywords=res.keywords, trimmed=res.trimmed,
            flagged=res.fidelity is not None and res.fidelity.low(self.policy.fidelity_threshold),
        )

    def _written(self, st: RunState, rows: Sequence[Summary]) -> None:
        """Count committed summaries on the run and tell the listener."""
        for s in rows:
            st.done += 1
            st.tiers = st.tiers.add(s.tier, s.low_fidelity(self.policy.fidelity_threshold))
            st.planned = max(st.planned, st.done)
            rate = st.out_tokens / st.llm_seconds if st.llm_seconds > 0 else None
            self.emit(SummaryWritten(st.run.id, s.session_id, s, st.tiers, st.done, st.planned, rate))
