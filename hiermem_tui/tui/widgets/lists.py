"""Lists that take the keys the help promises "in any list": ``j``/``k`` down/up, ``g``/``G`` first/last.

Why one place: the sessions table and the transcript had them, the summary tree, run history,
search results and the other option lists did not, so the same key did nothing on half the
screens. Every list of the app is one of these classes (or binds :data:`LIST_KEYS` itself),
with one binding id per move, so ``[keymap]`` moves them everywhere at once.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

from hiermem_tui.tui.widgets.ticks import tick_line


def list_keys(down: str = "cursor_down", up: str = "cursor_up", first: str = "first",
              last: str = "last") -> list[BindingType]:
    """``j``/``k``/``g``/``G`` bound to a list's own actions (their names differ between widgets)."""
    return [
        Binding("j", down, "Down", show=False, id="list.next"),
        Binding("k", up, "Up", show=False, id="list.prev"),
        Binding("g", first, "First", show=False, id="list.first"),
        Binding("G", last, "Last", show=False, key_display="G", id="list.last"),
    ]


class KeyedOptionList(OptionList):
    """An ``OptionList`` with the list keys."""

    BINDINGS = list_keys()


class KeyedSelectionList(SelectionList[int]):
    """A ``SelectionList`` (of ints: the import screen's sources) with the list keys, whose boxes hold
    a tick when ticked and nothing when not (``widgets/ticks.py``)."""

    BINDINGS = list_keys()

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return line
        return tick_line(line, option.value in self.selected)
