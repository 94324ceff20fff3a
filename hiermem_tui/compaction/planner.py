"""What is eligible for compaction: pure functions over lightweight shapes, and the
:class:`Planner` that feeds them from the store.

The functions take numbers read cheaply from the store — ``(seq, tokens)`` pairs and
:class:`~hiermem_tui.store.SummarySpan` rows — so planning a 50k-episode session never loads
episode text, and every rule of the compaction policy (docs/ARCHITECTURE.md) can be tested
without a database. :class:`Planner` is the one place those reads happen.

Leaf chunking rules (documented because the policy leaves two corners open):

* The last ``fresh_tail`` episodes of a session in use are never in a chunk; an idle session
  (``idle``: unchanged for ``idle_after``, as an imported chat of last month is) keeps none, and its
  last range is summarised to its end whatever its size.
* Chunks fill greedily, oldest first, up to ``leaf_chunk_tokens``; a chunk closes as soon
  as the next episode would not fit. A single episode larger than the budget is a chunk
  of its own — unless what came before it is too little to stand alone (fewer than
  ``leaf_min_episodes`` episodes and under a quarter of the budget: a one-line "start"
  before a huge paste), which then goes into the same chunk instead of becoming a leaf of
  one trivial episode.
* ``leaf_min_episodes`` governs the *leftover* at the end of a range that can still grow
  (the range running into the fresh tail): it waits until it has that many episodes or is
  full. A chunk closed because the budget is full is emitted even if it has fewer
  episodes — otherwise a run of large messages could never be summarised.
* A range that is *closed* — followed by an active leaf, e.g. the hole a reverted run
  left — can never grow, so its leftover is emitted whatever its size; a trivial leftover
  (as above) joins the chunk before it in the range when there is one.

Condensation rules: at one depth, active summaries without a parent that are adjacent in
coverage (``next.first_seq == prev.last_seq + 1``) with no parented summary between them
form runs; each run yields ``fanout``-sized groups from its oldest end; partial groups
wait. A pass works on the shallowest depth that has a full group.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import TYPE_CHECKING

from ..config import Policy
from ..store.models import Session, SummarySpan, parse_iso

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class EpisodeRange:
    """A run of unsummarised, eligible episodes. ``closed``: an active leaf follows it."""

    first_seq: int
    last_seq: int
    closed: bool


@dataclass(frozen=True, slots=True)
class LeafChunk:
    """Episodes ``first_seq..last_seq`` to summarise into one leaf."""

    first_seq: int
    last_seq: int
    tokens: int

    @property
    def episodes(self) -> int:
        return self.last_seq - self.first_seq + 1

    def label(self) -> str:
        return f"leaf #{self.first_seq}–{self.last_seq}"


@dataclass(frozen=True, slots=True)
class CondenseGroup:
    """``source_ids`` (contiguous, coverage order) of depth ``depth - 1`` → one summary of ``depth``."""

    depth: int
    source_ids: tuple[str, ...]
    first_seq: int
    last_seq: int

    def label(self) -> str:
        return f"depth {self.depth} over {len(self.source_ids)} summaries (#{self.first_seq}–{self.last_seq})"


def eligible_ranges(
    unsummarised: Sequence[tuple[int, int]], episode_count: int, fresh_tail: int
) -> list[EpisodeRange]:
    """Clip the unsummarised seq ranges to what lies before the fresh tail.

    A range that ends before the eligibility limit ended because an active leaf starts
    right after it, so it is ``closed``; the one cut by the limit can still grow.
    """
    limit = episode_count - fresh_tail - 1  # last eligible seq
    out: list[EpisodeRange] = []
    for first, last in unsummarised:
        if first > limit:
            break
        end = min(last, limit)
        out.append(EpisodeRange(first, end, closed=end < limit and end == last))
    return out


def chunk_range(
    items: Iterable[tuple[int, int]], *, budget: int, min_episodes: int, closed: bool
) -> list[LeafChunk]:
    """Greedy chunks over one contiguous run of ``(seq, tokens)`` pairs (see module docs)."""
    chunks: list[LeafChunk] = []
    first = last = -1
    total = count = 0
    small = budget // SMALL_SHARE
    for seq, tokens in items:
        tokens = max(0, int(tokens or 0))
        if count and total + tokens > budget and not (count < min_episodes and total < small):
            chunks.append(LeafChunk(first, last, total))
            count = 0
        if count == 0:
            first, total = seq, 0
        last = seq
        total += tokens
        count += 1
    if count and closed and count < min_episodes and total < small and chunks:
        prev = chunks.pop()  # a trivial leftover of a hole joins the chunk before it
        chunks.append(LeafChunk(prev.first_seq, last, prev.tokens + total))
    elif count and (closed or count >= min_episodes or total >= budget):
        chunks.append(LeafChunk(first, last, total))
    return chunks


def chunk_tokens(first_seq: int, tokens: Sequence[int], *, budget: int, min_episodes: int,
                 closed: bool) -> list[LeafChunk]:
    """:func:`chunk_range`'s chunks over the contiguous run of episodes from ``first_seq`` whose
    token counts are ``tokens``, by prefix sums: each chunk's end is found by bisection instead of
    episode by episode, and no pair is built per episode. The same rules (``test_planner.py`` holds
    the two equal); this one plans the whole 1M-episode file (issue 20)."""
    counts = [t if t > 0 else 0 for t in tokens]
    prefix = list(accumulate(counts, initial=0))
    n = len(counts)
    small = budget // SMALL_SHARE
    chunks: list[LeafChunk] = []
    i = 0
    while i < n:
        start = prefix[i]
        j = i + 1  # the first episode of a chunk always joins it
        while j < n:
            if prefix[j + 1] - start <= budget:  # as many as fit in the budget, at once
                j = bisect_right(prefix, start + budget, j + 1, n + 1) - 1
            elif j - i < min_episodes and prefix[j] - start < small:  # too little to stand alone
                j += 1
            else:
                break
        if j < n:
            chunks.append(LeafChunk(first_seq + i, first_seq + j - 1, prefix[j] - start))
            i = j
            continue
        count, total, last = n - i, prefix[n] - start, first_seq + n - 1
        if closed and count < min_episodes and total < small and chunks:
            prev = chunks.pop()  # a trivial leftover of a hole joins the chunk before it
            chunks.append(LeafChunk(prev.first_seq, last, prev.tokens + total))
        elif closed or count >= min_episodes or total >= budget:
            chunks.append(LeafChunk(first_seq + i, last, total))
        break
    return chunks


BRIEF_LEAST = 2
"""A session with at least this many episodes has a brief."""
SMALL_SHARE = 4
"""A chunk under ``leaf_min_episodes`` episodes and under 1/SMALL_SHARE of the budget is too little
to summarise on its own: the next episode joins it even past the budget (the prompt shows long
messages head and tail), and a closed range's leftover that small joins the chunk before it."""


def plan_leaf_chunks(
    ranges: Iterable[tuple[EpisodeRange, Iterable[tuple[int, int]]]], policy: Policy
) -> list[LeafChunk]:
    """Chunks for every eligible range, oldest first. ``ranges`` pairs each range with its
    ``(seq, tokens)`` rows in seq order (an iterator is fine: it is consumed once)."""
    chunks: list[LeafChunk] = []
    for rng, items in ranges:
        chunks.extend(
            chunk_range(items, budget=policy.leaf_chunk_tokens, min_episodes=policy.leaf_min_episodes, closed=rng.closed)
        )
    return chunks


def _runs(spans: Sequence[SummarySpan]) -> list[list[SummarySpan]]:
    """Maximal runs of coverage-adjacent parentless spans of one depth (input: one depth, sorted)."""
    runs: list[list[SummarySpan]] = []
    cur: list[SummarySpan] = []
    for s in spans:
        if s.parent_id is not None:
            if cur:
                runs.append(cur)
            cur = []
            continue
        if cur and s.first_seq != cur[-1].last_seq + 1:
            runs.append(cur)
            cur = []
        cur.append(s)
    if cur:
        runs.append(cur)
    return runs


def groups_at_depth(spans: Sequence[SummarySpan], depth: int, fanout: int) -> list[CondenseGroup]:
    """Full groups of ``fanout`` condensable summaries of ``depth`` → summaries of ``depth + 1``."""
    level = sorted((s for s in spans if s.depth == depth), key=lambda s: s.first_seq)
    groups: list[CondenseGroup] = []
    for run in _runs(level):
        for i in range(0, len(run) - fanout + 1, fanout):
            part = run[i : i + fanout]
            groups.append(CondenseGroup(depth + 1, tuple(s.id for s in part), part[0].first_seq, part[-1].last_seq))
    return groups


def plan_condense(spans: Sequence[SummarySpan], fanout: int) -> list[CondenseGroup]:
    """The groups of the shallowest depth that has at least one full group (else [])."""
    for depth in sorted({s.depth for s in spans}):
        groups = groups_at_depth(spans, depth, fanout)
        if groups:
            return groups
    return []


class _Node:
    """A summary in a simulated condensation: where it is, its tokens, whether it has a parent."""

    __slots__ = ("id", "first_seq", "last_seq", "tokens", "parented")

    def __init__(self, id: str, first_seq: int, last_seq: int, tokens: int, parented: bool) -> None:
        self.id, self.first_seq, self.last_seq, self.tokens, self.parented = id, first_seq, last_seq, tokens, parented


def _level_groups(level: Sequence[_Node], fanout: int) -> list[list[_Node]]:
    """:func:`groups_at_depth` over one depth's nodes (sorted by coverage)."""
    groups: list[list[_Node]] = []
    run: list[_Node] = []

    def close() -> None:
        groups.extend(run[k:k + fanout] for k in range(0, len(run) - fanout + 1, fanout))

    for node in level:
        if node.parented or (run and node.first_seq != run[-1].last_seq + 1):
            close()
            run = []
        if not node.parented:
            run.append(node)
    close()
    return groups


def _simulate(spans: Sequence[SummarySpan], fanout: int, estimate: Callable[[int, int], int] | None
              ) -> list[tuple[CondenseGroup, int]]:
    """Every condensation a pass would make, in order, each with its source tokens; a made
    summary carries ``estimate(depth, source_tokens)`` (None: the sum, for counting). The same
    rounds as :func:`plan_condense` applied until nothing is due, on small mutable nodes kept per
    depth: a round touches only the depth it condenses and the one above it."""
    levels: dict[int, list[_Node]] = {}
    for s in spans:
        levels.setdefault(s.depth, []).append(_Node(s.id, s.first_seq, s.last_seq, s.tokens, s.parent_id is not None))
    by_seq = itemgetter(0)
    for depth, level in levels.items():
        levels[depth] = [n for _, n in sorted(((n.first_seq, n) for n in level), key=by_seq)]
    out: list[tuple[CondenseGroup, int]] = []
    rounds = 0
    while True:
        found = next(((d, g) for d in sorted(levels) if (g := _level_groups(levels[d], fanout))), None)
        if found is None:
            return out
        depth, groups = found
        above = levels.setdefault(depth + 1, [])
        for n, part in enumerate(groups):
            tokens = sum(p.tokens for p in part)
            group = CondenseGroup(depth + 1, tuple(p.id for p in part), part[0].first_seq, part[-1].last_seq)
            out.append((group, tokens))
            for p in part:
                p.parented = True
            made = tokens if estimate is None else estimate(group.depth, tokens)
            above.append(_Node(f"~sim{rounds}_{n}", group.first_seq, group.last_seq, made, False))
        above.sort(key=lambda node: node.first_seq)
        rounds += 1


def count_condensations(spans: Sequence[SummarySpan], fanout: int) -> int:
    """How many summaries a condensation pass would write, by simulating it."""
    return len(_simulate(spans, fanout, None))


def leaf_spans(chunks: Sequence[LeafChunk], sizes: Sequence[int] | None = None) -> list[SummarySpan]:
    """Synthetic spans for planned leaves, so a full pass can be counted (or timed: ``sizes``, each
    leaf's expected tokens) before it runs."""
    return [
        SummarySpan(f"~leaf{i}", 0, "leaf", "normal", c.first_seq, c.last_seq, sizes[i] if sizes else 0, None, "", "")
        for i, c in enumerate(chunks)
    ]


def count_full(spans: Sequence[SummarySpan], chunks: Sequence[LeafChunk], fanout: int) -> int:
    """Summaries a full pass would write: the leaves, then every condensation they enable."""
    return len(chunks) + count_condensations([*spans, *leaf_spans(chunks)], fanout)


def simulate_condensations(
    spans: Sequence[SummarySpan], fanout: int, estimate: Callable[[int, int], int]
) -> list[tuple[CondenseGroup, int]]:
    """Every condensation a pass would make, in order, each with its estimated source tokens.

    ``estimate(depth, source_tokens)`` is the size a summary of that depth will have; the
    simulated summaries carry it, so the next depth's sources add up realistically.
    """
    return _simulate(spans, fanout, estimate)


def idle(session: Session, policy: Policy, now: float) -> bool:
    """Whether a session is no longer in use: unchanged for ``policy.idle_after`` seconds (its newest message's
    time; for a chat whose source kept no times, when it was last imported). An idle session keeps no fresh
    tail: its summaries cover it to its end."""
    return now - parse_iso(session.updated_at).timestamp() >= policy.idle_after


class Planner:
    """What a pass or a re-make would do now, read from the store (text never loaded).

    ``policy`` may be replaced (the executor shrinks the chunk budget to fit a small model's
    context once the backend is checked): plans made after that use the new one. ``clock``: the time
    a session's idleness is judged at.
    """

    def __init__(self, store: Store, policy: Policy, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock

    def leaf(self, session_id: str, episodes: int | None = None) -> list[LeafChunk]:
        """The leaf chunks due now (``episodes``: the session's count, when the caller has its row)."""
        session = self.store.sessions.get(session_id)
        if session is None:
            return []
        if episodes is None:
            episodes = session.episodes
        return self._chunks(session_id, self.store.dag.unsummarised_ranges(session_id, episodes), episodes,
                            idle(session, self.policy, self.clock()))

    def brief_due_at(self, session_id: str, *, again: bool = False) -> int | None:
        """The newest episode a brief of the session would cover, when one is due (it has two episodes or
        more, and no brief, or one that stops short of its newest; ``again``: whatever brief it has); else
        None."""
        session = self.store.sessions.get(session_id)
        if session is None or session.episodes < BRIEF_LEAST:
            return None
        last = session.episodes - 1
        return last if again or self.store.briefs.stale(session_id, last) else None

    def brief_due(self, session_id: str) -> bool:
        """Whether a full pass would make the session's brief."""
        return self.brief_due_at(session_id) is not None

    def session_leaves(self, session_id: str) -> list[LeafChunk]:
        """The leaf chunks a whole-session re-summarise would make (every episode outside the
        fresh tail, ignoring the current summaries)."""
        session = self.store.sessions.get(session_id)
        if session is None or not session.episodes:
            return []
        return self._chunks(session_id, [(0, session.episodes - 1)], session.episodes,
                            idle(session, self.policy, self.clock()))

    def condensations(self, session_id: str) -> int:
        """How many condensed summaries a condensation pass would write now."""
        return count_condensations(self.store.dag.spans(session_id), self.policy.condense_fanout)

    def full(self, session_id: str, chunks: Sequence[LeafChunk]) -> int:
        """How many summaries a full pass would write, given its leaf chunks."""
        return count_full(self.store.dag.spans(session_id), chunks, self.policy.condense_fanout)

    def condense_groups(self, session_id: str) -> list[CondenseGroup]:
        """The groups a condensation would make next (the shallowest depth first)."""
        return plan_condense(self.store.dag.spans(session_id), self.policy.condense_fanout)

    def _chunks(self, session_id: str, gaps: Sequence[tuple[int, int]], episodes: int, idle: bool) -> list[LeafChunk]:
        """Chunks of the unsummarised ``gaps``; an ``idle`` session keeps no fresh tail, and its last range,
        which will not grow, is closed (its leftover is a leaf whatever its size)."""
        p = self.policy
        chunks: list[LeafChunk] = []
        for r in eligible_ranges(gaps, episodes, 0 if idle else p.fresh_tail):
            tokens = self.store.episodes.token_list(session_id, r.first_seq, r.last_seq)
            chunks += chunk_tokens(r.first_seq, tokens, budget=p.leaf_chunk_tokens, min_episodes=p.leaf_min_episodes,
                                   closed=r.closed or idle)
        return chunks
