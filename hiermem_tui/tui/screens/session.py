"""One session's summary DAG: tree, coverage map, detail pane and transcript, kept in sync.

Selection flows one way, which keeps the four views consistent: whatever the user picks
(tree cursor, a map bar, a fallback jump, a covering-chain entry) becomes a tree cursor
move, and the tree's ``NodeHighlighted`` updates the map, the detail pane and the transcript.

What the screen shows is held by one plain object, :class:`~hiermem_tui.tui.session_view.SessionView`
(``view``). Keys about what a pane's cursor is on are that pane's (the tree: ``f`` / ``F``, ``c``,
``R``, ``v``, ``x``; the transcript: ``c``, ``P``, ``E``); the ones here are about the whole session
or several panes, and call ``app.runs`` / ``app.nav`` / ``app.planner`` themselves.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Label, Static, TabbedContent, TabPane, Tabs
from textual.widgets.tree import TreeNode

from hiermem_tui.store import Session, StoreError
from hiermem_tui.store.changes import LiveSummaries, SummaryDelta
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import ChainAsked, FidelityMeasured, ReloadSession, SessionsChanged, SettingsChanged
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.run_job import RunAction
from hiermem_tui.tui.screens.base import AppScreen
from hiermem_tui.tui.screens.confirm import redo_confirm_text
from hiermem_tui.tui.screens.session_live import live_update, selection_after
from hiermem_tui.tui.session_view import NodeRef, SessionView
from hiermem_tui.tui.widgets.coverage_map import CoverageMap
from hiermem_tui.tui.widgets.coverage_rows import MapItem
from hiermem_tui.tui.widgets.dag_tree import DagTree
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.backlog_indicator import BacklogIndicator
from hiermem_tui.tui.widgets.brief_panel import BriefPanel
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from hiermem_tui.tui.widgets.transcript import Transcript
from hiermem_tui.words import counted


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
    :meth:`follow_store` (what to show is worked out in ``session_live.py``): a ``SessionsChanged``
    naming this session (or any session) calls ``schedule_reload()``, which coalesces bursts into one
    update.
    """

    CSS_PATH = "session.tcss"
    BINDINGS = [
        Binding("tab", "focus_pane(1)", "Pane", show=True, priority=True, id="session.focus_pane.next"),
        Binding("shift+tab", "focus_pane(-1)", "Pane", show=False, priority=True, id="session.focus_pane.prev"),
        Binding("t", "toggle_view", "Transcript", id="session.toggle_view"),
        # the map's axis and colour: here, not on the map, so they work from the tree (where the user is)
        Binding("s", "toggle_scale", "Scale", id="session.toggle_scale"),
        Binding("C", "toggle_colour", "Colour by fidelity", show=False, key_display="C", id="session.toggle_colour"),
        Binding("r", "refresh", "Refresh", id="session.refresh"),
        Binding("p", "run('full')", "Compact", id="session.run.full"),
        Binding("l", "run('leaf')", "Leaf pass", show=False, id="session.run.leaf"),
        Binding("n", "run('condense')", "Condense", show=False, id="session.run.condense"),
        Binding("W", "resummarize_session", "Redo session", show=False, key_display="W", id="session.resummarize_session"),
        Binding("X", "repair_session", "Repair all", show=False, key_display="X", id="session.repair_session"),
        Binding("M", "measure", "Measure fidelity", show=False, key_display="M", id="session.measure"),
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
        self.view = SessionView(session_id, self.store.episodes)
        self._reload_timer: Timer | None = None
        self._reload_asked = 0.0
        self.figures_fresh = True
        """The header and the map show what the store holds (a reload may still be due for the tree)."""
        self.live = LiveSummaries(self.store, session_id)
        """The session's active summaries, followed incrementally (loaded by :meth:`reload`)."""

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

    @property
    def session(self) -> Session | None:
        """The session's row as last read (``view.session``)."""
        return self.view.session

    @property
    def selected(self) -> NodeRef | None:
        """What the panes show (``view.selected``)."""
        return self.view.selected

    def compose(self) -> ComposeResult:
        with Horizontal(id="topbar"):
            yield Label(Text("◆ hiermem"), id="brand")
            yield Static(id="session-title")
            yield Static(id="session-meta")
        yield BriefPanel(id="session-brief")
        yield CoverageMap(id="coverage")
        with Horizontal(id="session-body"):
            yield DagTree(self.store, self.view, self.settings.policy.fresh_tail, id="dag-tree")
            with TabbedContent(id="session-right", initial="tab-detail"):
                with TabPane("Detail", id="tab-detail"):
                    yield DetailPane(id="node-detail")
                with TabPane("Transcript", id="tab-transcript"):
                    yield Transcript(self.store, self.session_id, id="transcript")
        yield RunIndicator(id="run-indicator")
        yield BacklogIndicator(id="backlog-indicator")
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
        session, selected = self.view.session, self.view.selected
        if session is not None:
            self.render_bar(session)
        if selected is not None:
            self.show(selected, move_transcript=False)
        elif session is not None and session.summaries == 0:
            self.detail.show_empty(session, self.session_id)

    # ------------------------------------------------------------------ loading
    def reload(self) -> None:
        """Re-read the session from the store, keeping open nodes and the selection where possible."""
        view = self.view
        session = view.session = self.store.sessions.get(self.session_id)
        if session is None:
            self.detail.show_empty(None, self.session_id, missing=True)
            return
        year = fmt.local(session.updated_at).year
        for widget in (self.dag_tree, self.map, self.detail, self.transcript):
            widget.ref_year = year
        self.render_bar(session)
        self.query_one(BriefPanel).show_brief(self.store.briefs.active(self.session_id), session.episodes)
        tree = self.dag_tree
        expanded, cursor_key = tree.state()
        previous = view.selected
        roots = tree.load_roots()
        tree.restore(expanded)
        self.live.load()
        self.detail.fidelity_threshold = self.map.fidelity_threshold = self.settings.policy.fidelity_threshold
        self.show_structure(session, roots, marks=view.set_marks(self.store.marks.marked(self.session_id)))
        if cursor_key and self._reselect(cursor_key, previous):
            return
        if session.summaries == 0:
            view.selected = None
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
        """Map, transcript length and tree titles, after the roots changed (spans: ``live``; ``delta``:
        only these summaries changed, so the map changes in place)."""
        tree = self.dag_tree
        self.view.set_structure(roots, self.live.spans.values())
        extras = [self._extra(ref) for ref in roots if ref.kind in ("gap", "tail")]
        if delta is None or delta.reloaded:
            self.map.set_data(self.view.spans, extras, session.episodes, marks)
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
            if self.view.selected is not None and tree.cursor_ref is not None and tree.cursor_ref.key == key:
                self.show(tree.cursor_ref, move_transcript=False)  # same node: refresh the detail only
            return True
        if previous is not None:
            return tree.reveal_seq(previous.first)
        return False

    def _extra(self, ref: NodeRef) -> MapItem:
        """A gap or the fresh tail as the map's episode row draws it (with its times)."""
        _tokens, start, end = self.view.range_figures(ref.first, ref.last)
        return MapItem(ref.key, "gap" if ref.kind == "gap" else "tail", -1, "normal", ref.first, ref.last, start, end)

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
        same = self.view.selected is not None and self.view.selected.key == ref.key
        self.show(ref, node=event.node, move_transcript=not same)

    def show(self, ref: NodeRef, *, node: TreeNode[NodeRef] | None = None, move_transcript: bool = True) -> None:
        view, store = self.view, self.store
        view.selected = ref
        self.map.select(self._map_key(ref, node))
        if ref.kind == "summary" and ref.summary is not None:
            fresh = store.dag.get(ref.summary.id) or ref.summary
            self.detail.show_summary(fresh, sources=store.dag.source_ids(fresh.id), versions=store.dag.versions_with_replaced(fresh.id))
        elif ref.kind == "episode":
            ep = store.episodes.at(self.session_id, ref.first)
            if ep is not None:
                self.detail.show_episode(ep, store.dag.covering_chain(self.session_id, ref.first), view.where(ref.first))
        elif ref.kind in ("gap", "tail", "episodes"):
            tokens, start, end = view.range_figures(ref.first, ref.last)
            self.detail.show_range(ref.kind, ref.first, ref.last, tokens=tokens, start_at=start, end_at=end,
                                   session_id=self.session_id, fresh_tail=self.settings.policy.fresh_tail,
                                   owner=ref.owner)
        if move_transcript:
            self.transcript.show_range(ref.first, ref.last)
        jump = view.take_jump(ref.key)
        if jump is not None:
            self.transcript.jump_to(jump)  # after the range move, not before it

    def _map_key(self, ref: NodeRef, node: TreeNode[NodeRef] | None) -> str | None:
        """The map bar standing for a node: itself, or its nearest summary / gap / tail ancestor."""
        while node is not None and node.data is not None and node.data.kind not in ("summary", "gap", "tail"):
            node = node.parent
        target = node.data if node is not None and node.data is not None else ref
        return target.key if target.kind in ("summary", "gap", "tail") else None

    @on(CoverageMap.Picked)
    def _picked(self, event: CoverageMap.Picked) -> None:
        key = event.item.key
        ok = self.dag_tree.reveal_summary(key[2:]) if key.startswith("s:") else self.dag_tree.reveal_key(key)
        if not ok:
            self.notify("That bar is not in the tree any more; press r to refresh.", severity="warning")

    def on_transcript_cursor_moved(self, event: Transcript.CursorMoved) -> None:
        ep = self.store.episodes.at(self.session_id, event.seq)
        if ep is not None:
            self.detail.show_episode(ep, self.store.dag.covering_chain(self.session_id, event.seq),
                                     self.view.where(event.seq))

    def on_chain_asked(self, message: ChainAsked) -> None:
        """``c`` on the tree or the transcript: the covering chain of that episode; picking one moves the tree."""
        message.stop()
        seq = message.seq
        chain = self.store.dag.covering_chain(self.session_id, seq)
        self.app.nav.covering_chain(seq, chain, self.dag_tree.ref_year, self.view.where(seq), self._chain_picked)

    def _chain_picked(self, summary_id: str | None) -> None:
        if summary_id and self.dag_tree.reveal_summary(summary_id):
            self.dag_tree.focus()

    def on_transcript_mark_asked(self, message: Transcript.MarkAsked) -> None:
        """``P`` / ``E`` on the transcript: pin or exclude the episode, or undo that mark. Pinned text is
        carried verbatim by every summary covering it, excluded text is never given to a model; summaries
        made before the change do not change by themselves, and the notice says so."""
        seq, mark = message.seq, message.mark
        store = self.store
        current = store.marks.of(self.session_id, seq, seq).get(seq)
        new = None if current == mark else mark
        try:
            store.marks.set(self.session_id, seq, new)
        except StoreError as exc:
            self.notify(one_line(str(exc), 300), title="Pin / exclude", severity="error", markup=False)
            return
        covering = store.dag.covering_chain(self.session_id, seq)
        after = f" {len(covering)} summar{'y' if len(covering) == 1 else 'ies'} already cover it: x re-makes them." if (
            covering and new is not None) else ""
        what = {"pin": f"Pinned #{seq}: every summary covering it carries it verbatim.",
                "exclude": f"Excluded #{seq}: no summary will be given its text.",
                None: f"#{seq} is no longer {'pinned' if current == 'pin' else 'excluded'}."}[new]
        self.transcript.refresh_marks()
        self.map.set_marks(self.view.set_marks(store.marks.marked(self.session_id)))
        self.notify(what + after, title="Pin / exclude", timeout=5)

    def _legend(self) -> None:
        axis = "episode" if self.map.scale == "episodes" else "time"
        aggressive = fmt.Palette.from_app(self.app).aggressive.hex
        legend = LEGEND.format(aggressive=aggressive) if self.map.colour_by == "tier" else FIDELITY_LEGEND
        self.map.border_subtitle = f"{axis} axis [$foreground-muted](s)[/]  colour [$foreground-muted](C)[/]  " + legend

    # ------------------------------------------------------------------ keeping up with the store
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
                self.follow_store(tree=False)  # the cheap part now; the tree when the keys pause
            self._reload_timer = self.set_timer(RELOAD_QUIET_S - quiet, self._timed_reload)
            return
        self._reload_timer = None
        self.follow_store()

    def follow_store(self, *, tree: bool = True) -> None:
        """Apply what the store gained since the screen last looked (:func:`live_update`): the header,
        the map and the transcript's length, and with ``tree`` the tree's roots and the selection
        (:func:`selection_after`); without it, the cheap part while the user is typing."""
        dag = self.dag_tree
        update = live_update(self.store, self.live, dag.roots, dag.fresh_tail)
        if update is None:
            return
        session = self.view.session = update.session
        self.render_bar(session)
        self.figures_fresh = True
        if not tree:
            self.show_structure(session, update.roots, delta=update.delta, tree_titles=False)
            return
        previous = self.view.selected
        kept = dag.update_roots(update.roots)
        self.show_structure(session, dag.roots, delta=update.delta)
        follow = selection_after(previous, kept, dag.cursor_ref, dag.roots, session.summaries)
        if follow is None:
            return
        if follow.how == "reveal":
            dag.reveal_seq(follow.ref.first)
        elif follow.how == "show":
            self.show(follow.ref, node=dag.cursor_node, move_transcript=False)
        else:
            node = dag.cursor_node if follow.ref is dag.cursor_ref else dag.node_for(follow.ref.key)
            if node is not None and node.data is not None:
                dag.focus_node(node)
                self.show(node.data, node=node, move_transcript=False)

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """The store changed (a compaction run wrote summaries, an import added episodes)."""
        message.stop()  # the app broadcasts it to every screen; bubbling back would echo it
        if not message.session_ids or self.session_id in message.session_ids:
            self.schedule_reload()

    def on_reload_session(self, message: ReloadSession) -> None:
        """Re-read now: the app asks (a dialog about this session just closed), or the tree does (a
        version was restored)."""
        message.stop()
        if message.session_id == self.session_id:
            self.reload()

    def on_settings_changed(self, message: SettingsChanged) -> None:
        message.stop()
        if message.settings.policy.fresh_tail != message.previous.policy.fresh_tail:
            self.dag_tree.fresh_tail = message.settings.policy.fresh_tail
            self.reload()
        if message.settings.mask_secrets != message.previous.mask_secrets:
            self.transcript.repaint_text()
            self.reload()

    # ------------------------------------------------------------------ keys: panes, the map, the session
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.app.runs.active  # else esc falls through to Back
        return True

    def _transcript_shown(self) -> bool:
        return self.query_one(TabbedContent).active == "tab-transcript"

    def _panes(self) -> list[Widget]:
        right: Widget = self.transcript if self._transcript_shown() else self.detail
        return [self.dag_tree, self.map, right]

    def action_focus_pane(self, delta: int) -> None:
        """Cycle focus tree → map → detail/transcript (skipping the tab strip)."""
        panes = self._panes()
        focused = self.focused
        index = next((i for i, w in enumerate(panes) if focused is not None and
                      (focused is w or w in focused.ancestors)), -1)
        panes[(index + delta) % len(panes)].focus()

    def action_toggle_view(self) -> None:
        """``t``: the detail pane ↔ the transcript (the focus follows when it was on that side)."""
        right_focused = self.focused in (self.detail, self.transcript)
        self.query_one(TabbedContent).active = "tab-detail" if self._transcript_shown() else "tab-transcript"
        if right_focused:
            self._panes()[2].focus()

    def action_toggle_scale(self) -> None:
        """``s``: the map along episodes ↔ along time (not for a session whose source kept no times)."""
        session = self.view.session
        if session is not None and not session.times_known and self.map.scale == "episodes":
            self.notify("No times: its source kept none, so the time axis cannot apply.", severity="warning",
                        timeout=5, markup=False)
            return
        self.map.toggle_scale()
        self._legend()

    def action_toggle_colour(self) -> None:
        """``C``: the map coloured by tier ↔ by fidelity."""
        self.map.fidelity_threshold = self.settings.policy.fidelity_threshold
        mode = self.map.toggle_colour()
        self._legend()
        self.notify("Coverage map: colour by " + ("identifier retention" if mode == "fidelity" else "tier"),
                    timeout=2)

    def action_refresh(self) -> None:
        self.reload()
        self.notify("Reloaded from the database.", timeout=1.5)

    def _subject(self) -> str:
        session = self.view.session
        return (session.title if session else "") or self.session_id

    def action_run(self, pass_: str) -> None:
        """``p`` / ``l`` / ``n``: the run dialog with that pass chosen."""
        self.app.runs.request(cast(RunAction, pass_), self.session_id, subject=self._subject())

    def action_resummarize_session(self) -> None:
        """``W``: supersede every active summary, then a fresh full pass (after a confirmation)."""
        app = self.app
        detail = Text("Supersedes every active summary of this session (they are kept), then runs a fresh full pass. "
                      "You confirm after choosing the model.")
        app.runs.request("resummarize-session", self.session_id, subject=self._subject(), detail=detail,
                         confirm=lambda choice: redo_confirm_text(app, self.session_id, choice.backend, choice.model))

    def action_repair_session(self) -> None:
        """``X``: one run re-making every summary of the session that needs it."""
        detail = Text("Re-makes every fallback, every summary keeping less than "
                      f"{fmt.percent(self.settings.policy.fidelity_threshold)} of its sources' key names and every "
                      "summary missing a pinned episode, with the summaries above them. The old versions are kept "
                      "as superseded.")
        self.app.runs.request("repair", self.session_id, subject=self._subject(), detail=detail)

    def action_measure(self) -> None:
        """``M``: measure the session's summaries made before fidelity was measured (a thread worker:
        a long session reads all its episodes once), then reload."""
        planner, session_id = self.app.planner, self.session_id
        threshold = self.settings.policy.fidelity_threshold

        def work() -> None:
            try:
                measured, low = planner.measure(session_id)
            except StoreError as exc:
                self.post_message(FidelityMeasured(session_id, "", one_line(str(exc), 300)))
                return
            text = (f"{counted(measured, 'summary')} measured; {low} keep under {fmt.percent(threshold)} of their "
                    "key names" + (": x repairs the selected one, X all of them" if low else ""))
            self.post_message(FidelityMeasured(session_id, text))

        self.notify("Measuring what each summary kept of its sources…", title="Measure fidelity", timeout=2)
        self.app.store_worker(self, work, group="measure", exclusive=True)

    def on_fidelity_measured(self, message: FidelityMeasured) -> None:
        """The measure worker's answer, on the UI thread: reload and say what was found."""
        if message.session_id != self.session_id:
            return
        if message.error is not None:
            self.notify(message.error, title="Measure fidelity", severity="error", markup=False)
            return
        self.reload()
        self.notify(message.text, title="Measure fidelity", markup=False)

    def action_find(self) -> None:
        self.app.nav.search(self.session_id)

    def action_model_view(self) -> None:
        self.app.nav.context(self.session_id)

    def action_stats(self) -> None:
        self.app.nav.stats(self.session_id)

    def action_history(self) -> None:
        self.app.nav.history(self.session_id)

    def action_cancel_run(self) -> None:
        if self.app.runs.cancel():
            self.notify("Cancelling: the model call is being aborted; finished summaries are kept.", timeout=3)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        """This screen's entries for the command palette (with their keys, so it teaches them)."""
        tree, transcript = self.dag_tree, self.transcript
        yield PaletteCommand("Next fallback summary", "Jump to the next summary made without the model",
                             lambda: tree.action_fallback(1), "f")
        yield PaletteCommand("Previous fallback summary", "Jump to the previous fallback summary",
                             lambda: tree.action_fallback(-1), "F")
        yield PaletteCommand("Toggle detail / transcript", "Switch the right-hand pane", self.action_toggle_view, "t")
        yield PaletteCommand("Covering chain", "Summaries covering the current episode, leaf to top",
                             lambda: (transcript if self._transcript_shown() else tree).action_chain(), "c")
        yield PaletteCommand("Map scale: episodes / time", "Draw the coverage map along episodes or time",
                             self.action_toggle_scale, "s")
        yield PaletteCommand("Refresh session", "Re-read this session from the database", self.action_refresh, "r")
        yield PaletteCommand("Compact: full pass", "Leaves, then condensations until nothing is eligible",
                             lambda: self.action_run("full"), "p")
        yield PaletteCommand("Compact: leaf pass", "Summarise unsummarised episodes outside the fresh tail",
                             lambda: self.action_run("leaf"), "l")
        yield PaletteCommand("Compact: condensation pass", "Condense same-depth summaries into the next depth",
                             lambda: self.action_run("condense"), "n")
        yield PaletteCommand("Re-summarise the selected summary", "A new version, compared with the old one",
                             tree.action_resummarize, "R")
        yield PaletteCommand("Re-summarise the whole session", "Supersede every summary and run a fresh full pass",
                             self.action_resummarize_session, "W")
        yield PaletteCommand("Versions of the selected summary", "Browse superseded versions and restore one",
                             tree.action_versions, "v")
        yield PaletteCommand("Repair the selected summary",
                             "Re-make it if it is a fallback, low-fidelity or misses a pin", tree.action_repair, "x")
        yield PaletteCommand("Repair the whole session", "One run re-making every summary that needs it",
                             self.action_repair_session, "X")
        yield PaletteCommand("Measure fidelity", "What each summary kept of its sources' identifiers",
                             self.action_measure, "M")
        yield PaletteCommand("Map colour: tier / fidelity",
                             "Colour the coverage map by tier or by identifier retention", self.action_toggle_colour, "C")
        yield PaletteCommand("Pin the current episode",
                             "Every summary covering it must carry it verbatim (again: undo)",
                             lambda: transcript.action_mark("pin"), "P")
        yield PaletteCommand("Exclude the current episode", "No summary is given its text (again: undo)",
                             lambda: transcript.action_mark("exclude"), "E")
        yield from self.app.nav.session_commands(self.session_id)
        yield PaletteCommand("Back to sessions", "Close this session", self.action_back, "esc")

    # ------------------------------------------------------------------ jumps from other screens
    def focus_summary(self, summary_id: str) -> bool:
        """Select an active summary in the tree and show its detail (a search hit, a run's summary)."""
        if not self.dag_tree.reveal_summary(summary_id):
            return False
        self.query_one(TabbedContent).active = "tab-detail"
        self.dag_tree.focus()
        return True

    def focus_episode(self, seq: int) -> bool:
        """Select what covers episode ``seq`` in the tree, then put the transcript cursor on it.

        The tree's highlight comes as a message and moves the transcript to the start of the
        range; the jump to ``seq`` waits for that message (``view.pending_jump``) so it lands last.
        """
        tree = self.dag_tree
        if not tree.reveal_seq(seq):
            return False
        ref = tree.cursor_ref
        self.query_one(TabbedContent).active = "tab-transcript"
        selected = self.view.selected
        if ref is not None and selected is not None and selected.key == ref.key:
            self.transcript.jump_to(seq)
        elif ref is not None:
            self.view.pending_jump = (ref.key, seq)
        self.transcript.focus()
        return True
