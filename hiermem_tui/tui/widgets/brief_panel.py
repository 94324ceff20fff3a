"""The session's brief at the top of the session screen: what it was about, decided, made, where it ended."""

from __future__ import annotations

from rich.text import Text
from textual import getters
from textual.widgets import Static

from hiermem_tui.store import Brief
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.app_base import AppBase

EMPTY = "No brief yet: a full pass (p) makes one, with the session's summaries."
MAX_ROWS = 7
"""Rows the panel takes at most, its border included (five lines of the brief)."""
SCREEN_SHARE = 5
"""…and at most a fifth of the screen's rows (at least 3: one line), so a short terminal keeps its tree."""


def rows_for(screen_height: int) -> int:
    """The panel's most rows on a screen ``screen_height`` rows tall (24 rows: 4, two lines of the brief)."""
    return max(3, min(MAX_ROWS, screen_height // SCREEN_SHARE))


class BriefPanel(Static):
    """The brief's text, shown literally (masked while the app masks secrets), its title and range above it."""

    app = getters.app(AppBase)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[str, int] | None | bool = False
        """What the panel shows: the brief's id and the session's episode count then, None for the empty
        state, False before anything was shown."""

    def show_brief(self, brief: Brief | None, episodes: int) -> None:
        """Show ``brief`` (None: the empty state); ``episodes``: the session's count, to say when it is stale."""
        self._shown = None if brief is None else (brief.id, episodes)
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

    def follow(self, brief: Brief | None, episodes: int) -> None:
        """Show ``brief`` if it is not what the panel shows already (a live update: most find nothing new)."""
        if (None if brief is None else (brief.id, episodes)) != self._shown:
            self.show_brief(brief, episodes)
