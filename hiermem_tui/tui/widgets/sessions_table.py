"""A virtual table of sessions: renders only the visible rows, fetched from the store a page at a time.

Why not a DataTable: a DataTable holds and measures every cell up front; with 10k sessions
that took ~1.4 s before the first frame (bench/bench_tui_sessions.py), against ~0.25 s here. This widget (Textual's Line
API) knows only the row count; ``render_line`` asks a small LRU page cache, which asks
``store.sessions.page(limit=, offset=)``. Sorting and filtering happen in SQL, so opening,
re-sorting and filtering cost the same for 10 or 100 000 sessions.

Chat-derived text (titles, sources) goes through :func:`one_line` and into plain Segments:
nothing from the store is ever parsed as markup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hiermem_tui.store import Session
from hiermem_tui.store.reads import SessionListSource
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.backlog_view import StateCell
from hiermem_tui.tui.widgets.session_columns import COLUMNS, GAP, SORTABLE, Column, cell, fit, fit_columns

PAGE_SIZE = 100
MAX_PAGES = 24


class SessionsTable(ScrollView, can_focus=True):
    """Sessions, one per row, sorted and filtered by the store; row 0 is a fixed header."""

    BINDINGS = [
        Binding("enter", "select", "Open", priority=False, id="sessions_table.select"),
        Binding("up,k", "cursor(-1)", "Up", show=False, id="sessions_table.cursor.prev"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="sessions_table.cursor.next"),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False, id="sessions_table.page.prev"),
        Binding("pagedown,ctrl+f", "page(1)", "Page down", show=False, id="sessions_table.page.next"),
        Binding("home,g", "jump(0)", "Top", show=False, id="sessions_table.first"),
        Binding("end,G", "jump(-1)", "Bottom", show=False, id="sessions_table.last"),
    ]
    COMPONENT_CLASSES = {
        f"sessions-table--{name}"
        for name in ("header", "header-sorted", "cursor", "hover", "stripe", "muted", "warning", "bar", "bar-done",
                     "bar-empty", "message")
    }

    cursor_row: reactive[int] = reactive(0, init=False)

    @dataclass
    class Highlighted(Message):
        """The cursor moved to another session (None: the table is empty)."""

        session: Session | None

    @dataclass
    class Selected(Message):
        """Enter (or a double click) on a session."""

        session_id: str

    @dataclass
    class Changed(Message):
        """The row set changed: a new count, sort or filter."""

    def __init__(
        self,
        store: SessionListSource,
        *,
        clock: Callable[[], datetime],
        sort: str = "updated",
        descending: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.store = store
        self.clock = clock
        self.fidelity_threshold = 0.5
        """Sessions whose lowest summary retention is under this are flagged (the policy's)."""
        self.shown: Callable[[str], str] | None = None
        """How titles are shown when not as they are: with secrets masked (the app's, while the screen is shared)."""
        self.state_of: Callable[[str], StateCell] | None = None
        """A session's state in the backlog (a lookup: it runs per row painted). None: no state column
        (nothing is known of the backlog yet)."""
        self.sort = sort
        self.descending = descending
        self.filter_text = ""
        self.row_count = 0
        self._pages: OrderedDict[int, list[Session]] = OrderedDict()
        self._hover_row: int | None = None
        self._columns_cache: tuple[tuple[int, str, bool], list[tuple[Column, int]]] | None = None
        self._now = clock()
        self._styles: dict[str, Style] = {}

    # ------------------------------------------------------------------ data
    def on_mount(self) -> None:
        self.reload(keep_cursor=False)
        self.set_interval(60, self._tick)

    def _tick(self) -> None:
        """Keep "5m ago" honest while the app stays open."""
        self._now = self.clock()
        self.refresh()

    def reload(self, *, keep_cursor: bool = True) -> None:
        """Re-count and forget cached pages (after a sort, filter, or a change in the store).

        ``keep_cursor``: the cursor stays on the session it was on, at the same height on
        screen, even when the change moved that session (new episodes sort it to the top)."""
        kept = self.session_at(self.cursor_row) if keep_cursor else None
        height = self.cursor_row - round(self.scroll_y)
        self._pages.clear()
        self._now = self.clock()
        self.row_count = self.store.sessions.count(self.filter_text or None)
        self.virtual_size = Size(0, self.row_count + 1)
        if not keep_cursor:
            self.scroll_to(y=0, animate=False)
            self.set_reactive(SessionsTable.cursor_row, 0)
        elif kept is not None:
            row = self.store.sessions.position(kept.id, sort=self.sort, descending=self.descending,
                                              text=self.filter_text or None)
            if row is not None and row != self.cursor_row:
                self.set_reactive(SessionsTable.cursor_row, row)
                self.scroll_to(y=max(0, row - height), animate=False, force=True)
        cursor = max(0, min(self.cursor_row, self.row_count - 1))
        self.set_reactive(SessionsTable.cursor_row, cursor)
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.session_at(cursor)))
        self.post_message(self.Changed())

    def session_at(self, row: int) -> Session | None:
        """The session on ``row`` (0-based, in the current order), fetching its page if needed."""
        if row < 0 or row >= self.row_count:
            return None
        page_no, index = divmod(row, PAGE_SIZE)
        page = self._pages.get(page_no)
        if page is None:
            page = self.store.sessions.page(
                sort=self.sort,
                descending=self.descending,
                text=self.filter_text or None,
                limit=PAGE_SIZE,
                offset=page_no * PAGE_SIZE,
            )
            self._pages[page_no] = page
            while len(self._pages) > MAX_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(page_no)
        return page[index] if index < len(page) else None

    @property
    def current(self) -> Session | None:
        return self.session_at(self.cursor_row)

    def set_sort(self, key: str, descending: bool | None = None) -> None:
        """Sort by a column key; the same key again flips the direction."""
        if descending is None:
            column = next((c for c in COLUMNS if c.key == key), None)
            if key == self.sort:
                descending = not self.descending
            else:
                descending = column.desc_first if column else True
        self.sort, self.descending = key, descending
        self.reload(keep_cursor=False)

    def cycle_sort(self, step: int = 1) -> None:
        keys = [c.key for c in SORTABLE]
        index = keys.index(self.sort) if self.sort in keys else 0
        key = keys[(index + step) % len(keys)]
        self.set_sort(key, next(c.desc_first for c in SORTABLE if c.key == key))

    def reverse_sort(self) -> None:
        self.set_sort(self.sort, not self.descending)

    def set_filter(self, text: str) -> None:
        text = text.strip()
        if text != self.filter_text:
            self.filter_text = text
            self.reload(keep_cursor=False)

    # ------------------------------------------------------------------ cursor
    @property
    def _body_height(self) -> int:
        return max(1, self.size.height - 1)

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self._refresh_row(old)
        self._refresh_row(new)
        self.post_message(self.Highlighted(self.session_at(new)))

    def _refresh_row(self, row: int) -> None:
        y = row - round(self.scroll_y) + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _scroll_to_cursor(self) -> None:
        top = round(self.scroll_y)
        row = self.cursor_row
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + self._body_height:
            self.scroll_to(y=row - self._body_height + 1, animate=False)

    def _move_to(self, row: int) -> None:
        if self.row_count:
            self.cursor_row = max(0, min(row, self.row_count - 1))

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor_row + direction * max(1, self._body_height - 1))

    def action_jump(self, row: int) -> None:
        self._move_to(row if row >= 0 else self.row_count - 1)

    def action_select(self) -> None:
        session = self.current
        if session is not None:
            self.post_message(self.Selected(session.id))

    # ------------------------------------------------------------------ mouse
    def _row_at(self, y: int) -> int | None:
        row = round(self.scroll_y) + y - 1
        return row if y >= 1 and 0 <= row < self.row_count else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None and column.sortable:
                self.set_sort(column.key)
            return
        row = self._row_at(offset.y)
        if row is None:
            return
        if row == self.cursor_row and event.chain >= 2:
            self.action_select()
        self.cursor_row = row

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        row = self._row_at(offset.y) if offset is not None else None
        if row != self._hover_row:
            old, self._hover_row = self._hover_row, row
            for r in (old, row):
                if r is not None:
                    self._refresh_row(r)

    def on_leave(self, event: events.Leave) -> None:
        if self._hover_row is not None:
            old, self._hover_row = self._hover_row, None
            self._refresh_row(old)

    def on_resize(self, event: events.Resize) -> None:
        self._columns_cache = None
        self._scroll_to_cursor()

    # ------------------------------------------------------------------ layout
    def _layout(self, width: int) -> list[tuple[Column, int]]:
        """Columns that fit in ``width`` and their widths (:func:`fit_columns`), cached per width and sort."""
        key = (width, self.sort, self.state_of is not None)
        if self._columns_cache and self._columns_cache[0] == key:
            return self._columns_cache[1]
        layout = fit_columns(width, self.sort, state=self.state_of is not None)
        self._columns_cache = (key, layout)
        return layout

    def _column_at(self, x: int) -> Column | None:
        pos = 1
        for column, width in self._layout(self.size.width):
            if pos <= x < pos + width + GAP:
                return column
            pos += width + GAP
        return None

    # ------------------------------------------------------------------ rendering
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(f"sessions-table--{name}")
        return style

    def _fg(self, name: str) -> Style:
        """Only the colour and attributes of a component (the row supplies the background)."""
        key = f"fg:{name}"
        style = self._styles.get(key)
        if style is None:
            full = self._style(name)
            style = self._styles[key] = Style(color=full.color, bold=full.bold, italic=full.italic)
        return style

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            return self._render_header(width)
        row = round(self.scroll_y) + y - 1
        base = self.rich_style
        if self.row_count == 0:
            if y == 2:
                return self._render_message(width)
            return Strip.blank(width, base)
        session = self.session_at(row)
        if session is None:
            return Strip.blank(width, base)
        if row == self.cursor_row:
            row_style = self._style("cursor")
        elif row == self._hover_row:
            row_style = self._style("hover")
        elif row % 2:
            row_style = self._style("stripe")
        else:
            row_style = base
        cursor = row == self.cursor_row
        if self.shown is not None:
            session = replace(session, title=self.shown(session.title),
                              about=self.shown(session.about) if session.about else session.about)
        segments = [Segment(" ", row_style)]
        state = self.state_of(session.id) if self.state_of is not None else None
        for i, (column, w) in enumerate(self._layout(width)):
            if i:
                segments.append(Segment(" " * GAP, row_style))
            for text, fg in cell(session, column, w, now=self._now, fidelity_threshold=self.fidelity_threshold,
                                 state=state):
                # On the cursor row the cursor colours win, except where colour is the message.
                if fg is None or (cursor and fg == "muted"):
                    segments.append(Segment(text, row_style))
                else:
                    segments.append(Segment(text, row_style + self._fg(fg)))
        return Strip(segments).adjust_cell_length(width, row_style)

    def _render_header(self, width: int) -> Strip:
        """Column labels; the sorted one is highlighted with ▲/▼ (in the gap if it does not fit)."""
        header, sorted_style = self._style("header"), self._style("header-sorted")
        arrow = "▼" if self.descending else "▲"
        segments = [Segment(" ", header)]
        for i, (column, w) in enumerate(self._layout(width)):
            label = column.label
            is_sorted = column.key == self.sort
            gap = " " * GAP
            if is_sorted:
                if cell_len(label) + 2 <= w:
                    label = f"{arrow} {label}" if column.right else f"{label} {arrow}"
                elif i:
                    gap = " " * (GAP - 1) + arrow
            if i:
                segments.append(Segment(gap, sorted_style if gap.strip() else header))
            segments.append(Segment(fit(label, w, column.right), sorted_style if is_sorted else header))
        return Strip(segments).adjust_cell_length(width, header)

    def _render_message(self, width: int) -> Strip:
        text = one_line(f"No sessions match “{self.filter_text}” — press esc to clear the filter", width - 2)
        return Strip([Segment(text.center(width), self._style("message"))]).adjust_cell_length(
            width, self.rich_style
        )
