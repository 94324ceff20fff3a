"""Finishing the search index of a file upgraded to schema 3, with a progress bar.

Why here: the migration only creates the index; rows already in the file are indexed by
:func:`~hiermem_tui.store.search_index.build_search_index` (tens of seconds for a million
episodes). Whoever needs the index first — ``search``, or the TUI before it starts — calls
:func:`ensure_search_index`, so the wait is never silent: a bar on a terminal, one line
otherwise.
"""

from __future__ import annotations

import time

from ..store import Store
from ..store.search_index import IndexStatus, build_search_index, search_index_status
from .common import CliContext

BAR = 24


class IndexBar:
    """``on_progress`` for the index build: a bar redrawn at most ten times a second."""

    def __init__(self, ctx: CliContext) -> None:
        self.ctx = ctx
        self.enabled = ctx.is_tty
        self._last = 0.0
        self.started = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self._last and now - self._last < 0.1 and done < total:
            return
        self._last = now
        filled = int(BAR * done / total) if total else BAR
        pct = 100 * done / total if total else 100
        self.ctx.stderr.write(
            f"\rbuilding the search index (once) {'█' * filled}{'░' * (BAR - filled)} {pct:3.0f}% "
            f"· {done:,} of {total:,} rows "
        )
        self.ctx.stderr.flush()

    def clear(self) -> None:
        if self.enabled:
            self.ctx.stderr.write("\r\x1b[K")
            self.ctx.stderr.flush()


def ensure_search_index(ctx: CliContext, store: Store) -> IndexStatus:
    """Index what the migration left pending; returns the status after (pending only if read-only)."""
    status = search_index_status(store)
    if not status.pending:
        return status
    if store.readonly:
        ctx.warn(
            f"hiermem-tui: the search index of {store.path} is incomplete ({status.done:,} of {status.total:,} rows): "
            "open the file once with write access to finish it; searching what is indexed"
        )
        return status
    bar = IndexBar(ctx)
    try:
        indexed = build_search_index(store, bar)
    finally:
        bar.clear()
    if indexed:
        ctx.warn(f"hiermem-tui: indexed {indexed:,} rows for search in {time.monotonic() - bar.started:.1f} s (once)")
    return search_index_status(store)
