"""Small shared types of the runner and its re-make half (kept apart to avoid an import cycle)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..store import Run
from .requests import BriefReading
from .events import TierCounts


class RunRefused(Exception):
    """The job cannot start as asked (unknown session, unknown or superseded summary)."""


class Cancelled(Exception):
    """Raised inside a run when the CancelToken fired."""


@dataclass(slots=True)
class RunState:
    run: Run
    planned: int
    started: float
    done: int = 0
    tiers: TierCounts = field(default_factory=TierCounts)
    out_tokens: int = 0
    llm_seconds: float = 0.0
    ahead: asyncio.Future[None] | None = None
    """The next summary's request being worked out while the model answers (``Executor.make``'s ``then``)."""
    brief: BriefReading | None = None
    """The session's brief material, read ahead while the model answers (a full pass whose brief is due)."""
