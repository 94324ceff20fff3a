"""Compaction: the planner (pure: what is eligible) and the runner (does it, reports
progress through small events, can be cancelled from any thread).

This face re-exports what callers use; ``make_runner`` / ``compact_sessions`` (``factories``) build
everything from :class:`Settings` for callers that do not need to hold the pieces.
"""

from __future__ import annotations

from .events import (
    BriefWritten,
    CancelToken,
    HostNotice,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
    TierCounts,
)
from .factories import compact_sessions, make_backend, make_runner
from .planner import CondenseGroup, EpisodeRange, LeafChunk
from .runner import PassKind, Runner, RunRefused
from .select import UnknownSession, passes_triggers, select_sessions

__all__ = [
    "BriefWritten", "CancelToken", "CondenseGroup", "HostNotice", "EpisodeRange", "LeafChunk", "PassKind", "RunEvent", "RunFinished",
    "RunRefused", "RunStarted", "Runner", "SummaryAttempt", "SummaryProgress", "SummaryStarted", "SummaryWritten", "TierCounts",
    "UnknownSession", "compact_sessions", "make_backend", "make_runner", "passes_triggers", "select_sessions",
]
