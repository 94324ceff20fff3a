"""What the screens show of the backlog (issue 20): what is waiting and the background run.

Why a module of its own: these are plain values (nothing of Textual, nothing of the engine) that the
sessions list's state column, the backlog's indicator and the app's notices all read; what acts on
them is the app's :class:`~hiermem_tui.tui.backlog_run.BacklogController` (``app.backlog``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from hiermem_tui.tui import format as fmt

BacklogPhase = Literal["planning", "running", "paused", "stopping"]


@dataclass(frozen=True, slots=True)
class Waiting:
    """The last plan of the backlog: summaries due per session and in all, and their time."""

    per_session: Mapping[str, int]
    summaries: int
    est_seconds: float
    guess: bool
    """The time is a guess from the model's size (the model was never measured here)."""

    def line(self) -> str:
        """``380 summaries waiting, ~3 h 10 m`` (``… a guess`` when no speed was ever measured)."""
        sessions = len(self.per_session)
        text = (f"{self.summaries:,} summar{'y' if self.summaries == 1 else 'ies'} waiting in {sessions:,} "
                f"session{'s' * (sessions != 1)}, ~{fmt.duration(self.est_seconds)}")
        return text + (" (a guess from the model's size)" if self.guess else "")


@dataclass(frozen=True, slots=True)
class BacklogRunState:
    """The background run, as its indicator and the state column draw it; replaced, never mutated."""

    job: int
    phase: BacklogPhase = "planning"
    running: tuple[str, ...] = ()
    queued: frozenset[str] = frozenset()
    next_up: str | None = None
    sessions_done: int = 0
    sessions: int = 0
    summaries_done: int = 0
    summaries: int = 0
    left_s: float | None = None


StateCell = tuple[str, str | None]
"""A state column cell: its text and an optional component name (``muted``, ``warning`` …)."""


def session_state(session_id: str, waiting: Waiting | None, run: BacklogRunState | None) -> StateCell:
    """``running`` · ``queued`` · ``N waiting`` · ``up to date``, or ``·`` before the first plan."""
    if run is not None and run.phase != "planning":
        if session_id in run.running:
            return "running", "bar-done"
        if session_id == run.next_up:
            return "next", "bar-done"
        if session_id in run.queued:
            return "queued", None
    if waiting is None:
        return "·", "muted"
    due = waiting.per_session.get(session_id, 0)
    if due:
        return f"{due:,} waiting", "warning"
    return "up to date", "muted"
