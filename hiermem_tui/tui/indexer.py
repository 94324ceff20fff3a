"""Making every row searchable from the TUI: the app's build in the background from the start, and a
search screen's own catch-up (the app's :class:`SearchIndexer`, ``app.indexer``).

Why in the background: the first start after a million-episode import shows its sessions at once
instead of waiting ~20 s on the index. Each batch is its own transaction, so quitting mid-way keeps
what is done and the next start (or the first search) resumes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from hiermem_tui.store.search_index import BATCH, build_search_index
from hiermem_tui.tui.messages import IndexProgress

if TYPE_CHECKING:
    from hiermem_tui.tui.app_base import AppBase

BACKGROUND_BATCH = 5_000
"""Rows the background index build writes per transaction: small enough that quitting (which waits
for the batch in hand) is quick, large enough that a million rows take few commits."""


class IndexStopped(Exception):
    """The index build was told to stop (its worker was cancelled); the next start resumes."""


class SearchIndexer:
    """Builds what the search index lacks (owned by the app as ``app.indexer``); progress comes back
    to the app as :class:`IndexProgress` messages."""

    def __init__(self, app: AppBase) -> None:
        self.app = app

    def start(self) -> None:
        """Index what is not searchable yet in a store worker, while the user browses."""
        self.app.store_worker(self.app, self._all, group="app-index", exclusive=True)

    def _all(self) -> None:
        if self.build_here(self._progress, batch=BACKGROUND_BATCH):
            self.app.post_message(IndexProgress(0, 0, finished=True))

    def _progress(self, done: int, total: int) -> None:
        self.app.post_message(IndexProgress(done, total))

    def build_here(self, on_progress: Callable[[int, int], None], *, batch: int = BATCH) -> bool:
        """From a store worker's thread (the app's background build, the search screen's): make every
        row searchable, ``on_progress`` told before the first batch and after each. False when the
        worker was cancelled (the screen closed, the app quits): it stops after the batch in hand and
        the next start resumes."""
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise IndexStopped
            on_progress(done, total)

        try:
            build_search_index(self.app.store, progress, batch=batch)
            return True
        except IndexStopped:
            return False
