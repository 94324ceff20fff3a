"""Leaf, condensation and full passes over sessions: what the planner says is due, made.

One :class:`Runner` serves one job (a CLI invocation, one TUI action). Everything runs on
one asyncio loop; model calls may overlap (``parallel``) but store writes happen between
awaits on the loop's thread, so they are serialised without locks. Each summary is one
``dag.write`` transaction (summary, edges, run counters), so whatever a cancel, a failure or
a kill interrupts, what was committed is consistent and kept.

The runner composes three objects: the :class:`~.planner.Planner` (what is due), the
:class:`~.executor.Executor` (runs and summaries, and the job's outcomes: see its module),
and, for new versions of existing summaries, :attr:`remake` (a :class:`~.remake.Remaker` on
the same executor).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from ..config import Policy
from ..store import Run, Store, SummaryWrite
from ..summarize import Summariser
from . import planner
from .events import CancelToken, RunEvent
from .executor import Executor, flatten
from .remake import Remaker
from .requests import condensed_request, leaf_request, summary_item
from .state import RunRefused, RunState

PassKind = Literal["leaf", "condense", "full"]
__all__ = ["PassKind", "RunRefused", "Runner"]


class Runner:
    """Passes (and, through :attr:`remake`, re-summarising) over one Store.

    ``summariser.backend`` is checked once before the first run; the caller owns the
    backend and closes it (``await runner.summariser.backend.aclose()``). ``on_event`` is
    called on the loop's thread with small immutable events; ``cancel`` may be fired from
    any thread.
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
        self.executor = Executor(store, summariser, policy, parallel=parallel, on_event=on_event, cancel=cancel)
        self.planner = planner.Planner(store, policy)
        self.remake = Remaker(self)
        """New versions of existing summaries: one with its ancestors, a whole session, repairs."""

    @property
    def summariser(self) -> Summariser:
        return self.executor.summariser

    @property
    def policy(self) -> Policy:
        return self.executor.policy

    @property
    def cancel(self) -> CancelToken:
        return self.executor.cancel

    @property
    def on_event(self) -> Callable[[RunEvent], None] | None:
        """Where run events go (may be replaced between runs)."""
        return self.executor.on_event

    @on_event.setter
    def on_event(self, listener: Callable[[RunEvent], None] | None) -> None:
        self.executor.on_event = listener

    @property
    def parallel(self) -> int:
        return self.executor.parallel

    # ------------------------------------------------------------------ public API
    async def check(self) -> None:
        """Fail fast (see :meth:`Executor.check`); plans made afterwards use the policy as the
        checked backend allows (a smaller chunk budget for a small context)."""
        await self.executor.check()
        self.planner.policy = self.executor.policy

    def plan_leaf(self, session_id: str) -> list[planner.LeafChunk]:
        """The leaf chunks due now, read as ``(seq, tokens)`` only (no episode text)."""
        return self.planner.leaf(session_id)

    async def compact(self, session_id: str, pass_: PassKind = "full", *, skip_idle: bool = False) -> Run | None:
        """One pass over one session. ``skip_idle``: record no run when nothing is eligible (returns None).

        The backend is checked only when a run is about to be recorded."""
        if self.store.sessions.get(session_id) is None:
            raise RunRefused(f"no session {session_id} in this database")
        if pass_ not in ("leaf", "condense", "full"):
            raise RunRefused(f"unknown pass {pass_!r}: choose leaf, condense or full")

        def plan() -> tuple[list[planner.LeafChunk], int]:
            if pass_ == "condense":
                return [], self.planner.condensations(session_id)
            chunks = self.plan_leaf(session_id)
            if pass_ == "leaf":
                return chunks, len(chunks)
            return chunks, self.planner.full(session_id, chunks)

        chunks, planned = plan()
        if planned == 0 and skip_idle:
            return None
        await self.check()
        chunks, planned = plan()  # again: the check may have shrunk the chunk budget

        async def body(st: RunState) -> None:
            await self.leaves(st, chunks)
            if pass_ != "leaf":
                await self.condense(st)

        return await self.executor.execute(session_id, pass_, None, planned, body, [c.tokens for c in chunks])

    async def compact_many(
        self, session_ids: Iterable[str], pass_: PassKind = "full", *, skip_idle: bool = False
    ) -> list[Run]:
        """Compact sessions, up to ``parallel`` at once; runs are returned in input order.

        After a cancel, or a run failing because the server went away, no further session starts.
        A failed backend check is raised as itself (not as an exception group).
        """
        ex = self.executor
        ex.stop_job = ex.check_failed
        it = iter(enumerate(session_ids))
        out: list[tuple[int, Run]] = []

        async def worker() -> None:
            for i, sid in it:  # one shared iterator: workers take the next session in turn
                if ex.cancel.cancelled or ex.stop_job:
                    return
                run = await self.compact(sid, pass_, skip_idle=skip_idle)
                if run is not None:
                    out.append((i, run))

        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(ex.parallel):
                    tg.create_task(worker())
        except BaseExceptionGroup as group:
            raise flatten(group)[0] from None
        return [run for _, run in sorted(out, key=lambda p: p[0])]

    # ------------------------------------------------------------------ making summaries
    async def leaves(self, st: RunState, chunks: Sequence[planner.LeafChunk]) -> None:
        """Leaves strictly in order: each one gets the previous leaf's text as context."""
        ex = self.executor
        sid = st.run.session_id
        for chunk in chunks:
            async with ex.slot():
                what = chunk.label()
                ex.started(st, what, 0, chunk.first_seq, chunk.last_seq)
                req = leaf_request(self.store, sid, chunk.first_seq, chunk.last_seq, ex.policy.leaf_target_tokens)
                res = await ex.summarise(st, what, req)
                ns = ex.new(st, 0, res)
                ex.written(st, self.store.dag.write([SummaryWrite(ns, episode_range=(chunk.first_seq, chunk.last_seq))]))

    async def _condense_one(self, st: RunState, group: planner.CondenseGroup) -> None:
        ex = self.executor
        async with ex.slot():
            what = group.label()
            ex.started(st, what, group.depth, group.first_seq, group.last_seq)
            sources = [self.store.dag.get(i) for i in group.source_ids]
            items = [summary_item(s) for s in sources if s is not None]
            req = condensed_request(self.store, st.run.session_id, group.depth, items, group.first_seq,
                                    group.last_seq, ex.policy.condensed_target_tokens)
            res = await ex.summarise(st, what, req)
            ns = ex.new(st, group.depth, res)
            ex.written(st, self.store.dag.write([SummaryWrite(ns, source_ids=list(group.source_ids))]))

    async def condense(self, st: RunState) -> None:
        """Shallowest depth first, re-planned from the store after every round."""
        sid = st.run.session_id
        while True:
            self.executor.check_cancel()
            groups = self.planner.condense_groups(sid)
            if not groups:
                return
            if self.parallel == 1 or len(groups) == 1:
                for g in groups:
                    await self._condense_one(st, g)
            else:
                async with asyncio.TaskGroup() as tg:
                    for g in groups:
                        tg.create_task(self._condense_one(st, g))
