"""Full-text search: type, see ranked hits with their matching words marked, jump to one.

Why it is built this way: the query runs in a thread worker a moment after the last key
(typing never waits on the database), each answer carries a ticket so a slow answer to an
older query cannot overwrite a newer one, and every piece of chat text — titles, snippets,
the preview — is put in a ``Text`` built directly (styles on ranges), never parsed as markup.
A file upgraded from before schema 3 gets its index finished here, with progress, if the
launch did not do it (tests and ``make_app`` skip the launch).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.search import RANK_WINDOW, QueryError, SearchHit, SearchResult, Snippet, Term, make_snippet, search
from hiermem_tui.search.query import SYNTAX_HELP
from hiermem_tui.store.search_index import build_search_index, search_index_status
from hiermem_tui.textsafe import one_line, strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import Found, IndexProgress, SearchDone, SessionsChanged
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.report import ReportScreen

DEBOUNCE_S = 0.2
LIMIT = 50
SHOW_PROGRESS_FROM = 5000
"""Rows left to index from which the screen shows progress (fewer take well under a second)."""
PREVIEW_CHARS = 2000


def marked(snippet: Snippet, base: object, mark: object) -> Text:
    """A snippet as Text: every piece made visible (never markup), matches in ``mark`` style."""
    out = Text(style=base)  # type: ignore[arg-type]
    for piece, hit in snippet.parts():
        out.append(strip_combining_excess(visible(piece)), style=mark if hit else None)  # type: ignore[arg-type]
    return out


class SearchScreen(ReportScreen):
    """Search every session, or one (``session_id``); ``a`` widens a session's search to all."""

    HEADING = "Search"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="search.back"),
        Binding("slash", "edit_query", "Query", key_display="/", id="search.edit_query"),
        Binding("a", "toggle_scope", "All sessions", id="search.toggle_scope"),
        Binding("v", "toggle_versions", "Old versions", id="search.toggle_versions"),
        Binding("down", "to_results", "Results", show=False, id="search.to_results"),
    ]

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__(session_id)
        self.home_session = session_id
        self.include_superseded = False
        self.hits: list[SearchHit] = []
        self.titles: dict[str, str] = {}
        self.terms: tuple[Term, ...] = ()
        self._debounce: Timer | None = None
        self.indexing: tuple[int, int] | None = None
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hiermem-search")

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        with Vertical(id="search-body"):
            with Horizontal(id="search-bar"):
                yield Label(Text("search"), id="search-label")
                yield Input(placeholder='words, "a phrase", pre*, OR, NOT …   enter: to the results',
                            id="search-input", compact=True)
            yield Static(id="search-status")
            yield KeyedOptionList(id="search-results")
            with VerticalScroll(id="search-help"):
                yield Static(self.help_text(), id="search-help-text")
            with VerticalScroll(id="search-preview"):
                yield Static(id="search-preview-text")
        yield Footer()

    def help_text(self) -> Text:
        p = fmt.Palette.from_app(self.app)
        out = Text("Search every episode and summary" if self.session_id is None else
                   "Search this session's episodes and summaries", style=fmt.style(p.foreground, bold=True))
        out.append("  (case and accents do not matter)\n\n", style=fmt.style(p.muted))
        for typed, finds in SYNTAX_HELP:
            out.append(f"  {typed:<30}", style=fmt.style(p.accent, bold=True))
            out.append(f"{finds}\n", style=fmt.style(p.muted))
        out.append("\nenter opens a hit: an episode in the transcript, a summary in the tree.", style=fmt.style(p.muted))
        return out

    def on_mount(self) -> None:
        # the database thread's hold on the store: quitting waits until it has run the release in on_unmount
        self._db_hold = self.app.store_thread()
        self._db_hold.begin()
        self.query_one("#search-results").display = False
        self.query_one("#search-preview").display = False
        self.query_one("#search-input", Input).focus()
        self._status("")
        status = search_index_status(self.store)
        if status.pending and self.store.readonly:
            self._status(f"{status.missing:,} rows of this read-only file are not indexed yet: they are not searched.")
        elif status.missing >= SHOW_PROGRESS_FROM:  # an upgraded file, or a big import: index while the user types
            self.indexing = (status.done, status.total)
            self._status_indexing()
            self.app.store_worker(self, self._build_index, group="search-index", exclusive=True)

    # ------------------------------------------------------------------ index building
    def _build_index(self) -> None:
        # cancelled when the screen closes: it stops after the batch in hand (the next start resumes)
        if self.app.indexer.build_here(self._post_progress):
            self.post_message(IndexProgress(0, 0, finished=True))

    def _post_progress(self, done: int, total: int) -> None:
        """From a worker: show indexing progress when there is enough of it to wait for."""
        if total - done >= SHOW_PROGRESS_FROM or self.indexing is not None:
            self.post_message(IndexProgress(done, total))

    def on_index_progress(self, message: IndexProgress) -> None:
        if message.finished:  # the build started on opening is done: search again, now in everything
            self.indexing = None
            self._run_query()
            return
        if message.done >= message.total:  # a search's own catch-up is done: its answer follows
            self.indexing = None
            return
        self.indexing = (message.done, message.total)
        self._status_indexing()

    def _status_indexing(self) -> None:
        if self.indexing is not None:
            done, total = self.indexing
            self._status(f"Indexing for search: {fmt.percent(done / total if total else 1)} "
                         f"· {done:,} of {total:,} rows · results are partial until it is done")

    # ------------------------------------------------------------------ querying
    @on(Input.Changed, "#search-input")
    def _typed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE_S, self._run_query)

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._run_query()
        self.action_to_results()

    def _run_query(self) -> None:
        text = self.query_one("#search-input", Input).value
        self._ticket += 1
        if not text.strip():
            self._show_empty()
            return
        # one line of snippet per hit: as wide as the list (less its border and indent)
        shown = self.query_one("#search-results").size.width or self.size.width - 4
        width = max(40, shown - 10)  # border, indent, scrollbar and the two ellipses
        self._search(self._ticket, text, self.session_id, self.include_superseded, width)

    @work(exclusive=True, group="search", exit_on_error=False)
    async def _search(self, ticket: int, text: str, session_id: str | None, superseded: bool, width: int) -> None:
        """Run the query on the screen's own database thread (its connection, and so its page cache,
        stays warm from one query to the next: a cold one costs a quarter more on a big file)."""
        loop = asyncio.get_running_loop()
        try:
            mask = self.app.shown if self.settings.mask_secrets else None
            found = await loop.run_in_executor(self._db, self._query, text, session_id, superseded, width, mask)
        except QueryError as exc:
            self.post_message(SearchDone(ticket, None, str(exc)))
            return
        self.post_message(SearchDone(ticket, found))

    def _query(self, text: str, session_id: str | None, superseded: bool, width: int,
               mask: Callable[[str], str] | None) -> Found:
        """On the database thread: index what is new (progress if much), search, name the sessions.
        ``mask``: secrets masked in each hit's text before its snippet is cut, and in the titles."""
        build_search_index(self.store, self._post_progress)
        result = search(self.store, text, session_id=session_id, limit=LIMIT, include_superseded=superseded,
                        snippet_width=width, mask=mask)
        ids = sorted({h.session_id for h in result.hits})
        titles = dict.fromkeys(ids, "")
        titles.update(self.store.sessions.titles(ids))
        return Found(result, {sid: (mask(title) if mask else title) or sid for sid, title in titles.items()})

    def on_unmount(self) -> None:
        hold = self._db_hold

        def let_go() -> None:  # after the query in hand: close that thread's connection, then the thread
            try:
                self.store.release_thread()
            finally:
                hold.let_go()

        self._db.submit(let_go)
        self._db.shutdown(wait=False)

    def on_search_done(self, message: SearchDone) -> None:
        message.stop()
        if message.ticket != self._ticket:
            return  # an answer to a query typed over since
        found = message.found
        if found is None:
            self._show_empty(error=message.error)
            return
        self.hits = list(found.result.hits)
        self.titles = found.titles
        self.terms = found.result.query.terms
        self._fill(found.result)

    def _show_empty(self, *, error: str | None = None) -> None:
        self.hits = []
        self.query_one("#search-results").display = False
        self.query_one("#search-preview").display = False
        self.query_one("#search-help").display = True
        if error:
            self._status(f"▲ {error}", error=True)
        else:
            self._status_indexing() if self.indexing else self._status("")

    def _fill(self, result: SearchResult) -> None:
        p = fmt.Palette.from_app(self.app)
        results = self.query_one("#search-results", OptionList)
        results.clear_options()
        if not self.hits:
            self._show_empty()
            typed = one_line(result.query.text, 60)
            where = "this session" if self.session_id else "any session"
            self._status(f"No matches for “{typed}” in {where}" +
                         ("" if self.include_superseded else " (old versions of summaries: v)"))
            return
        results.add_options([Option(self._row(h, p), id=str(i)) for i, h in enumerate(self.hits)])
        results.display = True
        self.query_one("#search-help").display = False
        self.query_one("#search-preview").display = True
        results.highlighted = 0
        many = f"{len(self.hits)}{'+' if len(self.hits) >= LIMIT else ''}"
        note = f"{many} hit{'s' * (len(self.hits) != 1)}, best first"
        if result.capped:
            note += f" · very many matches: the newest {RANK_WINDOW:,} were ranked"
        if self.indexing:
            note += " · index still building, results are partial"
        self._status(note)

    def _row(self, hit: SearchHit, p: fmt.Palette) -> Text:
        muted = fmt.style(p.muted)
        if hit.kind == "summary":
            head = Text.assemble(fmt.depth_chip(hit.depth or 0, p, hit.tier or "normal"), " ",
                                 (fmt.seq_span(hit.first_seq, hit.last_seq), fmt.style(p.foreground, bold=True)))
            if not hit.active:
                head.append("  superseded", style=fmt.style(p.warning, bold=True))
        else:
            head = Text.assemble((" ep ", fmt.style(fmt.on(p.panel), p.panel)), " ",
                                 (fmt.seq_range(hit.first_seq, hit.last_seq), fmt.style(p.foreground, bold=True)),
                                 "  ", (hit.role or "", fmt.style(p.role_color(hit.role or ""), bold=True)))
        head.append(f"  {fmt.timestamp(hit.created_at, ref_year=self.app.clock().year)}", style=muted)
        if self.session_id is None:
            head.append(f"  {one_line(self.titles.get(hit.session_id, hit.session_id), 60)}", style=muted)
        body = marked(hit.snippet, fmt.style(p.foreground), fmt.style(p.accent, bold=True))
        return Text.assemble(head, "\n  ", body)

    def _status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#search-status", Static)
        status.set_class(error, "-error")
        status.update(Text(text))
        status.display = bool(text)

    # ------------------------------------------------------------------ preview and opening
    @on(OptionList.OptionHighlighted, "#search-results")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.hits):
            self._preview(self.hits[event.option_index])

    def _preview(self, hit: SearchHit) -> None:
        """The hit's text (up to PREVIEW_CHARS around the best match), matches marked, literal."""
        found = (self.store.episodes.content(hit.id) if hit.kind == "episode"
                 else self.store.dag.content(hit.id))
        text = self.app.shown(found or "")
        p = fmt.Palette.from_app(self.app)
        where = one_line(self.titles.get(hit.session_id, hit.session_id), 100)
        out = Text(f"{where} · {one_line(hit.id, 80)}\n", style=fmt.style(p.muted))
        snippet = make_snippet(text, self.terms, width=PREVIEW_CHARS)
        out.append_text(marked(snippet, fmt.style(p.foreground), fmt.style(p.accent, bold=True)))
        self.query_one("#search-preview-text", Static).update(out)

    @on(OptionList.OptionSelected, "#search-results")
    async def _selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.hits):
            await self.open_hit(self.hits[event.option_index])

    async def open_hit(self, hit: SearchHit) -> None:
        if hit.kind == "episode":
            await self.app.nav.show_in_session(hit.session_id, seq=hit.first_seq)
        elif hit.active:
            await self.app.nav.show_in_session(hit.session_id, summary_id=hit.id)
        else:
            await self.app.nav.show_in_session(hit.session_id, summary_id=hit.id, seq=hit.first_seq, versions=True)

    # ------------------------------------------------------------------ actions
    def action_edit_query(self) -> None:
        self.query_one("#search-input", Input).focus()

    def action_to_results(self) -> None:
        results = self.query_one("#search-results", OptionList)
        if results.display and self.hits:
            results.focus()

    def action_toggle_scope(self) -> None:
        if self.home_session is None:
            self.notify("This search already covers every session.", timeout=2)
            return
        self.session_id = None if self.session_id is not None else self.home_session
        self.query_one(".report-scope", Static).update(Text(self.scope_label()))
        self.query_one("#search-help-text", Static).update(self.help_text())
        self._run_query()

    def action_toggle_versions(self) -> None:
        self.include_superseded = not self.include_superseded
        self.notify("Superseded summaries are searched too." if self.include_superseded else
                    "Only active summaries are searched.", timeout=2)
        self._run_query()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_scope":
            return self.home_session is not None  # a search from the sessions list is already file-wide
        return True

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Edit the query", "Back to the search box", self.action_edit_query, "/")
        if self.home_session is not None:
            yield PaletteCommand("Search all sessions / this session", "Widen or narrow the search",
                                 self.action_toggle_scope, "a")
        yield PaletteCommand("Include old versions of summaries", "Search superseded summaries too (or not)",
                             self.action_toggle_versions, "v")
        yield PaletteCommand("Back", "Close the search", self.action_back, "esc")

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """Hits stay put while the store changes (they would move under the cursor); enter re-runs."""
        message.stop()

    def fetch(self) -> object:  # the query runs in its own worker (_search); ``r`` is a letter of the query
        return None

    def show(self, data: object) -> None:
        self._run_query()
