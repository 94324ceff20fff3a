"""What a run started from the UI is (:class:`RunJob`) and what the indicators show of it (:class:`RunProgress`).

Why a module of its own: these are plain values (nothing of Textual) shared by the run dialog,
the indicators, the worker's messages and the code that drives a run; what acts on them is the
app's :class:`~hiermem_tui.tui.runs.RunController`. Widgets and screens import them from here, and
so this module does not load the engine (see :func:`_no_tiers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hiermem_tui.config import Settings
from hiermem_tui.words import engine_label

if TYPE_CHECKING:
    from hiermem_tui.compaction.events import TierCounts

RunAction = Literal["leaf", "condense", "full", "resummarize-summary", "resummarize-session", "repair", "backlog"]
PASSES: tuple[RunAction, ...] = ("leaf", "condense", "full")
ACTION_LABELS: dict[str, str] = {
    "leaf": "Leaf pass",
    "condense": "Condensation pass",
    "full": "Full pass",
    "resummarize-summary": "Re-summarise",
    "resummarize-session": "Session re-summarise",
    "repair": "Repair",
    "backlog": "Compact everything",
}


@dataclass(frozen=True, slots=True)
class RunJob:
    """One thing the user asked for. ``settings`` carry the backend and model chosen for it."""

    id: int
    action: RunAction
    session_id: str
    settings: Settings
    summary_id: str | None = None

    @property
    def label(self) -> str:
        return ACTION_LABELS[self.action]

    @property
    def engine(self) -> str:
        return engine_label(self.settings.backend, self.settings.model)


def _no_tiers() -> TierCounts:
    """A run's tier counts before its first summary.

    Imported here, when a run starts: importing any module of the engine's package loads the
    whole engine (its ``__init__`` builds runners), and the widgets that import this module must
    not load it. By the time a run starts, the run controller has loaded it anyway.
    """
    from hiermem_tui.compaction.events import TierCounts

    return TierCounts()


RunPhase = Literal["checking", "running", "cancelling"]
"""Checking the backend before a run, running it, or cancelling it (the indicator says which)."""


@dataclass(frozen=True, slots=True)
class RunProgress:
    """What the indicators show; replaced (never mutated) as messages arrive."""

    job: RunJob
    phase: RunPhase = "checking"
    run_id: str | None = None
    what: str = ""
    attempt: str = ""
    done: int = 0
    planned: int = 0
    tiers: TierCounts = field(default_factory=_no_tiers)
    tokens_per_s: float | None = None
    model: str | None = None
    est_seconds: float | None = None  # the planned work at the model's speed (compaction/estimate.py)
    began: float = 0.0  # time.monotonic() when the run was recorded
    done_at: float = 0.0  # time.monotonic() when the last summary landed
    call: CallState | None = None  # the model call streaming now (None between calls)
    span: tuple[int, int, int] | None = None
    """The summary ``what`` names, as the engine's events say which (depth, first and last episode): the one
    whose calls ``attempt`` and ``call`` are."""

    def seconds_left(self, now: float) -> float | None:
        """What is left of the run, from the one estimator (``compaction/estimate.py``): the
        run's estimate at the run's own pace so far, less what the summary in flight has run for.

        Imported here, as :func:`_no_tiers` is: by the time a run has started the engine is loaded."""
        from hiermem_tui.compaction.estimate import seconds_left

        if not self.planned or not self.began:
            return None
        last = self.done_at if self.done and self.done_at >= self.began else self.began
        return seconds_left(self.est_seconds, self.planned, self.done, last - self.began, max(0.0, now - last))


@dataclass(frozen=True, slots=True)
class CallState:
    """The model call streaming now, as its last progress report said."""

    phase: str  # "prompt" (the model reads the prompt), "thinking", "writing"
    tokens: int
    thinking_tokens: int
    tokens_per_s: float | None
    left_s: float | None
    at: float  # time.monotonic() of that report

    def label(self) -> str:
        """``reading the prompt`` / ``thinking · 312 tok`` / ``writing · 120 tok · 11 tok/s``."""
        if self.phase == "prompt":
            return "reading the prompt"
        if self.phase == "thinking":
            text = f"thinking · {self.thinking_tokens} tok"
        else:
            text = f"writing · {self.tokens} tok"
        if self.tokens_per_s is not None:
            text += f" · {self.tokens_per_s:.0f} tok/s"
        return text
