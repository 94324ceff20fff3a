"""The session's brief at the top of the session screen: what it was about, decided, made, where it ended."""

from __future__ import annotations

from rich.text import Text
from textual import getters
from textual.widgets import Static

from hiermem_tui.store import Brief
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.app_base import AppBase

EMPTY = "No brief yet: a full pass (p) makes one, with the session's summaries."


class BriefPanel(Static):
    """The brief's text, shown literally (masked while the app masks secrets), its title and range above it."""

    app = getters.app(AppBase)

    def show_brief(self, brief: Brief | None, episodes: int) -> None:
        """Show ``brief`` (None: the empty state); ``episodes``: the session's count, to say when it is stale."""
        if brief is None:
            self.border_title = "Brief"
            self.border_subtitle = ""
            self.update(Text(EMPTY, style="italic"))
            return
        title = one_line(self.app.shown(brief.title), 60) if brief.title else "Brief"
        self.border_title = title
        stale = " · older than the chat" if brief.last_seq < episodes - 1 else ""
        made = f"{brief.backend}" + (f" {brief.model}" if brief.model else "")
        self.border_subtitle = f"#{brief.first_seq}–{brief.last_seq} · {brief.tier} · {made}{stale}"
        self.update(Text(self.app.shown(brief.text)))
