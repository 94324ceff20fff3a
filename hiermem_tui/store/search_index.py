"""Keeping the full-text index up to date: as rows are written, in bulk for a backlog, and a scan for readers.

Why not in the triggers: the triggers (schema version 3) record every new episode and
summary in ``search_docs`` whoever writes it — our importers, the compaction runner, or
another tool — but an FTS5 insert inside a trigger runs under a statement savepoint, and
FTS5 flushes its pending terms at every savepoint: one index segment per row, which made
imports about seven times slower. So the FTS rows for the docids above meta
``search_indexed`` are written by one statement, one flush, at a time:

* at the end of each of our write transactions (:func:`index_at_commit`, which the Store
  hooks into ``Db.transaction``): an import of a file, a watch tick's file, a summary's
  commit index what they recorded in the same transaction, so every reader — the MCP server,
  which never writes, among them — finds them as soon as they are there. Skipped when the
  index was already more than :data:`BATCH` rows behind as the transaction began (a file an
  older version wrote): that backlog is :func:`build_search_index`'s;
* by :func:`build_search_index`, a batch at a time with progress: before a search (the
  CLI's ``search``, the TUI's search worker) and when the TUI starts.

The same loop indexes a file upgraded from before schema 3: its rows get their
``search_docs`` rows in batches of their primary key (meta ``search_backfill`` is the cursor),
so tens of seconds of work on a million episodes shows progress and survives a kill (the
next call goes on from the cursors, read inside each batch's transaction). Two processes may
run it at once: each batch is one ``BEGIN IMMEDIATE`` transaction that re-reads the cursors,
and a unique index on ``(ref_id, kind)``, there only while older rows are being recorded,
keeps a row (one the trigger recorded meanwhile) from being recorded twice.

A reader that cannot index (a read-only file, the MCP server) and still meets rows above the
cursor ranks the newest :data:`SCAN_ROWS` of them in a scratch FTS5 table in memory
(:func:`scan_unindexed`), so a search finds them rather than answering nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
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
SCAN_ROWS = 20_000
"""At most this many unindexed rows, the newest, are searched by a reader's scan."""
TOKENIZE = "unicode61 remove_diacritics 2"
"""The index's tokenizer, as schema version 3 creates ``search_index`` (the scan's table uses it too)."""

_DEDUP_INDEX = "search_docs_backfill"
_PHASES = ("episode", "summary")
_TABLES = {"episode": "episodes", "summary": "summaries"}
_DOCS = """
    SELECT d.docid, coalesce(e.content, s.content || coalesce(char(10) || s.keywords, '')), 's' || hex(d.session_id)
    {more} FROM search_docs d
    LEFT JOIN episodes e ON d.kind = 'episode' AND e.id = d.ref_id
    LEFT JOIN summaries s ON d.kind = 'summary' AND s.id = d.ref_id
    WHERE d.docid > ? AND d.docid <= ? ORDER BY d.docid
"""
_INDEX_RANGE = "INSERT INTO search_index (rowid, text, sess)" + _DOCS.format(more="")
_SCAN_RANGE = _DOCS.format(more=", d.kind, d.ref_id")

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


def index_at_commit(conn: sqlite3.Connection) -> Callable[[sqlite3.Connection], None] | None:
    """Called as one of our write transactions begins (``Db.write_hooks``): the step that, just before
    it commits, indexes every row recorded above the index's cursor — the rows the transaction wrote,
    and a backlog of at most :data:`BATCH` rows it found. None when the backlog is bigger: that is
    :func:`build_search_index`'s, in batches with progress, and this transaction's rows wait with it.
    A transaction that moves the cursor itself (a batch of that build, the doctor's rebuild) is left
    to do so. An index too damaged to take the rows (``doctor --fix`` rebuilds it) never costs the
    write: its rows are kept, unindexed, as a reader's scan and the next build find them."""
    begun = _indexed(conn)
    if _last_doc(conn) - begun > BATCH:
        return None

    def index_recorded(conn: sqlite3.Connection) -> None:  # one statement: one FTS5 flush
        done, last = _indexed(conn), _last_doc(conn)
        if done == begun and last > done:
            try:
                conn.execute(_INDEX_RANGE, (done, last))
            except sqlite3.DatabaseError:
                if not conn.in_transaction:  # SQLite gave up the whole transaction: the write failed
                    raise
                return  # a damaged index (the doctor's `search_index`): the rows are written, and wait
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(last), INDEXED_KEY))

    return index_recorded


@dataclass(frozen=True, slots=True)
class Scan:
    """What :func:`scan_unindexed` found among the rows above the index's cursor."""

    hits: list[tuple[str, str, float]]
    """``(kind, ref_id, rank)`` of the matching rows, best first (bm25 over the rows scanned)."""
    scanned: int
    """Rows searched this way."""


def scan_unindexed(conn: sqlite3.Connection, match: str, *, rows: int | None = None) -> Scan:
    """Search the newest ``rows`` (default :data:`SCAN_ROWS`) rows above the index's cursor for the FTS5
    expression ``match``: their text goes into a scratch FTS5 table in memory (the index's tokenizer and
    ranking), so they match exactly as they will once indexed. For a reader that cannot index; it writes
    nothing to the file. Raises ``sqlite3.OperationalError`` for an expression FTS5 cannot read, as the
    index does."""
    done, last = _indexed(conn), _last_doc(conn)
    first = max(done, last - (SCAN_ROWS if rows is None else rows))
    if last <= first:
        return Scan([], 0)
    refs: dict[int, tuple[str, str]] = {}

    def texts() -> Iterator[tuple[int, str | None, str]]:
        for docid, text, sess, kind, ref_id in conn.execute(_SCAN_RANGE, (first, last)):
            refs[docid] = (kind, ref_id)
            yield docid, text, sess

    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(f"CREATE VIRTUAL TABLE scan USING fts5 (text, sess, tokenize = '{TOKENIZE}')")
        scratch.execute("INSERT INTO scan (scan, rank) VALUES ('rank', 'bm25(1.0, 0.0)')")
        scratch.executemany("INSERT INTO scan (rowid, text, sess) VALUES (?, ?, ?)", texts())
        ranked = scratch.execute("SELECT rowid, rank FROM scan WHERE scan MATCH ? ORDER BY rank", (match,)).fetchall()
    finally:
        scratch.close()
    return Scan([(*refs[docid], rank) for docid, rank in ranked], last - first)


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
