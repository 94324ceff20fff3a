"""The session screen's state in one plain object, with the rules that read only that state.

Why a plain object: the session screen shows one session four ways (tree, coverage map, detail,
transcript), and what they have in common — the session's figures, its active summaries, the
root level, the selection, a transcript jump waiting for the tree, the figures of episode ranges,
the pinned and excluded episodes — was spread over the screen, a key handler object and
functions that took the screen. Here it is one object with no Textual in it, so its rules (which
fallback comes next, what an episode's place is, what a range holds) are tested without an app
(``tests/unit/test_session_view.py``). The screen owns it (``screen.view``), keeps it current and
draws from it; the tree reads it for ``f`` / ``F``.

What a tree node stands for (:class:`NodeRef`) and how the root level is arranged are here too:
they are what the view's selection and roots are made of.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from hiermem_tui.store import Session, Summary, SummarySpan
from hiermem_tui.store.marks import Mark
from hiermem_tui.store.reads import TreeSource
from hiermem_tui.tui.widgets.coverage_rows import MapItem

NodeKind = Literal["summary", "episodes", "gap", "tail", "episode", "more"]


@dataclass(frozen=True, slots=True)
class NodeRef:
    """What a tree node stands for. ``first``/``last`` are the episode seqs it covers."""

    kind: NodeKind
    first: int
    last: int
    summary: Summary | None = None
    owner: str | None = None
    """For ``episodes``: the leaf's id; for ``more``: the key of the range being paged."""

    @property
    def key(self) -> str:
        """Stable identity across reloads (tree node ids are not)."""
        if self.kind == "summary" and self.summary is not None:
            return f"s:{self.summary.id}"
        if self.kind == "episodes":
            return f"r:{self.owner}"
        if self.kind == "episode":
            return f"e:{self.first}"
        if self.kind == "more":
            return f"m:{self.owner}:{self.first}"
        return f"{self.kind[0]}:{self.first}"

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def root_refs(store: TreeSource, session_id: str, fresh_tail: int) -> list[NodeRef]:
    """Top summaries, gaps and the fresh tail, in coverage order (ARCHITECTURE §2)."""
    session = store.sessions.get(session_id)
    total = session.episodes if session else 0
    return arrange_roots(store.dag.top(session_id), store.dag.unsummarised_ranges(session_id), total, fresh_tail)


def arrange_roots(
    tops: Iterable[Summary], gaps: Iterable[tuple[int, int]], total: int, fresh_tail: int
) -> list[NodeRef]:
    """The root level from its parts: top summaries, unsummarised ranges (split where the fresh
    tail of ``total`` episodes starts), in coverage order."""
    tail_start = max(total - fresh_tail, 0)
    refs = [NodeRef("summary", s.first_seq, s.last_seq, summary=s) for s in tops]
    for first, last in gaps:
        if first < tail_start:
            refs.append(NodeRef("gap", first, min(last, tail_start - 1)))
        if last >= tail_start:
            refs.append(NodeRef("tail", max(first, tail_start), last))
    refs.sort(key=lambda r: (r.first, -(r.summary.depth if r.summary else -1)))
    return refs


class RangeFigures(Protocol):
    """What the view reads of episodes: a range's tokens and first and last times."""

    def stats(self, session_id: str, first_seq: int, last_seq: int) -> tuple[int, str, str]: ...


@dataclass(frozen=True, slots=True)
class FallbackJump:
    """Where ``f`` / ``F`` goes: the fallback summary, and which of how many it is."""

    target: SummarySpan
    number: int
    count: int


@dataclass
class SessionView:
    """One session as the session screen shows it (see the module's docstring)."""

    session_id: str
    figures: RangeFigures
    session: Session | None = None
    """The session's row (header figures); None until loaded, or when it is not in the file."""
    roots: list[NodeRef] = field(default_factory=list)
    """The tree's root level: top summaries, gaps and the fresh tail, in coverage order."""
    spans: list[SummarySpan] = field(default_factory=list)
    """Every active summary of the session (the map's bars, the fallbacks ``f`` walks)."""
    selected: NodeRef | None = None
    """What the tree's cursor highlighted last, shown by the detail pane, the map and the transcript."""
    pending_jump: tuple[str, int] | None = None
    """A transcript jump (node key, episode) waiting for the tree's highlight of that node."""
    marks: list[MapItem] = field(default_factory=list)
    """Pinned and excluded episodes, as ticks on the map's episode row."""
    _ranges: dict[tuple[int, int], tuple[int, str, str]] = field(default_factory=dict)

    def set_structure(self, roots: list[NodeRef], spans: Iterable[SummarySpan]) -> None:
        """The root level and the active summaries changed (a range's figures are read again)."""
        self.roots = roots
        self.spans = list(spans)
        self._ranges.clear()

    def range_figures(self, first: int, last: int) -> tuple[int, str, str]:
        """(tokens, first time, last time) of episodes ``first``–``last``, read once per structure."""
        key = (first, last)
        if key not in self._ranges:
            self._ranges[key] = self.figures.stats(self.session_id, first, last)
        return self._ranges[key]

    def set_marks(self, marked: Iterable[tuple[int, Mark, str]]) -> list[MapItem]:
        """The map's ticks from ``(seq, mark, time)`` rows (``store.marks.marked``)."""
        self.marks = [MapItem("", mark, -1, "normal", seq, seq, at, at) for seq, mark, at in marked]
        return self.marks

    def take_jump(self, key: str) -> int | None:
        """The episode a pending transcript jump waits to land on, once the node ``key`` is shown."""
        if self.pending_jump is None or self.pending_jump[0] != key:
            return None
        seq = self.pending_jump[1]
        self.pending_jump = None
        return seq

    def next_fallback(self, direction: int) -> FallbackJump | None:
        """The next (``direction`` > 0) or previous fallback summary after the selection, in coverage
        order (deeper first where ranges start together), wrapping round; None when there is none."""
        fallbacks = sorted((s for s in self.spans if s.tier == "fallback"), key=lambda s: (s.first_seq, -s.depth))
        if not fallbacks:
            return None
        sel = self.selected
        here = (-1, 1) if sel is None else (sel.first, -(sel.summary.depth if sel.summary else -1))
        order = [(s.first_seq, -s.depth) for s in fallbacks]
        if direction > 0:
            target = next((s for s, o in zip(fallbacks, order) if o > here), fallbacks[0])
        else:
            target = next((s for s, o in zip(reversed(fallbacks), reversed(order)) if o < here), fallbacks[-1])
        return FallbackJump(target, fallbacks.index(target) + 1, len(fallbacks))

    def where(self, seq: int) -> str | None:
        """Why episode ``seq`` is under no summary (in the fresh tail, or in a gap); None when it is not so."""
        for ref in self.roots:
            if ref.kind in ("gap", "tail") and ref.first <= seq <= ref.last:
                return "fresh tail: kept raw on purpose" if ref.kind == "tail" else "unsummarised gap"
        return None
