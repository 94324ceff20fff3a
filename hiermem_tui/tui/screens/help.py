"""The help screen: keys and concepts, rendered from ``assets/help.md``.

Why a Markdown file: the text is documentation, not code; keeping it in one file lets it be
read on GitHub, checked by tests, and edited without touching the UI. It is our own text,
so rendering it as Markdown is safe (chat content never reaches this screen).
"""

from __future__ import annotations

from importlib import resources

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Markdown
from hiermem_tui.tui.keymap import keys_markdown
from hiermem_tui.tui.screens.base import AppModal


def help_markdown() -> str:
    """The bundled help text (a short note if the package was installed without its assets)."""
    try:
        return (resources.files("hiermem_tui") / "assets" / "help.md").read_text(encoding="utf-8")
    except OSError:
        return "# hiermem\n\nThe help file is missing from this installation. Press `esc` to close."


KEYS_HEADING = """

## Every key, by id

Move any of these in the settings file's `[keymap]` table, for example `"app.quit" = "ctrl+q"`
(several keys: `"j,down"`); the keys below are the ones in use now.

"""


class HelpScreen(AppModal[None]):
    """A scrollable panel over the current screen; any of esc, q, ?, f1 closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "close", "Close", key_display="esc", id="help.close"),
        Binding("j,down", "scroll(1)", "Down", show=False, id="help.scroll.next"),
        Binding("k,up", "scroll(-1)", "Up", show=False, id="help.scroll.prev"),
        Binding("g,home", "scroll_home", "Top", show=False, id="help.scroll_home"),
        Binding("G,end", "scroll_end", "Bottom", show=False, id="help.scroll_end"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-panel") as panel:
            panel.border_title = "Help"
            panel.border_subtitle = "esc to close"
            with VerticalScroll(id="help-scroll"):
                yield Markdown(help_markdown() + KEYS_HEADING + keys_markdown(self.settings.keymap),
                               id="help-text", open_links=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#help-scroll", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_scroll_home(self) -> None:
        self.query_one("#help-scroll", VerticalScroll).scroll_home(animate=False)

    def action_scroll_end(self) -> None:
        self.query_one("#help-scroll", VerticalScroll).scroll_end(animate=False)
