"""What an open session screen shows once the store gained rows, as values (``tui/screens/session_live.py``):
the root level a full read would give, reading only the roots the tree does not hold, and where the
selection goes after the tree took them."""

from __future__ import annotations

from hiermem_tui.store import NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.store.changes import LiveSummaries
from hiermem_tui.tui.screens.session_live import Follow, live_update, selection_after
from hiermem_tui.tui.session_view import NodeRef, root_refs

from ._engine_fixtures import add_episodes


def leaf(first: int, last: int) -> SummaryWrite:
    s = NewSummary(id=new_id("s"), session_id="s", depth=0, tier="normal", backend="extractive", model=None,
                   prompt_version="test", content=f"leaf {first}-{last}", tokens=5)
    return SummaryWrite(s, episode_range=(first, last))


def test_the_root_level_after_new_rows_is_what_a_full_read_gives(store: Store) -> None:
    add_episodes(store, "s", 0, 30)
    store.dag.write([leaf(0, 5)])
    live = LiveSummaries(store, "s")
    live.load()
    shown = root_refs(store, "s", 8)
    store.dag.write([leaf(6, 11)])
    add_episodes(store, "s", 30, 4)  # four more episodes: the tail moves
    update = live_update(store, live, shown, 8)
    assert update is not None and update.session.episodes == 34
    assert update.roots == root_refs(store, "s", 8)
    assert [s.id for s in update.delta.added] != [] and not update.delta.reloaded
    kept = next(r for r in shown if r.kind == "summary")
    assert next(r for r in update.roots if r.key == kept.key).summary is kept.summary  # not read again
    assert live_update(store, LiveSummaries(store, "gone"), [], 8) is None


def ref(kind: str, first: int, last: int) -> NodeRef:
    return NodeRef(kind, first, last)  # type: ignore[arg-type]


def test_the_selection_follows_the_new_roots() -> None:
    gap, tail, more = ref("gap", 0, 9), ref("tail", 10, 19), ref("more", 5, 5)
    roots = [gap, tail]
    # nothing was selected (the pane said "No summaries yet"): the cursor's node, else the first root
    assert selection_after(None, True, tail, roots, summaries=1) == Follow("focus", tail)
    assert selection_after(None, True, more, roots, summaries=1) == Follow("focus", gap)
    assert selection_after(None, True, None, roots, summaries=0) is None  # still nothing to show
    # the selected node is gone for good: what covers its first episode now
    assert selection_after(gap, False, None, roots, summaries=1) == Follow("reveal", gap)
    # the same node with a new range: shown again; unchanged, or on a "more" row: left alone
    assert selection_after(ref("tail", 12, 19), True, tail, roots, summaries=1) == Follow("show", tail)
    assert selection_after(tail, True, tail, roots, summaries=1) is None
    assert selection_after(gap, True, more, roots, summaries=1) is None
