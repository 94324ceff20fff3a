"""Building the full-text index for rows that were in the file before schema 3.

Why a separate step and not the migration: indexing a million episodes takes tens of
seconds, and a migration is one silent transaction. The migration only creates the index
and its triggers (so everything written from then on, by us or by another tool, is indexed
as it lands) and leaves a cursor in ``meta``; :func:`build_search_index` then indexes the
older rows in batches of their primary key, one short transaction each, reporting progress.
It is resumable (killed mid-way, the next call goes on from the cursor, read inside each
batch's transaction) and safe to run from two processes at once: a row is indexed only when
its ``search_docs`` row is new (``UNIQUE (ref_id, kind)``), and the trigger-indexed rows are
skipped the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Store

CURSOR_KEY = "search_backfill"
BATCH = 20_000
"""Rows per transaction: ~0.3 s each on a 2-core machine, so other writers wait little."""

_PHASES = ("episode", "summary")
_TABLES = {"episode": "episodes", "summary": "summaries"}

Progress = Callable[[int, int], None]
"""``on_progress(done, total)``: rows indexed so far and rows to index in all."""


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """How far the search index is: ``pending`` while older rows are still being indexed."""

    pending: bool
    done: int
    total: int

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def session_token(session_id: str) -> str:
    """The one token the ``sess`` column holds for a session (what the triggers write in SQL)."""
    return "s" + session_id.encode("utf-8").hex()


def _cursor(store: Store) -> str | None:
    row = store.conn.execute("SELECT value FROM meta WHERE key = ?", (CURSOR_KEY,)).fetchone()
    return row[0] if row else None


def search_index_status(store: Store) -> IndexStatus:
    """Cheap when the index is complete (one meta lookup); counts rows while it is not."""
    if _cursor(store) is None:
        return IndexStatus(False, 0, 0)
    return IndexStatus(True, *_counts(store))


def _counts(store: Store) -> tuple[int, int]:
    conn = store.conn
    done = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
    total = conn.execute(
        "SELECT (SELECT coalesce(sum(episode_count), 0) FROM sessions) + (SELECT count(*) FROM summaries)"
    ).fetchone()[0]
    return done, max(total, done)


def build_search_index(store: Store, on_progress: Progress | None = None, *, batch: int = BATCH) -> int:
    """Index every row the migration found in the file; returns how many this call indexed.

    A no-op on a read-only store or when nothing is pending. ``on_progress`` is called once
    before the first batch and after each one.
    """
    if store.readonly or _cursor(store) is None:
        return 0
    done, total = _counts(store)
    if on_progress is not None:
        on_progress(done, total)
    indexed = 0
    while True:
        with store.transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (CURSOR_KEY,)).fetchone()
            if row is None:
                break
            phase, _, after = row[0].partition(":")
            phase = phase if phase in _PHASES else _PHASES[0]
            table = _TABLES[phase]
            last = conn.execute(
                f"SELECT max(id) FROM (SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT ?)", (after, batch)
            ).fetchone()[0]
            if last is None:
                if phase == _PHASES[-1]:
                    conn.execute("DELETE FROM meta WHERE key = ?", (CURSOR_KEY,))
                else:
                    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{_PHASES[-1]}:", CURSOR_KEY))
                continue
            before = conn.execute("SELECT coalesce(max(docid), 0) FROM search_docs").fetchone()[0]
            conn.execute(
                f"INSERT INTO search_docs (kind, ref_id, session_id) SELECT ?, id, session_id FROM {table} "
                "WHERE id > ? AND id <= ? ORDER BY id ON CONFLICT DO NOTHING",
                (phase, after, last),
            )
            added = conn.execute(
                f"INSERT INTO search_index (rowid, text, sess) SELECT d.docid, t.content, 's' || hex(t.session_id) "
                f"FROM search_docs d JOIN {table} t ON t.id = d.ref_id WHERE d.docid > ? ORDER BY d.docid",
                (before,),
            ).rowcount
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (f"{phase}:{last}", CURSOR_KEY))
        indexed += added
        done += added
        if on_progress is not None:
            on_progress(done, max(total, done))
    return indexed
