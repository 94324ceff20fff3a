"""The covering chain of one episode: the summaries over it, leaf first; enter shows one in the tree.

Why a modal of its own (in ``screens/``, beside the other dialogs): ``c`` on the session screen
opens it over the screen, and the Navigator is what opens it (``app.nav.covering_chain``).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.store import Summary
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens.base import AppModal
from hiermem_tui.tui.widgets.detail_pane import summary_line
from hiermem_tui.tui.widgets.lists import KeyedOptionList


class ChainPicker(AppModal[str | None]):
    """The summaries covering one episode, leaf first; enter jumps to one in the tree."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Close", id="chain.close")]
    DEFAULT_CSS = """
    ChainPicker { align: center middle; background: $background 60%; }
    ChainPicker > Vertical {
        width: 96; max-width: 95%; height: auto; max-height: 80%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    ChainPicker OptionList { height: auto; max-height: 20; border: none; margin: 1 0; }
    ChainPicker .hint { color: $text-muted; }
    """

    def __init__(self, seq: int, chain: list[Summary], palette: fmt.Palette, ref_year: int | None,
                 where: str | None = None) -> None:
        super().__init__()
        self.seq = seq
        self.chain = chain
        self.palette = palette
        self.ref_year = ref_year
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Covering chain of episode #{self.seq}"
            if self.chain:
                yield KeyedOptionList(*[Option(summary_line(s, self.palette, self.ref_year), id=s.id) for s in self.chain])
                yield Static(Text("leaf first, top last · enter: show in tree · esc: close"), classes="hint")
            else:
                msg: RenderableType = Text(
                    f"Episode #{self.seq} is not under any active summary ({self.where or 'unsummarised'}).\n"
                    "esc: close"
                )
                yield Static(msg, classes="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
