"""Following the database while the app is open: when another process (``hiermem-tui watch``,
a script) or this app's own compaction worker writes, the screens show it as it lands.

One long-lived thread worker polls a :class:`~hiermem_tui.store.changes.ChangeFeed` — one
``PRAGMA data_version`` per poll while nothing happens, then only the new rows — and posts
``SessionsChanged`` naming the sessions that got rows. The app hands that to every screen: the
sessions list re-reads its page, a session screen updates its tree, map and transcript in place.
A thread, not a timer on the UI thread, so a reader stuck behind a busy disk never delays a key.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from hiermem_tui.store import StoreError
from hiermem_tui.store.changes import ChangeFeed
from hiermem_tui.tui.messages import SessionsChanged

if TYPE_CHECKING:
    from hiermem_tui.tui.app import HiermemApp

LIVE_POLL_S = 0.5
"""How often the file is asked whether anyone committed (a pragma: microseconds)."""


class StoreFollower:
    """Follows the app's database for commits (owned by the app as ``app.follower``)."""

    def __init__(self, app: HiermemApp) -> None:
        self.app = app
        self.done: threading.Event | None = None
        """Set when the poller's thread has let go of the store, or will never touch it (quitting
        waits for it: closing a connection another thread is stepping crashes SQLite, as a test
        run once did)."""
        self._lock = threading.Lock()
        self._began = self._stopped = False

    def start(self) -> None:
        """Start the poller (once, on mount). Its event is registered here, before the thread
        runs, so a quit that comes first still waits for it."""
        done = self.done = self.app.store_thread()
        self.app.run_worker(lambda: self._poll(done), thread=True, exclusive=True, group="live", exit_on_error=False,
                            name="follow-store")

    def stop(self) -> None:
        """On quitting, after the worker is cancelled: a poller whose thread never began will not
        begin, and is done now; one that began sets ``done`` after its poll in hand."""
        with self._lock:
            self._stopped = True
            if not self._began and self.done is not None:
                self.done.set()

    def _poll(self, done: threading.Event) -> None:
        with self._lock:
            if self._stopped:
                return
            self._began = True
        app = self.app
        worker = get_current_worker()
        feed = ChangeFeed(app.store)  # polled from this thread only: data_version is per connection
        try:
            while not worker.is_cancelled:
                try:
                    changed = feed.poll()
                except (sqlite3.Error, StoreError):
                    changed = None  # a transient read error: the next poll tries again
                if changed is not None:
                    app.post_message(SessionsChanged(changed))
                worker.cancelled_event.wait(LIVE_POLL_S)
        finally:
            app.store.release_thread()
            done.set()
