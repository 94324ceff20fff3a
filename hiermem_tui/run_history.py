"""Every compaction run, newest first, with what it made and why it ended the way it did.

Why a module of its own: the store's ``runs.of_session()`` serves the export (one session,
oldest first); a history needs the whole file too, newest first, paged with a keyset on
``(started_at, id)`` (``store.runs.newest``) so a file with years of runs lists its first page
as fast as an empty one. This module words and shapes what those queries return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .store import Run, SummarySpan, parse_iso

if TYPE_CHECKING:
    from .store import Store

PASS_LABELS = {
    "leaf": "leaf pass", "condense": "condense", "full": "full pass",
    "resummarize": "redo one", "resummarize-session": "redo session", "repair": "repair",
}
"""Short names of run kinds, for columns (≤ 12 characters)."""
OUTCOMES = {
    "interrupted": "the process running it stopped before it finished",
    "cancelled": "cancelled; the summaries it finished are kept",
    "budget": "stopped when the time budget (compact --for) was spent; what it finished is kept, the rest waits",
    "paused": "the backlog was stopped (ctrl+x, or the app quit); what it finished is kept, the rest waits",
    "moved": "the backlog went to another session first; this one was queued again",
}
"""Why a run that did not simply finish ended, when it recorded no error line of its own."""


def duration(run: Run) -> float | None:
    """Seconds from start to end (``wall_seconds`` when recorded; None while running)."""
    if run.wall_seconds:
        return run.wall_seconds
    if run.finished_at:
        return max(0.0, (parse_iso(run.finished_at) - parse_iso(run.started_at)).total_seconds())
    return None


def why(run: Run) -> str | None:
    """One line on why a run did not simply finish (None for a done or running one)."""
    if run.status in ("done", "running"):
        return None
    if run.error:
        return run.error
    return OUTCOMES.get(run.status, run.status)


def run_json(run: Run) -> dict[str, Any]:
    """``runs --json`` element: the export's run object plus session, pass, planned and rejections."""
    out = run.as_json()
    out.update({"session": run.session_id, "target": run.target, "planned": run.planned,
                "rejections": dict(run.rejections), "duration_seconds": duration(run)})
    return out


@dataclass(frozen=True, slots=True)
class RunPage:
    runs: tuple[Run, ...]
    more: bool
    """There are older runs after this page."""

    @property
    def cursor(self) -> tuple[str, str] | None:
        """Pass it as ``before`` to get the next (older) page."""
        return (self.runs[-1].started_at, self.runs[-1].id) if self.runs else None


def list_runs(
    store: Store, session_id: str | None = None, *, limit: int = 200, before: tuple[str, str] | None = None
) -> RunPage:
    """Runs newest first (one session, or the whole file), ``limit`` at a time."""
    runs, more = store.runs.newest(session_id, limit=limit, before=before)
    return RunPage(tuple(runs), more)


@dataclass(frozen=True, slots=True)
class MadeSummary:
    """A summary a run wrote, as it stands now (``status`` may have become superseded since)."""

    span: SummarySpan
    status: str

    @property
    def active(self) -> bool:
        return self.status == "active"


def run_summaries(store: Store, run_id: str) -> list[MadeSummary]:
    """What one run wrote, in coverage order, deepest first where ranges start together."""
    return [MadeSummary(span, status) for span, status in store.dag.made_by(run_id)]
