"""The Import screen: the chat histories found on this machine, ticked by the user, imported with progress.

Why it is built this way: finding sources opens other tools' SQLite files and walks folders,
and importing can take minutes, so both run in thread workers that report back only through
messages (``SourcesFound``, ``ImportProgressed``, ``ImportSourceDone``, ``ImportFinished``),
each carrying its ticket or job so a late answer of an older request is dropped. Nothing is
ticked to begin with and nothing is imported until the user says so (``i`` or the button). A
path typed in the field joins the list ticked, since typing it is the user's choice; the same
``discover``/``import_paths`` the CLI uses do the work, so the screen and ``import
--discover`` import exactly alike. Paths and lines are shown literally (never as markup).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Input, Label, ProgressBar, SelectionList, Static
from textual.widgets.selection_list import Selection
from textual.worker import get_current_worker

from hiermem_tui.tui.widgets.lists import KeyedSelectionList
from hiermem_tui.importers import FormatError, ImportReport, detect, import_paths
from hiermem_tui.importers.discover import Source, describe, discover
from hiermem_tui.importers.folders import plan_auto
from hiermem_tui.store import StoreError
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.messages import ImportFinished, ImportProgressed, ImportSourceDone, SessionsChanged, SourcesFound
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.base import AppScreen
from hiermem_tui.tui.screens.sessions import display_path
from hiermem_tui.words import counted


READ_ONLY = "The database is read-only: nothing can be imported into it."
PATH_WIDTH = 72
"""Cells a path gets in the list; a longer one loses its start, so the file's own name stays in view."""


def tail(text: str, width: int = PATH_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` cells from the left (``…/downloads/chats.json``)."""
    line = one_line(text, 10_000)
    return line if len(line) <= width else "…" + line[-(width - 1):]


def source_prompt(source: Source, width: int = 14, *, typed: bool = False) -> Content:
    """One row of the list: format, what a cheap look counted, the path (literally); "typed" for a
    path the user typed (it was not found on this machine's standard places)."""
    return Content.assemble(
        (f"{source.format:<{width}}", "bold"), (f"{source.count_label:>14}", "$foreground-muted"), "  ",
        tail(display_path(source.path)), ("  typed" if typed else "", "$text-accent"),
    )


class ImportScreen(AppScreen[None]):
    """Tick the histories to import (found at the standard places, or typed), then import them."""

    CSS_PATH = "import_sources.tcss"
    AUTO_FOCUS = "#import-sources"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="import.back"),
        Binding("a", "toggle_all", "All / none", id="import.all"),
        Binding("i", "start", "Import ticked", id="import.start"),
        Binding("slash", "path", "Path", key_display="/", id="import.path"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[Source] = []
        self._ticket = 0
        self._job = 0
        self._importing = False
        self._stop = threading.Event()
        self._log: list[Text] = []
        self._hint = False
        """The note under the list explains the ticks (until something else is said there)."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="topbar"):
            yield Label(Text("◆ hiermem"), id="brand")
            yield Static(Text("Import chat history", style="bold"), id="import-heading")
            yield Static(Text(f"into {display_path(self.store.path)}"), id="import-target")
        with Vertical(id="import-body"):
            yield KeyedSelectionList(id="import-sources")
            yield Static(id="import-note")
            yield Input(placeholder="another file or folder, any format we read… (enter: add it to the list)",
                        id="import-path")
            with Horizontal(id="import-actions"):
                yield Button("Import ticked", id="import-start", variant="primary", disabled=True)
                yield ProgressBar(id="import-progress", show_eta=False)
                yield Static(id="import-status")
            yield VerticalScroll(Static(id="import-log-text"), id="import-log")
        yield Footer()

    def on_mount(self) -> None:
        listing = self.query_one("#import-sources", SelectionList)
        listing.border_title = "Found on this machine"
        listing.border_subtitle = "looking…"
        self.query_one("#import-log").border_title = "Imported"
        self.query_one("#import-log").display = False
        self.query_one("#import-progress").display = False
        if self.store.readonly:
            self._note(READ_ONLY, warning=True)
        self._ticket += 1
        self._find(self._ticket, None)

    # ------------------------------------------------------------------ finding sources
    @work(thread=True, group="import-find", exit_on_error=False)
    def _find(self, ticket: int, typed: Path | None) -> None:
        """The standard places (``typed`` None), or what importing ``typed`` would read."""
        if typed is None:
            self.post_message(SourcesFound(ticket, discover()))
            return
        try:
            if not typed.exists():
                raise FormatError(f"{typed} does not exist")
            plan = plan_auto(typed)
            found = [describe(fmt if fmt != "auto" else detect(path), path) for path, fmt in plan.parts]
        except (FormatError, OSError) as exc:
            self.post_message(SourcesFound(ticket, [], one_line(str(exc), 300), typed=True))
            return
        skipped = tuple(p.relative_to(typed).as_posix() for p in plan.skipped)
        self.post_message(SourcesFound(ticket, found, typed=True, skipped=skipped))

    def on_sources_found(self, message: SourcesFound) -> None:
        message.stop()
        if message.ticket != self._ticket:
            return
        listing = self.query_one("#import-sources", SelectionList)
        if message.error:
            self._note(message.error, warning=True)
            return
        typed = message.typed
        known = {s.path for s in self.sources}
        fresh = [s for s in message.sources if s.path not in known]
        width = max([len(s.format) for s in [*self.sources, *fresh]] + [12]) + 2
        for source in fresh:
            self.sources.append(source)
            listing.add_option(Selection(source_prompt(source, width, typed=typed), len(self.sources) - 1,
                                         initial_state=typed))
        if typed and fresh:
            listing.border_title = "Found on this machine, and the paths you typed"
        self._count()
        if not typed and self.store.readonly:
            self._note(READ_ONLY, warning=True)
        elif not typed:
            self._note("" if self.sources else "No chat history found at the standard places on this machine. Type "
                       "the path of an export, a file or a folder below.")
            self._hint = bool(self.sources)
            self._count()
            if not self.sources:
                self.query_one("#import-path", Input).focus()  # the one thing left to do here
        elif fresh:
            left = ""
            if message.skipped:  # every one, as the CLI names them (the note wraps)
                names = ", ".join(one_line(n, 200) for n in message.skipped)
                left = f" Skipped {counted(len(message.skipped), 'entry')} no importer recognises: {names}."
            self._note(f"Added {counted(len(fresh), 'source')} from the path (ticked).{left}",
                       warning=bool(message.skipped))
        else:
            self._note("That is in the list already.")

    def _count(self) -> None:
        listing = self.query_one("#import-sources", SelectionList)
        ticked = len(listing.selected)
        n = len(self.sources)
        listing.border_subtitle = f"{ticked} of {n} ticked" if n else "none found"
        button = self.query_one("#import-start", Button)
        button.disabled = not ticked or self._importing or self.store.readonly
        button.label = f"Import {ticked} ticked" if ticked else "Import ticked"
        if self._hint and not self.store.readonly:
            self._note("Nothing is ticked: space ticks the highlighted one, a ticks all, i imports the ticked ones."
                       if not ticked else f"i imports the {ticked} ticked, one after the other; nothing else is read.",
                       keep_hint=True)

    @on(SelectionList.SelectedChanged, "#import-sources")
    def _ticks_changed(self) -> None:
        self._count()

    @on(Input.Submitted, "#import-path")
    def _path_typed(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        self._ticket += 1
        self._note("Looking at the path…")
        self._find(self._ticket, Path(text).expanduser())
        event.input.value = ""

    # ------------------------------------------------------------------ importing
    def action_start(self) -> None:
        listing = self.query_one("#import-sources", SelectionList)
        chosen = [self.sources[i] for i in sorted(listing.selected)]
        if self._importing or not chosen or self.store.readonly:
            if not chosen and not self._importing:
                self._note("Tick what to import first (space, or a for all).", warning=True)
            return
        self._importing = True
        self._stop.clear()
        self._job += 1
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=len(chosen), progress=0)
        bar.display = True
        log = self.query_one("#import-log")
        log.display = True
        self.query_one("#import-log-text", Static).update(Text(""))
        self._log = []
        self._count()
        self._note("Importing: each source is one transaction, so nothing is half-written; esc stops after this one.")
        job = self._job
        self.app.store_worker(self, lambda: self._import(job, chosen), group="import-run")

    @on(Button.Pressed, "#import-start")
    def _start_pressed(self) -> None:
        self.action_start()

    def _import(self, job: int, chosen: list[Source]) -> None:
        """In a store worker: one source after the other, each one transaction; esc (or quitting, which
        cancels the worker) stops after the source in hand."""
        store = self.store
        worker = get_current_worker()
        created = appended = 0
        stopped = False
        try:
            for index, source in enumerate(chosen):
                if self._stop.is_set() or worker.is_cancelled:
                    stopped = True
                    break

                def progress(_ref: str, report: ImportReport, index: int = index) -> None:
                    self.post_message(ImportProgressed(job, index, len(chosen), report.sessions_seen,
                                                       report.episodes_appended + report.episodes_present,
                                                       report.doing))

                self.post_message(ImportProgressed(job, index, len(chosen), 0, 0))
                try:
                    report = import_paths(store, [source.path], source.format, on_progress=progress, parallel=False)
                except (FormatError, StoreError) as exc:
                    self.post_message(ImportSourceDone(job, index, source, one_line(str(exc), 300), False))
                    continue
                except Exception as exc:  # a bug reading one source must not hide what the others did
                    line = f"failed ({type(exc).__name__}: {one_line(str(exc), 200)}); nothing of it was written"
                    self.post_message(ImportSourceDone(job, index, source, line, False))
                    continue
                created += report.sessions_created
                appended += report.episodes_appended
                details = (report.problems.summary(), *(f"  {e}" for e in report.problems.examples)) \
                    if report.problems.count else ()
                self.post_message(ImportSourceDone(job, index, source, report.describe(), True, details))
        finally:
            self.post_message(ImportFinished(job, created, appended, stopped))

    def on_import_progressed(self, message: ImportProgressed) -> None:
        message.stop()
        if message.job != self._job:
            return
        so_far = message.doing or f"{counted(message.sessions, 'session')} · {counted(message.episodes, 'episode')}"
        self.query_one("#import-status", Static).update(Text(one_line(f"{message.index + 1} of {message.total} · "
                                                                      f"{so_far}", 300)))

    def on_import_source_done(self, message: ImportSourceDone) -> None:
        message.stop()
        if message.job != self._job:
            return
        self.query_one("#import-progress", ProgressBar).advance(1)
        line = Text.assemble(Text("✓ " if message.ok else "✗ ", style="bold green" if message.ok else "bold red"),
                             Text(f"{tail(display_path(message.source.path))} ({message.source.format}): ",
                                  style="bold"),
                             Text(one_line(message.line, 400)))
        self._log.append(line)
        for detail in message.details:  # "skipped N malformed record(s): …", as the CLI prints them
            self._log.append(Text("  " + one_line(detail, 400), style="yellow"))
        self.query_one("#import-log-text", Static).update(Text("\n").join(self._log))

    def on_import_finished(self, message: ImportFinished) -> None:
        message.stop()
        if message.job != self._job:
            return
        self._importing = False
        self._count()
        done = "Stopped" if message.stopped else "Done"
        added = message.sessions_created or message.episodes_appended
        offer = " B compacts everything in the background." if added else ""
        self._note(f"{done}: {message.sessions_created:,} new session{'s' * (message.sessions_created != 1)}, "
                   f"{counted(message.episodes_appended, 'episode')} added. esc goes back to the list.{offer}")
        self.query_one("#import-status", Static).update(Text(""))
        self.app.post_message(SessionsChanged())
        if added:  # what the import made due, said with its time when planned ("… Press B to compact them")
            self.app.backlog.plan_waiting(say=True)

    @property
    def log_lines(self) -> list[str]:
        """The lines of the last import, as plain text (one per source)."""
        return [line.plain for line in self._log]

    # ------------------------------------------------------------------ the rest
    def _note(self, text: str, *, warning: bool = False, keep_hint: bool = False) -> None:
        """The line under the list; any note but the tick hint ends the hint."""
        self._hint = self._hint and keep_hint
        note = self.query_one("#import-note", Static)
        note.update(Text(text))
        note.set_class(warning, "-warning")

    def action_toggle_all(self) -> None:
        listing = self.query_one("#import-sources", SelectionList)
        if len(listing.selected) == len(self.sources):
            listing.deselect_all()
        else:
            listing.select_all()

    def action_path(self) -> None:
        self.query_one("#import-path", Input).focus()

    def action_back(self) -> None:
        if self._importing:
            self._stop.set()
            self._note("Stopping after the source being imported now…", warning=True)
            return
        self.app.pop_screen()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Import the ticked sources", "Import every ticked history, with progress",
                             self.action_start, "i")
        yield PaletteCommand("Tick all / none", "Tick every source found, or none", self.action_toggle_all, "a")
        yield PaletteCommand("Type a path", "Add a file or folder to the list", self.action_path, "/")
        yield PaletteCommand("Back", "Close the import screen", self.action_back, "esc")
