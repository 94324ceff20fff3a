"""The dry-run plan of a pass: every summary it would make, with its input size and a time
estimate from the one estimator (:mod:`.estimate`). Reads only (no episode text, no model call).

Shared by ``compact --dry-run``, ``backlog``, the job's run estimate and the TUI's run dialog, so
all show the same plan.
Condensed summaries above planned leaves have no text yet: their source tokens are the sum of
what the summaries below them are expected to be (their targets, which scale with the input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Policy
from ..store import Store, SummarySpan
from . import planner
from .estimate import BRIEF_DEPTH, BRIEF_SOURCE_TOKENS, Estimator, expected_size
from .runner import PassKind


@dataclass(frozen=True, slots=True)
class PlannedSummary:
    """One summary a pass would make."""

    depth: int
    """The summary's depth; a session's brief has ``BRIEF_DEPTH``."""
    first_seq: int
    last_seq: int
    source_tokens: int
    est_seconds: float | None

    @property
    def kind(self) -> str:
        return "brief" if self.depth == BRIEF_DEPTH else "leaf" if self.depth == 0 else "condensed"

    def as_json(self) -> dict[str, Any]:
        """An element of ``compact --dry-run --json``'s ``planned`` (ARCHITECTURE §6; ``kind`` added)."""
        return {
            "kind": self.kind,
            "depth": self.depth,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "source_tokens": self.source_tokens,
            "est_seconds": None if self.est_seconds is None else round(self.est_seconds, 1),
        }


def plan_pass(
    store: Store, policy: Policy, session_id: str, pass_: PassKind, *, estimator: Estimator | None = None,
    episodes: int | None = None,
) -> list[PlannedSummary]:
    """What a ``pass_`` over the session would make now (a full pass: its brief last, when due), each timed by
    ``estimator``
    (None: no times). Never contacts a model. ``episodes``: the session's count, when the caller
    read its row already (the backlog, a page of sessions at a time)."""

    def seconds(depth: int, tokens: int) -> float | None:
        return None if estimator is None else estimator.seconds(depth, tokens)

    chunks = planner.Planner(store, policy).leaf(session_id, episodes) if pass_ in ("leaf", "full") else []
    out = [
        PlannedSummary(0, c.first_seq, c.last_seq, c.tokens, seconds(0, c.tokens))
        for c in chunks
    ]
    if pass_ == "leaf":
        return out
    sizes = [expected_size(policy, 0, c.tokens) for c in chunks]
    spans: list[SummarySpan] = [*store.dag.spans(session_id), *planner.leaf_spans(chunks, sizes)]
    for group, tokens in planner.simulate_condensations(
        spans, policy.condense_fanout, lambda depth, src: expected_size(policy, depth, src)
    ):
        out.append(PlannedSummary(group.depth, group.first_seq, group.last_seq, tokens, seconds(group.depth, tokens)))
    last = planner.Planner(store, policy).brief_due_at(session_id)
    if last is not None:
        out.append(PlannedSummary(BRIEF_DEPTH, 0, last, BRIEF_SOURCE_TOKENS, seconds(BRIEF_DEPTH, BRIEF_SOURCE_TOKENS)))
    return out


def total_seconds(plan: list[PlannedSummary]) -> float | None:
    """The plan's estimated time, or None when any part of it has no estimate."""
    if any(p.est_seconds is None for p in plan):
        return None
    return sum(p.est_seconds or 0.0 for p in plan)
