"""Leaf, condensation and full passes over sessions: what the planner says is due, made.

One :class:`Runner` serves one job (a CLI invocation, one TUI action). Everything runs on
one asyncio loop; model calls may overlap (``parallel``) but store writes happen between
awaits on the loop's thread, so they are serialised without locks. Each summary is one
``dag.write`` transaction (summary, edges, run counters), so whatever a cancel, a failure or
a kill interrupts, what was committed is consistent and kept.

The runner composes four objects: the :class:`~.planner.Planner` (what is due), the
:class:`~.executor.Executor` (runs and summaries, and the job's outcomes: see its module), the
:class:`~.passes.Passes` (what a leaf or condensation pass makes) and, for new versions of
existing summaries, :attr:`remake` (a :class:`~.remake.Remaker` on the same passes). Neither
of the last two knows the runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from ..config import Policy
from ..store import Run, Store
from ..summarize import Summariser
from . import planner
from .events import CancelToken, RunEvent
from .executor import Executor, flatten
from .passes import Passes
from .remake import Remaker
from .state import RunRefused, RunState

PassKind = Literal["leaf", "condense", "full"]
__all__ = ["PassKind", "RunRefused", "Runner"]


class Runner:
    """Passes (and, through :attr:`remake`, re-summarising) over one Store.

    ``summariser.backend`` (and each of ``more_hosts``' backends: other Ollama servers sharing
    the job, ``hosts.py``) is checked once before the first run; the caller owns the backends and
    closes them (``await runner.aclose()``). ``on_event`` is
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
        more_hosts: Sequence[Summariser] = (),
    ) -> None:
        self.store = store
        self.executor = Executor(store, summariser, policy, parallel=parallel, on_event=on_event, cancel=cancel,
                                 more_hosts=more_hosts)
        self.planner = planner.Planner(store, policy)
        self.passes = Passes(self.executor, self.planner)
        self.remake = Remaker(self.passes)
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

    async def aclose(self) -> None:
        """Close every host's backend."""
        await self.executor.aclose()

    # ------------------------------------------------------------------ public API
    async def check(self) -> None:
        """Fail fast (see :meth:`Passes.check`)."""
        await self.passes.check()

    def plan_leaf(self, session_id: str) -> list[planner.LeafChunk]:
        """The leaf chunks due now, read as ``(seq, tokens)`` only (no episode text)."""
        return self.planner.leaf(session_id)

    async def compact(self, session_id: str, pass_: PassKind = "full", *, skip_idle: bool = False) -> Run | None:
        """One pass over one session (a full pass ends with the session's brief, when it is due).
        ``skip_idle``: record no run when nothing is eligible (returns None).

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
        brief = pass_ == "full" and self.planner.brief_due(session_id)
        if planned == 0 and not brief and skip_idle:
            return None
        await self.check()
        chunks, planned = plan()  # again: the check may have shrunk the chunk budget

        async def body(st: RunState) -> None:
            if pass_ == "full":
                self.passes.brief_ahead(st)
            await self.passes.leaves(st, chunks)
            if pass_ != "leaf":
                await self.passes.condense(st)
            if pass_ == "full":
                await self.passes.brief(st)

        return await self.executor.execute(session_id, pass_, None, planned, body, [c.tokens for c in chunks])

    async def compact_many(
        self, session_ids: Iterable[str], pass_: PassKind = "full", *, skip_idle: bool = False,
        on_done: Callable[[str], None] | None = None,
    ) -> list[Run]:
        """Compact sessions, up to ``parallel`` at once; runs are returned in input order.
        ``on_done(session_id)`` after each session however it ended (a backlog's control counts them).

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
                try:
                    run = await self.compact(sid, pass_, skip_idle=skip_idle)
                finally:
                    if on_done is not None:
                        on_done(sid)
                if run is not None:
                    out.append((i, run))

        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(ex.parallel):
                    tg.create_task(worker())
        except BaseExceptionGroup as group:
            raise flatten(group)[0] from None
        return [run for _, run in sorted(out, key=lambda p: p[0])]
