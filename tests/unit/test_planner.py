"""The planner's rules (ARCHITECTURE §5), on plain numbers: no database involved."""

from __future__ import annotations

import random
from dataclasses import replace

from hiermem_tui.compaction.planner import (
    EpisodeRange,
    LeafChunk,
    chunk_range,
    chunk_tokens,
    count_condensations,
    count_full,
    eligible_ranges,
    groups_at_depth,
    plan_condense,
    plan_leaf_chunks,
    simulate_condensations,
)
from hiermem_tui.config import Policy
from hiermem_tui.store import SummarySpan

POLICY = Policy(idle_after=10 ** 9, fresh_tail=3, leaf_chunk_tokens=100, leaf_min_episodes=3, condense_fanout=4)


def items(tokens: list[int], start: int = 0) -> list[tuple[int, int]]:
    return [(start + i, t) for i, t in enumerate(tokens)]


def span(sid: str, depth: int, first: int, last: int, parent: str | None = None) -> SummarySpan:
    return SummarySpan(sid, depth, "leaf" if depth == 0 else "condensed", "normal", first, last, 10, parent, "", "")


def leaves(n: int, width: int = 5, start: int = 0) -> list[SummarySpan]:
    return [span(f"L{i}", 0, start + i * width, start + i * width + width - 1) for i in range(n)]


# ---------------------------------------------------------------- fresh tail and ranges
def test_fresh_tail_is_never_eligible() -> None:
    rs = eligible_ranges([(0, 19)], episode_count=20, fresh_tail=3)
    assert rs == [EpisodeRange(0, 16, closed=False)]


def test_whole_session_in_fresh_tail_gives_nothing() -> None:
    assert eligible_ranges([(0, 2)], episode_count=3, fresh_tail=3) == []
    assert eligible_ranges([(0, 9)], episode_count=10, fresh_tail=16) == []


def test_gap_followed_by_a_leaf_is_closed_and_tail_range_is_open() -> None:
    rs = eligible_ranges([(5, 9), (20, 29)], episode_count=30, fresh_tail=3)
    assert rs == [EpisodeRange(5, 9, closed=True), EpisodeRange(20, 26, closed=False)]


def test_range_starting_in_the_fresh_tail_is_dropped() -> None:
    rs = eligible_ranges([(0, 4), (28, 29)], episode_count=30, fresh_tail=3)
    assert rs == [EpisodeRange(0, 4, closed=True)]


def test_plan_never_includes_fresh_tail_episodes() -> None:
    n = 40
    rs = eligible_ranges([(0, n - 1)], n, POLICY.fresh_tail)
    chunks = plan_leaf_chunks(((r, items([10] * n)[r.first_seq:r.last_seq + 1]) for r in rs), POLICY)
    assert chunks and max(c.last_seq for c in chunks) < n - POLICY.fresh_tail


# ---------------------------------------------------------------- chunking
def test_chunks_fill_greedily_up_to_the_budget() -> None:
    chunks = chunk_range(items([30] * 10), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 2, 90), LeafChunk(3, 5, 90), LeafChunk(6, 8, 90)]  # #9 alone waits


def test_exact_budget_fits() -> None:
    chunks = chunk_range(items([25] * 8), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 3, 100), LeafChunk(4, 7, 100)]


def test_small_leftover_waits_in_an_open_range() -> None:
    chunks = chunk_range(items([10, 10]), budget=100, min_episodes=3, closed=False)
    assert chunks == []
    chunks = chunk_range(items([10, 10, 10]), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 2, 30)]


def test_leftover_of_a_closed_range_is_taken() -> None:
    chunks = chunk_range(items([10, 10], start=7), budget=100, min_episodes=3, closed=True)
    assert chunks == [LeafChunk(7, 8, 20)]


def test_oversized_episode_forms_its_own_chunk() -> None:
    chunks = chunk_range(items([20, 20, 500, 20, 20, 20]), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 1, 40), LeafChunk(2, 2, 500), LeafChunk(3, 5, 60)]


def test_a_trivial_episode_before_a_huge_one_is_not_a_leaf_of_its_own() -> None:
    """Issue 21 item 9: a 1-token "start" before a huge message became its own leaf (and a fallback);
    a 228-token episode between two big ones was a one-episode leaf despite the 4-episode minimum."""
    assert chunk_range(items([1, 5000, 40, 40]), budget=3000, min_episodes=4, closed=False) == [
        LeafChunk(0, 1, 5001)]
    assert chunk_range(items([4000, 228, 3500, 500, 500]), budget=3000, min_episodes=4, closed=False) == [
        LeafChunk(0, 0, 4000), LeafChunk(1, 2, 3728)]


def test_a_trivial_leftover_of_a_closed_range_joins_the_chunk_before_it() -> None:
    assert chunk_range(items([1500, 1400, 200]), budget=3000, min_episodes=4, closed=True) == [LeafChunk(0, 2, 3100)]
    # alone in its range (a one-episode hole between two leaves) it is still summarised: nothing to join
    assert chunk_range(items([5], start=9), budget=3000, min_episodes=4, closed=True) == [LeafChunk(9, 9, 5)]


def test_full_chunk_with_few_episodes_is_not_held_back() -> None:
    # two 60-token episodes never fit together: each closes as full, the min-episodes rule
    # only holds back the growing leftover
    chunks = chunk_range(items([60, 60, 60, 60]), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 0, 60), LeafChunk(1, 1, 60), LeafChunk(2, 2, 60)]


def test_oversized_last_episode_is_full_and_taken() -> None:
    chunks = chunk_range(items([150]), budget=100, min_episodes=3, closed=False)
    assert chunks == [LeafChunk(0, 0, 150)]


def test_none_tokens_count_as_zero() -> None:
    chunks = chunk_range([(0, None), (1, 5), (2, 5)], budget=100, min_episodes=3, closed=False)  # type: ignore[list-item]
    assert chunks == [LeafChunk(0, 2, 10)]


def test_chunks_are_contiguous_oldest_first_and_cover_without_overlap() -> None:
    toks = [(i * 37) % 90 + 1 for i in range(200)]
    chunks = chunk_range(items(toks), budget=100, min_episodes=3, closed=False)
    assert chunks[0].first_seq == 0
    for a, b in zip(chunks, chunks[1:]):
        assert b.first_seq == a.last_seq + 1
    for c in chunks:
        assert c.tokens == sum(toks[c.first_seq:c.last_seq + 1])
        assert c.tokens <= 100 or c.episodes == 1


def test_plan_consumes_iterators_once() -> None:
    rs = [EpisodeRange(0, 5, closed=True), EpisodeRange(10, 19, closed=False)]
    gen = ((r, iter(items([40] * (r.last_seq - r.first_seq + 1), r.first_seq))) for r in rs)
    chunks = plan_leaf_chunks(gen, POLICY)
    # the closed range takes its leftover; the open one's last pair (2 < 3 episodes, not full) waits
    assert [(c.first_seq, c.last_seq) for c in chunks] == [(0, 1), (2, 3), (4, 5), (10, 11), (12, 13), (14, 15), (16, 17)]


# ---------------------------------------------------------------- condensation
def test_only_full_groups_of_fanout() -> None:
    groups = groups_at_depth(leaves(10), 0, 4)
    assert [g.source_ids for g in groups] == [("L0", "L1", "L2", "L3"), ("L4", "L5", "L6", "L7")]
    assert groups[0].depth == 1 and (groups[0].first_seq, groups[0].last_seq) == (0, 19)


def test_parented_summaries_break_contiguity() -> None:
    spans = leaves(9)
    spans[4] = replace(spans[4], parent_id="P")
    groups = groups_at_depth(spans, 0, 4)
    assert [g.source_ids for g in groups] == [("L0", "L1", "L2", "L3"), ("L5", "L6", "L7", "L8")]


def test_coverage_gap_breaks_contiguity() -> None:
    spans = leaves(3) + leaves(3, start=100)
    spans = [replace(s, id=f"X{i}") for i, s in enumerate(spans)]
    assert groups_at_depth(spans, 0, 4) == []
    assert [g.source_ids for g in groups_at_depth(spans, 0, 3)] == [("X0", "X1", "X2"), ("X3", "X4", "X5")]


def test_shallowest_depth_first() -> None:
    deep = [span(f"D{i}", 1, i * 20, i * 20 + 19) for i in range(4)]  # 4 parentless depth-1 over 0..79
    shallow = leaves(4, start=80)
    groups = plan_condense(deep + shallow, 4)
    assert {g.depth for g in groups} == {1}
    assert groups[0].source_ids == ("L0", "L1", "L2", "L3")


def test_deeper_depth_when_shallow_has_no_full_group() -> None:
    deep = [span(f"D{i}", 1, i * 20, i * 20 + 19) for i in range(4)]
    spans = deep + leaves(3, start=80)
    groups = plan_condense(spans, 4)
    assert [(g.depth, g.source_ids) for g in groups] == [(2, ("D0", "D1", "D2", "D3"))]


def test_unsorted_input_is_ordered_by_coverage() -> None:
    spans = list(reversed(leaves(4)))
    assert plan_condense(spans, 4)[0].source_ids == ("L0", "L1", "L2", "L3")


def test_nothing_to_condense() -> None:
    assert plan_condense([], 4) == []
    assert plan_condense(leaves(3), 4) == []


def test_counting_simulates_every_round() -> None:
    assert count_condensations(leaves(16), 4) == 4 + 1
    assert count_condensations(leaves(17), 4) == 5
    assert count_condensations(leaves(8), 2) == 4 + 2 + 1


def test_count_full_adds_planned_leaves() -> None:
    chunks = [LeafChunk(20 + 5 * i, 24 + 5 * i, 50) for i in range(4)]
    assert count_full(leaves(4), chunks, 4) == 4 + 2


# ---------------------------------------------------------------- the fast forms equal the rules (issue 20)
def test_chunking_by_prefix_sums_makes_the_chunks_the_rules_make() -> None:
    """``chunk_tokens`` (what the planner runs: bisection over prefix sums, a list of counts) against
    ``chunk_range`` (the rules episode by episode) on many random runs: tiny, huge, zero and missing
    counts, every budget corner, open and closed ranges."""
    rng = random.Random(20)
    for _ in range(3000):
        n = rng.randrange(0, 40)
        shape = rng.choice(("small", "mixed", "huge"))
        tokens = [rng.choice((0, 1, 5, 20, 60, 99, 100, 101, 250, 5000)) if shape == "mixed"
                  else rng.randrange(0, 40) if shape == "small" else rng.randrange(50, 400) for _ in range(n)]
        budget, min_episodes = rng.choice((50, 100, 300)), rng.randrange(1, 6)
        closed, start = rng.random() < 0.5, rng.randrange(0, 50)
        expected = chunk_range(items(tokens, start), budget=budget, min_episodes=min_episodes, closed=closed)
        got = chunk_tokens(start, tokens, budget=budget, min_episodes=min_episodes, closed=closed)
        assert got == expected, (tokens, budget, min_episodes, closed)


def reference_condensations(spans: list[SummarySpan], fanout: int) -> list[tuple[int, int, int, int]]:
    """The condensation rounds as the rules state them (``plan_condense`` until nothing is due), each
    made summary a new span with its sources' summed tokens: ``(depth, first, last, source tokens)``."""
    state, out, rounds = list(spans), [], 0
    while groups := plan_condense(state, fanout):
        by_id = {s.id: s for s in state}
        for n, g in enumerate(groups):
            tokens = sum(by_id[i].tokens for i in g.source_ids)
            out.append((g.depth, g.first_seq, g.last_seq, tokens))
            state = [replace(s, parent_id=f"~r{rounds}_{n}") if s.id in g.source_ids else s for s in state]
            state.append(SummarySpan(f"~r{rounds}_{n}", g.depth, "condensed", "normal", g.first_seq, g.last_seq,
                                     tokens, None, "", ""))
        rounds += 1
    return out


def test_the_condensation_simulation_makes_the_rounds_the_rules_make() -> None:
    rng = random.Random(7)
    for _ in range(500):
        spans: list[SummarySpan] = []
        seq = 0
        for i in range(rng.randrange(0, 30)):
            seq += rng.choice((0, 0, 0, 3))  # now and then a gap no leaf covers
            width = rng.randrange(1, 6)
            parent = "P" if rng.random() < 0.1 else None
            spans.append(replace(span(f"L{i}", 0, seq, seq + width - 1, parent), tokens=rng.randrange(1, 200)))
            seq += width
        rng.shuffle(spans)
        fanout = rng.randrange(2, 5)
        got = [(g.depth, g.first_seq, g.last_seq, t) for g, t in simulate_condensations(spans, fanout, lambda d, t: t)]
        assert got == reference_condensations(spans, fanout)
        assert count_condensations(spans, fanout) == len(got)
