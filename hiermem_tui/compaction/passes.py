"""What a leaf and a condensation pass make, inside a run, and a session's brief: :class:`Passes`.

The :class:`~.runner.Runner` runs them as a pass over a session; the
:class:`~.remake.Remaker` runs them after superseding a whole session. Each summary goes
through the executor's one path (:meth:`Executor.make`, then :meth:`Executor.commit` on its
own: a pass keeps every summary as soon as it is made), the two together behind a backlog's gate
(:meth:`Executor.gated`) when the job has one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from . import planner
from .executor import Executor, Making
from .requests import BriefReading, summary_item
from .state import RunState


class Passes:
    """Leaves and condensations on one executor, planned by one planner."""

    def __init__(self, executor: Executor, plans: planner.Planner) -> None:
        self.executor = executor
        self.planner = plans

    async def check(self) -> None:
        """The backend check (see :meth:`Executor.check`); plans made afterwards use the policy as
        the checked backend allows (a smaller chunk budget for a small context)."""
        await self.executor.check()
        self.planner.policy = self.executor.policy

    async def leaves(self, st: RunState, chunks: Sequence[planner.LeafChunk]) -> None:
        """Leaves strictly in order: each one gets the previous leaf's text as context; the next one is worked
        out while the model answers (``Executor.make``'s ``then``). Where no prompt shows that text (``notes``),
        a leaf is asked as soon as the calls of the one before are over (``Executor.make_in_turn``)."""
        ex = self.executor
        jobs = [Making(chunk.label(), 0, chunk.first_seq, chunk.last_seq) for chunk in chunks]
        if not ex.prompts_show_prior:  # no leaf's request waits on the one before it: the model need not either
            await ex.make_in_turn(st, jobs)
            return
        for i, job in enumerate(jobs):
            async with ex.gated(st):
                made = await ex.make(st, job, jobs[i + 1] if i + 1 < len(jobs) else None)
                ex.commit(st, [made])

    async def condense(self, st: RunState) -> None:
        """Shallowest depth first, re-planned from the store after every round. A cancel is checked
        only when there is more to make: a run that made everything it had to is done."""
        sid = st.run.session_id
        while True:
            groups = self.planner.condense_groups(sid)
            if not groups:
                return
            self.executor.check_cancel()
            if self.executor.parallel == 1 or len(groups) == 1:  # a round's groups do not depend on each other
                await self.executor.make_in_turn(st, [self._condensing(g) for g in groups])
            else:
                async with asyncio.TaskGroup() as tg:
                    for g in groups:
                        tg.create_task(self._condense_one(st, g))

    def brief_ahead(self, st: RunState) -> None:
        """A full pass is to end with the session's brief: have its material read while the model answers the
        pass's last calls (``Executor``)."""
        if self.planner.brief_due(st.run.session_id):
            st.brief = BriefReading.start(self.executor.store, st.run.session_id)

    async def brief(self, st: RunState, *, again: bool = False) -> None:
        """The session's brief, when it has none or the one it has stops short of its newest episode
        (``again``: whenever the session has one to make, a whole-session re-summarise)."""
        sid = st.run.session_id
        last = self.planner.brief_due_at(sid, again=again)
        if last is None:
            return
        self.executor.check_cancel()
        async with self.executor.gated(st):
            await self.executor.make_brief(st, last)

    async def _condense_one(self, st: RunState, group: planner.CondenseGroup) -> None:
        ex = self.executor
        async with ex.gated(st):
            ex.commit(st, [await ex.make(st, self._condensing(group))])

    def _condensing(self, group: planner.CondenseGroup) -> Making:
        """What making ``group``'s summary is: its sources as the store has them."""
        found = [self.executor.store.dag.get(i) for i in group.source_ids]  # planned just now; never deleted
        sources = [(s.id, summary_item(s)) for s in found if s is not None]
        return Making(group.label(), group.depth, group.first_seq, group.last_seq, sources)
