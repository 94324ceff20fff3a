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
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from ..tokens import Tokenizer
from .dag import DagMixin
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
from .models import Episode, Session, iso, parse_iso, utcnow
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
_EPISODE_COLS = "id, session_id, seq, role, content, created_at, tokens, synthetic_time, metadata"


@dataclass(slots=True)
class NewEpisode:
    """An episode to append. ``key`` identifies it within its session across re-imports
    (the source's message id, or its position when the source has none)."""

    key: str
    role: str
    content: str
    created_at: datetime | None
    metadata: dict[str, Any] | None = None


@dataclass(slots=True)
class AppendResult:
    session_id: str
    created: bool
    appended: int
    already_present: int


def _shift(when: datetime, seconds: int) -> datetime:
    """``when`` moved by whole seconds, pinned at the ends of datetime's range instead of overflowing."""
    try:
        return when + timedelta(seconds=seconds)
    except OverflowError:
        return when


def _session(row: sqlite3.Row | tuple) -> Session:
    meta = row[16]
    return Session(
        id=row[0], title=row[1], source=row[2], source_ref=row[3], created_at=row[4], updated_at=row[5],
        episodes=row[6], tokens=row[7], summaries=row[8], max_depth=row[9], covered_episodes=row[10],
        covered_tokens=row[11], fallbacks=row[12], top_tokens=row[13], last_summarized_seq=row[14],
        last_summary_at=row[15], metadata=json.loads(meta) if meta else {}, min_retention=row[17],
    )


def _episode(row: tuple) -> Episode:
    return Episode(
        id=row[0], session_id=row[1], seq=row[2], role=row[3], content=row[4], created_at=row[5],
        tokens=row[6] or 0, synthetic_time=bool(row[7]), metadata=json.loads(row[8]) if row[8] else None,
    )


class Store(DagMixin, RunsMixin, MarksMixin):
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

    # ------------------------------------------------------------------ episodes
    def append_episodes(
        self, session_id: str, episodes: Sequence[NewEpisode], tokens: Sequence[int] | None = None
    ) -> tuple[int, int]:
        """Append the episodes not already stored (by key), in order, with seq, tokens and times.

        Returns (appended, already_present). Idempotent: a second call with the same input
        appends nothing; a grown source appends only its new tail. Missing timestamps are
        filled deterministically (previous + 1 s) and flagged ``synthetic_time``.
        ``tokens``, if given, are the precomputed counts of ``episodes`` (same order).
        """
        if tokens is not None and len(tokens) != len(episodes):
            raise ValueError("tokens must align with episodes")
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT episode_count, created_at FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"no session {session_id!r}")
            count = row[0]
            known: set[str] = set()
            prev: datetime | None = None
            if count:
                known = {r[0] for r in conn.execute("SELECT id FROM episodes WHERE session_id = ?", (session_id,))}
                last = conn.execute(
                    "SELECT created_at FROM episodes WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (session_id,)
                ).fetchone()
                prev = parse_iso(last[0]) if last else None
            fresh: list[NewEpisode] = []
            fresh_tokens: list[int] = []
            for i, ep in enumerate(episodes):
                eid = f"{session_id}/{ep.key}"
                if eid in known:
                    continue
                known.add(eid)
                fresh.append(ep)
                if tokens is not None:
                    fresh_tokens.append(tokens[i])
            if not fresh:
                return 0, len(episodes)
            if prev is None:
                prev = _shift(parse_iso(row[1]), -1)
            if tokens is None:
                fresh_tokens = self.tokenizer.count_many([e.content for e in fresh])
            rows = []
            seq = count
            for ep, n in zip(fresh, fresh_tokens):
                synthetic = ep.created_at is None
                when = _shift(prev, 1) if synthetic else ep.created_at
                prev = when
                rows.append((
                    f"{session_id}/{ep.key}", session_id, seq, ep.role, ep.content, iso(when), n, int(synthetic),
                    json.dumps(ep.metadata, ensure_ascii=False, sort_keys=True) if ep.metadata else None,
                ))
                seq += 1
            conn.executemany(
                "INSERT INTO episodes (id, session_id, seq, role, content, created_at, tokens, synthetic_time, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return len(rows), len(episodes) - len(rows)

    def fill_missing_tokens(self, *, batch: int = 2000) -> int:
        """Count tokens for episodes another tool wrote without them (tokens IS NULL)."""
        if self.readonly:
            return 0
        total = 0
        while True:
            rows = self.conn.execute(
                "SELECT id, content FROM episodes WHERE tokens IS NULL LIMIT ?", (batch,)
            ).fetchall()
            if not rows:
                return total
            counts = self.tokenizer.count_many([r[1] for r in rows])
            with self.transaction() as conn:
                conn.executemany("UPDATE episodes SET tokens = ? WHERE id = ?", [(n, r[0]) for r, n in zip(rows, counts)])
            total += len(rows)

    def episodes_page(self, session_id: str, *, after_seq: int = -1, limit: int = 200) -> list[Episode]:
        """Episodes with seq > after_seq, ascending (keyset paging)."""
        rows = self.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after_seq, limit),
        )
        return [_episode(r) for r in rows]

    def episodes_before(self, session_id: str, *, before_seq: int, limit: int = 200) -> list[Episode]:
        """Episodes with seq < before_seq, returned ascending (paging backwards)."""
        rows = self.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
            (session_id, before_seq, limit),
        ).fetchall()
        return [_episode(r) for r in reversed(rows)]

    def episode_range(self, session_id: str, first_seq: int, last_seq: int) -> list[Episode]:
        rows = self.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last_seq),
        )
        return [_episode(r) for r in rows]

    def iter_episodes(self, session_id: str, *, batch: int = 1000) -> Iterator[Episode]:
        after = -1
        while True:
            page = self.episodes_page(session_id, after_seq=after, limit=batch)
            if not page:
                return
            yield from page
            after = page[-1].seq

    def episode_at(self, session_id: str, seq: int) -> Episode | None:
        row = self.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq = ?", (session_id, seq)
        ).fetchone()
        return _episode(row) if row else None

    def episode_texts(self, episode_ids: Iterable[str], *, batch: int = 500) -> dict[str, str]:
        """Content of the given episodes that exist, by id: lets an import tell a message the
        source changed from one it already holds, reading only the episodes it names."""
        wanted = list(dict.fromkeys(episode_ids))
        out: dict[str, str] = {}
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            marks = ", ".join("?" * len(chunk))
            out.update(self.conn.execute(f"SELECT id, content FROM episodes WHERE id IN ({marks})", chunk).fetchall())
        return out

    def episode_stats(self, session_id: str, first_seq: int, last_seq: int) -> tuple[int, str, str]:
        """(tokens, min created_at, max created_at) of a seq range, from the unique index."""
        row = self.conn.execute(
            "SELECT coalesce(sum(tokens), 0), min(created_at), max(created_at), count(*) FROM episodes "
            "WHERE session_id = ? AND seq BETWEEN ? AND ?",
            (session_id, first_seq, last_seq),
        ).fetchone()
        if row[3] != last_seq - first_seq + 1:
            raise StoreError(f"episodes #{first_seq}–{last_seq} of {session_id} are not all present")
        return row[0], row[1], row[2]

    def runner_identity(self) -> tuple[int, str]:
        return os.getpid(), socket.gethostname()

    def now(self) -> str:
        return utcnow()
