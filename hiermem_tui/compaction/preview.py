"""The dry-run plan of a pass: every summary it would make, with its input size and a time
estimate from the model's measured speed. Reads only (no episode text, no model call).

Shared by ``compact --dry-run`` and the TUI's run dialog, so both show the same plan.
Condensed summaries above planned leaves have no text yet: their source tokens are the sum of
what the summaries below them are expected to be (their targets, which scale with the input).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..config import Policy
from ..store import Store, SummarySpan
from ..summarize.speed import ModelSpeed
from ..summarize.summariser import MIN_TARGET, SOURCE_FRACTION
from . import planner
from .executor import LEAF_PROMPT_OVERHEAD
from .runner import PassKind


@dataclass(frozen=True, slots=True)
class PlannedSummary:
    """One summary a pass would make."""

    depth: int
    first_seq: int
    last_seq: int
    source_tokens: int
    est_seconds: float | None

    def as_json(self) -> dict[str, Any]:
        """An element of ``compact --dry-run --json``'s ``planned`` (ARCHITECTURE §6)."""
        return {
            "depth": self.depth,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "source_tokens": self.source_tokens,
            "est_seconds": None if self.est_seconds is None else round(self.est_seconds, 1),
        }


def expected_size(policy: Policy, depth: int, source_tokens: int) -> int:
    """The normal-tier target of a summary of ``depth`` over ``source_tokens``."""
    target = policy.leaf_target_tokens if depth == 0 else policy.condensed_target_tokens
    return max(1, min(target, max(MIN_TARGET, source_tokens // SOURCE_FRACTION), max(1, source_tokens - 1)))


def estimate(policy: Policy, planned: PlannedSummary, *, speed: ModelSpeed | None, extractive: bool) -> float | None:
    """Seconds ``planned`` should take with a backend of this speed (None: unknown)."""
    return _seconds(speed, extractive, planned.source_tokens, expected_size(policy, planned.depth, planned.source_tokens))


def _seconds(speed: ModelSpeed | None, extractive: bool, source_tokens: int, output: int) -> float | None:
    if extractive:
        return 0.0
    if speed is None or not speed.measured:
        return None
    return speed.expected_seconds(source_tokens + LEAF_PROMPT_OVERHEAD, output)


def plan_pass(
    store: Store, policy: Policy, session_id: str, pass_: PassKind, *, backend: str = "ollama",
    speed: ModelSpeed | None = None,
) -> list[PlannedSummary]:
    """What a ``pass_`` over the session would make now with ``backend``. ``speed``: the
    model's measured speed (None or unmeasured: no estimate). Never contacts a model."""
    extractive = backend == "extractive"
    chunks = planner.Planner(store, policy).leaf(session_id) if pass_ in ("leaf", "full") else []
    out = [
        PlannedSummary(0, c.first_seq, c.last_seq, c.tokens,
                       _seconds(speed, extractive, c.tokens, expected_size(policy, 0, c.tokens)))
        for c in chunks
    ]
    if pass_ == "leaf":
        return out
    spans: list[SummarySpan] = [*store.dag.spans(session_id), *planner.leaf_spans(chunks)]
    sizes = {f"~leaf{i}": expected_size(policy, 0, c.tokens) for i, c in enumerate(chunks)}
    spans = [s if s.id not in sizes else _sized(s, sizes[s.id]) for s in spans]
    for group, tokens in planner.simulate_condensations(
        spans, policy.condense_fanout, lambda depth, src: expected_size(policy, depth, src)
    ):
        size = expected_size(policy, group.depth, tokens)
        out.append(PlannedSummary(group.depth, group.first_seq, group.last_seq, tokens,
                                  _seconds(speed, extractive, tokens, size)))
    return out


def _sized(span: SummarySpan, tokens: int) -> SummarySpan:
    return replace(span, tokens=tokens)


def total_seconds(plan: list[PlannedSummary]) -> float | None:
    """The plan's estimated time, or None when any part of it has no estimate."""
    if any(p.est_seconds is None for p in plan):
        return None
    return sum(p.est_seconds or 0.0 for p in plan)
