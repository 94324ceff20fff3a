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
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from hiermem_tui.store import StoreError
from hiermem_tui.store.changes import ChangeFeed
from hiermem_tui.tui.messages import SessionsChanged

if TYPE_CHECKING:
    from hiermem_tui.tui.app import HiermemApp
    from hiermem_tui.tui.app_base import StoreHold

LIVE_POLL_S = 0.5
"""How often the file is asked whether anyone committed (a pragma: microseconds)."""


class StoreFollower:
    """Follows the app's database for commits (owned by the app as ``app.follower``)."""

    def __init__(self, app: HiermemApp) -> None:
        self.app = app
        self.hold: StoreHold | None = None
        """The poller's hold on the store (quitting cancels the poller and waits for the poll in hand:
        closing a connection another thread is stepping crashes SQLite, as a test run once did)."""

    def start(self) -> None:
        """Start the poller (once, on mount)."""
        self.hold = self.app.store_worker(self.app, self._poll, group="live", exclusive=True, name="follow-store")

    def _poll(self) -> None:
        app = self.app
        worker = get_current_worker()
        feed = ChangeFeed(app.store)  # polled from this thread only: data_version is per connection
        while not worker.is_cancelled:
            try:
                changed = feed.poll()
            except (sqlite3.Error, StoreError):
                changed = None  # a transient read error: the next poll tries again
            if changed is not None:
                app.post_message(SessionsChanged(changed))
            worker.cancelled_event.wait(LIVE_POLL_S)
