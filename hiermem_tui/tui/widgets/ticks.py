"""Tick boxes that say by their glyph whether they are ticked.

Why: Textual draws a check box as ``▐X▌`` ticked or not, telling the two apart only by colour, which a
monochrome terminal, a low-contrast theme or a reader who does not see the colour loses. Here a ticked
box holds a tick and an unticked one is empty (``▐✓▌`` / ``▐ ▌``): :class:`TickBox` for a single box,
:func:`tick_line` for the boxes a ``SelectionList`` draws before its rows.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Checkbox

TICKED = "✓"
UNTICKED = " "


def glyph(ticked: bool) -> str:
    return TICKED if ticked else UNTICKED


class TickBox(Checkbox):
    """A ``Checkbox`` whose box holds a tick when ticked and nothing when not."""

    def __init__(self, label: str = "", value: bool = False, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None, disabled: bool = False, compact: bool = False) -> None:
        super().__init__(label, value, name=name, id=id, classes=classes, disabled=disabled, compact=compact)
        self.BUTTON_INNER = glyph(value)

    def watch_value(self) -> None:
        self.BUTTON_INNER = glyph(self.value)
        super().watch_value()


def tick_line(line: Strip, ticked: bool) -> Strip:
    """A ``SelectionList`` row as drawn (its box first, ``▐X▌``) with the box's glyph saying ``ticked``."""
    segments = list(line)
    if len(segments) < 3 or segments[1].text != Checkbox.BUTTON_INNER:  # Textual's "X", ticked or not
        return line  # not a row with a box (nothing to change)
    inner = segments[1]
    segments[1] = Segment(glyph(ticked), inner.style, inner.control)
    return Strip(segments, line.cell_length)
