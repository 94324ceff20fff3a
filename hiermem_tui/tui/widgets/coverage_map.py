"""A picture of the DAG along the session: one row per depth, one bar per active summary.

Why the Line API: the map is redrawn on every selection change and on resize, and a
session can hold thousands of summaries; building one ``Strip`` per row from bisected
interval lists costs O(rows × width × log n) whatever the number of summaries.

Each cell is split in two half-cells (``▌`` with a foreground and a background colour),
doubling horizontal resolution. A half-cell covering several summaries shows the worst
tier among them, so a single fallback never disappears at any zoom; the selection wins
over everything so it is always visible.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import datetime, timezone
from itertools import groupby

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from hiermem_tui.store import SummarySpan
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.widgets.themed import Themed
from hiermem_tui.tui.widgets.coverage_rows import LABEL_WIDTH, ColourBy, MapItem, Row, Scale


class CoverageMap(Themed, can_focus=True):
    """The coverage map. Feed it with :meth:`set_data`; :meth:`select` highlights a tree key."""

    BINDINGS = [
        Binding("left", "step(-1)", "Prev bar", show=False, id="coverage_map.left"),
        Binding("right", "step(1)", "Next bar", show=False, id="coverage_map.right"),
        Binding("up", "climb(-1)", "Up a depth", show=False, id="coverage_map.up"),
        Binding("down", "climb(1)", "Down a depth", show=False, id="coverage_map.down"),
    ]
    DEFAULT_CSS = """
    CoverageMap { height: auto; min-height: 2; background: $surface; }
    """

    class Picked(Message):
        """The user clicked (or stepped to) a bar; the screen selects it in the tree."""

        def __init__(self, item: MapItem) -> None:
            self.item = item
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.total = 0
        self.scale: Scale = "episodes"
        self.selected: str | None = None
        self._by_key: dict[str, tuple[int, int]] = {}
        self._strips: list[Strip] | None = None
        self._domain = (0.0, 1.0)
        self.ref_year: int | None = None
        self.colour_by: ColourBy = "tier"
        """``tier`` (normal / aggressive / fallback) or ``fidelity`` (ok / not measured / low)."""
        self.fidelity_threshold = 0.5
        self._spans: dict[str, SummarySpan] = {}
        self._extras: list[MapItem] = []
        self._marks: list[MapItem] = []

    # ------------------------------------------------------------------ data
    def set_data(self, spans: list[SummarySpan], extras: list[MapItem], total: int,
                 marks: Sequence[MapItem] | None = None) -> None:
        """Replace the map's content: active summaries plus gap / fresh-tail items, and (ep
        row) pinned / excluded episodes (``marks``; None keeps the ones set before)."""
        self.total = total
        if marks is not None:
            self._marks = list(marks)
        self._spans = {s.id: s for s in spans}
        ordered = sorted(spans, key=lambda s: (s.depth, s.first_seq))
        by_depth = {d: list(group) for d, group in groupby(ordered, key=lambda s: s.depth)}
        self.rows = [Row.of_spans(d, by_depth[d], self._classify) for d in sorted(by_depth, reverse=True)]
        self._finish(extras, list(self.rows))

    def apply(self, added: Sequence[SummarySpan], removed: Sequence[str], extras: list[MapItem], total: int) -> None:
        """Change the map in place — summaries added and removed (ids), gap and fresh-tail items
        and the episode count replaced — re-indexing only the rows that changed, where
        :meth:`set_data` rebuilds every row (a run or a watcher adds summaries one at a time)."""
        self.total = total
        rows = {row.depth: row for row in self.rows[:-1]}
        touched: dict[int, Row] = {}
        for sid in removed:
            self._spans.pop(sid, None)
            for row in rows.values():
                if row.remove(f"s:{sid}"):
                    touched[row.depth] = row
                    break
        for span in added:
            self._spans[span.id] = span
            if span.depth not in rows:
                rows[span.depth] = Row.of_spans(span.depth, [], self._classify)
            row = rows[span.depth]
            row.insert(span, self._classify(span))
            touched[span.depth] = row
        self.rows = [rows[d] for d in sorted(rows, reverse=True) if len(rows[d])]
        self._finish(extras, [r for r in touched.values() if len(r)])

    def _finish(self, extras: list[MapItem], changed: list[Row]) -> None:
        """Rebuild the episode row and the key index, re-index ``changed`` rows, redraw."""
        self._extras = extras
        leaves = self.rows[-1] if self.rows and self.rows[-1].depth == 0 else None
        self.rows.append(Row.of_items("ep", [*extras, *self._covered_runs(leaves, extras), *self._marks]))
        rows = self.rows
        self._by_key = {key: (r, i) for r, row in enumerate(rows[:-1]) for i, key in enumerate(row.keys)}
        self._by_key.update({key: (len(rows) - 1, i) for i, key in enumerate(rows[-1].keys) if key})
        self._reindex([*changed, rows[-1]])
        self.refresh(layout=True)

    def _classify(self, span: SummarySpan) -> str:
        """The class a bar is coloured by. In fidelity mode the three tier slots carry low /
        not measured / ok, so the worst class still wins a cell at any zoom."""
        if self.colour_by == "tier":
            return span.tier
        if span.retention is None:
            return "aggressive"
        return "fallback" if span.retention < self.fidelity_threshold else "normal"

    def set_marks(self, marks: Sequence[MapItem]) -> None:
        """Replace the pinned / excluded ticks, keeping the rest."""
        self._marks = list(marks)
        self.rows = self.rows[:-1]
        self._finish(self._extras, [])

    def toggle_colour(self) -> ColourBy:
        """Colour the bars by tier or by identifier retention (rebuilds the rows)."""
        self.colour_by = "fidelity" if self.colour_by == "tier" else "tier"
        self.set_data(list(self._spans.values()), self._extras, self.total)
        return self.colour_by

    @staticmethod
    def _covered_runs(leaves: Row | None, extras: list[MapItem]) -> list[MapItem]:
        """Runs of episodes under leaves, between the gaps (one item per run, not per leaf)."""
        runs: list[MapItem] = []
        if leaves is None or not len(leaves):
            return runs
        firsts = leaves.first
        cuts = sorted((e.first, e.last) for e in extras)
        start = firsts[0]
        for lo, hi in [*cuts, (leaves.last[-1] + 1, leaves.last[-1] + 1)]:
            if lo > start:
                a = bisect_right(firsts, start) - 1
                b = bisect_right(firsts, lo - 1) - 1
                runs.append(MapItem("", "covered", -1, "normal", start, lo - 1, leaves.start[a], leaves.end[b]))
            start = max(start, hi + 1)
        return runs

    def _reindex(self, rows: Sequence[Row] | None = None) -> None:
        """Index ``rows`` (default: all) for the current scale, then the axis domain."""
        scale = self.scale
        for row in self.rows if rows is None else rows:
            row.index(scale)
        if scale == "time":
            los = [row.lo[0] for row in self.rows if row.lo]
            his = [row.hi_max[-1] for row in self.rows if row.hi_max]
            self._domain = (min(los), max(his)) if los else (0.0, 1.0)
        else:
            self._domain = (0.0, float(max(self.total, 1)))
        self._strips = None
        self.refresh()

    def select(self, key: str | None) -> None:
        if key != self.selected:
            self.selected = key
            self._strips = None
            self.refresh()

    def toggle_scale(self) -> Scale:
        """Switch between an episode axis and a time axis (idle time then shows as blank)."""
        self.scale = "time" if self.scale == "episodes" else "episodes"
        self._reindex()
        return self.scale

    def item(self, key: str) -> MapItem | None:
        where = self._by_key.get(key)
        return self.rows[where[0]].item(where[1]) if where else None

    # ------------------------------------------------------------------ drawing
    def _theme_changed(self) -> None:
        super()._theme_changed()
        self._strips = None
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._strips = None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows) + 1

    def render_line(self, y: int) -> Strip:
        if self._strips is None or (self._strips and self._strips[0].cell_length != self.size.width):
            self._strips = self._build(self.size.width)
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(self.size.width)

    def _pos(self, h: float, halves: int) -> float:
        lo, hi = self._domain
        return lo + (hi - lo) * h / halves

    def _build(self, width: int) -> list[Strip]:
        p = self.palette
        base = self.background_colors[1]
        bar_w = max(width - LABEL_WIDTH, 1)
        sel_row = self._by_key.get(self.selected or "", (-1, -1))[0]
        strips = []
        for r, row in enumerate(self.rows):
            label_style = fmt.style(p.foreground if r == sel_row else p.muted, base, bold=r == sel_row)
            segs = [Segment(f"{row.label:>3} ", label_style)]
            segs += self._summary_row(row, bar_w, base) if row.label != "ep" else self._episode_row(row, bar_w, base)
            strips.append(Strip(Segment.simplify(segs), width))
        strips.append(self._axis(width, base))
        return strips

    def _summary_row(self, row: Row, bar_w: int, base: Color) -> list[Segment]:
        p = self.palette
        sel = self._by_key.get(self.selected or "")
        halves = bar_w * 2
        colours: list[Color] = []
        for h in range(halves):
            i, j = row.window(self._pos(h, halves), self._pos(h + 1, halves))
            if j <= i:
                colours.append(base)
                continue
            if sel is not None and self.rows[sel[0]] is row and i <= sel[1] < j:
                colours.append(p.foreground)
                continue
            if row.fallbacks[j] - row.fallbacks[i]:
                tier = "fallback"
            elif row.aggressive[j] - row.aggressive[i]:
                tier = "aggressive"
            else:
                tier = "normal"
            colour = p.tier_color(tier) if self.colour_by == "tier" else {
                "fallback": p.error, "aggressive": p.muted, "normal": p.success}[tier]
            if j - i > 1:
                colour = colour.blend(base, 0.2)
            elif i % 2:
                colour = colour.blend(base, 0.35)
            colours.append(colour)
        out = []
        for c in range(bar_w):
            left, right = colours[2 * c], colours[2 * c + 1]
            if left == right:
                out.append(Segment(" ", fmt.style(None, left)))
            else:
                out.append(Segment("▌", fmt.style(left, right)))
        return out

    def _episode_row(self, row: Row, bar_w: int, base: Color) -> list[Segment]:
        p = self.palette
        sel = self.item(self.selected) if self.selected else None
        sel_bounds = sel.bounds(self.scale) if sel is not None else None
        out = []
        for c in range(bar_w):
            p0, p1 = self._pos(c, bar_w), self._pos(c + 1, bar_w)
            i, j = row.window(p0, p1)
            kinds = set(row.kinds[i:j])
            keys = set(row.keys[i:j])
            if sel is not None and sel.kind != "summary" and sel.key in keys:
                colour = p.error if sel.kind == "gap" else p.success
                out.append(Segment("█", fmt.style(colour, base)))
            elif sel is not None and sel_bounds is not None and sel.kind == "summary" and sel_bounds[0] < p1 and sel_bounds[1] > p0:
                out.append(Segment("━", fmt.style(p.foreground, base, bold=True)))
            elif "exclude" in kinds:
                out.append(Segment("×", fmt.style(p.error, base, bold=True)))
            elif "pin" in kinds:
                out.append(Segment("⚑", fmt.style(p.accent, base, bold=True)))
            elif "gap" in kinds:
                out.append(Segment("░", fmt.style(p.error, base)))
            elif "tail" in kinds:
                out.append(Segment("▒", fmt.style(p.success, base)))
            elif kinds:
                out.append(Segment("─", fmt.style(p.muted, base)))
            else:
                out.append(Segment(" ", fmt.style(None, base)))
        return out

    def _axis(self, width: int, base: Color) -> Strip:
        p = self.palette
        lo, hi = self._domain
        if self.scale == "time" and self.rows and any(len(r) for r in self.rows):
            def name(v: float) -> str:
                return fmt.timestamp(datetime.fromtimestamp(v, timezone.utc).isoformat(), ref_year=self.ref_year)
            left, mid, right = name(lo), name((lo + hi) / 2), name(hi)
        else:
            last = max(self.total - 1, 0)
            left, mid, right = "#0", f"#{last // 2}", f"#{last}"
        bar_w = max(width - LABEL_WIDTH, 1)
        cells = [" "] * bar_w
        for text, at in ((left, 0), (right, bar_w - len(right)), (mid, (bar_w - len(mid)) // 2)):
            if at < 0:
                continue
            span = range(at, min(at + len(text), bar_w))
            if all(cells[k] == " " for k in range(max(at - 1, 0), min(at + len(text) + 1, bar_w))):
                for k, ch in zip(span, text):
                    cells[k] = ch
        text = " " * LABEL_WIDTH + "".join(cells)
        return Strip([Segment(text, fmt.style(p.muted, base))], width)

    # ------------------------------------------------------------------ interaction
    def at(self, x: int, y: int) -> MapItem | None:
        """The item under content cell ``(x, y)``: the nearest bar of that row; on the episode
        row, a gap, the fresh tail, or the leaf covering that spot."""
        if not (0 <= y < len(self.rows)) or x < LABEL_WIDTH:
            return None
        row = self.rows[y]
        bar_w = max(self.size.width - LABEL_WIDTH, 1)
        p0, p1 = self._pos(x - LABEL_WIDTH, bar_w), self._pos(x - LABEL_WIDTH + 1, bar_w)
        i, j = row.window(p0, p1)
        if j <= i:
            return None
        mid = (p0 + p1) / 2
        k = min(range(i, j), key=lambda k: abs((row.lo[k] + row.hi_max[k]) / 2 - mid))
        if row.kinds[k] == "covered" and len(self.rows) > 1:
            leaves = self.rows[-2]
            a, b = leaves.window(mid, mid + 1e-6)
            return leaves.item(a) if b > a else None
        return row.item(k)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and (item := self.at(offset.x, offset.y)) is not None:
            self.post_message(self.Picked(item))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        item = self.at(offset.x, offset.y) if offset is not None else None
        self.tooltip = self.describe(item) if item is not None else None

    def describe(self, item: MapItem) -> Text:
        """Tooltip text: what a bar is (numbers and times only, no chat text)."""
        tier = item.tier if self.colour_by == "tier" else {
            "fallback": "low fidelity", "aggressive": "fidelity not measured", "normal": "fidelity ok"}[item.tier]
        what = {"gap": "unsummarised", "tail": "fresh tail", "pin": "pinned episode",
                "exclude": "excluded episode"}.get(item.kind, f"d{item.depth} {tier}")
        return Text(f"{what}  {fmt.seq_span(item.first, item.last)}\n"
                    f"{fmt.time_range(item.start_at, item.end_at, ref_year=self.ref_year)}")

    def _current(self) -> tuple[int, int] | None:
        return self._by_key.get(self.selected or "")

    def action_step(self, delta: int) -> None:
        """←/→: the previous / next bar of the selected bar's row."""
        where = self._current()
        if where is None:
            self._pick_first()
            return
        row = self.rows[where[0]]
        k = where[1] + delta
        while 0 <= k < len(row) and not row.keys[k]:
            k += delta
        if 0 <= k < len(row):
            self.post_message(self.Picked(row.item(k)))

    def action_climb(self, delta: int) -> None:
        """↑/↓: the bar of the row above / below nearest to the selected bar's middle."""
        where = self._current()
        if where is None:
            self._pick_first()
            return
        here = self.rows[where[0]]
        mid = (here.first[where[1]] + here.last[where[1]]) / 2
        r = where[0] + delta
        while 0 <= r < len(self.rows):
            row = self.rows[r]
            options = [k for k in range(len(row)) if row.keys[k]] if row.depth < 0 else range(len(row))
            if options:
                k = bisect_right(row.first, mid) - 1
                if not (k in options and row.first[k] <= mid <= row.last[k]):
                    k = min(options, key=lambda k: min(abs(row.first[k] - mid), abs(row.last[k] - mid)))
                self.post_message(self.Picked(row.item(k)))
                return
            r += delta

    def _pick_first(self) -> None:
        for row in self.rows:
            for k in range(len(row)):
                if row.keys[k]:
                    self.post_message(self.Picked(row.item(k)))
                    return
