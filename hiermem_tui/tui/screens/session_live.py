"""Keeping an open session screen up to date as episodes and summaries land — from this app's
own runs or from another process (``hiermem-tui watch``) — without rebuilding it.

Why in place: a full ``reload()`` reads every active summary again, clears and rebuilds the
tree's roots and re-opens every open node; on a long session that is tens of milliseconds per
summary landed and keeps the user's place only by luck. Here :class:`LiveSummaries` reads only
the summary rows written since the last look, the tree diffs its roots against what that
says (:meth:`DagTree.update_roots`), the transcript appends what follows its window, and the
selection, open nodes and scroll position stay where the user left them
(bench/bench_tui_live.py measures the difference).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hiermem_tui.store import Session, Summary
from hiermem_tui.store.changes import LiveSummaries, SummaryDelta
from hiermem_tui.tui.session_view import NodeRef, arrange_roots

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


class LiveSession:
    """Applies what the store gained to an open session screen (``screen.updates``)."""

    def __init__(self, screen: SessionScreen) -> None:
        self._screen = screen
        self._live: LiveSummaries | None = None

    @property
    def summaries(self) -> LiveSummaries:
        """The session's active summaries, followed incrementally (loaded by ``reload``)."""
        if self._live is None:
            self._live = LiveSummaries(self._screen.store, self._screen.session_id)
        return self._live

    def refresh(self) -> None:
        """Apply what the store gained since the screen last looked: tree, map, transcript, header, brief."""
        screen = self._screen
        caught = self._catch_up()
        if caught is None:
            return
        session, delta = caught
        tree = screen.dag_tree
        previous = screen.view.selected
        kept = tree.update_roots(self._roots(session, delta))
        screen.show_structure(session, tree.roots, delta=delta)
        screen.figures_fresh = True
        ref = tree.cursor_ref
        if previous is None and session.summaries and tree.roots:
            # the pane held the empty state ("No summaries yet"), nothing was selected: show what is there now
            node = tree.cursor_node if ref is not None and ref.kind != "more" else tree.node_for(tree.roots[0].key)
            if node is not None and node.data is not None:
                tree.focus_node(node)
                screen.show(node.data, node=node, move_transcript=False)
        elif not kept and previous is not None:
            tree.reveal_seq(previous.first)  # its node is gone for good: what covers the same episode now
        elif ref is not None and ref != previous and ref.kind != "more":
            screen.show(ref, node=tree.cursor_node, move_transcript=False)  # same node, new range or text

    def refresh_figures(self) -> None:
        """The cheap part, while the user is typing: header figures, the brief and the coverage map."""
        screen = self._screen
        caught = self._catch_up()
        if caught is None:
            return
        session, delta = caught
        screen.figures_fresh = True
        screen.show_structure(session, self._roots(session, delta), delta=delta, tree_titles=False)

    def _catch_up(self) -> tuple[Session, SummaryDelta] | None:
        screen = self._screen
        session, delta = self.summaries.catch_up()
        if session is None:
            return None
        screen.view.session = session
        screen.dag_tree.fresh_tail = screen.fresh_tail(session)
        screen.render_bar(session)
        screen.brief.follow(screen.store.briefs.active(screen.session_id), session.episodes)
        return session, delta

    def _roots(self, session: Session, delta: SummaryDelta) -> list[NodeRef]:
        """Root refs from the live summaries; only summaries new at the root level are read."""
        screen = self._screen
        store, live = screen.store, self.summaries
        if delta.reloaded:
            tops = store.dag.top(screen.session_id)
        else:
            known = {r.summary.id: r.summary for r in screen.dag_tree.roots if r.summary is not None}
            found = (known.get(i) or store.dag.get(i) for i in live.roots)
            tops = [s for s in found if isinstance(s, Summary)]
        return arrange_roots(tops, live.unsummarised(session.episodes), session.episodes, screen.dag_tree.fresh_tail)
