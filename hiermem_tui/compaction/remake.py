"""The re-making half of the runner: new versions of existing summaries, never deleting.

``resummarize_summary`` re-makes one summary and every ancestor; ``repair`` re-makes every
summary that needs it (fallbacks, low identifier retention, missing pins) with their
ancestors; ``resummarize_session`` supersedes everything and runs a fresh full pass. A tree
is always re-made bottom-up (a parent from its children's new texts) and committed in one
transaction, so a cancel or a failure leaves it exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..store import Run, StoreError, Summary, SummaryWrite, parse_iso
from ..summarize.summariser import strip_pinned
from ..summarize.types import SourceItem
from . import planner
from .check import repair_targets, repair_trees
from .requests import condensed_request, leaf_request, summary_item
from .state import RunRefused, RunState

if TYPE_CHECKING:
    from .runner import Runner


class RemakeMixin:
    """Mixed into :class:`~hiermem_tui.compaction.runner.Runner`."""

    async def resummarize_summary(self: Runner, summary_id: str) -> Run:
        """A new version of one active summary from the same sources; every ancestor is
        re-condensed with the new child. The whole chain commits in one transaction (or,
        if cancelled or failed before that, nothing does)."""
        s = self.store.get_summary(summary_id)
        if s is None:
            raise RunRefused(f"no summary {summary_id} in this database")
        if s.status != "active":
            raise RunRefused(f"summary {summary_id} is superseded; re-summarise its active version instead")
        chain = [s]
        while chain[-1].parent_id is not None:
            parent = self.store.get_summary(chain[-1].parent_id)
            if parent is None:
                break
            chain.append(parent)
        await self.check()

        async def body(st: RunState) -> None:
            await self._remake(st, chain)

        return await self._execute(s.session_id, "resummarize", s.id, len(chain), body)

    async def resummarize_session(self: Runner, session_id: str) -> Run:
        """Supersede every active summary of the session, then a full pass (with this
        Runner's backend). ``revert_run`` on the returned run restores the old summaries."""
        session = self.store.get_session(session_id)
        if session is None:
            raise RunRefused(f"no session {session_id} in this database")
        await self.check()
        chunks = self.plan_session_leaves(session_id)
        planned = planner.count_full([], chunks, self.policy.condense_fanout)

        async def body(st: RunState) -> None:
            self.store.supersede_all(session_id, st.run.id)
            await self._leaves(st, chunks)
            await self._condense(st)

        return await self._execute(session_id, "resummarize-session", None, planned, body)

    async def repair(self: Runner, session_id: str, below: float | None = None, *, skip_idle: bool = False) -> Run | None:
        """Re-make, in one run, every active summary of the session that is a fallback, keeps
        fewer identifiers than ``below`` (default: the policy threshold) or misses a pinned
        episode — with its ancestors, one tree (one commit) at a time. ``skip_idle``: no run
        is recorded when nothing needs repair (returns None)."""
        if self.store.get_session(session_id) is None:
            raise RunRefused(f"no session {session_id} in this database")
        threshold = self.policy.fidelity_threshold if below is None else below
        trees = repair_trees(self.store, repair_targets(self.store, session_id, threshold))
        if not trees and skip_idle:
            return None
        await self.check()

        async def body(st: RunState) -> None:
            for tree in trees:
                await self._remake(st, tree)

        return await self._execute(session_id, "repair", f"below:{threshold:g}", sum(map(len, trees)), body)

    async def repair_many(self: Runner, session_ids: Iterable[str], below: float | None = None, *,
                          skip_idle: bool = False) -> list[Run]:
        """``repair`` for each session in turn (stops after a cancel or when the server is gone)."""
        self._stop_job = self._check_error is not None
        runs = []
        for sid in session_ids:
            if self.cancel.cancelled or self._stop_job:
                break
            run = await self.repair(sid, below, skip_idle=skip_idle)
            if run is not None:
                runs.append(run)
        return runs

    # ------------------------------------------------------------------ re-making a tree
    async def _remake(self: Runner, st: RunState, nodes: Sequence[Summary]) -> None:
        """New versions of ``nodes`` — a set closed under "parent of" within one tree — made
        bottom-up (a parent from its children's new texts), then committed in ONE transaction:
        a cancel or failure before that leaves the tree exactly as it was."""
        sid = st.run.session_id
        order = sorted(nodes, key=lambda n: (n.depth, n.first_seq))
        parents = {n.id: n.parent_id for n in order}
        writes: list[SummaryWrite] = []
        replaced: dict[str, tuple[str, SourceItem]] = {}
        for node in order:
            verb = "re-summarise leaf" if node.depth == 0 else f"re-condense depth {node.depth}"
            what = f"{verb} #{node.first_seq}–{node.last_seq}"
            async with self._slot():
                self._started(st, what, node.depth, node.first_seq, node.last_seq)
                if node.depth == 0:
                    req = leaf_request(self.store, sid, node.first_seq, node.last_seq, self.policy.leaf_target_tokens)
                    ids: list[str] | None = None
                else:
                    pairs = [replaced.get(k.id, (k.id, summary_item(k))) for k in self.store.children(node.id)]
                    ids = [p[0] for p in pairs]
                    req = condensed_request(self.store, sid, node.depth, [p[1] for p in pairs], node.first_seq,
                                            node.last_seq, self.policy.condensed_target_tokens)
                res = await self._summarise(st, what, req)
            ns = self._new(st, node.depth, res)
            rng = (node.first_seq, node.last_seq) if ids is None else None
            writes.append(SummaryWrite(ns, episode_range=rng, source_ids=ids, supersede=[node.id]))
            item = SourceItem("summary", strip_pinned(ns.content), ns.tokens, parse_iso(node.start_at),
                              parse_iso(node.end_at), depth=node.depth, label=ns.id)
            replaced[node.id] = (ns.id, item)
        self._check_cancel()
        with self.store.transaction() as conn:
            # the tree must be as it was planned: nobody superseded or re-parented it meanwhile
            for node in order:
                row = conn.execute("SELECT status, parent_id FROM summaries WHERE id = ?", (node.id,)).fetchone()
                if row is None or row[0] != "active" or row[1] != parents[node.id]:
                    raise StoreError(f"summary {node.id} changed while it was being re-summarised; run it again")
            rows = self.store.write_summaries(writes)
        self._written(st, rows)
