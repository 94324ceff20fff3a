"""Keeping an open session screen up to date as episodes and summaries land — from this app's
own runs or from another process (``hiermem-tui watch``) — without rebuilding it.

Why in place: a full ``reload()`` clears and rebuilds the tree's roots and re-opens every open
node, which on a long session costs tens of milliseconds and loses nothing only by luck. Here
the tree diffs its roots (:meth:`DagTree.update_roots`), the transcript appends what follows its
window, and the selection, open nodes and scroll position stay as the user left them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


class LiveSessionMixin:
    """Mixed into :class:`SessionScreen`."""

    def refresh_live(self) -> None:
        """Apply what the store gained since the screen last looked."""
        screen = cast("SessionScreen", self)
        session = screen.store.get_session(screen.session_id)
        if session is None:
            return
        screen.session = session
        screen._render_bar(session)
        tree = screen.tree
        previous = screen.selected
        kept = tree.update_roots()
        screen._show_structure(session, tree.roots)
        screen._figures_fresh = True
        ref = tree.cursor_ref
        if not kept and previous is not None:
            tree.reveal_seq(previous.first)  # its node is gone for good: what covers the same episode now
        elif ref is not None and ref != previous and ref.kind != "more":
            screen._show(ref, node=tree.cursor_node, move_transcript=False)  # same node, new range or text
