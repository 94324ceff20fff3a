"""The home screen: every session in the database, sortable, filterable, one key from opening.

Why it is built this way: the table is virtual (see ``SessionsTable``), so this screen stays
instant on 10k sessions; the filter runs in SQL after a short debounce, so typing never
waits on the database; an empty database gets a page that says what to do next instead of
an empty grid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.containers import Container, Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, Static

from hiermem_tui.store import Session
from hiermem_tui.textsafe import one_line, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import SessionsChanged, SettingsChanged
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.widgets.backend_status import BackendIndicator
from hiermem_tui.tui.backlog_view import session_state
from hiermem_tui.tui.widgets.backlog_indicator import BacklogIndicator
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from hiermem_tui.tui.widgets.session_columns import SORT_LABELS, SORTABLE, fmt_when, session_when
from hiermem_tui.tui.widgets.sessions_table import SessionsTable
from hiermem_tui.tui.screens.base import AppScreen


FILTER_DEBOUNCE_S = 0.15


def display_path(path: Path) -> str:
    """The DB path as a user would type it (home as ``~``)."""
    try:
        return "~/" + str(path.expanduser().resolve().relative_to(Path.home())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def empty_state_text(db: str) -> Content:
    """What an empty database shows: how to fill it (theme colours via Content styles)."""
    return Content.assemble(
        ("No sessions yet", "bold $text-accent"),
        "\n\nImport your chat history: press ",
        ("I", "bold $text-primary"),
        " to see what is on this machine\n    ",
        ("Claude Code, Codex, oterm, llm, Open WebUI, lossless-claw, lossless-code", "$foreground-muted"),
        "\nor from a shell:\n    ",
        ("hiermem-tui import PATH", "bold $text-primary"),
        ("\n    also ChatGPT and Claude exports, ShareGPT, JSONL", "$foreground-muted"),
        "\n\nOr explore the bundled demo data:\n    ",
        ("hiermem-tui --demo", "bold $text-primary"),
        ("\n\nDatabase  ", "$foreground-muted"),
        (db, "$foreground-muted"),
    )


def detail_text(session: Session | None, when: str, threshold: float = 0.5) -> Content:
    """Two lines about the highlighted session; ``when`` is its formatted last activity."""
    if session is None:
        return Content("")
    muted = "$foreground-muted"
    parts: list[str | tuple[str, str]] = [(one_line(session.title or "(untitled)", 300), "bold"), "\n"]
    fields = [
        ("id", visible(session.id)),
        ("source", one_line(session.source, 40)),
        ("active", when),
        ("episodes", f"{session.episodes:,}"),
        ("tokens", fmt.tokens(session.tokens)),
        ("model sees", f"{fmt.tokens(session.uncompacted_tokens)} tok"),
        ("unsummarised", f"{max(0, session.new_episodes):,} ep"),
    ]
    for i, (label, value) in enumerate(fields):
        parts += [(" · " if i else "", muted), (f"{label} ", muted), value]
    if session.fallbacks:
        parts += [(" · ", muted), (f"▲ {session.fallbacks} fallback", "bold $text-warning")]
    low = session.min_retention
    if low is not None and low < threshold:
        parts += [(" · ", muted), (f"◇ a summary keeps only {fmt.percent(low)} of its key names", "bold $text-warning")]
    return Content.assemble(*parts)


class SessionsScreen(AppScreen[None]):
    """Home: the sessions table with its filter, header and detail line."""

    AUTO_FOCUS = "#sessions"

    BINDINGS = [
        Binding("escape", "cancel_run", "Cancel run", key_display="esc", id="sessions.cancel_run"),  # first: wins while a run goes
        Binding("slash", "filter", "Filter", key_display="/", id="sessions.filter"),
        Binding("s", "cycle_sort", "Sort", id="sessions.cycle_sort"),
        Binding("S", "reverse_sort", "Reverse", key_display="S", id="sessions.reverse_sort"),
        Binding("p", "compact", "Compact", id="sessions.compact"),
        Binding("f", "find", "Search", id="sessions.find"),
        Binding("i", "stats", "Stats", show=False, id="sessions.stats"),  # footer space is short at 80 columns: help and palette
        Binding("h", "history", "Runs", show=False, id="sessions.history"),
        Binding("I", "import_sources", "Import", key_display="I", show=False, id="sessions.import"),  # offered by the empty state
        Binding("escape", "clear_filter", "Clear filter", key_display="esc", id="sessions.clear_filter"),
    ]


    def compose(self) -> ComposeResult:
        app = self.app
        with Horizontal(id="topbar"):
            yield Label(Text("◆ hiermem"), id="brand")
            yield Label(Text(display_path(app.store.path)), id="db-path")
            if app.store.readonly:
                yield Label(Text("read-only"), id="readonly-badge", classes="badge")
            yield Label(id="index-badge", classes="badge")
            yield BackendIndicator(id="backend")
        with Vertical(id="sessions-body"):
            with Horizontal(id="filter-bar"):
                yield Label(Text("/ filter"), id="filter-label")
                yield Input(placeholder="title, id or source…   enter: keep   esc: clear", id="filter", compact=True)
            table = SessionsTable(app.store, clock=app.clock, id="sessions")
            table.shown = app.shown if app.settings.mask_secrets else None
            table.fidelity_threshold = app.settings.policy.fidelity_threshold
            yield table
            yield Static(id="detail")
        with Container(id="empty-wrap"):
            yield Static(empty_state_text(display_path(app.store.path)), id="empty-state")
        yield RunIndicator(id="run-indicator")
        yield BacklogIndicator(id="backlog-indicator")
        yield Footer()

    def on_mount(self) -> None:
        self._debounce: Timer | None = None
        self.query_one("#filter-bar").display = False
        self._update_empty_state()
        self.watch(self.app, "index_progress", self._show_indexing, init=True)
        # the state column: repaint the visible rows (a lookup per row) when the backlog moves
        self.watch(self.app, "backlog_waiting", self._repaint_states, init=True)
        self.watch(self.app, "backlog_run", self._repaint_states, init=False)

    def _repaint_states(self) -> None:
        """The state column appears once something is known of the backlog (a plan, or a run)."""
        app, table = self.app, self.table
        known = app.backlog_waiting is not None or app.backlog_run is not None
        if known and table.state_of is None:
            table.state_of = lambda sid: session_state(sid, app.backlog_waiting, app.backlog_run)
        elif not known:
            table.state_of = None
        table.refresh()

    def _show_indexing(self, progress: tuple[int, int] | None) -> None:
        """The search index building in the background (the sessions are usable meanwhile)."""
        badge = self.query_one("#index-badge", Label)
        badge.display = progress is not None
        if progress is not None:
            done, total = progress
            badge.update(Text(f"indexing for search {fmt.percent(done / total if total else 1)} "
                              f"· {done:,} of {total:,} rows"))

    @property
    def table(self) -> SessionsTable:
        return self.query_one("#sessions", SessionsTable)

    def _update_empty_state(self) -> None:
        empty = self.is_empty
        self.query_one("#empty-wrap").display = empty
        self.query_one("#sessions-body").display = not empty
        if empty:
            self.set_focus(None)
        elif self.focused is None:
            self.table.focus()
        shown = (empty, bool(self.table.filter_text) or bool(self.query_one("#filter-bar").display))
        if shown != getattr(self, "_footer_state", None):
            # Only when what the footer offers changes: refreshing bindings rebuilds the footer,
            # and a running compaction reloads this table after every summary it writes.
            self._footer_state = shown
            self.refresh_bindings()

    @property
    def is_empty(self) -> bool:
        """The database has no sessions at all (not: the filter matches none)."""
        return self.table.row_count == 0 and not self.table.filter_text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the list's keys while there is no list to act on."""
        if action == "cancel_run":
            return self.app.runs.active
        if action in {"filter", "cycle_sort", "reverse_sort", "sort", "open", "compact", "find", "history"}:
            return not self.is_empty
        if action == "clear_filter":
            return bool(self.table.filter_text) or self.query_one("#filter-bar").display
        return True

    # ------------------------------------------------------------------ table events
    @on(SessionsTable.Changed)
    def _table_changed(self) -> None:
        table = self.table
        total = table.row_count
        title = Text.assemble(("Sessions ", "bold"), f"{total:,}")
        if table.filter_text:
            title.append(f" matching “{one_line(table.filter_text, 40)}”")
        table.border_title = title
        arrow = "▼" if table.descending else "▲"
        table.border_subtitle = Text(f"sorted by {SORT_LABELS.get(table.sort, table.sort)} {arrow}")
        self._update_empty_state()

    @on(SessionsTable.Highlighted)
    def _highlighted(self, event: SessionsTable.Highlighted) -> None:
        session = event.session
        when = ""
        if session is not None and self.app.settings.mask_secrets:
            session = replace(session, title=self.app.shown(session.title))
        if session is not None:
            when = (session_when(session, self.app.clock()) if session.times_known else
                    f"no times (imported {fmt_when(session.updated_at, self.app.clock())}; "
                    "listed after the dated chats)")
        detail = self.query_one("#detail", Static)
        detail.update(detail_text(session, when, self.app.settings.policy.fidelity_threshold))
        detail.display = session is not None

    @on(SessionsTable.Selected)
    def _selected(self, event: SessionsTable.Selected) -> None:
        self.app.nav.session(event.session_id)

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        self.table.reload()

    def on_settings_changed(self, message: SettingsChanged) -> None:
        """A new fidelity threshold changes which sessions are flagged; masking secrets, the titles."""
        threshold = message.settings.policy.fidelity_threshold
        self.table.shown = self.app.shown if message.settings.mask_secrets else None
        if threshold != self.table.fidelity_threshold or message.settings.mask_secrets != message.previous.mask_secrets:
            self.table.fidelity_threshold = threshold
            self.table.reload()

    def on_screen_resume(self) -> None:
        # A session screen may have compacted something while we were hidden.
        if self.is_mounted:
            self.table.reload()

    # ------------------------------------------------------------------ filter
    def action_filter(self) -> None:
        self.query_one("#filter-bar").display = True
        self.query_one("#filter", Input).focus()
        self.refresh_bindings()

    @on(Input.Changed, "#filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        value = event.value
        self._debounce = self.set_timer(FILTER_DEBOUNCE_S, lambda: self.table.set_filter(value))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self.table.set_filter(event.value)
        if not event.value.strip():
            self.query_one("#filter-bar").display = False
        self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if self._debounce is not None:
            self._debounce.stop()
        box.value = ""
        self.query_one("#filter-bar").display = False
        self.table.set_filter("")
        self.table.focus()
        self.refresh_bindings()

    # ------------------------------------------------------------------ sort
    def action_cycle_sort(self) -> None:
        self.table.cycle_sort()

    def action_reverse_sort(self) -> None:
        self.table.reverse_sort()

    def action_sort(self, key: str) -> None:
        self.table.set_sort(key, next(c.desc_first for c in SORTABLE if c.key == key))

    def action_open(self) -> None:
        self.table.action_select()

    def action_cancel_run(self) -> None:
        if self.app.runs.cancel():
            self.notify("Cancelling: the model call is being aborted; finished summaries are kept.", timeout=3)

    def action_compact(self) -> None:
        """Compact the highlighted session without opening it (the run dialog, full pass chosen)."""
        session = self.table.session_at(self.table.cursor_row)
        if session is None:
            return
        self.app.runs.request("full", session.id, subject=session.title or session.id)

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Open session", "Open the highlighted session", self.action_open, "enter")
        yield PaletteCommand("Filter sessions", "Type to narrow by title, id or source", self.action_filter, "/")
        yield PaletteCommand("Compact the highlighted session", "Run a compaction pass without opening it",
                             self.action_compact, "p")
        yield PaletteCommand("Clear filter", "Show every session again", self.action_clear_filter, "esc")
        for column in SORTABLE:
            label = SORT_LABELS.get(column.key, column.key)
            yield PaletteCommand(
                f"Sort by {label}", f"Order sessions by {label}", partial(self.action_sort, column.key)
            )
        yield PaletteCommand("Next sort column", "Cycle the sort column", self.action_cycle_sort, "s")
        yield PaletteCommand("Reverse sort order", "Ascending ↔ descending", self.action_reverse_sort, "S")
        yield PaletteCommand("Reload sessions", "Re-read the database", self.table.reload)
        yield from self.app.nav.home_commands()

    def action_find(self) -> None:
        self.app.nav.search()

    def action_stats(self) -> None:
        self.app.nav.stats()

    def action_history(self) -> None:
        self.app.nav.history()

    def action_import_sources(self) -> None:
        self.app.nav.import_sources()
