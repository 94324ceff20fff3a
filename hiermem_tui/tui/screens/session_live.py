"""What an open session screen shows once the store gained episodes or summaries — from this app's
own runs or from another process (``hiermem-tui watch``) — worked out as values from the session's
state; the screen applies them (:meth:`SessionScreen.follow_store`) without rebuilding itself.

Why in place: a full ``reload()`` reads every active summary again, clears and rebuilds the
tree's roots and re-opens every open node; on a long session that is tens of milliseconds per
summary landed and keeps the user's place only by luck. Here :func:`live_update` reads only the
summary rows written since the last look (:class:`LiveSummaries`) and the root summaries the tree
does not hold yet, the tree diffs its roots against the answer (:meth:`DagTree.update_roots`), the
transcript appends what follows its window, and :func:`selection_after` says where the selection
goes, so the selection, open nodes and scroll position stay where the user left them
(bench/bench_tui_live.py measures the difference).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hiermem_tui.store import Session, Store, Summary
from hiermem_tui.store.changes import LiveSummaries, SummaryDelta
from hiermem_tui.tui.session_view import NodeRef, arrange_roots


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    """What the session screen shows after the store gained rows: the session's row, which active
    summaries came and went (``delta``), and the root level now."""

    session: Session
    delta: SummaryDelta
    roots: list[NodeRef]


@dataclass(frozen=True, slots=True)
class Follow:
    """Where the selection goes once the tree's roots changed: ``focus`` ``ref``'s node (the pane held
    the empty state, nothing was selected), ``reveal`` what covers ``ref.first`` now (its node is gone
    for good), or ``show`` ``ref`` again (the same node, with a new range or text)."""

    how: Literal["focus", "reveal", "show"]
    ref: NodeRef


def live_update(store: Store, live: LiveSummaries, shown: Sequence[NodeRef], fresh_tail: int) -> LiveUpdate | None:
    """Catch ``live`` up with the store and return the root level it now makes, reading only the root
    summaries not among ``shown`` (all of them when the change was not only additions); None when the
    session is gone."""
    session, delta = live.catch_up()
    if session is None:
        return None
    if delta.reloaded:
        tops = store.dag.top(live.session_id)
    else:
        known = {r.summary.id: r.summary for r in shown if r.summary is not None}
        found = (known.get(i) or store.dag.get(i) for i in live.roots)
        tops = [s for s in found if isinstance(s, Summary)]
    roots = arrange_roots(tops, live.unsummarised(session.episodes), session.episodes, fresh_tail)
    return LiveUpdate(session, delta, roots)


def selection_after(previous: NodeRef | None, kept: bool, cursor: NodeRef | None, roots: Sequence[NodeRef],
                    summaries: int) -> Follow | None:
    """Where the selection goes after the tree took new roots: ``previous`` was selected, ``kept`` says
    whether the cursor's node survived, ``cursor`` is what it is on now; None: it stays."""
    if previous is None and summaries and roots:
        return Follow("focus", cursor if cursor is not None and cursor.kind != "more" else roots[0])
    if not kept and previous is not None:
        return Follow("reveal", previous)
    if cursor is not None and cursor != previous and cursor.kind != "more":
        return Follow("show", cursor)
    return None
