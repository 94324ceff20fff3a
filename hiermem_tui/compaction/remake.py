"""New versions of existing summaries, never deleting: the :class:`Remaker`.

``summary`` re-makes one summary and every ancestor; ``repair`` re-makes every summary that
needs it (fallbacks, too few key names kept, missing pins) with their ancestors; ``session``
supersedes everything and runs a fresh full pass. A tree is always re-made bottom-up (a parent
from its children's new texts) and committed in one transaction, so a cancel or a failure
leaves it exactly as it was. Each summary is made by the executor's one path
(:meth:`Executor.make`) and a tree committed by :meth:`Executor.commit`; a whole-session redo
runs the same :class:`~.passes.Passes` as a full pass. It knows nothing of the runner.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..store import Run, Summary, SummaryWrite, parse_iso
from ..summarize.summariser import strip_pinned
from ..summarize.types import SourceItem
from . import planner
from .check import repair_targets, repair_trees
from .executor import Making
from .passes import Passes
from .requests import summary_item
from .state import RunRefused, RunState


class Remaker:
    """Re-summarising for one job, on the passes' executor (see the module docstring)."""

    def __init__(self, passes: Passes) -> None:
        self.passes = passes
        self.executor = passes.executor
        self.store = passes.executor.store

    async def summary(self, summary_id: str) -> Run:
        """A new version of one active summary from the same sources; every ancestor is
        re-condensed with the new child. The whole chain commits in one transaction (or,
        if cancelled or failed before that, nothing does)."""
        s = self.store.dag.get(summary_id)
        if s is None:
            raise RunRefused(f"no summary {summary_id} in this database")
        if s.status != "active":
            raise RunRefused(f"summary {summary_id} is superseded; re-summarise its active version instead")
        chain = [s]
        while chain[-1].parent_id is not None:
            parent = self.store.dag.get(chain[-1].parent_id)
            if parent is None:
                break
            chain.append(parent)
        await self.passes.check()

        async def body(st: RunState) -> None:
            await self._remake(st, chain)

        return await self.executor.execute(s.session_id, "resummarize", s.id, len(chain), body)

    async def session(self, session_id: str) -> Run:
        """Supersede every active summary of the session, then a full pass (with this
        Runner's backend) and a new brief (the old one kept as a version). ``revert_run`` on the
        returned run restores the old summaries."""
        session = self.store.sessions.get(session_id)
        if session is None:
            raise RunRefused(f"no session {session_id} in this database")
        passes = self.passes
        await passes.check()
        chunks = passes.planner.session_leaves(session_id)
        planned = planner.count_full([], chunks, self.executor.policy.condense_fanout)

        async def body(st: RunState) -> None:
            self.store.dag.supersede_all(session_id, st.run.id)
            await passes.leaves(st, chunks)
            await passes.condense(st)
            await passes.brief(st, again=True)

        return await self.executor.execute(session_id, "resummarize-session", None, planned, body)

    async def repair(self, session_id: str, below: float | None = None, *, skip_idle: bool = False) -> Run | None:
        """Re-make, in one run, every active summary of the session that is a fallback, keeps
        under ``below`` of its key names (default: the policy threshold) or misses a pinned
        episode — with its ancestors, one tree (one commit) at a time. ``skip_idle``: no run
        is recorded when nothing needs repair (returns None)."""
        if self.store.sessions.get(session_id) is None:
            raise RunRefused(f"no session {session_id} in this database")
        threshold = self.executor.policy.fidelity_threshold if below is None else below
        trees = repair_trees(self.store, repair_targets(self.store, session_id, threshold))
        if not trees and skip_idle:
            return None
        await self.passes.check()

        async def body(st: RunState) -> None:
            for tree in trees:
                await self._remake(st, tree)

        return await self.executor.execute(session_id, "repair", f"below:{threshold:g}", sum(map(len, trees)), body)

    async def repair_many(self, session_ids: Iterable[str], below: float | None = None, *,
                          skip_idle: bool = False) -> list[Run]:
        """``repair`` for each session in turn (stops after a cancel or when the server is gone)."""
        ex = self.executor
        ex.stop_job = ex.check_failed
        runs = []
        for sid in session_ids:
            if ex.cancel.cancelled or ex.stop_job:
                break
            run = await self.repair(sid, below, skip_idle=skip_idle)
            if run is not None:
                runs.append(run)
        return runs

    # ------------------------------------------------------------------ re-making a tree
    async def _remake(self, st: RunState, nodes: Sequence[Summary]) -> None:
        """New versions of ``nodes`` — a set closed under "parent of" within one tree — made
        bottom-up (a parent from its children's new texts), then committed in ONE transaction:
        a cancel or failure before that leaves the tree exactly as it was."""
        ex = self.executor
        order = sorted(nodes, key=lambda n: (n.depth, n.first_seq))
        parents = {n.id: n.parent_id for n in order}
        writes: list[SummaryWrite] = []
        replaced: dict[str, tuple[str, SourceItem]] = {}
        for node in order:
            verb = "re-summarise leaf" if node.depth == 0 else f"re-condense depth {node.depth}"
            sources = None if node.depth == 0 else [
                replaced.get(k.id, (k.id, summary_item(k))) for k in self.store.dag.children(node.id)]
            made = await ex.make(st, Making(f"{verb} #{node.first_seq}–{node.last_seq}", node.depth, node.first_seq,
                                            node.last_seq, sources, supersede=[node.id]))
            writes.append(made)
            ns = made.summary
            item = SourceItem("summary", strip_pinned(ns.content), ns.tokens, parse_iso(node.start_at),
                              parse_iso(node.end_at), depth=node.depth, label=ns.id,
                              span=(node.first_seq, node.last_seq))
            replaced[node.id] = (ns.id, item)
        ex.check_cancel()
        # the tree must be as it was planned: nobody superseded or re-parented it meanwhile
        ex.commit(st, writes, unchanged=parents)
