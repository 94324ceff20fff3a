"""The sessions table's columns and cell helpers: what each column shows, how wide, how sorted.

Kept apart from the widget so the table's drawing and paging read without them, and so the
sessions screen can share ``fmt_when`` and the sort labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.cells import cell_len, set_cell_size

from hiermem_tui.store import parse_iso

def fmt_when(stamp: str | None, now: datetime) -> str:
    """A compact time relative to ``now`` (injected, so tests and snapshots are stable)."""
    if not stamp:
        return "–"
    try:
        when = parse_iso(stamp)
    except ValueError:
        return "?"
    secs = (now - when).total_seconds()
    if secs < -60:
        return when.strftime("%Y-%m-%d")
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)}m ago"
    if secs < 86400:
        return f"{int(secs // 3600)}h ago"
    if secs < 7 * 86400:
        return f"{int(secs // 86400)}d ago"
    if when.year == now.year:
        return when.strftime("%b %d")
    return when.strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class Column:
    key: str  # a Store SESSION_SORTS key
    label: str
    width: int  # 0: takes what is left
    right: bool  # right-aligned (numbers)
    keep: int  # higher stays longer when the terminal is narrow
    desc_first: bool  # first click sorts descending (biggest/newest first)


COLUMNS: tuple[Column, ...] = (
    Column("title", "Title", 0, False, 100, False),
    Column("source", "Source", 11, False, 2, False),
    Column("episodes", "Episodes", 8, True, 5, True),
    Column("tokens", "Tokens", 7, True, 9, True),
    Column("summaries", "Summ", 5, True, 4, True),
    Column("depth", "Depth", 5, True, 3, True),
    Column("coverage", "Coverage", 11, False, 6, True),
    Column("fallbacks", "Fallb", 5, True, 8, True),
    Column("fidelity", "Kept", 5, True, 8, False),
    Column("updated", "Active", 10, True, 7, True),
)
SORT_LABELS = {c.key: c.label.lower() for c in COLUMNS} | {
    "summaries": "summaries", "fallbacks": "fallbacks", "updated": "last activity",
    "fidelity": "lowest identifier retention",
}
MIN_TITLE = 24


def fit(text: str, width: int, right: bool) -> str:
    """``text`` cropped or padded to exactly ``width`` cells (wide characters counted right)."""
    if width <= 0:
        return ""
    length = cell_len(text)
    if length > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - length)
    return pad + text if right else text + pad
