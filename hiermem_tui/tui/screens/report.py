"""What the search, context, stats and run-history screens share: a top bar, loading off the UI thread.

Why a base: each of them reads something from the store that can take tens of milliseconds
on a big file (a whole-file stats pass, a context of thousands of items), so each loads in a
thread worker and gets the data back as a :class:`~hiermem_tui.tui.messages.Loaded` message
carrying a ticket; a newer request makes older answers stale. Subclasses implement
:meth:`fetch` (runs in the worker, returns plain data) and :meth:`show` (on the UI thread).
"""

from __future__ import annotations


from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Label, Static

from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.messages import Loaded, SessionsChanged
from hiermem_tui.tui.screens.base import AppScreen

RELOAD_DELAY_S = 0.5
"""After a change in the store, wait this long (collecting more changes) before reading again."""


class ReportScreen(AppScreen[None]):
    """A full screen over one session (``session_id``) or the whole file (None)."""

    CSS_PATH = "find.tcss"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="report.back"),
        Binding("r", "reload", "Refresh", show=False, id="report.reload"),
    ]
    HEADING = ""

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self._ticket = 0
        self._reload_timer: Timer | None = None

    def compose_top(self) -> ComposeResult:
        """The top bar: brand, what this screen is, and for which session (its title, literally)."""
        with Horizontal(id="topbar"):
            yield Label(Text("◆ hiermem"), id="brand")
            yield Static(Text(self.HEADING, style="bold"), classes="report-heading")
            yield Static(Text(self.scope_label()), classes="report-scope")

    def scope_label(self) -> str:
        if self.session_id is None:
            return "all sessions"
        session = self.store.sessions.get(self.session_id)
        title = session.title if session is not None and session.title else self.session_id
        return f"session: {one_line(title, 80)}"

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Read the data again in a worker; what an older request returns is dropped."""
        self._ticket += 1
        ticket = self._ticket
        self.app.store_worker(self, lambda: self.post_message(Loaded(ticket, self.fetch())), group="report-load",
                              exclusive=True)

    def on_loaded(self, message: Loaded) -> None:
        message.stop()
        if message.ticket == self._ticket:
            self.show(message.data)

    def fetch(self) -> object:
        """Runs in a worker thread: read and return what :meth:`show` needs."""
        raise NotImplementedError

    def show(self, data: object) -> None:
        """On the UI thread: put ``data`` on screen."""
        raise NotImplementedError

    # ------------------------------------------------------------------ common actions
    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """The store changed (a run, an import): re-read if it concerns what is shown — once
        per burst (a run writes summaries one by one), not once per summary."""
        message.stop()
        relevant = self.session_id is None or not message.session_ids or self.session_id in message.session_ids
        if relevant and self._reload_timer is None:
            self._reload_timer = self.set_timer(RELOAD_DELAY_S, self._timed_load)

    def _timed_load(self) -> None:
        self._reload_timer = None
        self.load()

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
