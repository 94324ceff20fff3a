"""Progress events of a compaction run, and the token that cancels one.

Events are small frozen dataclasses with no Textual in sight: the TUI receives them in a
worker thread (the runner calls ``on_event`` synchronously on its own loop thread) and
forwards them with ``post_message``; the CLI turns them into a one-line progress bar.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Literal, Union

from ..store.models import Brief, Run, Summary


@dataclass(frozen=True, slots=True)
class TierCounts:
    """How many summaries each tier produced so far in one run."""

    normal: int = 0
    aggressive: int = 0
    fallback: int = 0
    flagged: int = 0
    """Of those, flagged low-fidelity (counted beside the tiers, not as one)."""

    def add(self, tier: str, flagged: bool = False) -> TierCounts:
        return TierCounts(
            self.normal + (tier == "normal"), self.aggressive + (tier == "aggressive"), self.fallback + (tier == "fallback"),
            self.flagged + flagged,
        )

    def as_dict(self) -> dict[str, int]:
        return {"normal": self.normal, "aggressive": self.aggressive, "fallback": self.fallback}


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run was recorded; ``planned`` is how many summaries it expects to write (an estimate
    for passes that condense: the actual count can differ if another process writes too)."""

    run_id: str
    session_id: str
    kind: str
    planned: int
    backend: str
    model: str | None
    est_seconds: float | None = None
    """Model time the planned summaries should take at the model's measured speed (None: unknown)."""


@dataclass(frozen=True, slots=True)
class SummaryStarted:
    """One summary is being made. ``what`` is for people: "leaf #259–263", "depth 2 over 4 summaries"."""

    run_id: str
    session_id: str
    what: str
    depth: int
    first_seq: int
    last_seq: int
    planned: int

    @property
    def span(self) -> tuple[int, int, int]:
        """Which summary: its depth and episode range (as :attr:`SummaryWritten.span` says it once written)."""
        return self.depth, self.first_seq, self.last_seq


@dataclass(frozen=True, slots=True)
class SummaryAttempt:
    """The summariser is calling the model for ``tier`` (``retry``: the server did not answer)."""

    run_id: str
    session_id: str
    what: str
    tier: str
    attempt: int
    retry: bool = False
    message: str = ""
    part: int = 0
    """The part of a summary made in parts this call is for (1-based; 0: a summary of one call)."""
    parts: int = 0


@dataclass(frozen=True, slots=True)
class SummaryProgress:
    """The model call for ``what`` is streaming: its phase (``prompt`` while the model reads,
    ``thinking``, ``writing``), tokens so far, its own pace and the seconds it still needs."""

    run_id: str
    session_id: str
    what: str
    tier: str
    attempt: int
    phase: str
    tokens: int
    thinking_tokens: int
    tokens_per_s: float | None
    left_s: float | None


@dataclass(frozen=True, slots=True)
class SummaryWritten:
    """A summary was committed (with its edges and the run's counters).

    ``tokens_per_s`` is output tokens over model time so far in this run (None before any
    model time was spent, e.g. with the extractive backend). It may come after the next
    summary's :class:`SummaryStarted` and its first call's events (``Executor.make_in_turn``): a
    listener showing the call in flight keeps it unless :attr:`span` is that call's summary.
    """

    run_id: str
    session_id: str
    summary: Summary
    tiers: TierCounts
    done: int
    planned: int
    tokens_per_s: float | None

    @property
    def span(self) -> tuple[int, int, int]:
        """Which summary: its depth and episode range (:attr:`SummaryStarted.span` of the one started)."""
        return self.summary.depth, self.summary.first_seq, self.summary.last_seq


@dataclass(frozen=True, slots=True)
class BriefWritten:
    """A session's brief was made and stored (``brief``: the stored row)."""

    run_id: str
    session_id: str
    brief: Brief


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended: ``status`` is done, cancelled, failed, or one of the ways a run stops early
    without either (``budget``, ``paused``, ``moved``: ``store.models.RUN_STATUSES``); ``run`` is the
    stored row."""

    run_id: str
    session_id: str
    status: str
    run: Run
    error: str | None


@dataclass(frozen=True, slots=True)
class HostNotice:
    """A job with several Ollama hosts lost one: left out at the start (not reachable, or the
    model missing there), or gone mid-call (``moved_to``: the host its summary was made again on).
    ``text`` is the one line to show."""

    host: str
    text: str
    moved_to: str | None = None


RunEvent = Union[RunStarted, SummaryStarted, SummaryAttempt, SummaryProgress, SummaryWritten, BriefWritten, RunFinished,
                 HostNotice]
StopReason = Literal["cancelled", "budget", "paused"]
"""Why a job's token stopped it, and so the status of the runs it cut: a user's cancel, the job's
time budget spent, or the background backlog stopped (by the user, or by the app quitting)."""


class CancelToken:
    """Cancels a job from any thread: ``cancel()`` aborts in-flight model calls at once.

    The runner registers each summarise task it starts (with its loop); ``cancel()`` asks
    each such loop, thread-safely, to cancel its task, which aborts the HTTP request. Work
    already committed is kept. One token can serve several concurrent runs of one job.
    :attr:`reason` is why it was first stopped: what the runs it cuts are recorded as.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._tasks: dict[asyncio.Task[object], asyncio.AbstractEventLoop] = {}
        self._reason: StopReason | None = None

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> StopReason | None:
        """Why the token was first stopped (None: it was not); a later stop does not change it
        (a budget spent, then ctrl+c while the call in flight ends, is still the budget's stop)."""
        return self._reason

    def _stop(self, reason: StopReason) -> None:
        """Lock held."""
        if self._reason is None:
            self._reason = reason
        self._event.set()

    def cancel(self, reason: StopReason = "cancelled") -> None:
        """Request cancellation; safe to call from any thread, any number of times."""
        with self._lock:
            self._stop(reason)
            pending = list(self._tasks.items())
        for task, loop in pending:
            if loop.is_closed():
                continue
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed in between
                pass

    def finish_current(self, reason: StopReason) -> None:
        """Start nothing new, but let what is in flight finish and be kept (``budget``: a time budget
        spent; ``paused``: the backlog stopped): ``cancelled`` reads true from now on, so no further
        summary or session starts, and only tasks attached from now on are cancelled. ``cancel()``
        may still follow."""
        with self._lock:
            self._stop(reason)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled (or ``timeout``); for threads that watch the token."""
        return self._event.wait(timeout)

    def attach(self, task: asyncio.Task[object]) -> None:
        """Register a running task of the current loop (cancelled right away if already cancelled)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if not self._event.is_set():
                self._tasks[task] = loop
                return
        task.cancel()

    def detach(self, task: asyncio.Task[object]) -> None:
        with self._lock:
            self._tasks.pop(task, None)
