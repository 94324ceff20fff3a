"""The Store: one SQLite file of sessions, episodes, summaries, their edges, and runs.

Reads page with keyset queries (never the whole file in memory); every write happens in
a short ``BEGIN IMMEDIATE`` transaction so a concurrent process waits on the busy timeout
instead of failing, and a crash leaves either all of a write or none of it.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from ..tokens import Tokenizer
from .dag import DagMixin
from .episodes import EpisodesMixin
from .db import (
    ConnectionPool,
    DamagedDatabase,
    ReadOnlyError,
    StoreError,
    check_schema,
    connect,
    inspect_file,
    migrate,
)
from .marks import MarksMixin
from .runs import RunsMixin
from .models import Session, iso, utcnow
from .schema import SCHEMA_VERSION

SYNTHETIC_BASE = datetime(2000, 1, 1, tzinfo=timezone.utc)
SESSION_SORTS = {
    "updated": "updated_at",
    "created": "created_at",
    "title": "title COLLATE NOCASE",
    "episodes": "episode_count",
    "tokens": "token_count",
    "summaries": "summary_count",
    "depth": "coalesce(max_depth, -1)",
    "coverage": "(CASE WHEN episode_count > 0 THEN covered_episodes * 1.0 / episode_count ELSE 0 END)",
    "fallbacks": "fallback_count",
    "fidelity": "coalesce(min_retention, 2.0)",
    "source": "source",
}
_SESSION_COLS = (
    "id, title, source, source_ref, created_at, updated_at, episode_count, token_count, summary_count, "
    "max_depth, covered_episodes, covered_tokens, fallback_count, top_tokens, last_summarized_seq, "
    "last_summary_at, metadata, min_retention"
)


def _session(row: sqlite3.Row | tuple) -> Session:
    meta = row[16]
    return Session(
        id=row[0], title=row[1], source=row[2], source_ref=row[3], created_at=row[4], updated_at=row[5],
        episodes=row[6], tokens=row[7], summaries=row[8], max_depth=row[9], covered_episodes=row[10],
        covered_tokens=row[11], fallbacks=row[12], top_tokens=row[13], last_summarized_seq=row[14],
        last_summary_at=row[15], metadata=json.loads(meta) if meta else {}, min_retention=row[17],
    )


class Store(EpisodesMixin, DagMixin, RunsMixin, MarksMixin):
    """A hiermem-tui database. Build with :meth:`open`; pass it to whatever needs it."""

    def __init__(self, path: Path, readonly: bool, tokenizer: Tokenizer | None = None) -> None:
        self.path = path
        self.readonly = readonly
        self._pool = ConnectionPool(path, readonly)
        self._tokenizer = tokenizer
        self._tx_depth: dict[int, int] = {}

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        create: bool = True,
        tokenizer: Tokenizer | None = None,
    ) -> Store:
        """Open (or create) a database, refusing anything that is not ours without touching it.

        A file we cannot write opens read-only for browsing. Runs left ``running`` by a
        process that no longer exists are marked ``interrupted``.
        """
        p = Path(path).expanduser()
        kind = inspect_file(p)
        if kind == "new" and not create:
            raise StoreError(f"{p} does not exist")
        if kind == "sqlite" and not readonly and (not os.access(p, os.W_OK) or not p.stat().st_mode & 0o222):
            # no write bit for anyone is the user saying "read-only", even to root
            readonly = True
        if kind == "sqlite" and not readonly and not os.access(p.parent, os.W_OK):
            readonly = True  # SQLite needs to create -wal/-journal files next to it
        if kind == "new" and readonly:
            raise StoreError(f"{p} does not exist (and read-only mode cannot create it)")
        try:
            version = 0
            if kind == "sqlite":
                # Decide whether the file is ours with a read-only look that leaves nothing
                # behind (no -wal/-shm) — a refused file must stay exactly as it was.
                probe = connect(p, readonly=True, probe=True)
                try:
                    version = check_schema(probe, p)
                finally:
                    probe.close()
            if not readonly:
                conn = connect(p, readonly=False)
                try:
                    if version < SCHEMA_VERSION:
                        conn.execute("PRAGMA journal_mode = WAL")
                        migrate(conn, version)
                    elif conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        conn.execute("PRAGMA journal_mode = WAL")
                finally:
                    conn.close()
            elif version < SCHEMA_VERSION:
                raise StoreError(f"{p} is read-only and needs an upgrade (schema {version}) before it can be read")
        except sqlite3.DatabaseError as exc:
            raise DamagedDatabase(f"{p} is damaged or not a database ({exc})") from None
        except UnicodeDecodeError:
            raise DamagedDatabase(f"{p} is damaged: its schema is not valid text") from None
        store = cls(p, readonly, tokenizer)
        if not readonly:
            store.mark_interrupted_runs()
        return store

    def close(self) -> None:
        self._pool.close()

    def release_thread(self) -> None:
        """Close the calling thread's connection; the thread may open a new one later."""
        self._pool.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        return self._pool.get()

    @property
    def db(self) -> sqlite_utils.Database:
        """A sqlite-utils view of this thread's connection, for introspection and ad-hoc reads."""
        return sqlite_utils.Database(self.conn)

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer()
        return self._tokenizer

    def _require_writable(self) -> None:
        if self.readonly:
            raise ReadOnlyError(f"{self.path} is open read-only: browsing works, changes are refused")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested uses join the outer one."""
        self._require_writable()
        conn = self.conn
        key = id(conn)
        depth = self._tx_depth.get(key, 0)
        if depth == 0:
            conn.execute("BEGIN IMMEDIATE")
        self._tx_depth[key] = depth + 1
        try:
            yield conn
        except BaseException:
            self._tx_depth[key] = depth
            if depth == 0:
                conn.execute("ROLLBACK")
            raise
        else:
            self._tx_depth[key] = depth
            if depth == 0:
                conn.execute("COMMIT")

    @contextmanager
    def read_snapshot(self) -> Iterator[sqlite3.Connection]:
        """Reads that must agree with each other (an export) see one moment of the file,
        even while another process writes: one read transaction around all of them."""
        conn = self.conn
        key = id(conn)
        if self._tx_depth.get(key, 0) or conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        self._tx_depth[key] = 1
        try:
            yield conn
        finally:
            self._tx_depth[key] = 0
            conn.execute("COMMIT")

    # ------------------------------------------------------------------ sessions
    def get_session(self, session_id: str) -> Session | None:
        row = self.conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _session(row) if row else None

    def count_sessions(self, text: str | None = None) -> int:
        where, params = self._session_filter(text)
        return self.conn.execute(f"SELECT count(*) FROM sessions {where}", params).fetchone()[0]

    @staticmethod
    def _session_filter(text: str | None) -> tuple[str, list[Any]]:
        if not text:
            return "", []
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return "WHERE (title LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' OR source LIKE ? ESCAPE '\\')", [like, like, like]

    def list_sessions(
        self,
        *,
        sort: str = "updated",
        descending: bool = True,
        text: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Session]:
        """A page of sessions in the given order (ties broken by id)."""
        expr = SESSION_SORTS.get(sort)
        if expr is None:
            raise ValueError(f"unknown sort {sort!r}; choose from {', '.join(SESSION_SORTS)}")
        direction = "DESC" if descending else "ASC"
        where, params = self._session_filter(text)
        sql = f"SELECT {_SESSION_COLS} FROM sessions {where} ORDER BY {expr} {direction}, id {direction}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params = [*params, limit, offset]
        return [_session(r) for r in self.conn.execute(sql, params)]

    def session_position(
        self, session_id: str, *, sort: str = "updated", descending: bool = True, text: str | None = None
    ) -> int | None:
        """Where ``session_id`` stands in :meth:`list_sessions` with the same order and filter
        (0-based), or None when it is not listed: lets a list keep its cursor on a session while
        others move around it. One count over the sort's index where it has one."""
        expr = SESSION_SORTS.get(sort)
        if expr is None:
            raise ValueError(f"unknown sort {sort!r}; choose from {', '.join(SESSION_SORTS)}")
        where, params = self._session_filter(text)
        row = self.conn.execute(
            f"SELECT {expr} FROM sessions {where} {'AND' if where else 'WHERE'} id = ?", [*params, session_id]
        ).fetchone()
        if row is None:
            return None
        op = ">" if descending else "<"
        ahead = f"({expr} {op} ? OR ({expr} = ? AND id {op} ?))"
        sql = f"SELECT count(*) FROM sessions {where} {'AND' if where else 'WHERE'} {ahead}"
        return int(self.conn.execute(sql, [*params, row[0], row[0], session_id]).fetchone()[0])

    def iter_sessions(self, *, batch: int = 1000) -> Iterator[Session]:
        """Every session, by id, paged with a keyset so memory stays flat."""
        after = ""
        while True:
            rows = self.conn.execute(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after, batch)
            ).fetchall()
            if not rows:
                return
            for r in rows:
                yield _session(r)
            after = rows[-1][0]

    def upsert_session(
        self,
        session_id: str,
        *,
        title: str,
        source: str,
        source_ref: str | None = None,
        created_at: datetime | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """Create the session if new (returns True); otherwise refresh its title/metadata."""
        with self.transaction() as conn:
            exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            meta = json.dumps(metadata or {}, ensure_ascii=False, sort_keys=True)
            if exists:
                conn.execute(
                    "UPDATE sessions SET title = CASE WHEN ? <> '' THEN ? ELSE title END, metadata = ? WHERE id = ?",
                    (title, title, meta, session_id),
                )
                return False
            stamp = iso(created_at) if created_at else iso(SYNTHETIC_BASE)
            conn.execute(
                "INSERT INTO sessions (id, title, source, source_ref, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, title, source, source_ref, stamp, stamp, meta),
            )
            return True

    def runner_identity(self) -> tuple[int, str]:
        return os.getpid(), socket.gethostname()

    def now(self) -> str:
        return utcnow()
