"""Noticing what other connections committed, cheaply: for views that stay open on a file that
another process (``hiermem-tui watch``, a script) or another thread is writing.

``PRAGMA data_version`` moves when another connection commits — one call, no table read — and
only then are the rows added since the last look found by rowid (:class:`ChangeFeed`).
Sessions, episodes, summaries and briefs are never deleted, so their rowids only grow: finding what
is new costs the new rows, never a scan. :class:`LiveSummaries` follows one session's summaries
the same way.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .models import Session, SummarySpan

if TYPE_CHECKING:
    import sqlite3

    from .store import Store

_TABLES = (("sessions", "id"), ("episodes", "session_id"), ("summaries", "session_id"), ("briefs", "session_id"))


class ChangeFeed:
    """Polls one connection for commits made elsewhere; call :meth:`poll` from one thread.

    ``PRAGMA data_version`` belongs to a connection, so the feed reads through the calling
    thread's connection of ``store`` and must always be polled from that same thread.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version: int | None = None
        self._marks: tuple[int, ...] = ()

    def poll(self) -> tuple[str, ...] | None:
        """``None``: nothing was committed since the last poll (the first poll only takes the
        baseline). Else the ids of sessions that got new rows (the session itself, episodes,
        summaries, a brief), or ``()`` when only other changes were committed (a run finished, a summary
        was superseded or restored, a title changed) and any session may be affected."""
        conn = self.store.db.conn
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return None
        first = self._version is None
        self._version = version
        with self.store.db.read_snapshot():
            marks = self._max_rowids(conn)
            if first:
                self._marks = marks
                return None
            touched: dict[str, None] = {}
            for (table, column), since in zip(_TABLES, self._marks):
                for (sid,) in conn.execute(f"SELECT DISTINCT {column} FROM {table} WHERE rowid > ?", (since,)):
                    touched[sid] = None
            self._marks = marks
        return tuple(touched)

    @staticmethod
    def _max_rowids(conn: sqlite3.Connection) -> tuple[int, ...]:
        return tuple(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0] for table, _ in _TABLES)


@dataclass(slots=True)
class SummaryDelta:
    """What :meth:`LiveSummaries.catch_up` found: active summaries added and removed, or
    ``reloaded`` when the change was more than that and everything was read again."""

    added: list[SummarySpan] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reloaded: bool = False

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.reloaded)


class LiveSummaries:
    """One session's active summaries (text-free spans), which of them are roots, and where the
    leaves leave gaps — kept in step with the file by reading only the summary rows written
    since the last look, for a screen that stays open while a run or a watcher writes.

    Each catch-up is checked against the aggregates the store's triggers keep on the session
    row (active count, tokens at the top, fallbacks); a change that was not only additions —
    a whole-session redo, a revert — disagrees with them and is answered by reading all again.
    """

    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.spans: dict[str, SummarySpan] = {}
        self.roots: set[str] = set()
        self._leaves: list[tuple[int, int]] = []  # active leaves' (first, last), sorted
        self._mark = 0
        self._top_tokens = 0
        self._fallbacks = 0

    def load(self) -> None:
        """Read every active summary of the session (on open, and after a change that was not additive)."""
        with self.store.db.read_snapshot():
            spans, self._mark = self.store.dag.spans(self.session_id), self._max_rowid()
        self.spans = {s.id: s for s in spans}
        self.roots = {s.id for s in spans if s.parent_id is None}
        self._leaves = sorted((s.first_seq, s.last_seq) for s in spans if s.depth == 0)
        self._top_tokens = sum(self.spans[i].tokens for i in self.roots)
        self._fallbacks = sum(s.tier == "fallback" for s in spans)

    def catch_up(self) -> tuple[Session | None, SummaryDelta]:
        """Apply what was written since the last look; returns the session row read with it."""
        with self.store.db.read_snapshot():
            session = self.store.sessions.get(self.session_id)
            rows, top = self.store.dag.spans_since(self.session_id, self._mark)
            adopted = {span.id: self.store.dag.source_ids(span.id) for span, status, _ in rows
                       if status == "active" and span.kind == "condensed"}
            # a revert writes no row, only flips statuses: counts and sizes may agree after it (a
            # deterministic digest redone and reverted), the ids do not
            active = self.store.dag.active_ids(self.session_id) if not rows else None
        self._mark = top
        delta = SummaryDelta()
        for span, status, replaced in rows:
            if replaced is not None and replaced in self.spans:
                self._drop(replaced)
                delta.removed.append(replaced)
            if status == "active" and span.id not in self.spans:
                for child in adopted.get(span.id, ()):
                    self._adopt(child, span.id)
                self._add(span)
                delta.added.append(span)
        if session is not None and (not self._agrees(session) or (active is not None and active != set(self.spans))):
            self.load()
            delta = SummaryDelta(reloaded=True)
        return session, delta

    def unsummarised(self, total: int) -> list[tuple[int, int]]:
        """Seq ranges under no active leaf (as ``Store.unsummarised_ranges``), from memory."""
        gaps: list[tuple[int, int]] = []
        nxt = 0
        for first, last in self._leaves:
            if first > nxt:
                gaps.append((nxt, first - 1))
            nxt = max(nxt, last + 1)
        if nxt <= total - 1:
            gaps.append((nxt, total - 1))
        return gaps

    # ------------------------------------------------------------------ bookkeeping
    def _add(self, span: SummarySpan) -> None:
        self.spans[span.id] = span
        self._fallbacks += span.tier == "fallback"
        if span.parent_id is None:
            self.roots.add(span.id)
            self._top_tokens += span.tokens
        if span.depth == 0:
            insort(self._leaves, (span.first_seq, span.last_seq))

    def _drop(self, summary_id: str) -> None:
        span = self.spans.pop(summary_id)
        self._fallbacks -= span.tier == "fallback"
        if summary_id in self.roots:
            self.roots.discard(summary_id)
            self._top_tokens -= span.tokens
        if span.depth == 0:
            at = bisect_left(self._leaves, (span.first_seq, span.last_seq))
            if at < len(self._leaves) and self._leaves[at] == (span.first_seq, span.last_seq):
                del self._leaves[at]

    def _adopt(self, child: str, parent: str) -> None:
        span = self.spans.get(child)
        if span is None:
            return
        self.spans[child] = replace(span, parent_id=parent)
        if child in self.roots:
            self.roots.discard(child)
            self._top_tokens -= span.tokens

    def _agrees(self, session: Session) -> bool:
        return (len(self.spans), self._top_tokens, self._fallbacks) == (
            session.summaries, session.top_tokens, session.fallbacks)

    def _max_rowid(self) -> int:
        return int(self.store.db.conn.execute("SELECT coalesce(max(rowid), 0) FROM summaries").fetchone()[0])
