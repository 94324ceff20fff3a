"""Bringing the search index up to date before it is used, with a progress bar.

Why here: our writes index what they write as they commit, but rows others left (another
tool, an older version's imports) and a file upgraded from before schema 3 are indexed in
bulk (see store/search_index.py): tens of seconds for a million episodes. Whoever needs the
index — ``search``, or the TUI before it starts — calls :func:`ensure_search_index`, so a long
wait is never silent: a bar on a terminal, one line otherwise.
"""

from __future__ import annotations

import time

from ..store import Store
from ..store.search_index import SCAN_ROWS, IndexStatus, build_search_index, search_index_status
from .common import CliContext

BAR = 24
QUIET_BELOW = 1000
"""Fewer new rows than this (a compaction's summaries, a short import) are indexed without a word."""


class IndexBar:
    """``on_progress`` for the index build: a bar redrawn at most ten times a second."""

    def __init__(self, ctx: CliContext) -> None:
        self.ctx = ctx
        self.enabled = ctx.is_tty
        self._last = 0.0
        self.started = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        self.draw("indexing for search", done, total, "rows")

    def draw(self, label: str, done: int, total: int, unit: str = "", *, measured: bool = True) -> None:
        """``label ████░░ 40% · 4,000 of 10,000 unit``; unmeasured work (``measured=False``) shows
        the seconds it has taken so far instead."""
        if not self.enabled:
            return
        now = time.monotonic()
        if self._last and now - self._last < 0.1 and (done < total or not measured):
            return
        self._last = now
        if not measured:
            self.ctx.stderr.write(f"\r\x1b[K{label}… {now - self.started:.0f} s")
            self.ctx.stderr.flush()
            return
        filled = int(BAR * done / total) if total else BAR
        pct = 100 * done / total if total else 100
        self.ctx.stderr.write(
            f"\r{label} {'█' * filled}{'░' * (BAR - filled)} {pct:3.0f}% "
            f"· {done:,} of {total:,} {unit} "
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
            f"hiermem-tui: {status.missing:,} rows of {store.path} are not indexed for search yet and the file is "
            f"read-only: searching what is indexed, and the newest {min(status.missing, SCAN_ROWS):,} of them by a scan"
        )
        return status
    bar = IndexBar(ctx)
    try:
        indexed = build_search_index(store, bar)
    finally:
        bar.clear()
    if indexed >= QUIET_BELOW:
        ctx.warn(f"hiermem-tui: indexed {indexed:,} new rows for search in {time.monotonic() - bar.started:.1f} s")
    return search_index_status(store)
