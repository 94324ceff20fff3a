"""Who goes first while a backlog runs in the background (issue 20): :class:`BacklogControl`.

A backlog run takes its sessions from a :class:`BacklogControl` (it is the iterator
``Runner.compact_many`` reads) and, before each model call, passes its gate
(:meth:`BacklogControl.enter`, from the executor's slot). Other threads steer it between calls:

* :meth:`promote` moves a session to the front (the user opened it): the session the backlog is
  in stops before its next call (its run reads ``moved``) and is queued again right
  after the promoted one, so the promoted session's summary is the next one started;
* :meth:`hold` / :meth:`release` bracket an interactive job (a pass on one session, a re-summarise,
  a repair): the backlog starts no call while one is held, and :meth:`idle` lets the interactive
  job wait for the backlog's call in flight to end first, so the two never write over the same
  range. A backlog session that an interactive job touched is re-planned: it yields and is queued
  first again;
* :meth:`pause` / :meth:`resume` hold the backlog for the user; :meth:`stop` ends it after the call
  in flight (with the job's ``CancelToken.finish_current``).

Everything here is guarded by one lock; the waiting sides are asyncio futures on their own loops,
woken thread-safely, so the backlog's loop, an interactive job's loop and the UI thread never block
each other.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from .state import Cancelled


class Yielded(Cancelled):
    """The backlog's run on a session stopped before its next call so that other work goes first
    (a promoted session, or an interactive job that touched this one); the session is queued again."""


class BacklogControl:
    """The backlog's queue of sessions and its gate (see the module docstring). Thread-safe."""

    def __init__(self, session_ids: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._queue: deque[str] = deque(session_ids)
        self._running: list[str] = []
        self._promoted: str | None = None
        self._touched: set[str] = set()
        self._held = 0
        self._busy = 0
        self._paused = False
        self._stopped = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.on_change: Callable[[], None] | None = None
        """Called (on whichever thread changed it) when the queue, the running set or the pause changed."""

    # ------------------------------------------------------------------ what it holds
    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def stopped(self) -> bool:
        return self._stopped

    def queued(self) -> tuple[str, ...]:
        """Sessions still to start, in order."""
        with self._lock:
            return tuple(self._queue)

    @property
    def holding(self) -> int:
        """Interactive jobs holding the backlog now."""
        return self._held

    @property
    def waiting(self) -> int:
        """Calls (of the backlog or of a job waiting for it to be idle) waiting at the gate now."""
        with self._lock:
            return len(self._waiters)

    def running(self) -> tuple[str, ...]:
        """Sessions the backlog is in now."""
        with self._lock:
            return tuple(self._running)

    # ------------------------------------------------------------------ the backlog's side
    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        with self._lock:
            if self._stopped or not self._queue:
                raise StopIteration
            sid = self._queue.popleft()
            if self._promoted == sid:
                self._promoted = None
            if not self._held:  # planned from now on, after what touched it; while held it is re-planned after
                self._touched.discard(sid)
            self._running.append(sid)
        self._changed()
        return sid

    def session_ended(self, session_id: str) -> None:
        """The backlog's run on ``session_id`` ended (done, failed, cancelled, paused or moved)."""
        with self._lock:
            if session_id in self._running:
                self._running.remove(session_id)
        self._changed()

    async def enter(self, session_id: str) -> bool:
        """Before the backlog's next call on ``session_id`` (and its commit): wait while held or
        paused; raise :class:`Yielded` when another session was promoted or an interactive job
        touched this one. True: let through (call :meth:`leave` after the commit); False: stopped
        (the job's cancel token then refuses the call)."""
        while True:
            with self._lock:
                if self._stopped:
                    return False
                if not self._held and not self._paused:
                    # only now: what an interactive job wrote is all there, so a re-plan sees it
                    touched = session_id in self._touched
                    if touched or (self._promoted is not None and self._promoted != session_id):
                        self._touched.discard(session_id)
                        self._requeue(session_id)
                        raise Yielded("an interactive run on this session went first; queued again" if touched
                                      else f"session {self._promoted} moved to the front; queued again after it")
                    self._busy += 1
                    return True
                fut = self._waiter()
            await fut

    def leave(self) -> None:
        """The call :meth:`enter` let through has ended and its summary is written."""
        with self._lock:
            self._busy -= 1
            self._wake()

    def _requeue(self, session_id: str) -> None:
        """Put a yielded session back: right after a promoted one, else first. Lock held."""
        if session_id in self._running:
            self._running.remove(session_id)
        if session_id in self._queue:
            return
        if self._promoted is not None and self._queue and self._queue[0] == self._promoted:
            self._queue.insert(1, session_id)
        else:
            self._queue.appendleft(session_id)

    # ------------------------------------------------------------------ other threads' side
    def promote(self, session_id: str) -> bool:
        """Move a queued session to the front; its summary is the backlog's next. False when it is
        not queued (up to date, not in this backlog, or already running)."""
        with self._lock:
            if self._stopped or session_id not in self._queue:
                return False
            self._queue.remove(session_id)
            self._queue.appendleft(session_id)
            self._promoted = session_id
            self._wake()
        self._changed()
        return True

    def hold(self, session_id: str | None) -> None:
        """An interactive job on ``session_id`` starts: the backlog starts no call until :meth:`release`."""
        with self._lock:
            self._held += 1
            if session_id is not None:
                self._touched.add(session_id)

    def release(self) -> None:
        with self._lock:
            self._held = max(0, self._held - 1)
            self._wake()

    async def idle(self) -> None:
        """Wait until no backlog call is in flight (call after :meth:`hold`)."""
        while True:
            with self._lock:
                if self._busy <= 0:
                    return
                fut = self._waiter()
            await fut

    def pause(self) -> None:
        with self._lock:
            self._paused = True
        self._changed()

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            self._wake()
        self._changed()

    def stop(self) -> None:
        """Start nothing more; waiting gates return (the caller fires the job's ``finish_current``)."""
        with self._lock:
            self._stopped = True
            self._wake()
        self._changed()

    # ------------------------------------------------------------------ waking
    def _waiter(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append((loop, fut))
        return fut

    def _wake(self) -> None:
        """Wake every waiter so it re-checks (lock held)."""
        waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            if loop.is_closed():
                continue
            try:
                loop.call_soon_threadsafe(_settle, fut)
            except RuntimeError:  # the loop closed in between
                pass

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def _settle(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
