"""The session transcript: a bounded window of episodes, paged with keyset queries as you scroll,
and the keys about the episode under its cursor (its covering chain, pin / exclude).

Why a window: a session can hold 50k episodes; mounting a widget per episode, or even
wrapping all their text, would take seconds. The view keeps at most ``MAX_WINDOW``
episodes rendered, fetches ``PAGE`` more with ``episodes_page`` / ``episodes_before`` when
the viewport nears an edge, and drops the far end — adjusting the scroll offset so the
text under the reader's eyes does not move. Jumping anywhere reloads the window around
the target, so cost is bounded by the window, never by the session.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, getters
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hiermem_tui.store import Episode
from hiermem_tui.store.reads import TranscriptSource
from hiermem_tui.store.marks import Mark
from hiermem_tui.textsafe import strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import ChainAsked
from hiermem_tui.tui.widgets.themed import Themed
from hiermem_tui.tui.app_base import AppBase

PAGE = 100
MAX_WINDOW = 400
COLLAPSED_LINES = 8
EXPANDED_LINES = 2000
"""An expanded episode is read part by part: each part holds at most this many of its lines…"""
PART_SCREENS = 1000
"""…and at most this many full-width lines' worth of characters, so a 50 MB paste costs one part to draw,
and enter goes on to the next part (it revealed ~118k characters and stopped there)."""


def part_end(text: str, start: int, max_chars: int, max_lines: int = EXPANDED_LINES) -> int:
    """Where the part of ``text`` that begins at ``start`` ends: after ``max_lines`` newlines or
    ``max_chars`` characters, whichever comes first (pure: parts are the same every time)."""
    end = min(len(text), start + max_chars)
    at = start
    for _ in range(max_lines):
        at = text.find("\n", at, end)
        if at < 0:
            return end
        at += 1
    return at
GUTTER = 2
INDENT = 2


@dataclass(slots=True)
class _Block:
    ep: Episode
    lines: list[Strip] | None = None


class Transcript(ScrollView, Themed, can_focus=True):
    """Episodes of one session. Public: :meth:`jump_to`, :meth:`show_range`, :meth:`set_total`, :meth:`grow`,
    :attr:`cursor`, :attr:`highlight`, :attr:`window` (first, last seq loaded)."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Prev episode", show=False, id="transcript.move.prev"),
        Binding("down,j", "move(1)", "Next episode", show=False, id="transcript.move.next"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page.prev"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page.next"),
        Binding("home,g", "edge(0)", "First", show=False, id="transcript.first"),
        Binding("end,G", "edge(1)", "Last", show=False, id="transcript.last"),
        Binding("enter", "expand", "Expand", show=False, id="transcript.expand"),
        Binding("backspace", "previous_part", "Previous part", show=False, id="transcript.previous_part"),
        # the episode under the cursor: its covering chain, pin / exclude it (ids as on the tree and before)
        Binding("c", "chain", "Chain", id="session.chain"),
        Binding("P", "mark('pin')", "Pin episode", show=False, key_display="P", id="session.mark.pin"),
        Binding("E", "mark('exclude')", "Exclude episode", show=False, key_display="E", id="session.mark.exclude"),
    ]
    DEFAULT_CSS = "Transcript { background: $surface; scrollbar-gutter: stable; overflow-x: hidden; }"

    class CursorMoved(Message):
        """The user moved the transcript cursor to episode ``seq`` (not sent for programmatic jumps)."""

        def __init__(self, seq: int) -> None:
            self.seq = seq
            super().__init__()

    class MarkAsked(Message):
        """``P`` / ``E``: pin or exclude episode ``seq``, or undo that mark (the screen writes it)."""

        def __init__(self, seq: int, mark: Mark) -> None:
            self.seq = seq
            self.mark: Mark = mark
            super().__init__()

    app = getters.app(AppBase)

    def __init__(self, store: TranscriptSource, session_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        self.session_id = session_id
        self.total = 0
        self.cursor: int | None = None
        self.highlight: tuple[int, int] | None = None
        self.expanded: dict[int, int] = {}
        """Episodes shown in full, by seq: the part being read (0: the first)."""
        self._parts: dict[int, list[int]] = {}
        """Where each part of an expanded episode starts (by seq), found as the reader goes on."""
        self._lengths: dict[int, int] = {}
        """The shown text's length of each expanded episode (by seq)."""
        self.ref_year: int | None = None
        self.marks: dict[int, Mark] = {}
        """Pinned / excluded episodes of the loaded window (``{seq: mark}``)."""
        self._blocks: list[_Block] = []
        self._starts: list[int] = []
        self._height = 0
        self._width = 0
        self._pending_top: int | None = None
        self._edge_scheduled = False
        self._marks_window: tuple[int, int] | None = None

    # ------------------------------------------------------------------ public
    @property
    def window(self) -> tuple[int, int] | None:
        """Seqs of the first and last loaded episodes (None when nothing is loaded)."""
        return (self._blocks[0].ep.seq, self._blocks[-1].ep.seq) if self._blocks else None

    @property
    def loaded(self) -> int:
        return len(self._blocks)

    def set_total(self, total: int) -> None:
        """The session's episode count changed (new episodes arrived); nothing is refetched."""
        self.total = total
        if not self._blocks and total:
            self._load_around(0)
        self._update_title()

    def grow(self, total: int) -> None:
        """New episodes arrived. When the window reaches the old last episode they are appended
        below it at once; nothing above moves and the cursor stays where it was."""
        at_end = bool(self._blocks) and self._blocks[-1].ep.seq >= self.total - 1
        grew = total > self.total
        self.set_total(total)
        if grew and at_end:
            self._extend(down=True)

    def jump_to(self, seq: int) -> None:
        """Put the cursor on episode ``seq`` and scroll it to the top, loading a window around it."""
        if not self.total:
            return
        seq = max(0, min(seq, self.total - 1))
        if self.window is None or not (self.window[0] <= seq <= self.window[1]):
            self._load_around(seq)
        self.cursor = seq
        self._pending_top = seq
        self._apply_pending()
        self.refresh()

    def show_range(self, first: int, last: int) -> None:
        """Highlight the episodes a summary covers and bring the first into view."""
        self.highlight = (first, last)
        self.jump_to(first)

    # ------------------------------------------------------------------ loading
    def _load_around(self, seq: int) -> None:
        before = self.store.episodes.before(self.session_id, before_seq=seq, limit=PAGE // 4)
        after = self.store.episodes.page(self.session_id, after_seq=seq - 1, limit=PAGE)
        self._blocks = [_Block(ep) for ep in (*before, *after)]
        self._relayout()

    def _extend(self, down: bool) -> None:
        """Fetch the next page at one edge; trim the other edge past ``MAX_WINDOW``."""
        if not self._blocks:
            return
        shift = 0
        if down:
            page = self.store.episodes.page(self.session_id, after_seq=self._blocks[-1].ep.seq, limit=PAGE)
            self._blocks.extend(_Block(ep) for ep in page)
            excess = len(self._blocks) - MAX_WINDOW
            if excess > 0:
                shift = -sum(len(b.lines or ()) for b in self._blocks[:excess])
                del self._blocks[:excess]
        else:
            page = self.store.episodes.before(self.session_id, before_seq=self._blocks[0].ep.seq, limit=PAGE)
            fresh = [_Block(ep) for ep in page]
            self._render_blocks(fresh)
            shift = sum(len(b.lines or ()) for b in fresh)
            self._blocks[:0] = fresh
            if len(self._blocks) > MAX_WINDOW:
                del self._blocks[MAX_WINDOW:]
        self._relayout()
        if shift and self._width:
            # An animated scroll heading for the old coordinates would undo the anchoring.
            self.app.animator.force_stop_animation(self, "scroll_y")
            self.scroll_to(y=self.scroll_y + shift, animate=False, force=True)

    def _check_edges(self) -> None:
        self._edge_scheduled = False
        if not self._blocks or not self.size.height:
            return
        top, view = round(self.scroll_y), self.size.height
        if top < view and self._blocks[0].ep.seq > 0:
            self._extend(down=False)
        elif top + 2 * view > self._height and self._blocks[-1].ep.seq < self.total - 1:
            self._extend(down=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._edge_scheduled:
            self._edge_scheduled = True
            self.call_later(self._check_edges)

    # ------------------------------------------------------------------ layout
    def _theme_changed(self) -> None:
        super()._theme_changed()
        self.repaint_text()

    def repaint_text(self) -> None:
        """Render every episode again (the theme changed, or secrets are now masked or shown)."""
        for block in self._blocks:
            block.lines = None
        self._relayout()

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._width:
            for block in self._blocks:
                block.lines = None
        self._relayout()
        self._apply_pending()

    def _render_blocks(self, blocks: list[_Block]) -> None:
        width = self.scrollable_content_region.width
        if width <= GUTTER + INDENT + 4:
            return
        self._ensure_marks(blocks)
        self._width = width
        console = self.app.console
        p = self.palette
        for block in blocks:
            if block.lines is None:
                block.lines = self._render_episode(block.ep, width - GUTTER, console, p)

    def _render_episode(self, ep: Episode, width: int, console: object, p: fmt.Palette) -> list[Strip]:
        mark = self.marks.get(ep.seq)
        flag = {"pin": ("  ⚑ pinned", p.accent), "exclude": ("  × excluded", p.error)}.get(mark or "", ("", p.muted))
        head = Text.assemble(
            (f"#{ep.seq}  ", fmt.style(p.muted)),
            (ep.role, fmt.style(p.role_color(ep.role), bold=True)),
            (flag[0], fmt.style(flag[1], bold=True)),
            ("  " + fmt.timestamp(ep.created_at, ref_year=self.ref_year, seconds=True), fmt.style(p.muted)),
            (" (synthetic time)" if ep.synthetic_time else "", fmt.style(p.muted, italic=True)),
            (f"  · {fmt.tokens(ep.tokens)} tok", fmt.style(p.muted)),
        )
        head.truncate(width, overflow="ellipsis")
        text = strip_combining_excess(visible(self.app.shown(ep.content)))
        body_width = width - INDENT
        lines = [Strip(list(head.render(console)), head.cell_len)]  # type: ignore[arg-type]
        pad = Segment(" " * INDENT)
        muted = fmt.style(p.muted, italic=True)
        part = self.expanded.get(ep.seq)
        if part is None:
            # Wrap only what can be shown: a 100k-character paste costs as much as a short reply.
            budget = body_width * (COLLAPSED_LINES + 1)
            body = Text(text[:budget] if len(text) > budget else text, style=fmt.style(p.foreground))
            wrapped = body.wrap(console, body_width, overflow="fold")  # type: ignore[arg-type]
            shown = list(wrapped)[:COLLAPSED_LINES]
            note = None
            if len(wrapped) > COLLAPSED_LINES or len(text) > budget:
                hidden = max(len(text) - sum(len(line.plain) + 1 for line in shown), 1)
                note = Text(f"… {hidden:,} more characters · enter: show all", style=muted)
        else:
            start, end = self._part(ep.seq, text, part, body_width)
            body = Text(text[start:end], style=fmt.style(p.foreground))
            shown = list(body.wrap(console, body_width, overflow="fold"))  # type: ignore[arg-type]
            note = self._part_note(text, start, end, part, muted)
        if part is not None and note is not None and note.plain != "enter: collapse":
            lines.append(Strip([pad, *note.render(console)]))  # type: ignore[arg-type]  # at its top too
        for line in shown:
            lines.append(Strip([pad, *line.render(console)]))  # type: ignore[arg-type]
        if note is not None:
            lines.append(Strip([pad, *note.render(console)]))  # type: ignore[arg-type]
        lines.append(Strip([]))
        return lines

    def _part(self, seq: int, text: str, part: int, body_width: int) -> tuple[int, int]:
        """``(start, end)`` of part ``part`` of an expanded episode's text (its starts cached)."""
        starts = self._parts.setdefault(seq, [0])
        self._lengths[seq] = len(text)
        max_chars = body_width * PART_SCREENS
        while len(starts) <= part + 1 and starts[-1] < len(text):
            starts.append(part_end(text, starts[-1], max_chars))
        start = starts[min(part, len(starts) - 1)]
        return start, part_end(text, start, max_chars)

    @staticmethod
    def _part_note(text: str, start: int, end: int, part: int, style: Style) -> Text | None:
        """Where the reader is in a long episode, and what enter (and backspace) do next."""
        whole = len(text)
        if start == 0 and end >= whole:
            return Text("enter: collapse", style=style) if text.count("\n") >= COLLAPSED_LINES else None
        where = f"characters {start + 1:,}–{end:,} of {whole:,}"
        back = " · backspace: previous part" if part else ""
        if end < whole:
            return Text(f"… {whole - end:,} more characters ({where}) · enter: next part{back}", style=style)
        return Text(f"end ({where}) · enter: collapse{back}", style=style)

    def refresh_marks(self) -> None:
        """Re-read the marks of the loaded window and redraw the episodes whose mark changed."""
        old = self.marks
        w = self.window
        self.marks = self.store.marks.of(self.session_id, *w) if w else {}
        self._marks_window = w
        changed = {seq for seq in set(old) | set(self.marks) if old.get(seq) != self.marks.get(seq)}
        for block in self._blocks:
            if block.ep.seq in changed:
                block.lines = None
        self._relayout()

    def _ensure_marks(self, blocks: list[_Block]) -> None:
        """Marks cover every episode about to be drawn (one indexed query per new page)."""
        seqs = [b.ep.seq for b in (*blocks, *self._blocks[:1], *self._blocks[-1:])]
        if not seqs:
            return
        lo, hi = min(seqs), max(seqs)
        known = self._marks_window
        if known is None or lo < known[0] or hi > known[1]:
            self.marks = self.store.marks.of(self.session_id, lo, hi)
            self._marks_window = (lo, hi)

    def _relayout(self) -> None:
        self._render_blocks(self._blocks)
        starts, y = [], 0
        for block in self._blocks:
            starts.append(y)
            y += len(block.lines) if block.lines is not None else 1
        self._starts, self._height = starts, y
        self.virtual_size = Size(self._width, y)
        self._update_title()
        self.refresh()

    def _apply_pending(self) -> None:
        seq = self._pending_top
        if seq is None or not self._width or not self.size.height:
            return
        self._pending_top = None
        y = self._line_of(seq)
        if y is not None:
            self.scroll_to(y=max(y - 1, 0), animate=False, force=True)

    def _line_of(self, seq: int) -> int | None:
        if not self._blocks:
            return None
        index = seq - self._blocks[0].ep.seq
        return self._starts[index] if 0 <= index < len(self._starts) else None

    def _update_title(self) -> None:
        w = self.window
        self.border_title = (
            f"episodes {fmt.seq_range(*w)} of {self.total:,}" if w else "no episodes"
        )

    # ------------------------------------------------------------------ drawing
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        y += round(self.scroll_y)
        if not self._blocks or y >= self._height:
            if not self._blocks and y == round(self.scroll_y):
                msg = Text("  No episodes in this session.", style=fmt.style(self.palette.muted))
                return Strip(list(msg.render(self.app.console))).extend_cell_length(width).apply_style(base)
            return Strip.blank(width, base)
        b = bisect_right(self._starts, y) - 1
        block = self._blocks[b]
        k = y - self._starts[b]
        if block.lines is None or k >= len(block.lines):
            return Strip.blank(width, base)
        p = self.palette
        seq = block.ep.seq
        separator = k == len(block.lines) - 1
        covered = self.highlight is not None and self.highlight[0] <= seq <= self.highlight[1] and not separator
        extra = Style()
        if covered:
            extra = fmt.style(None, p.highlight)
        if seq == self.cursor and k == 0:
            extra = fmt.style(p.foreground, p.cursor if self.has_focus else p.panel, bold=True)
        gutter = Segment("▎ ", fmt.style(p.user)) if covered else Segment("  ")
        if seq == self.cursor and not separator:
            gutter = Segment("▌ ", fmt.style(p.cursor if self.has_focus else p.muted))
        line = Strip.join([Strip([gutter], GUTTER), block.lines[k]]).extend_cell_length(width)
        return line.apply_style(base + extra)

    # ------------------------------------------------------------------ interaction
    def _scroll_block_into_view(self, seq: int) -> None:
        y = self._line_of(seq)
        if y is None:
            return
        b = seq - self._blocks[0].ep.seq
        height = len(self._blocks[b].lines or [None])
        self.scroll_to_region(Region(0, y, 1, min(height, max(self.size.height - 1, 1))), animate=False, force=True)

    def _ensure_loaded(self, seq: int) -> None:
        w = self.window
        if w is None:
            return
        if seq > w[1]:
            self._extend(down=True)
        elif seq < w[0]:
            self._extend(down=False)
        w = self.window
        if w is None or not (w[0] <= seq <= w[1]):
            self._load_around(seq)

    def action_move(self, delta: int) -> None:
        if not self.total:
            return
        current = self.cursor if self.cursor is not None else (self.window or (0, 0))[0] - delta
        seq = max(0, min(current + delta, self.total - 1))
        self._ensure_loaded(seq)
        self.cursor = seq
        self._scroll_block_into_view(seq)
        self.refresh()
        self.post_message(self.CursorMoved(seq))

    def action_page(self, direction: int) -> None:
        """Scroll one screen (no animation: pages load while you read) and put the cursor on top."""
        if not self._blocks:
            return
        self.scroll_to(y=self.scroll_y + direction * max(self.size.height - 2, 1), animate=False, force=True)
        self._check_edges()
        y = round(self.scroll_y) + 1
        b = max(bisect_right(self._starts, y) - 1, 0)
        if b < len(self._blocks):
            self.cursor = self._blocks[b].ep.seq
            self.refresh()
            self.post_message(self.CursorMoved(self.cursor))

    def action_edge(self, end: int) -> None:
        if self.total:
            self.jump_to(self.total - 1 if end else 0)
            if self.cursor is not None:
                self.post_message(self.CursorMoved(self.cursor))

    def action_expand(self) -> None:
        """Show a long episode in full, one part at a time: its first part, then the next part on each
        enter, and folded again after the last."""
        self._turn(1)

    def action_previous_part(self) -> None:
        """Back one part of an expanded episode."""
        self._turn(-1)

    def _turn(self, step: int) -> None:
        seq = self.cursor
        if seq is None or self._line_of(seq) is None:
            return
        part = self.expanded.get(seq)
        if part is None:
            if step < 0:
                return
            self.expanded[seq] = 0
        elif part + step < 0:
            return
        elif step > 0 and not self._more_after(seq, part):
            del self.expanded[seq]  # the last part read: fold it again
            self._parts.pop(seq, None)
        else:
            self.expanded[seq] = part + step
        self._blocks[seq - self._blocks[0].ep.seq].lines = None
        self._relayout()
        if seq in self.expanded:
            self.jump_to(seq)  # the part begins at the top of the view

    def _more_after(self, seq: int, part: int) -> bool:
        """Whether text follows the part being read (known: drawing a part finds where the next begins)."""
        starts = self._parts.get(seq, [])
        return len(starts) > part + 1 and starts[part + 1] < self._lengths.get(seq, 0)

    def action_chain(self) -> None:
        """``c``: the summaries covering the episode under the cursor (the screen opens the picker)."""
        if self.cursor is None:
            self.notify("Select an episode first (in the transcript, or expand a leaf in the tree).",
                        title="Covering chain")
            return
        self.post_message(ChainAsked(self.cursor))

    def action_mark(self, mark: str) -> None:
        """``P`` / ``E``: pin or exclude the episode under the cursor (again: undo it)."""
        if self.cursor is None:
            self.notify("Put the transcript's cursor on an episode first: P pins it, E excludes it.",
                        title="Pin / exclude")
            return
        self.post_message(self.MarkAsked(self.cursor, "pin" if mark == "pin" else "exclude"))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self._blocks:
            return
        y = offset.y + round(self.scroll_y)
        b = bisect_right(self._starts, y) - 1
        if 0 <= b < len(self._blocks):
            self.cursor = self._blocks[b].ep.seq
            self.refresh()
            self.post_message(self.CursorMoved(self.cursor))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
