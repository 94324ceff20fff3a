"""The backlog's line: compacting everything in the background, how far, how long, paused or not.

Why it watches the app, as the run indicator does: the backlog outlives screens (start it on the
sessions list, browse sessions while it runs); every screen composes its own line and each one
draws the app's ``backlog_run``. Hidden while no backlog runs.
"""

from __future__ import annotations

from rich.text import Text
from textual import getters
from textual.widgets import Static

from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.app_base import AppBase
from hiermem_tui.tui.backlog_view import BacklogRunState


def backlog_text(state: BacklogRunState, palette: fmt.Palette) -> Text:
    """``Backlog ▶ 12/380 summaries · 3/120 sessions · ~3 h 05 m left   B pause · ctrl+x stop``."""
    muted, strong = fmt.style(palette.muted), fmt.style(palette.foreground, bold=True)
    mark, word = {"planning": ("◌", "planning every session…"), "running": ("▶", ""),
                  "paused": ("⏸", "paused"), "stopping": ("■", "stopping after the call in flight…")}[state.phase]
    text = Text()
    text.append(f"Backlog {mark} ", style=fmt.style(palette.accent, bold=True))
    if word:
        text.append(word + "  ", style=fmt.style(palette.warning if state.phase == "paused" else palette.muted,
                                                 bold=state.phase == "paused"))
    if state.phase != "planning":
        text.append(f"{state.summaries_done:,}/{state.summaries:,}", style=strong)
        text.append(" summaries · ", style=muted)
        text.append(f"{state.sessions_done:,}/{state.sessions:,}", style=strong)
        text.append(" sessions", style=muted)
        if state.left_s is not None and state.phase == "running":
            text.append(f" · ~{fmt.duration(state.left_s)} left", style=fmt.style(palette.foreground))
    keys = {"paused": "B resume · ctrl+x stop", "stopping": ""}.get(state.phase, "B pause · ctrl+x stop")
    if keys:
        text.append(f"   {keys}", style=muted)
    return text


class BacklogIndicator(Static):
    """Hidden while no backlog runs; one line while one does."""

    DEFAULT_CSS = """
    BacklogIndicator {
        height: 1;
        width: 1fr;
        background: $panel;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
        &.-active { display: block; }
    }
    """

    app = getters.app(AppBase)

    def on_mount(self) -> None:
        self.watch(self.app, "backlog_run", self._show, init=True)

    def _show(self, state: BacklogRunState | None) -> None:
        self.set_class(state is not None, "-active")
        if state is not None:
            self.update(backlog_text(state, fmt.Palette.from_app(self.app)))

    @property
    def plain(self) -> str:
        """The text shown now (tests read it)."""
        state = self.app.backlog_run
        return "" if state is None else backlog_text(state, fmt.Palette.from_app(self.app)).plain
