"""The coverage map's data: bars (:class:`MapItem`) and rows of them kept as parallel lists.

A row holds thousands of summaries as a few lists (keys, tiers, first/last seq, times) plus
prefix counts of fallbacks and aggressive ones, so drawing a cell is two bisections and a
subtraction at any zoom; :meth:`Row.insert` / :meth:`Row.remove` change a row in place.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Literal

from hiermem_tui.store import SummarySpan, parse_iso

Scale = Literal["episodes", "time"]
ItemKind = Literal["summary", "gap", "tail", "covered", "pin", "exclude"]
ColourBy = Literal["tier", "fidelity"]
LABEL_WIDTH = 4


@dataclass(frozen=True, slots=True)
class MapItem:
    """One bar: a summary (``key`` = its tree key), a gap, the fresh tail, or covered episodes."""

    key: str
    kind: ItemKind
    depth: int
    tier: str
    first: int
    last: int
    start_at: str
    end_at: str

    def bounds(self, scale: Scale) -> tuple[float, float]:
        """Half-open extent on the axis of ``scale`` (a zero-length time range still gets width)."""
        if scale == "episodes":
            return float(self.first), float(self.last + 1)
        lo = parse_iso(self.start_at).timestamp()
        return lo, max(parse_iso(self.end_at).timestamp(), lo) + 1e-3


@dataclass(slots=True)
class Row:
    """One row as parallel lists: 5k summaries cost a few list comprehensions, not 5k objects."""

    label: str
    depth: int
    keys: list[str]
    kinds: list[str]
    tiers: list[str]
    first: list[int]
    last: list[int]
    start: list[str]
    end: list[str]
    lo: list[float] = field(default_factory=list)
    hi_max: list[float] = field(default_factory=list)
    fallbacks: list[int] = field(default_factory=list)
    aggressive: list[int] = field(default_factory=list)

    @classmethod
    def of_spans(cls, depth: int, spans: list[SummarySpan], classify: Callable[[SummarySpan], str]) -> Row:
        return cls(
            f"d{depth}", depth, [f"s:{s.id}" for s in spans], ["summary"] * len(spans), [classify(s) for s in spans],
            [s.first_seq for s in spans], [s.last_seq for s in spans], [s.start_at for s in spans],
            [s.end_at for s in spans],
        )

    @classmethod
    def of_items(cls, label: str, items: list[MapItem]) -> Row:
        items = sorted(items, key=lambda i: i.first)
        return cls(
            label, -1, [i.key for i in items], [i.kind for i in items], [i.tier for i in items],
            [i.first for i in items], [i.last for i in items], [i.start_at for i in items], [i.end_at for i in items],
        )

    def __len__(self) -> int:
        return len(self.keys)

    def insert(self, span: SummarySpan, tier: str) -> None:
        """Add a summary in coverage order, drawn as ``tier`` (the caller re-indexes the row)."""
        i = bisect_right(self.first, span.first_seq)
        for column, value in zip(self._columns(), (f"s:{span.id}", "summary", tier, span.first_seq,
                                                    span.last_seq, span.start_at, span.end_at)):
            column.insert(i, value)

    def remove(self, key: str) -> bool:
        if key not in self.keys:
            return False
        i = self.keys.index(key)
        for column in self._columns():
            del column[i]
        return True

    def _columns(self) -> tuple[list[object], ...]:
        return (self.keys, self.kinds, self.tiers, self.first, self.last, self.start, self.end)  # type: ignore[return-value]

    def item(self, i: int) -> MapItem:
        return MapItem(self.keys[i], self.kinds[i], self.depth, self.tiers[i],  # type: ignore[arg-type]
                       self.first[i], self.last[i], self.start[i], self.end[i])

    def index(self, scale: Scale) -> None:
        if scale == "episodes":
            self.lo = self.first  # type: ignore[assignment]
            his: list[float] = [x + 1 for x in self.last]
        else:
            self.lo = [parse_iso(x).timestamp() for x in self.start]
            his = [max(parse_iso(e).timestamp(), lo) + 1e-3 for e, lo in zip(self.end, self.lo)]
        self.hi_max = list(accumulate(his, max))
        self.fallbacks = [0, *accumulate(t == "fallback" for t in self.tiers)]
        self.aggressive = [0, *accumulate(t == "aggressive" for t in self.tiers)]

    def window(self, p0: float, p1: float) -> tuple[int, int]:
        """Indexes ``[i, j)`` of the items overlapping ``[p0, p1)``."""
        return bisect_right(self.hi_max, p0), bisect_left(self.lo, p1)
