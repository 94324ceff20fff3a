"""The summary DAG as a lazy tree: roots in coverage order, children fetched on expand, and the
keys that act on the node under its cursor.

Why lazy: a long session has thousands of summaries and tens of thousands of episodes;
only what the user opens is ever queried, and episode lists are paged (a "… more" node
loads the next page), so opening any node costs one small indexed query.

Roots interleave the active top summaries with the unsummarised gaps and the fresh tail,
so reading the roots top to bottom walks the whole session once.

Its keys are the ones about what the cursor is on: ``f`` / ``F`` walk the fallbacks (the session
view knows them), ``c`` asks for the covering chain of an episode node (``ChainAsked``: the screen
opens it), ``R`` / ``x`` start a re-summarise or a repair of the summary (``app.runs``), ``v`` lists
its versions (``app.nav``). Their binding ids are the session screen's (``session.chain`` …), as
before they moved here, so a user's ``[keymap]`` still moves them.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text
from textual import getters
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from hiermem_tui.store import Episode
from hiermem_tui.store.reads import TreeSource
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.app_base import AppBase
from hiermem_tui.tui.messages import ChainAsked, ReloadSession
from hiermem_tui.tui.session_view import NodeRef, SessionView, root_refs
from hiermem_tui.tui.widgets.lists import list_keys
from hiermem_tui.tui.widgets.themed import Themed

SELECT_AN_EPISODE = "Select an episode first (in the transcript, or expand a leaf in the tree)."

EPISODE_PAGE = 100
"""Episodes added per expand (or per "… more" node): bounded work per key press."""


def _slot(ref: NodeRef) -> str:
    """Which root a ref stands in for across updates: its key, except for the fresh tail,
    which slides forward as episodes arrive and stays one node."""
    return "tail" if ref.kind == "tail" else ref.key


class DagTree(Tree[NodeRef], Themed):
    """The DAG inspector's tree. Public: :meth:`load_roots`, :meth:`update_roots`, :meth:`reveal_summary`,
    :meth:`reveal_key`, :meth:`reveal_seq`, :meth:`state` / :meth:`restore`, :attr:`cursor_ref`."""

    BINDINGS = [
        *list_keys(first="scroll_home", last="scroll_end"),
        Binding("f", "fallback(1)", "Fallback", id="session.fallback.next"),
        Binding("F,shift+f", "fallback(-1)", "Prev fallback", key_display="F", show=False, id="session.fallback.prev"),
        Binding("c", "chain", "Chain", id="session.chain"),
        Binding("R", "resummarize", "Re-summarise", key_display="R", id="session.resummarize"),
        Binding("v", "versions", "Versions", id="session.versions"),
        Binding("x", "repair", "Repair", id="session.repair"),
    ]
    app = getters.app(AppBase)

    def __init__(self, store: TreeSource, view: SessionView, fresh_tail: int, *, id: str | None = None) -> None:
        super().__init__("session", id=id)
        self.store = store
        self.view = view
        self.session_id = view.session_id
        self.fresh_tail = fresh_tail
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = True
        self._by_key: dict[str, TreeNode[NodeRef]] = {}
        self._loaded: set[int] = set()
        self.ref_year: int | None = None
        self.roots: list[NodeRef] = []

    def _theme_changed(self) -> None:
        super()._theme_changed()
        for node in self._by_key.values():
            if node.data is not None:
                node.set_label(self.label_for(node.data))

    # ------------------------------------------------------------------ labels
    def render_label(self, node: TreeNode[NodeRef], base_style: Style, style: Style) -> Text:
        """The label, ended with "…" where it would run past the pane's edge (it was cut mid-word)."""
        label = super().render_label(node, base_style, style)
        level, up = 0, node.parent
        while up is not None and up is not self.root:
            level, up = level + 1, up.parent
        room = self.scrollable_content_region.width - level * self.guide_depth
        if room > 1 and label.cell_len > room:
            label.truncate(room - 1)
            label.append("…", style=base_style)
        return label

    def label_for(self, ref: NodeRef) -> Text:
        """One line per node; every piece of chat text goes through ``one_line``."""
        p = self.palette
        muted = fmt.style(p.muted)
        if ref.kind == "summary" and ref.summary is not None:
            s = ref.summary
            parts: list[Text | tuple[str, object] | str] = [
                fmt.depth_chip(s.depth, p, s.tier), " ",
                fmt.tier_badge(s.tier, p), " ",
                (fmt.seq_span(s.first_seq, s.last_seq), fmt.style(p.foreground, bold=True)), "  ",
                (f"{fmt.tokens(s.tokens)} tok", fmt.style(p.foreground)), "  ",
                (fmt.time_range(s.start_at, s.end_at, ref_year=self.ref_year), muted), "  ",
                (one_line(self.app.shown(s.content), 60), fmt.style(p.muted, italic=True)),
            ]
            return Text.assemble(*parts)  # type: ignore[arg-type]
        if ref.kind == "episodes":
            return Text.assemble(("episodes ", muted), (fmt.seq_span(ref.first, ref.last), fmt.style(p.foreground)))
        if ref.kind == "gap":
            return Text.assemble(
                (" ░ unsummarised ", fmt.style(fmt.on(p.error), p.error, bold=True)), " ",
                (fmt.seq_span(ref.first, ref.last), fmt.style(p.foreground, bold=True)), "  ",
                ("not under any leaf yet", muted),
            )
        if ref.kind == "tail":
            return Text.assemble(
                (" ▒ fresh tail ", fmt.style(fmt.on(p.success), p.success, bold=True)), " ",
                (fmt.seq_span(ref.first, ref.last), fmt.style(p.foreground, bold=True)), "  ",
                ("kept raw on purpose", muted),
            )
        if ref.kind == "more":
            return Text(f"… {ref.count} more episodes ({fmt.seq_range(ref.first, ref.last)}) — enter loads "
                        f"{min(EPISODE_PAGE, ref.count)}", style=fmt.style(p.muted, italic=True))
        return Text(f"#{ref.first}", style=muted)  # episodes get their label from :meth:`_episode_label`

    def _episode_label(self, ep: Episode) -> Text:
        p = self.palette
        return Text.assemble(
            (f"#{ep.seq} ", fmt.style(p.muted)),
            (f"{ep.role:<9}", fmt.style(p.role_color(ep.role), bold=True)),
            (fmt.timestamp(ep.created_at, ref_year=self.ref_year) + "  ", fmt.style(p.muted)),
            (one_line(self.app.shown(ep.content), 70), fmt.style(p.foreground)),
        )

    # ------------------------------------------------------------------ building
    def _add(
        self, parent: TreeNode[NodeRef], ref: NodeRef, label: Text | None = None, *,
        before: int | TreeNode[NodeRef] | None = None, after: TreeNode[NodeRef] | None = None,
    ) -> TreeNode[NodeRef]:
        expandable = ref.kind in ("summary", "episodes", "gap", "tail")
        node = parent.add(label or self.label_for(ref), data=ref, allow_expand=expandable, before=before, after=after)
        self._by_key[ref.key] = node
        return node

    def load_roots(self) -> list[NodeRef]:
        """(Re)build the root level; everything below is loaded again on demand."""
        session = self.store.sessions.get(self.session_id)
        if session is not None and session.updated_at:
            self.ref_year = fmt.local(session.updated_at).year
        self.clear()
        self._by_key.clear()
        self._loaded.clear()
        self.roots = root_refs(self.store, self.session_id, self.fresh_tail)
        for ref in self.roots:
            self._add(self.root, ref)
        return self.roots

    def update_roots(self, fresh: list[NodeRef] | None = None) -> bool:
        """Bring the root level up to date with the store in place; returns False when the node
        under the cursor is gone and could not be found again (the caller picks a neighbour).

        Why this is enough: below the roots nothing ever changes — a summary's sources are
        fixed, a leaf's episodes too. A new leaf is a new root; a new condensed summary adopts
        roots (they leave the root level); a re-summarised chain replaces its root; new
        episodes grow the fresh tail and the gap before it. So the roots are diffed by key: kept
        nodes keep their open subtrees, new ones are inserted in coverage order, and only a gap
        or tail whose range moved reloads its (at most one page of) episodes. The cursor stays
        on its node, at the same height on screen. ``fresh``: the new root refs when the caller
        already knows them (:func:`arrange_roots`); else they are read from the store.
        """
        cursor = self.cursor_node
        cursor_key = cursor.data.key if cursor is not None and cursor.data is not None else None
        offset = cursor.line - round(self.scroll_y) if cursor is not None and cursor.line >= 0 else None
        if fresh is None:
            fresh = root_refs(self.store, self.session_id, self.fresh_tail)
        old = {_slot(n.data): n for n in self.root.children if n.data is not None}
        kept: set[int] = set()
        previous: TreeNode[NodeRef] | None = None
        for ref in fresh:
            node = old.get(_slot(ref))
            if node is None:
                where = {"before": 0} if previous is None else {"after": previous}
                node = self._add(self.root, ref, **where)
            else:
                kept.add(id(node))
                if node.data != ref:
                    self._retarget(node, ref)
            previous = node
        for node in old.values():
            if id(node) not in kept:
                self._forget(node)
                node.remove()
        self.roots = fresh
        return self._keep_cursor(cursor, cursor_key, offset)

    def _retarget(self, node: TreeNode[NodeRef], ref: NodeRef) -> None:
        """Point a kept node at its new ref (a gap or the tail whose range moved)."""
        before = node.data
        if before is not None:
            self._by_key.pop(before.key, None)
        node.data = ref
        self._by_key[ref.key] = node
        node.set_label(self.label_for(ref))
        if node.id in self._loaded:
            for child in node.children:
                self._forget(child)
            node.remove_children()
            self._loaded.discard(node.id)
            if node.is_expanded:
                self.ensure_loaded(node)

    def _forget(self, node: TreeNode[NodeRef]) -> None:
        """Drop a node and everything under it from the key index (before it is removed)."""
        pending = [node]
        while pending:
            current = pending.pop()
            if current.data is not None and self._by_key.get(current.data.key) is current:
                del self._by_key[current.data.key]
            self._loaded.discard(current.id)
            pending.extend(current.children)

    def _keep_cursor(self, cursor: TreeNode[NodeRef] | None, key: str | None, offset: int | None) -> bool:
        if cursor is None or key is None:
            return True
        target = cursor if self._by_key.get(key) is cursor else self._by_key.get(key)
        if target is None and key.startswith("s:") and self.reveal_summary(key[2:]):
            target = self.cursor_node  # adopted by a new condensed summary: open the way down to it
        if target is None:
            return False
        _ = self.last_line  # rebuild line numbers: they moved with the inserted and removed nodes
        if self.cursor_node is not target or self.cursor_line != target.line:
            self.move_cursor(target, animate=False)
        if offset is not None:
            self.scroll_to(y=max(0, target.line - offset), animate=False, force=True)
        return True

    def ensure_loaded(self, node: TreeNode[NodeRef]) -> None:
        """Add a node's children once (idempotent): sources, the episode range, or a page."""
        ref = node.data
        if ref is None or node.id in self._loaded:
            return
        self._loaded.add(node.id)
        if ref.kind == "summary" and ref.summary is not None:
            if ref.summary.kind == "leaf":
                self._add(node, NodeRef("episodes", ref.first, ref.last, owner=ref.summary.id))
            else:
                for child in self.store.dag.children(ref.summary.id):
                    self._add(node, NodeRef("summary", child.first_seq, child.last_seq, summary=child))
        elif ref.kind in ("episodes", "gap", "tail"):
            self._add_page(node, ref.first, ref.last, ref.key)

    def _add_page(self, parent: TreeNode[NodeRef], first: int, last: int, owner: str) -> TreeNode[NodeRef] | None:
        page = self.store.episodes.page(
            self.session_id, after_seq=first - 1, limit=min(EPISODE_PAGE, last - first + 1)
        )
        first_node: TreeNode[NodeRef] | None = None
        for ep in page:
            node = self._add(parent, NodeRef("episode", ep.seq, ep.seq), self._episode_label(ep))
            first_node = first_node or node
        done = page[-1].seq if page else last
        if done < last:
            self._add(parent, NodeRef("more", done + 1, last, owner=owner))
        return first_node

    def load_more(self, node: TreeNode[NodeRef]) -> TreeNode[NodeRef] | None:
        """Replace a "… more" node by the next page; returns the first new episode node."""
        ref = node.data
        parent = node.parent
        if ref is None or ref.kind != "more" or parent is None:
            return None
        self._by_key.pop(ref.key, None)
        node.remove()
        return self._add_page(parent, ref.first, ref.last, ref.owner or "")

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeRef]) -> None:
        self.ensure_loaded(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        if event.node.data is not None and event.node.data.kind == "more":
            event.stop()
            first = self.load_more(event.node)
            if first is not None:
                self.focus_node(first)

    # ------------------------------------------------------------------ navigation
    @property
    def cursor_ref(self) -> NodeRef | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def node_for(self, key: str) -> TreeNode[NodeRef] | None:
        return self._by_key.get(key)

    def focus_node(self, node: TreeNode[NodeRef]) -> None:
        """Move the cursor to ``node`` (line numbers are rebuilt first: they go stale on expand)."""
        _ = self.last_line  # rebuilds the line index if nodes were added or expanded
        self.move_cursor(node, animate=False)
        self.scroll_to_node(node, animate=False)

    def _open(self, node: TreeNode[NodeRef]) -> None:
        self.ensure_loaded(node)
        if not node.is_expanded:
            node.expand()

    def reveal_summary(self, summary_id: str) -> bool:
        """Open every ancestor of an active summary and put the cursor on it."""
        chain: list[str] = []
        current = self.store.dag.get(summary_id)
        if current is None or current.status != "active":
            return False
        while current is not None:
            chain.append(current.id)
            current = self.store.dag.get(current.parent_id) if current.parent_id else None
        node = self._by_key.get(f"s:{chain[-1]}")
        for sid in reversed(chain[:-1]):
            if node is None:
                return False
            self._open(node)
            node = self._by_key.get(f"s:{sid}")
        if node is None:
            return False
        self.focus_node(node)
        return True

    def reveal_key(self, key: str) -> bool:
        node = self._by_key.get(key)
        if node is None:
            return False
        self.focus_node(node)
        return True

    def reveal_seq(self, seq: int) -> bool:
        """Select what covers episode ``seq``: its leaf, or the gap / fresh-tail node holding it."""
        chain = self.store.dag.covering_chain(self.session_id, seq)
        if chain:
            return self.reveal_summary(chain[0].id)
        for ref in self.roots:
            if ref.kind in ("gap", "tail") and ref.first <= seq <= ref.last:
                return self.reveal_key(ref.key)
        return False

    # ------------------------------------------------------------------ reload support
    def state(self) -> tuple[list[str], str | None]:
        """Expanded node keys (in tree order) and the cursor's key: what a reload keeps."""
        expanded = [k for k, n in self._by_key.items() if n.is_expanded]
        ref = self.cursor_ref
        return expanded, ref.key if ref else None

    def restore(self, expanded: Iterable[str]) -> None:
        """Re-open the nodes that were open (where they still exist), top down."""
        wanted = set(expanded)
        pending = [n for n in self.root.children]
        while pending:
            node = pending.pop(0)
            if node.data is not None and node.data.key in wanted and node.allow_expand:
                self._open(node)
                pending.extend(node.children)

    # ------------------------------------------------------------------ keys: what the cursor is on
    def action_fallback(self, direction: int) -> None:
        """``f`` / ``F``: the cursor to the next / previous fallback summary, in coverage order."""
        jump = self.view.next_fallback(direction)
        if jump is None:
            self.notify("No fallback summaries in this session.", title="Fallbacks")
            return
        t = jump.target
        if self.reveal_summary(t.id):
            self.notify(f"Fallback {jump.number} of {jump.count}: d{t.depth} {fmt.seq_span(t.first_seq, t.last_seq)}",
                        title="Fallbacks", timeout=2)

    def action_chain(self) -> None:
        """``c`` on an episode node: the summaries covering it (the screen opens the picker)."""
        ref = self.cursor_ref
        if ref is None or ref.kind != "episode":
            self.notify(SELECT_AN_EPISODE, title="Covering chain")
            return
        self.post_message(ChainAsked(ref.first))

    def action_resummarize(self, why: str = "") -> None:
        """``R`` (and ``x``, saying ``why`` it needs repair): a new version of the summary under the
        cursor and of the summaries above it, through the run dialog."""
        ref = self.cursor_ref
        s = self.store.dag.get(ref.summary.id) if ref is not None and ref.summary is not None else None
        if s is None or ref is None or ref.kind != "summary":
            self.notify("Select a summary in the tree first: R re-summarises it.", title="Re-summarise")
            return
        if s.status != "active":
            self.notify("That summary is superseded; re-summarise the active one.", severity="warning")
            return
        ancestors = 0
        parent = self.store.dag.get(s.parent_id) if s.parent_id else None
        while parent is not None:
            ancestors += 1
            parent = self.store.dag.get(parent.parent_id) if parent.parent_id else None
        detail = Text(
            (f"{why} " if why else "") + f"Re-makes this depth-{s.depth} summary from its sources"
            + (f", then re-condenses the {ancestors} summar{'y' if ancestors == 1 else 'ies'} above it" if ancestors
               else "")
            + ". The current text is kept as a superseded version; when it is done you compare the two and keep "
              "or revert."
        )
        self.app.runs.request("resummarize-summary", self.session_id, summary_id=s.id,
                              subject=f"d{s.depth} {fmt.seq_span(s.first_seq, s.last_seq)}", detail=detail)

    def action_repair(self) -> None:
        """``x``: re-make the summary under the cursor if it needs it (else say why not, and that R forces it)."""
        ref = self.cursor_ref
        if ref is None or ref.kind != "summary" or ref.summary is None:
            self.notify("Select a summary in the tree first: x repairs a fallback or low-fidelity one.",
                        title="Repair")
            return
        reason = self.app.planner.repair_reason(ref.summary.id)
        if reason is None:
            self.notify("This summary needs no repair (not a fallback, enough key names kept, pins carried); "
                        "R re-summarises it anyway.", title="Repair")
            return
        self.action_resummarize(why=f"Needs repair: {reason}.")

    def action_versions(self) -> None:
        """``v``: every version of the summary under the cursor (restoring one reloads the screen)."""
        ref = self.cursor_ref
        if ref is None or ref.kind != "summary" or ref.summary is None:
            self.notify("Select a summary in the tree first: v lists its versions.", title="Versions")
            return
        self.app.nav.versions(ref.summary.id, self.ref_year, lambda: self.post_message(ReloadSession(self.session_id)))
