"""Which sessions watch mode compacts next: the triggers on each session's aggregates
(``passes_triggers``: one row per session, never an episode scan), with back-off after failures."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..compaction.select import passes_triggers
from ..config import Policy
from ..store import Store

BACKOFF_S = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0)
"""Waits after consecutive failed compaction rounds (Ollama down, a run failing)."""


def default_min_new(policy: Policy) -> int:
    """``--min-new`` when no trigger is given: the fresh tail plus a few leaves' worth, so a
    chat that trickles in is summarised in real chunks rather than a leaf per few messages."""
    return policy.fresh_tail + 4 * policy.leaf_min_episodes


class CompactionQueue:
    """Sessions waiting to be compacted, checked against the triggers on their aggregates
    (``passes_triggers``: one row per session, never an episode scan), with back-off."""

    def __init__(
        self,
        store: Store,
        *,
        if_over: int | None = None,
        min_new: int | None = None,
        backoff_s: Sequence[float] = BACKOFF_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.if_over = if_over
        self.min_new = min_new
        self.backoff_s = tuple(backoff_s) or (0.0,)
        self.clock = clock
        self.failures = 0
        self._retry_at = 0.0
        self._waiting: dict[str, None] = {}

    def add(self, session_ids: Iterable[str]) -> None:
        for sid in session_ids:
            self._waiting[sid] = None

    @property
    def waiting(self) -> list[str]:
        return list(self._waiting)

    @property
    def retry_in(self) -> float:
        return max(0.0, self._retry_at - self.clock())

    def due(self) -> list[str]:
        """Waiting sessions that pass the triggers now (none while backing off); the rest
        stop waiting until new episodes bring them back."""
        if self.retry_in > 0:
            return []
        due: list[str] = []
        for sid in list(self._waiting):
            session = self.store.sessions.get(sid)
            if session is None or not passes_triggers(session, if_over=self.if_over, min_new=self.min_new):
                del self._waiting[sid]
            else:
                due.append(sid)
        return due

    def finished(self, session_ids: Iterable[str], statuses: Mapping[str, str]) -> float | None:
        """After a round over ``session_ids`` (``statuses``: run status per session that got a run).
        Returns the back-off delay when the round failed, else None."""
        if any(status == "failed" for status in statuses.values()):
            for sid, status in statuses.items():
                if status == "done":
                    self._waiting.pop(sid, None)
            return self.failed()
        for sid in session_ids:
            self._waiting.pop(sid, None)
        self.failures = 0
        return None

    def failed(self) -> float:
        """A round could not run or failed: wait longer each time before the next one."""
        self.failures += 1
        delay = self.backoff_s[min(self.failures, len(self.backoff_s)) - 1]
        self._retry_at = self.clock() + delay
        return delay

