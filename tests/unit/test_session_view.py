"""The session screen's state and its rules, without Textual: which fallback ``f`` / ``F`` goes to,
where an episode under no summary lies, a transcript jump waiting for its node, range figures read
once, the map's ticks, and the root level's order."""

from __future__ import annotations

import subprocess
import sys

from hiermem_tui.store import SummarySpan
from hiermem_tui.tui.session_view import NodeRef, SessionView, arrange_roots

T = "2026-07-03T10:00:00+00:00"


def span(sid: str, depth: int, first: int, last: int, tier: str = "normal") -> SummarySpan:
    return SummarySpan(sid, depth, "leaf" if depth == 0 else "condensed", tier, first, last, 10, None, T, T)  # type: ignore[arg-type]


class Figures:
    """Counts the reads, so the test can say a range's figures are read once."""

    def __init__(self) -> None:
        self.reads: list[tuple[int, int]] = []

    def stats(self, session_id: str, first_seq: int, last_seq: int) -> tuple[int, str, str]:
        self.reads.append((first_seq, last_seq))
        return (last_seq - first_seq + 1) * 7, f"t{first_seq}", f"t{last_seq}"


def view_of(*spans: SummarySpan, roots: list[NodeRef] | None = None) -> SessionView:
    view = SessionView("s1", Figures())
    view.set_structure(roots or [], spans)
    return view


def test_fallbacks_are_walked_in_coverage_order_deeper_first_and_wrap_round() -> None:
    view = view_of(span("L0", 0, 0, 5), span("L5", 0, 30, 35, "fallback"), span("L2", 0, 12, 17, "fallback"),
                   span("C1", 1, 12, 35, "fallback"))

    def jump(direction: int) -> tuple[str, int, int]:
        found = view.next_fallback(direction)
        assert found is not None
        return found.target.id, found.number, found.count

    assert jump(1) == ("C1", 1, 3)  # nothing selected: the first; C1 before L2 (same start, deeper first)
    assert jump(-1) == ("L5", 3, 3)  # …and backwards, the last
    view.selected = NodeRef("episodes", 12, 17, owner="L2")  # a range node ranks after the summaries starting there
    assert jump(1) == ("L5", 3, 3)
    assert jump(-1) == ("L2", 2, 3)
    view.selected = NodeRef("episodes", 30, 35, owner="L5")
    assert jump(1) == ("C1", 1, 3)  # past the last: round to the first


def test_no_fallback_is_none() -> None:
    assert view_of(span("L0", 0, 0, 5)).next_fallback(1) is None
    assert view_of().next_fallback(-1) is None


def test_where_names_the_gap_and_the_fresh_tail() -> None:
    roots = arrange_roots([], [(40, 59)], 60, 16)
    assert [(r.kind, r.first, r.last) for r in roots] == [("gap", 40, 43), ("tail", 44, 59)]
    view = view_of(roots=roots)
    assert view.where(41) == "unsummarised gap"
    assert view.where(50) == "fresh tail: kept raw on purpose"
    assert view.where(3) is None


def test_a_pending_jump_lands_once_on_its_own_node() -> None:
    view = view_of()
    view.pending_jump = ("s:L3", 20)
    assert view.take_jump("s:L4") is None and view.pending_jump == ("s:L3", 20)
    assert view.take_jump("s:L3") == 20
    assert view.take_jump("s:L3") is None


def test_range_figures_are_read_once_per_structure() -> None:
    view = view_of()
    figures = view.figures
    assert isinstance(figures, Figures)
    assert view.range_figures(40, 43) == (28, "t40", "t43")
    view.range_figures(40, 43)
    assert figures.reads == [(40, 43)]
    view.set_structure([], [])  # the roots changed: ranges may hold other episodes now
    view.range_figures(40, 43)
    assert figures.reads == [(40, 43), (40, 43)]


def test_marks_become_ticks_on_the_episode_row() -> None:
    ticks = view_of().set_marks([(2, "pin", T), (9, "exclude", T)])
    assert [(t.kind, t.first, t.last) for t in ticks] == [("pin", 2, 2), ("exclude", 9, 9)]


def test_the_view_imports_no_textual() -> None:
    code = ("import sys, hiermem_tui.tui.session_view\n"
            "print(sorted(k for k in sys.modules if k == 'textual' or k.startswith('textual.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
