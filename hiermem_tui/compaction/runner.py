"""Does the compaction the planner says is due: runs, progress events, cancellation.

One :class:`Runner` serves one job (a CLI invocation, one TUI action). Everything runs on
one asyncio loop; model calls may overlap (``parallel``) but store writes happen between
awaits on the loop's thread, so they are serialised without locks. Each summary is one
``write_summaries`` transaction (summary, edges, run counters), so whatever a cancel, a
failure or a kill interrupts, what was committed is consistent and kept.

Job outcomes, by design:

* backend not ready (``BackendUnavailable`` / ``ModelMissing`` from ``check()``): raised
  before any run is recorded — nothing is written;
* ``CancelToken.cancel()``: in-flight model calls are aborted, the run is ``cancelled``;
* any error during a run: the run is ``failed`` with a one-line ``error``; when it is the
  server going away (``RunAborted``), the job also starts no further sessions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Literal

from ..config import Policy
from ..store import NewSummary, Run, Store, StoreError, Summary, SummaryWrite, new_id
from ..summarize import (
    BackendUnavailable,
    ModelMissing,
    RunAborted,
    Summariser,
    SummariserError,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
)
from ..summarize.prompts import num_predict_for
from ..summarize.fidelity import MAX_STORED
from ..summarize.speed import ModelSpeed
from ..summarize.summariser import CONTEXT_SLACK, PROMPT_MARGIN, SOURCE_FRACTION
from . import planner
from .remake import RemakeMixin
from .requests import condensed_request, leaf_request, summary_item
from .state import RunRefused, RunState, Cancelled
from .events import (
    CancelToken,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
)

PROGRESS_EVERY_S = 0.25
"""A streaming answer reports its tokens at most this often (each report repaints a footer)."""
PassKind = Literal["leaf", "condense", "full"]
_TOKENS_SQL = (
    "SELECT seq, CASE WHEN tokens IS NULL THEN length(content) / 4 ELSE tokens END "
    "FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq"
)
LEAF_PROMPT_OVERHEAD = 400
"""Tokens a leaf prompt adds around its chunk (instructions, the clipped prior summary, role
prefixes): what a small model's context must hold besides the episodes."""
MIN_CHUNK_TOKENS = 256


def _server_gone(exc: BaseException) -> bool:
    leaves = _flatten(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return any(isinstance(e, (RunAborted, BackendUnavailable, ModelMissing)) for e in leaves)


def _flatten(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_flatten(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


class Runner(RemakeMixin):
    """Leaf, condensation and full passes, and re-summarising, over one Store.

    ``summariser.backend`` is checked once before the first run; the caller owns the
    backend and closes it (``await backend.aclose()``). ``on_event`` is called on the
    loop's thread with small immutable events; ``cancel`` may be fired from any thread.
    """

    def __init__(
        self,
        store: Store,
        summariser: Summariser,
        policy: Policy,
        *,
        parallel: int = 1,
        on_event: Callable[[RunEvent], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        self.store = store
        self.summariser = summariser
        self.policy = policy
        self.parallel = max(1, int(parallel))
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self._checked = False
        self._check_error: SummariserError | None = None
        self._stop_job = False
        self._limits: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._speed_saved: ModelSpeed | None = None

    # ------------------------------------------------------------------ public API
    async def check(self) -> None:
        """Fail fast: raises BackendUnavailable / ModelMissing with a one-line message.

        Called before the first run is recorded; the answer (success or the error) is kept
        for the life of this Runner, so concurrent sessions do not each probe the server.
        """
        if self._checked:
            return
        if self._check_error is not None:
            raise self._check_error
        try:
            await self.summariser.backend.check()
        except SummariserError as exc:
            self._check_error = exc
            self._stop_job = True
            raise
        self._checked = True
        self._seed_speed()
        self._fit_chunks_to_context()

    def _fit_chunks_to_context(self) -> None:
        """Shrink the leaf chunk budget when the model's context cannot hold a full chunk, its
        prompt and its answer (a small model with a 2k context, say): every prompt must fit."""
        limit = getattr(self.summariser.backend, "context_limit", None)
        if not limit:
            return
        answer = num_predict_for(self.policy.leaf_target_tokens, sections=self.summariser.use_sections)
        answer += self.summariser.thinking_headroom()
        fits = int((limit - answer - CONTEXT_SLACK) / PROMPT_MARGIN) - LEAF_PROMPT_OVERHEAD
        if fits < self.policy.leaf_chunk_tokens:
            self.policy = replace(self.policy, leaf_chunk_tokens=max(MIN_CHUNK_TOKENS, fits))

    async def _ready(self, plan: Callable[[], tuple[list[planner.LeafChunk], int]]) -> tuple[list[planner.LeafChunk], int]:
        """Check the backend, then plan (again: the check may have shrunk the chunk budget)."""
        await self.check()
        return plan()

    async def compact(self, session_id: str, pass_: PassKind = "full", *, skip_idle: bool = False) -> Run | None:
        """One pass over one session. ``skip_idle``: record no run when nothing is eligible (returns None).

        The backend is checked only when a run is about to be recorded."""
        if self.store.get_session(session_id) is None:
            raise RunRefused(f"no session {session_id} in this database")
        if pass_ not in ("leaf", "condense", "full"):
            raise RunRefused(f"unknown pass {pass_!r}: choose leaf, condense or full")

        def plan() -> tuple[list[planner.LeafChunk], int]:
            if pass_ == "condense":
                return [], planner.count_condensations(self.store.spans(session_id), self.policy.condense_fanout)
            chunks = self.plan_leaf(session_id)
            if pass_ == "leaf":
                return chunks, len(chunks)
            return chunks, planner.count_full(self.store.spans(session_id), chunks, self.policy.condense_fanout)

        chunks, planned = plan()
        if planned == 0 and skip_idle:
            return None
        chunks, planned = await self._ready(plan)

        async def body(st: RunState) -> None:
            await self._leaves(st, chunks)
            if pass_ != "leaf":
                await self._condense(st)

        return await self._execute(session_id, pass_, None, planned, body, [c.tokens for c in chunks])

    async def compact_many(
        self, session_ids: Iterable[str], pass_: PassKind = "full", *, skip_idle: bool = False
    ) -> list[Run]:
        """Compact sessions, up to ``parallel`` at once; runs are returned in input order.

        After a cancel, or a run failing because the server went away, no further session starts.
        A failed backend check is raised as itself (not as an exception group).
        """
        self._stop_job = self._check_error is not None
        it = iter(enumerate(session_ids))
        out: list[tuple[int, Run]] = []

        async def worker() -> None:
            for i, sid in it:  # one shared iterator: workers take the next session in turn
                if self.cancel.cancelled or self._stop_job:
                    return
                run = await self.compact(sid, pass_, skip_idle=skip_idle)
                if run is not None:
                    out.append((i, run))

        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(self.parallel):
                    tg.create_task(worker())
        except BaseExceptionGroup as group:
            leaves = _flatten(group)
            raise leaves[0] from None
        return [run for _, run in sorted(out, key=lambda p: p[0])]

    def plan_leaf(self, session_id: str) -> list[planner.LeafChunk]:
        """The leaf chunks due now, read as ``(seq, tokens)`` only (no episode text)."""
        session = self.store.get_session(session_id)
        if session is None:
            return []
        return self._chunks(session_id, self.store.unsummarised_ranges(session_id), session.episodes)

    def plan_session_leaves(self, session_id: str) -> list[planner.LeafChunk]:
        """The leaf chunks a whole-session re-summarise would make (every episode outside
        the fresh tail, ignoring the current summaries)."""
        session = self.store.get_session(session_id)
        if session is None or not session.episodes:
            return []
        return self._chunks(session_id, [(0, session.episodes - 1)], session.episodes)

    # ------------------------------------------------------------------ planning helpers
    def _chunks(self, session_id: str, gaps: Sequence[tuple[int, int]], episodes: int) -> list[planner.LeafChunk]:
        conn = self.store.conn
        ranges = planner.eligible_ranges(gaps, episodes, self.policy.fresh_tail)
        rows = ((r, conn.execute(_TOKENS_SQL, (session_id, r.first_seq, r.last_seq))) for r in ranges)
        return planner.plan_leaf_chunks(rows, self.policy)

    # ------------------------------------------------------------------ run lifecycle
    def _emit(self, event: RunEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _estimate(self, planned: int, source_tokens: Sequence[int]) -> float | None:
        """Model seconds for ``planned`` summaries, from the model's measured speed: the known
        inputs (``source_tokens``, the leaves) as they are, the rest as condensations of a full
        condensed target. None while the model has never been measured."""
        speed = getattr(self.summariser.backend, "speed", None)
        if not isinstance(speed, ModelSpeed) or not speed.measured:
            return None
        fraction = SOURCE_FRACTION
        known = sum(speed.expected_seconds(t + LEAF_PROMPT_OVERHEAD, min(self.policy.leaf_target_tokens, t // fraction))
                    for t in source_tokens)
        rest = max(0, planned - len(source_tokens))
        condensed = self.policy.condensed_target_tokens
        return known + rest * speed.expected_seconds(condensed * 2 + LEAF_PROMPT_OVERHEAD, condensed // 2)

    async def _execute(
        self, session_id: str, kind: str, target: str | None, planned: int,
        body: Callable[[RunState], Awaitable[None]], est_source_tokens: Sequence[int] = (),
    ) -> Run:
        backend = self.summariser.backend
        run = self.store.start_run(session_id, kind, backend.name, backend.model, target, planned=planned)
        st = RunState(run=run, planned=planned, started=time.monotonic())
        self._emit(RunStarted(run.id, session_id, kind, planned, backend.name, backend.model,
                              self._estimate(planned, est_source_tokens)))
        status, error = "done", None
        try:
            await body(st)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            self._finish(st, "cancelled", "the job was cancelled")
            raise
        except BaseException as exc:  # noqa: BLE001 - classified into a run status below
            status, error = self._classify(exc)
            if _server_gone(exc):
                self._stop_job = True  # other sessions would only fail the same way
        return self._finish(st, status, error)

    def _seed_speed(self) -> None:
        """The backend starts from what earlier runs measured of this model (once per Runner)."""
        backend = self.summariser.backend
        speed = getattr(backend, "speed", None)
        if not isinstance(speed, ModelSpeed) or self._speed_saved is not None:
            return
        known = self.store.model_speed(backend.name, backend.model)
        backend.speed = known.merged(speed)  # type: ignore[attr-defined]
        self._speed_saved = replace(backend.speed)  # type: ignore[attr-defined]

    def _save_speed(self) -> None:
        backend = self.summariser.backend
        speed = getattr(backend, "speed", None)
        if not isinstance(speed, ModelSpeed) or self._speed_saved is None:
            return
        try:
            self.store.add_model_speed(backend.name, backend.model, speed.minus(self._speed_saved))
        except StoreError:
            return  # a measurement is not worth failing a run for
        self._speed_saved = replace(speed)

    def _finish(self, st: RunState, status: str, error: str | None) -> Run:
        self._save_speed()
        run = self.store.finish_run(st.run.id, status, wall_seconds=time.monotonic() - st.started, error=error)
        self._emit(RunFinished(run.id, run.session_id, status, run, error))
        return run

    def _classify(self, exc: BaseException) -> tuple[str, str | None]:
        """(status, error) for what ended a run; a failure wins over a cancel in a group."""
        if isinstance(exc, BaseExceptionGroup):
            parts = [self._classify(e) for e in exc.exceptions]
            failed = [p for p in parts if p[0] == "failed"]
            return failed[0] if failed else parts[0]
        if isinstance(exc, Cancelled):
            return "cancelled", None
        if isinstance(exc, (SummariserError, StoreError)):
            return "failed", str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return "failed", f"unexpected error: {type(exc).__name__}: {exc}".splitlines()[0]

    # ------------------------------------------------------------------ making summaries
    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._limits is None or self._limits[0] is not loop:
            self._limits = (loop, asyncio.Semaphore(self.parallel))
        return self._limits[1]

    def _check_cancel(self) -> None:
        if self.cancel.cancelled:
            raise Cancelled()

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        async with self._semaphore():
            self._check_cancel()
            yield

    async def _summarise(self, st: RunState, what: str, request: SummaryRequest) -> SummaryResult:
        """Run summarise() as its own task so the CancelToken can abort the HTTP call."""
        sid = st.run.session_id

        last = [0.0, ""]  # when the last progress event went out, and its phase

        def forward(ev: SummaryEvent) -> None:
            if ev.kind != "progress":
                self._emit(SummaryAttempt(st.run.id, sid, what, ev.tier, ev.attempt, ev.kind == "retry", ev.message))
                return
            now = time.monotonic()
            if now - float(last[0]) < PROGRESS_EVERY_S and ev.phase == last[1]:
                return  # a phase change always goes out; tokens at most every PROGRESS_EVERY_S
            last[0], last[1] = now, ev.phase
            self._emit(SummaryProgress(st.run.id, sid, what, ev.tier, ev.attempt, ev.phase, ev.chunks,
                                       ev.thinking_tokens, ev.tokens_per_s, ev.left_s))

        task = asyncio.ensure_future(self.summariser.summarise(request, on_event=forward))
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

    def _started(self, st: RunState, what: str, depth: int, first: int, last: int) -> None:
        st.planned = max(st.planned, st.done + 1)
        self._emit(SummaryStarted(st.run.id, st.run.session_id, what, depth, first, last, st.planned))

    def _new(self, st: RunState, depth: int, res: SummaryResult) -> NewSummary:
        st.out_tokens += res.output_tokens
        st.llm_seconds += res.llm_seconds
        fid = res.fidelity
        return NewSummary(
            id=new_id("s"), session_id=st.run.session_id, depth=depth, tier=res.tier, backend=res.backend,
            model=res.model, prompt_version=res.prompt_version, content=res.text, tokens=res.tokens,
            input_tokens=res.input_tokens, output_tokens=res.output_tokens, duration_s=res.duration_s,
            llm_seconds=res.llm_seconds, run_id=st.run.id,
            fid_identifiers=fid.identifiers if fid else None, fid_kept=fid.kept if fid else None,
            fid_lost=fid.lost[:MAX_STORED] if fid else (), fid_novel=fid.novel[:MAX_STORED] if fid else (),
            fid_added=bool(res.keywords), fid_pins_missing=res.pins_missing,
            rejections=[r.as_dict() for r in res.rejections],
            keywords=res.keywords, trimmed=res.trimmed,
            fid_key=fid.key if fid else None, fid_key_kept=fid.key_kept if fid else None,
        )

    def _written(self, st: RunState, rows: Sequence[Summary]) -> None:
        for s in rows:
            st.done += 1
            st.tiers = st.tiers.add(s.tier)
            st.planned = max(st.planned, st.done)
            rate = st.out_tokens / st.llm_seconds if st.llm_seconds > 0 else None
            self._emit(SummaryWritten(st.run.id, s.session_id, s, st.tiers, st.done, st.planned, rate))

    async def _leaves(self, st: RunState, chunks: Sequence[planner.LeafChunk]) -> None:
        """Leaves strictly in order: each one gets the previous leaf's text as context."""
        sid = st.run.session_id
        for chunk in chunks:
            async with self._slot():
                what = chunk.label()
                self._started(st, what, 0, chunk.first_seq, chunk.last_seq)
                req = leaf_request(self.store, sid, chunk.first_seq, chunk.last_seq, self.policy.leaf_target_tokens)
                res = await self._summarise(st, what, req)
                ns = self._new(st, 0, res)
                self._written(st, self.store.write_summaries(
                    [SummaryWrite(ns, episode_range=(chunk.first_seq, chunk.last_seq))]
                ))

    async def _condense_one(self, st: RunState, group: planner.CondenseGroup) -> None:
        async with self._slot():
            what = group.label()
            self._started(st, what, group.depth, group.first_seq, group.last_seq)
            sources = [self.store.get_summary(i) for i in group.source_ids]
            items = [summary_item(s) for s in sources if s is not None]
            req = condensed_request(self.store, st.run.session_id, group.depth, items, group.first_seq,
                                    group.last_seq, self.policy.condensed_target_tokens)
            res = await self._summarise(st, what, req)
            ns = self._new(st, group.depth, res)
            self._written(st, self.store.write_summaries([SummaryWrite(ns, source_ids=list(group.source_ids))]))

    async def _condense(self, st: RunState) -> None:
        """Shallowest depth first, re-planned from the store after every round."""
        sid = st.run.session_id
        while True:
            self._check_cancel()
            groups = planner.plan_condense(self.store.spans(sid), self.policy.condense_fanout)
            if not groups:
                return
            if self.parallel == 1 or len(groups) == 1:
                for g in groups:
                    await self._condense_one(st, g)
            else:
                async with asyncio.TaskGroup() as tg:
                    for g in groups:
                        tg.create_task(self._condense_one(st, g))
