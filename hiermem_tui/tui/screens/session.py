"""One session's summary DAG: tree, coverage map, detail pane and transcript, kept in sync.

Selection flows one way, which keeps the four views consistent: whatever the user picks
(tree cursor, a map bar, a fallback jump, a covering-chain entry) becomes a tree cursor
move, and the tree's ``NodeHighlighted`` updates the map, the detail pane and the transcript.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Label, Static, TabbedContent, TabPane, Tabs
from textual.widgets.tree import TreeNode

from hiermem_tui.store import Session, SummarySpan
from hiermem_tui.store.changes import SummaryDelta
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import find
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import SessionsChanged, SettingsChanged
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens import session_tools
from hiermem_tui.tui.screens.run_launch import run_commands
from hiermem_tui.tui.screens.session_keys import SessionKeysMixin
from hiermem_tui.tui.screens.session_live import LiveSessionMixin
from hiermem_tui.tui.widgets.coverage_map import CoverageMap, MapItem
from hiermem_tui.tui.widgets.dag_tree import DagTree, NodeRef
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from hiermem_tui.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from hiermem_tui.config import Settings
    from hiermem_tui.store import Store

RELOAD_QUIET_S = 0.3
"""A background reload waits until no key was pressed for this long…"""
RELOAD_MAX_WAIT_S = 10.0
"""…but never longer than this after it was asked for (the header and the map do not wait)."""
LEGEND = (
    "[$primary]■[/] normal  [{aggressive}]■[/] aggressive  [$warning]■[/] fallback  "
    "[$error]░[/] unsummarised  [$success]▒[/] fresh tail  [$foreground]■[/] selected"
)
FIDELITY_LEGEND = (
    "[$success]■[/] keeps enough  [$error]■[/] low fidelity  [$foreground-muted]■[/] not measured (M)  "
    "[$accent]⚑[/] pinned  [$error]×[/] excluded"
)


class SessionScreen(SessionKeysMixin, LiveSessionMixin, Screen[None]):
    """The DAG inspector for one session.

    ``reload()`` re-reads everything from the store and keeps the open nodes and the
    selection (``r``, a policy change). What lands while the screen is open — summaries a run
    writes, episodes and summaries from another process — is applied in place by
    ``refresh_live()`` (see :class:`LiveSessionMixin`): a ``SessionsChanged`` naming this session
    (or any session) calls ``schedule_reload()``, which coalesces bursts into one update.
    """

    CSS_PATH = "session.tcss"
    BINDINGS = [
        Binding("tab", "focus_pane(1)", "Pane", show=True, priority=True),
        Binding("shift+tab", "focus_pane(-1)", "Pane", show=False, priority=True),
        Binding("t", "toggle_view", "Transcript"),
        Binding("f", "fallback(1)", "Fallback"),
        Binding("F,shift+f", "fallback(-1)", "Prev fallback", key_display="F", show=False),
        Binding("c", "chain", "Chain"),
        Binding("s", "toggle_scale", "Scale"),
        Binding("r", "refresh", "Refresh"),
        Binding("p", "run('full')", "Compact"),
        Binding("l", "run('leaf')", "Leaf pass", show=False),
        Binding("n", "run('condense')", "Condense", show=False),
        Binding("R", "resummarize", "Re-summarise", key_display="R"),
        Binding("W", "resummarize_session", "Redo session", show=False, key_display="W"),
        Binding("v", "versions", "Versions"),
        Binding("x", "repair", "Repair"),
        Binding("X", "repair_session", "Repair all", show=False, key_display="X"),
        Binding("M", "measure", "Measure fidelity", show=False, key_display="M"),
        Binding("C", "toggle_colour", "Colour by fidelity", show=False, key_display="C"),
        Binding("P", "mark('pin')", "Pin episode", show=False, key_display="P"),
        Binding("E", "mark('exclude')", "Exclude episode", show=False, key_display="E"),
        # search, context, stats, run history (tui/find.py): the footer is full here; palette and help list them
        Binding("slash", "find", "Search", key_display="/", show=False),
        Binding("m", "model_view", "Model view", show=False),
        Binding("i", "stats", "Stats", show=False),
        Binding("h", "history", "Runs", show=False),
        Binding("escape", "cancel_run", "Cancel run", key_display="esc"),  # before Back: wins while a run goes
        Binding("escape", "back", "Back", key_display="esc"),
        Binding("backspace", "back", "Back", show=False),  # not shown: "esc" says it, and means cancel mid-run
    ]

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.session: Session | None = None
        self.spans: list[SummarySpan] = []
        self.selected: NodeRef | None = None
        self._range_stats: dict[tuple[int, int], tuple[int, str, str]] = {}
        self._reload_timer: Timer | None = None
        self._reload_asked = 0.0
        self._figures_fresh = True
        self._pending_jump: tuple[str, int] | None = None

    # ------------------------------------------------------------------ plumbing
    @property
    def store(self) -> Store:
        return cast("Store", self.app.store)  # type: ignore[attr-defined]

    @property
    def settings(self) -> Settings:
        return cast("Settings", self.app.settings)  # type: ignore[attr-defined]

    @property
    def tree(self) -> DagTree:
        return self.query_one(DagTree)

    @property
    def map(self) -> CoverageMap:
        return self.query_one(CoverageMap)

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def compose(self) -> ComposeResult:
        with Horizontal(id="topbar"):
            yield Label(Text("◆ hiermem"), id="brand")
            yield Static(id="session-title")
            yield Static(id="session-meta")
        yield CoverageMap(id="coverage")
        with Horizontal(id="session-body"):
            yield DagTree(self.store, self.session_id, self.settings.policy.fresh_tail, id="dag-tree")
            with TabbedContent(id="session-right", initial="tab-detail"):
                with TabPane("Detail", id="tab-detail"):
                    yield DetailPane(id="node-detail")
                with TabPane("Transcript", id="tab-transcript"):
                    yield Transcript(self.store, self.session_id, id="transcript")
        yield RunIndicator(id="run-indicator")
        yield Footer(compact=True)  # this screen has many keys: less padding keeps them all on a line

    def on_mount(self) -> None:
        self.query_one(Tabs).can_focus = False
        self._legend()
        self.tree.border_title = "Summary DAG"
        self.reload()
        self.tree.focus()
        self.watch(self.app, "theme", lambda: self.call_after_refresh(self._retheme), init=False)

    def _retheme(self) -> None:
        """Redraw what holds theme colours baked into Text (the widgets redraw themselves)."""
        self._legend()
        if self.session is not None:
            self._render_bar(self.session)
        if self.selected is not None:
            self._show(self.selected, move_transcript=False)
        elif self.session is not None and self.session.summaries == 0:
            self.detail.show_empty(self.session, self.session_id)

    # ------------------------------------------------------------------ loading
    def reload(self) -> None:
        """Re-read the session from the store, keeping open nodes and the selection where possible."""
        session = self.store.sessions.get(self.session_id)
        self.session = session
        if session is None:
            self.detail.show_empty(None, self.session_id, missing=True)
            return
        year = fmt.local(session.updated_at).year
        for widget in (self.tree, self.map, self.detail, self.transcript):
            widget.ref_year = year  # type: ignore[attr-defined]
        self._render_bar(session)
        tree = self.tree
        expanded, cursor_key = tree.state()
        previous = self.selected
        roots = tree.load_roots()
        tree.restore(expanded)
        self.live.load()
        self.detail.fidelity_threshold = self.map.fidelity_threshold = self.settings.policy.fidelity_threshold
        self._show_structure(session, roots, marks=self._marks())
        if cursor_key and self._reselect(cursor_key, previous):
            return
        if session.summaries == 0:
            self.selected = None
            self.map.select(None)
            self.detail.show_empty(session, self.session_id)
            if roots:
                self.transcript.show_range(roots[0].first, roots[0].first)
        elif roots:
            node = tree.node_for(roots[0].key)
            if node is not None:
                tree.focus_node(node)

    def _show_structure(self, session: Session, roots: list[NodeRef], *, delta: SummaryDelta | None = None,
                        tree_titles: bool = True, marks: list[MapItem] | None = None) -> None:
        """Map, transcript length and tree titles, after the roots changed (spans: ``self.live``;
        ``delta``: only these summaries changed, so the map changes in place)."""
        tree = self.tree
        self.spans = list(self.live.spans.values())
        self._range_stats.clear()
        extras = [self._extra(ref) for ref in roots if ref.kind in ("gap", "tail")]
        if delta is None or delta.reloaded:
            self.map.set_data(self.spans, extras, session.episodes, marks)
        else:
            self.map.apply(delta.added, delta.removed, extras, session.episodes)
        self.transcript.grow(session.episodes)
        if not tree_titles:
            return
        tree.border_title = f"Summary DAG · {len(roots)} root{'s' * (len(roots) != 1)}"
        tree.border_subtitle = "no summaries yet" if session.summaries == 0 else None

    def _reselect(self, key: str, previous: NodeRef | None) -> bool:
        tree = self.tree
        if tree.reveal_key(key) or (key.startswith("s:") and tree.reveal_summary(key[2:])):
            if self.selected is not None and tree.cursor_ref is not None and tree.cursor_ref.key == key:
                self._show(tree.cursor_ref, move_transcript=False)  # same node: refresh the detail only
            return True
        if previous is not None:
            return tree.reveal_seq(previous.first)
        return False

    def _marks(self) -> list[MapItem]:
        """Pinned and excluded episodes, as ticks on the map's episode row."""
        return [MapItem("", mark, -1, "normal", seq, seq, at, at)  # type: ignore[arg-type]
                for seq, mark, at in self.store.marks.marked(self.session_id)]

    def refresh_marks(self) -> None:
        """A mark changed: redraw the map's ticks (the transcript redraws its own)."""
        self.map.set_marks(self._marks())

    def _extra(self, ref: NodeRef) -> MapItem:
        tokens, start, end = self._stats(ref.first, ref.last)
        return MapItem(ref.key, "gap" if ref.kind == "gap" else "tail", -1, "normal", ref.first, ref.last, start, end)

    def _stats(self, first: int, last: int) -> tuple[int, str, str]:
        key = (first, last)
        if key not in self._range_stats:
            self._range_stats[key] = self.store.episodes.stats(self.session_id, first, last)
        return self._range_stats[key]

    def _render_bar(self, s: Session) -> None:
        """Title (literal) in the top bar; the session's figures as the coverage map's title."""
        p = fmt.Palette.from_app(self.app)
        title = Text(one_line(s.title or "(untitled)", 200), style=fmt.style(p.foreground, bold=True))
        meta = Text(f"{one_line(s.source, 20)} · {one_line(s.id, 40)}", style=fmt.style(p.muted))
        parts = [
            fmt.figure(f"{s.episodes:,}", "episodes", p),
            fmt.figure(fmt.tokens(s.tokens), "tok", p),
            fmt.figure("model sees", f"{fmt.tokens(s.uncompacted_tokens)} tok", p),
            fmt.figure(f"{s.summaries:,}", "summaries", p),
            fmt.figure("depth", "–" if s.max_depth is None else str(s.max_depth), p),
            fmt.figure(fmt.percent(s.coverage), "covered", p),
        ]
        if s.fallbacks:
            parts.append(Text(f" {s.fallbacks} fallback{'s' * (s.fallbacks != 1)} ",
                              style=fmt.style(fmt.on(p.warning), p.warning, bold=True)))
        self.query_one("#session-title", Static).update(title)
        self.query_one("#session-meta", Static).update(meta)
        self.map.border_title = Text(" · ", style=fmt.style(p.muted)).join(parts)

    # ------------------------------------------------------------------ selection
    def on_tree_node_highlighted(self, event: DagTree.NodeHighlighted[NodeRef]) -> None:
        ref = event.node.data
        if ref is None or ref.kind == "more":
            return
        same = self.selected is not None and self.selected.key == ref.key
        self._show(ref, node=event.node, move_transcript=not same)

    def _show(self, ref: NodeRef, *, node: TreeNode[NodeRef] | None = None, move_transcript: bool = True) -> None:
        self.selected = ref
        store = self.store
        self.map.select(self._map_key(ref, node))
        if ref.kind == "summary" and ref.summary is not None:
            fresh = store.dag.get(ref.summary.id) or ref.summary
            self.detail.show_summary(fresh, sources=store.dag.source_ids(fresh.id), versions=store.dag.versions(fresh.id))
        elif ref.kind == "episode":
            ep = store.episodes.at(self.session_id, ref.first)
            if ep is not None:
                self.detail.show_episode(ep, store.dag.covering_chain(self.session_id, ref.first), self._where(ref.first))
        elif ref.kind in ("gap", "tail", "episodes"):
            tokens, start, end = self._stats(ref.first, ref.last)
            self.detail.show_range(ref.kind, ref.first, ref.last, tokens=tokens, start_at=start, end_at=end,
                                   session_id=self.session_id, fresh_tail=self.settings.policy.fresh_tail,
                                   owner=ref.owner)
        if move_transcript:
            self.transcript.show_range(ref.first, ref.last)
        if self._pending_jump is not None and self._pending_jump[0] == ref.key:
            self.transcript.jump_to(self._pending_jump[1])  # after the range move, not before it
            self._pending_jump = None

    def _map_key(self, ref: NodeRef, node: TreeNode[NodeRef] | None) -> str | None:
        """The map bar standing for a node: itself, or its nearest summary / gap / tail ancestor."""
        while node is not None and node.data is not None and node.data.kind not in ("summary", "gap", "tail"):
            node = node.parent
        target = node.data if node is not None and node.data is not None else ref
        return target.key if target.kind in ("summary", "gap", "tail") else None

    def _where(self, seq: int) -> str | None:
        for ref in self.tree.roots:
            if ref.kind in ("gap", "tail") and ref.first <= seq <= ref.last:
                return "fresh tail: kept raw on purpose" if ref.kind == "tail" else "unsummarised gap"
        return None

    @on(CoverageMap.Picked)
    def _picked(self, event: CoverageMap.Picked) -> None:
        key = event.item.key
        ok = self.tree.reveal_summary(key[2:]) if key.startswith("s:") else self.tree.reveal_key(key)
        if not ok:
            self.notify("That bar is not in the tree any more; press r to refresh.", severity="warning")

    def on_transcript_cursor_moved(self, event: Transcript.CursorMoved) -> None:
        ep = self.store.episodes.at(self.session_id, event.seq)
        if ep is not None:
            self.detail.show_episode(ep, self.store.dag.covering_chain(self.session_id, event.seq), self._where(event.seq))

    def _legend(self) -> None:
        axis = "episode" if self.map.scale == "episodes" else "time"
        aggressive = fmt.Palette.from_app(self.app).aggressive.hex
        legend = LEGEND.format(aggressive=aggressive) if self.map.colour_by == "tier" else FIDELITY_LEGEND
        self.map.border_subtitle = f"{axis} axis [$foreground-muted](s)[/]  colour [$foreground-muted](C)[/]  " + legend

    def refresh_legend(self) -> None:
        self._legend()

    def schedule_reload(self, delay: float = 0.25) -> None:
        """Coalesce a burst of changes (a run writing summaries one by one) into one :meth:`reload`.

        A reload of a big tree takes tens of ms; while the user is pressing keys it waits for
        a pause (``RELOAD_QUIET_S``), at most ``RELOAD_MAX_WAIT_S``, so typing never queues
        behind it (bench/bench_tui_latency.py).
        """
        self._figures_fresh = False
        if self._reload_timer is None:
            self._reload_asked = time.monotonic()
            self._reload_timer = self.set_timer(delay, self._timed_reload)

    def _timed_reload(self) -> None:
        now = time.monotonic()
        quiet = now - float(getattr(self.app, "last_input_at", 0.0))
        if quiet < RELOAD_QUIET_S and now - self._reload_asked < RELOAD_MAX_WAIT_S:
            if not self._figures_fresh:
                self.refresh_live_figures()  # the cheap part now; the tree when the keys pause
            self._reload_timer = self.set_timer(RELOAD_QUIET_S - quiet, self._timed_reload)
            return
        self._reload_timer = None
        self.refresh_live()

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """The store changed (a compaction run wrote summaries, an import added episodes)."""
        message.stop()  # the app broadcasts it to every screen; bubbling back would echo it
        if not message.session_ids or self.session_id in message.session_ids:
            self.schedule_reload()

    def on_settings_changed(self, message: SettingsChanged) -> None:
        message.stop()
        if message.settings.policy.fresh_tail != message.previous.policy.fresh_tail:
            self.tree.fresh_tail = message.settings.policy.fresh_tail
            self.reload()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        """This screen's entries for the command palette (with their keys, so it teaches them)."""
        yield PaletteCommand("Next fallback summary", "Jump to the next summary made without the model",
                             lambda: self.action_fallback(1), "f")
        yield PaletteCommand("Previous fallback summary", "Jump to the previous fallback summary",
                             lambda: self.action_fallback(-1), "F")
        yield PaletteCommand("Toggle detail / transcript", "Switch the right-hand pane", self.action_toggle_view, "t")
        yield PaletteCommand("Covering chain", "Summaries covering the current episode, leaf to top",
                             self.action_chain, "c")
        yield PaletteCommand("Map scale: episodes / time", "Draw the coverage map along episodes or time",
                             self.action_toggle_scale, "s")
        yield PaletteCommand("Refresh session", "Re-read this session from the database", self.action_refresh, "r")
        yield from run_commands(self)
        yield from session_tools.commands(self)
        yield from find.session_commands(self)
        yield PaletteCommand("Back to sessions", "Close this session", self.action_back, "esc")

    # ------------------------------------------------------------------ runs (run_dialog.py, runs.py)
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return bool(getattr(self.app, "run_active", False))  # else esc falls through to Back
        return True

    def action_refresh(self) -> None:
        self.reload()
        self.notify("Reloaded from the database.", timeout=1.5)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
