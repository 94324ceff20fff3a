"""One session's summary DAG: tree, coverage map, detail pane and transcript, kept in sync.

Selection flows one way, which keeps the four views consistent: whatever the user picks
(tree cursor, a map bar, a fallback jump, a covering-chain entry) becomes a tree cursor
move, and the tree's ``NodeHighlighted`` updates the map, the detail pane and the transcript.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Footer, Label, Static, TabbedContent, TabPane, Tabs
from textual.widgets.tree import TreeNode

from hiermem_tui.store import Session, SummarySpan
from hiermem_tui.store.changes import SummaryDelta
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import FidelityMeasured, ReloadSession, SessionsChanged, SettingsChanged
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens import session_tools
from hiermem_tui.tui.screens.base import AppScreen
from hiermem_tui.tui.screens.run_launch import run_commands
from hiermem_tui.tui.screens.session_keys import SessionKeys
from hiermem_tui.tui.screens.session_live import LiveSession
from hiermem_tui.tui.widgets.coverage_map import CoverageMap
from hiermem_tui.tui.widgets.coverage_rows import MapItem
from hiermem_tui.tui.widgets.dag_tree import DagTree, NodeRef
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from hiermem_tui.tui.widgets.transcript import Transcript


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


class SessionScreen(AppScreen[None]):
    """The DAG inspector for one session.

    ``reload()`` re-reads everything from the store and keeps the open nodes and the
    selection (``r``, a policy change). What lands while the screen is open — summaries a run
    writes, episodes and summaries from another process — is applied in place by
    ``updates.refresh()`` (:class:`LiveSession`): a ``SessionsChanged`` naming this session (or
    any session) calls ``schedule_reload()``, which coalesces bursts into one update. What the
    keys do is in :class:`SessionKeys` (``keys``); each ``action_`` here is one line.
    """

    CSS_PATH = "session.tcss"
    BINDINGS = [
        Binding("tab", "focus_pane(1)", "Pane", show=True, priority=True, id="session.focus_pane.next"),
        Binding("shift+tab", "focus_pane(-1)", "Pane", show=False, priority=True, id="session.focus_pane.prev"),
        Binding("t", "toggle_view", "Transcript", id="session.toggle_view"),
        Binding("f", "fallback(1)", "Fallback", id="session.fallback.next"),
        Binding("F,shift+f", "fallback(-1)", "Prev fallback", key_display="F", show=False, id="session.fallback.prev"),
        Binding("c", "chain", "Chain", id="session.chain"),
        Binding("s", "toggle_scale", "Scale", id="session.toggle_scale"),
        Binding("r", "refresh", "Refresh", id="session.refresh"),
        Binding("p", "run('full')", "Compact", id="session.run.full"),
        Binding("l", "run('leaf')", "Leaf pass", show=False, id="session.run.leaf"),
        Binding("n", "run('condense')", "Condense", show=False, id="session.run.condense"),
        Binding("R", "resummarize", "Re-summarise", key_display="R", id="session.resummarize"),
        Binding("W", "resummarize_session", "Redo session", show=False, key_display="W", id="session.resummarize_session"),
        Binding("v", "versions", "Versions", id="session.versions"),
        Binding("x", "repair", "Repair", id="session.repair"),
        Binding("X", "repair_session", "Repair all", show=False, key_display="X", id="session.repair_session"),
        Binding("M", "measure", "Measure fidelity", show=False, key_display="M", id="session.measure"),
        Binding("C", "toggle_colour", "Colour by fidelity", show=False, key_display="C", id="session.toggle_colour"),
        Binding("P", "mark('pin')", "Pin episode", show=False, key_display="P", id="session.mark.pin"),
        Binding("E", "mark('exclude')", "Exclude episode", show=False, key_display="E", id="session.mark.exclude"),
        # search, context, stats, run history (tui/navigation.py): the footer is full here; palette and help list them
        Binding("slash", "find", "Search", key_display="/", show=False, id="session.find"),
        Binding("m", "model_view", "Model view", show=False, id="session.model_view"),
        Binding("i", "stats", "Stats", show=False, id="session.stats"),
        Binding("h", "history", "Runs", show=False, id="session.history"),
        Binding("escape", "cancel_run", "Cancel run", key_display="esc", id="session.cancel_run"),  # before Back: wins while a run goes
        Binding("escape", "back", "Back", key_display="esc", id="session.back"),
        Binding("backspace", "back", "Back", show=False, id="session.back.backspace"),  # not shown: "esc" says it, and means cancel mid-run
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
        self.figures_fresh = True
        """The header and the map show what the store holds (a reload may still be due for the tree)."""
        self.pending_jump: tuple[str, int] | None = None
        """A transcript jump waiting for the tree's highlight of that node (``focus_episode``)."""
        self.keys = SessionKeys(self)
        self.updates = LiveSession(self)

    # ------------------------------------------------------------------ plumbing
    @property
    def dag_tree(self) -> DagTree:
        """The tree of summaries (not ``tree``: that is every DOM node's view of its children)."""
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
        self.dag_tree.border_title = "Summary DAG"
        self.reload()
        self.dag_tree.focus()
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self.call_after_refresh(self._retheme)

    def _retheme(self) -> None:
        """Redraw what holds theme colours baked into Text (the widgets redraw themselves)."""
        self._legend()
        if self.session is not None:
            self.render_bar(self.session)
        if self.selected is not None:
            self.show(self.selected, move_transcript=False)
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
        for widget in (self.dag_tree, self.map, self.detail, self.transcript):
            widget.ref_year = year
        self.render_bar(session)
        tree = self.dag_tree
        expanded, cursor_key = tree.state()
        previous = self.selected
        roots = tree.load_roots()
        tree.restore(expanded)
        self.updates.summaries.load()
        self.detail.fidelity_threshold = self.map.fidelity_threshold = self.settings.policy.fidelity_threshold
        self.show_structure(session, roots, marks=self._marks())
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

    def show_structure(self, session: Session, roots: list[NodeRef], *, delta: SummaryDelta | None = None,
                        tree_titles: bool = True, marks: list[MapItem] | None = None) -> None:
        """Map, transcript length and tree titles, after the roots changed (spans: ``updates.summaries``;
        ``delta``: only these summaries changed, so the map changes in place)."""
        tree = self.dag_tree
        self.spans = list(self.updates.summaries.spans.values())
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
        tree = self.dag_tree
        if tree.reveal_key(key) or (key.startswith("s:") and tree.reveal_summary(key[2:])):
            if self.selected is not None and tree.cursor_ref is not None and tree.cursor_ref.key == key:
                self.show(tree.cursor_ref, move_transcript=False)  # same node: refresh the detail only
            return True
        if previous is not None:
            return tree.reveal_seq(previous.first)
        return False

    def _marks(self) -> list[MapItem]:
        """Pinned and excluded episodes, as ticks on the map's episode row."""
        return [MapItem("", mark, -1, "normal", seq, seq, at, at)
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

    def render_bar(self, s: Session) -> None:
        """Title (literal) in the top bar; the session's figures as the coverage map's title."""
        p = fmt.Palette.from_app(self.app)
        title = Text(one_line(self.app.shown(s.title) or "(untitled)", 200), style=fmt.style(p.foreground, bold=True))
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
        self.show(ref, node=event.node, move_transcript=not same)

    def show(self, ref: NodeRef, *, node: TreeNode[NodeRef] | None = None, move_transcript: bool = True) -> None:
        self.selected = ref
        store = self.store
        self.map.select(self._map_key(ref, node))
        if ref.kind == "summary" and ref.summary is not None:
            fresh = store.dag.get(ref.summary.id) or ref.summary
            self.detail.show_summary(fresh, sources=store.dag.source_ids(fresh.id), versions=store.dag.versions(fresh.id))
        elif ref.kind == "episode":
            ep = store.episodes.at(self.session_id, ref.first)
            if ep is not None:
                self.detail.show_episode(ep, store.dag.covering_chain(self.session_id, ref.first), self.where(ref.first))
        elif ref.kind in ("gap", "tail", "episodes"):
            tokens, start, end = self._stats(ref.first, ref.last)
            self.detail.show_range(ref.kind, ref.first, ref.last, tokens=tokens, start_at=start, end_at=end,
                                   session_id=self.session_id, fresh_tail=self.settings.policy.fresh_tail,
                                   owner=ref.owner)
        if move_transcript:
            self.transcript.show_range(ref.first, ref.last)
        if self.pending_jump is not None and self.pending_jump[0] == ref.key:
            self.transcript.jump_to(self.pending_jump[1])  # after the range move, not before it
            self.pending_jump = None

    def _map_key(self, ref: NodeRef, node: TreeNode[NodeRef] | None) -> str | None:
        """The map bar standing for a node: itself, or its nearest summary / gap / tail ancestor."""
        while node is not None and node.data is not None and node.data.kind not in ("summary", "gap", "tail"):
            node = node.parent
        target = node.data if node is not None and node.data is not None else ref
        return target.key if target.kind in ("summary", "gap", "tail") else None

    def where(self, seq: int) -> str | None:
        for ref in self.dag_tree.roots:
            if ref.kind in ("gap", "tail") and ref.first <= seq <= ref.last:
                return "fresh tail: kept raw on purpose" if ref.kind == "tail" else "unsummarised gap"
        return None

    @on(CoverageMap.Picked)
    def _picked(self, event: CoverageMap.Picked) -> None:
        key = event.item.key
        ok = self.dag_tree.reveal_summary(key[2:]) if key.startswith("s:") else self.dag_tree.reveal_key(key)
        if not ok:
            self.notify("That bar is not in the tree any more; press r to refresh.", severity="warning")

    def on_transcript_cursor_moved(self, event: Transcript.CursorMoved) -> None:
        ep = self.store.episodes.at(self.session_id, event.seq)
        if ep is not None:
            self.detail.show_episode(ep, self.store.dag.covering_chain(self.session_id, event.seq), self.where(event.seq))

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
        self.figures_fresh = False
        if self._reload_timer is None:
            self._reload_asked = time.monotonic()
            self._reload_timer = self.set_timer(delay, self._timed_reload)

    def _timed_reload(self) -> None:
        now = time.monotonic()
        quiet = now - self.app.last_input_at
        if quiet < RELOAD_QUIET_S and now - self._reload_asked < RELOAD_MAX_WAIT_S:
            if not self.figures_fresh:
                self.updates.refresh_figures()  # the cheap part now; the tree when the keys pause
            self._reload_timer = self.set_timer(RELOAD_QUIET_S - quiet, self._timed_reload)
            return
        self._reload_timer = None
        self.updates.refresh()

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """The store changed (a compaction run wrote summaries, an import added episodes)."""
        message.stop()  # the app broadcasts it to every screen; bubbling back would echo it
        if not message.session_ids or self.session_id in message.session_ids:
            self.schedule_reload()

    def on_reload_session(self, message: ReloadSession) -> None:
        """The app asks: re-read now (a dialog about this session just closed)."""
        message.stop()
        if message.session_id == self.session_id:
            self.reload()

    def on_fidelity_measured(self, message: FidelityMeasured) -> None:
        if message.session_id == self.session_id:
            session_tools.measured(self, message)

    def on_settings_changed(self, message: SettingsChanged) -> None:
        message.stop()
        if message.settings.policy.fresh_tail != message.previous.policy.fresh_tail:
            self.dag_tree.fresh_tail = message.settings.policy.fresh_tail
            self.reload()
        if message.settings.mask_secrets != message.previous.mask_secrets:
            self.transcript.repaint_text()
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
        yield from self.app.nav.session_commands(self.session_id)
        yield PaletteCommand("Back to sessions", "Close this session", self.action_back, "esc")

    # ------------------------------------------------------------------ runs (run_dialog.py, runs.py)
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.app.runs.active  # else esc falls through to Back
        return True

    def action_refresh(self) -> None:
        self.reload()
        self.notify("Reloaded from the database.", timeout=1.5)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    # ------------------------------------------------------------------ keys (session_keys.py)
    def action_focus_pane(self, delta: int) -> None:
        self.keys.focus_pane(delta)

    def action_toggle_view(self) -> None:
        self.keys.toggle_view()

    def action_fallback(self, direction: int) -> None:
        self.keys.fallback(direction)

    def action_chain(self) -> None:
        self.keys.chain()

    def action_toggle_scale(self) -> None:
        self.keys.toggle_scale()

    def action_cancel_run(self) -> None:
        self.keys.cancel_run()

    def action_run(self, pass_: str) -> None:
        self.keys.run(pass_)

    def action_resummarize(self) -> None:
        self.keys.resummarize()

    def action_resummarize_session(self) -> None:
        self.keys.resummarize_session()

    def action_versions(self) -> None:
        self.keys.versions()

    def action_repair(self) -> None:
        self.keys.repair()

    def action_repair_session(self) -> None:
        self.keys.repair_session()

    def action_measure(self) -> None:
        self.keys.measure()

    def action_toggle_colour(self) -> None:
        self.keys.toggle_colour()

    def action_mark(self, mark: str) -> None:
        self.keys.mark(mark)

    def action_find(self) -> None:
        self.keys.find()

    def action_model_view(self) -> None:
        self.keys.model_view()

    def action_stats(self) -> None:
        self.keys.stats()

    def action_history(self) -> None:
        self.keys.history()

    # ------------------------------------------------------------------ jumps from other screens
    def focus_summary(self, summary_id: str) -> bool:
        """Select an active summary in the tree and show its detail (a search hit, a run's summary)."""
        return self.keys.focus_summary(summary_id)

    def focus_episode(self, seq: int) -> bool:
        """Select what covers episode ``seq`` and put the transcript cursor on it."""
        return self.keys.focus_episode(seq)

    def current_episode(self) -> int | None:
        """The episode the user is on: the transcript cursor, an episode node, or the detail's."""
        return self.keys.current_episode()
