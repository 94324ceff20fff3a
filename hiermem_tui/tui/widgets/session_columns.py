"""The sessions table's columns and cell helpers: what each column shows, how wide, how sorted.

Kept apart from the widget so the table's drawing and paging read without them, and so the
sessions screen can share ``fmt_when`` and the sort labels. What a cell holds (:func:`cell`)
and which columns fit a width (:func:`fit_columns`) depend only on their arguments, not on
the widget, so they live here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.cells import cell_len, set_cell_size

from hiermem_tui.store import Session, parse_iso
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.backlog_view import StateCell

GAP = 2
"""Blank cells between two columns."""


def session_when(s: Session, now: datetime) -> str:
    """A session's last activity, or ``—`` when its source kept no times (its ``updated_at`` then holds
    when it was imported, and the time orders list it after the sessions with times)."""
    return fmt_when(s.updated_at, now) if s.times_known else fmt.UNKNOWN_TIME


def fmt_when(stamp: str | None, now: datetime) -> str:
    """A compact time relative to ``now`` (injected, so tests and snapshots are stable): ``4h ago``
    within the week, else the day as every screen writes it (``Jul 3``, ``Jul 3 2024``)."""
    if not stamp:
        return "–"
    try:
        when = parse_iso(stamp)
    except ValueError:
        return "?"
    secs = (now - when).total_seconds()
    if secs < -60:
        return fmt.day(fmt.local(stamp), now.year)
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)}m ago"
    if secs < 86400:
        return f"{int(secs // 3600)}h ago"
    if secs < 7 * 86400:
        return f"{int(secs // 86400)}d ago"
    return fmt.day(fmt.local(stamp), now.year)  # as every other screen writes a date


@dataclass(frozen=True, slots=True)
class Column:
    key: str  # a key of store.sessions.SESSION_SORTS (but the state column's, which is not sorted)
    label: str
    width: int  # 0: takes what is left
    right: bool  # right-aligned (numbers)
    keep: int  # higher stays longer when the terminal is narrow
    desc_first: bool  # first click sorts descending (biggest/newest first)

    @property
    def sortable(self) -> bool:
        """The store sorts by it (the backlog's state and the brief's about line are not columns of the file)."""
        return self.key not in ("state", "about")


COLUMNS: tuple[Column, ...] = (
    Column("title", "Title", 0, False, 100, False),
    # the brief's first line; shares what the title leaves, and is the first to go when the rest do not fit
    Column("about", "About", 0, False, 1, False),
    Column("source", "Source", 13, False, 2, False),  # "lossless-claw", "lossless-code", "claude-code" whole
    Column("episodes", "Episodes", 8, True, 5, True),
    Column("tokens", "Tokens", 7, True, 9, True),
    Column("summaries", "Summ", 5, True, 4, True),
    Column("depth", "Depth", 5, True, 3, True),
    Column("coverage", "Coverage", 11, False, 6, True),
    Column("state", "State", 10, False, 7, False),  # the backlog's: up to date · N waiting · queued · running
    Column("fallbacks", "Fallb", 5, True, 8, True),
    Column("fidelity", "Kept", 5, True, 8, False),
    Column("updated", "Active", 11, True, 7, True),  # "Jul 21 2025" whole: a date of another year
)
SORTABLE: tuple[Column, ...] = tuple(c for c in COLUMNS if c.sortable)
SORT_LABELS = {c.key: c.label.lower() for c in SORTABLE} | {
    "summaries": "summaries", "fallbacks": "fallbacks", "updated": "last activity",
    "fidelity": "lowest identifier retention",
}
MIN_TITLE = 23
"""Cells the title keeps before a column is dropped: at 80 columns (sorted by another column) the list keeps
its Active column, 11 cells wide for a date of another year."""
MIN_ABOUT = 24
"""Cells the About column needs to say something. It is the first column dropped, so it shows only when every
other column fits beside it with the title keeping ``MIN_TITLE``."""
TITLE_SHARE = 0.4
"""Of the width the fixed columns leave, the title's share when the About column is shown (at least
``MIN_TITLE``); About takes the rest."""


def fit(text: str, width: int, right: bool) -> str:
    """``text`` cropped or padded to exactly ``width`` cells (wide characters counted right)."""
    if width <= 0:
        return ""
    length = cell_len(text)
    if length > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - length)
    return pad + text if right else text + pad


def fit_columns(width: int, sort: str, *, state: bool = False) -> list[tuple[Column, int]]:
    """Columns that fit in ``width`` and their widths (``state``: with the backlog's state column).

    When narrow, the least useful go first, but never the sorted one (the order must be visible).
    """
    shown = [c for c in COLUMNS if state or c.key != "state"]

    def need(c: Column) -> int:
        return MIN_ABOUT if c.key == "about" else c.width

    while True:
        # one cell of margin each side, GAP between columns
        fixed = sum(need(c) for c in shown) + GAP * (len(shown) - 1) + 2
        title = width - fixed
        droppable = [c for c in shown if need(c) and c.key != sort]
        if title >= MIN_TITLE or not droppable:
            break
        shown.remove(min(droppable, key=lambda c: c.keep))
    widths = {c.key: c.width for c in shown}
    if "about" in widths:  # the two share what the fixed columns leave
        free = title + MIN_ABOUT
        widths["title"] = max(MIN_TITLE, int(free * TITLE_SHARE))
        widths["about"] = free - widths["title"]
    else:
        widths["title"] = max(8, title)
    return [(c, widths[c.key]) for c in shown]


def cell(s: Session, column: Column, w: int, *, now: datetime, fidelity_threshold: float,
         state: StateCell | None = None) -> list[tuple[str, str | None]]:
    """The text pieces of one cell, each with an optional foreground component name.

    ``now`` dates the "Active" column; a lowest retention under ``fidelity_threshold`` is flagged;
    ``state`` is the session's in the backlog (:func:`~hiermem_tui.tui.backlog_view.session_state`).
    """
    key = column.key
    if key == "state":
        text, fg = state or ("·", "muted")
        return [(fit(text, w, False), fg)]
    if key == "title":
        if s.title.strip():
            return [(fit(one_line(s.title, w), w, False), None)]
        return [(fit(one_line(f"(untitled) {s.id}", w), w, False), "muted")]
    if key == "about":
        if s.about:
            return [(fit(one_line(s.about.removeprefix("About: "), w), w, False), None)]
        return [(fit("·", w, False), "muted")]
    if key == "source":
        return [(fit(one_line(s.source, w), w, False), "muted")]
    if key == "episodes":
        return [(fit(f"{s.episodes:,}", w, True), None)]
    if key == "tokens":
        return [(fit(fmt.tokens(s.tokens), w, True), None)]
    if key == "summaries":
        return [(fit(str(s.summaries) if s.summaries else "·", w, True), None if s.summaries else "muted")]
    if key == "depth":
        if s.max_depth is None:
            return [(fit("·", w, True), "muted")]
        return [(fit(str(s.max_depth), w, True), None)]
    if key == "coverage":
        return _coverage_cell(s, w)
    if key == "fallbacks":
        if s.fallbacks:
            return [(fit(f"▲{s.fallbacks}", w, True), "warning")]
        return [(fit("·", w, True), "muted")]
    if key == "fidelity":
        low = s.min_retention
        if low is not None and low < fidelity_threshold:
            return [(fit(f"◇{fmt.percent(low)}", w, True), "warning")]
        return [(fit("·" if low is None else "ok", w, True), "muted")]
    return [(fit(session_when(s, now), w, True), "muted")]


def _coverage_cell(s: Session, w: int) -> list[tuple[str, str | None]]:
    """A bar of ``━`` (half cells drawn ``╸``) and the percentage after it."""
    frac = s.coverage
    pct = fmt.percent(frac) if s.episodes else "–"
    bar_w = max(1, w - 5)  # "100%" and a space after the bar
    halves = round(frac * bar_w * 2)
    done = "━" * (halves // 2) + ("╸" if halves % 2 else "")
    rest = "━" * (bar_w - cell_len(done))
    bar_style = "bar-done" if frac >= 0.999 else "bar"
    return [
        (done, bar_style),
        (rest, "bar-empty"),
        (" " + fit(pct, 4, True), "muted" if not s.summaries else None),
    ]
