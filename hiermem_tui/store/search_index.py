"""Bringing the full-text index up to date: in bulk, in short resumable batches, with progress.

Why not in the triggers: the triggers (schema version 3) record every new episode and
summary in ``search_docs`` whoever writes it — our importers, the compaction runner, or
another tool — but an FTS5 insert inside a trigger runs under a statement savepoint, and
FTS5 flushes its pending terms at every savepoint: one index segment per row, which made
imports about seven times slower. So the FTS rows are written here, a batch of ``search_docs``
rows at a time (``docid > meta 'search_indexed'``), one flush per batch — before a search
(the CLI's ``search``, the TUI's search worker) and when the TUI starts.

The same loop indexes a file upgraded from before schema 3: its rows get their
``search_docs`` rows in batches of their primary key (meta ``search_backfill`` is the cursor),
so tens of seconds of work on a million episodes shows progress and survives a kill (the
next call goes on from the cursors, read inside each batch's transaction). Two processes may
run it at once: each batch is one ``BEGIN IMMEDIATE`` transaction that re-reads the cursors,
and a unique index on ``(ref_id, kind)``, there only while older rows are being recorded,
keeps a row (one the trigger recorded meanwhile) from being recorded twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import sqlite3

    from .db import Db


class Indexable(Protocol):
    """What the index build needs of its owner: the file and whether it may write (a Store is one;
    so is the doctor's fixer, which holds only the Db)."""

    @property
    def db(self) -> Db: ...

    @property
    def readonly(self) -> bool: ...

BACKFILL_KEY = "search_backfill"
INDEXED_KEY = "search_indexed"
BATCH = 20_000
"""Rows per transaction: ~0.3 s each on a 2-core machine, so other writers wait little."""

_DEDUP_INDEX = "search_docs_backfill"
_PHASES = ("episode", "summary")
_TABLES = {"episode": "episodes", "summary": "summaries"}
_INDEX_RANGE = """
    INSERT INTO search_index (rowid, text, sess)
    SELECT d.docid, coalesce(e.content, s.content || coalesce(char(10) || s.keywords, '')), 's' || hex(d.session_id)
    FROM search_docs d
    LEFT JOIN episodes e ON d.kind = 'episode' AND e.id = d.ref_id
    LEFT JOIN summaries s ON d.kind = 'summary' AND s.id = d.ref_id
    WHERE d.docid > ? AND d.docid <= ? ORDER BY d.docid
"""

Progress = Callable[[int, int], None]
"""``on_progress(done, total)``: rows in the index so far, and rows the file holds."""


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """How far the search index is: ``pending`` while some rows are not searchable yet."""

    pending: bool
    done: int
    total: int

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    @property
    def missing(self) -> int:
        return max(0, self.total - self.done)


def session_token(session_id: str) -> str:
    """The one token the ``sess`` column holds for a session (what the SQL writes as 's' || hex(id))."""
    return "s" + session_id.encode("utf-8").hex()


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    """One value of the ``meta`` table (the index's progress, the doctor's last record), None if unset."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None


def _indexed(conn: sqlite3.Connection) -> int:
    return int(meta_value(conn, INDEXED_KEY) or 0)


def _last_doc(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(docid), 0) FROM search_docs").fetchone()[0])


def search_index_status(store: Indexable) -> IndexStatus:
    """Three indexed lookups (no counting): cheap enough to ask before every search."""
    conn = store.db.conn
    done, last = _indexed(conn), _last_doc(conn)
    backfill = meta_value(conn, BACKFILL_KEY) is not None
    if not backfill and done >= last:
        return IndexStatus(False, done, done)
    total = last
    if backfill:  # rows without a search_docs row yet: what the file holds minus what is recorded
        total = max(last, conn.execute(
            "SELECT (SELECT coalesce(sum(episode_count), 0) FROM sessions) + (SELECT count(*) FROM summaries)"
        ).fetchone()[0])
    return IndexStatus(True, done, total)


def build_search_index(store: Indexable, on_progress: Progress | None = None, *, batch: int = BATCH) -> int:
    """Make every episode and summary searchable; returns how many rows this call indexed.

    A no-op (three lookups) when the index is up to date, and on a read-only store.
    ``on_progress`` is called before the first batch and after each one.
    """
    if store.readonly:
        return 0
    status = search_index_status(store)
    if not status.pending:
        return 0
    if on_progress is not None:
        on_progress(status.done, status.total)
    indexed = 0
    total = status.total
    while True:
        with store.db.transaction() as conn:
            recorded = _record_older_rows(conn, batch)
            done = _indexed(conn)
            upto = min(_last_doc(conn), done + batch)
            if upto > done:
                conn.execute(_INDEX_RANGE, (done, upto))
                conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(upto), INDEXED_KEY))
        indexed += upto - done
        total = max(total, upto)
        if on_progress is not None:
            on_progress(upto, total)
        if upto <= done and not recorded:
            return indexed


def _record_older_rows(conn: sqlite3.Connection, batch: int) -> bool:
    """Give the next ``batch`` rows that predate schema 3 their search_docs rows; False when none are left."""
    cursor = meta_value(conn, BACKFILL_KEY)
    if cursor is None:
        return False
    conn.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {_DEDUP_INDEX} ON search_docs (ref_id, kind)")
    phase, _, after = cursor.partition(":")
    phase = phase if phase in _PHASES else _PHASES[0]
    table = _TABLES[phase]
    last = conn.execute(
        f"SELECT max(id) FROM (SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT ?)", (after, batch)
    ).fetchone()[0]
    if last is None:
        if phase == _PHASES[-1]:
            conn.execute("DELETE FROM meta WHERE key = ?", (BACKFILL_KEY,))
            conn.execute(f"DROP INDEX {_DEDUP_INDEX}")  # from now on only the triggers record rows
        else:
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{_PHASES[-1]}:", BACKFILL_KEY))
        return True
    conn.execute(
        f"INSERT INTO search_docs (kind, ref_id, session_id) SELECT ?, id, session_id FROM {table} "
        "WHERE id > ? AND id <= ? ORDER BY id ON CONFLICT DO NOTHING",
        (phase, after, last),
    )
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{phase}:{last}", BACKFILL_KEY))
    return True
