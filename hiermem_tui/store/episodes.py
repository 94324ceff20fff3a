"""Episodes: appending a session's messages idempotently, and reading them back in pages.

Episodes are the one table that grows without bound, and every read here is a keyset page or
a range on the ``(session_id, seq)`` index: keeping these queries together keeps that rule in
one place. Episodes are never changed nor deleted (triggers refuse it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .db import Db, StoreError
from .models import Episode, iso, parse_iso

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


def _episode(row: Sequence[Any]) -> Episode:
    return Episode(
        id=row[0], session_id=row[1], seq=row[2], role=row[3], content=row[4], created_at=row[5],
        tokens=row[6] or 0, synthetic_time=bool(row[7]), metadata=json.loads(row[8]) if row[8] else None,
    )


class Episodes:
    """The episodes table: appending, and reading back by page, range or position."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def append(
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
        with self.db.transaction() as conn:
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
            when: datetime = _shift(parse_iso(row[1]), -1) if prev is None else prev
            if tokens is None:
                fresh_tokens = self.db.tokenizer.count_many([e.content for e in fresh])
            rows = []
            seq = count
            for ep, n in zip(fresh, fresh_tokens):
                synthetic = ep.created_at is None
                when = _shift(when, 1) if ep.created_at is None else ep.created_at
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
        if self.db.readonly:
            return 0
        total = 0
        while True:
            rows = self.db.conn.execute(
                "SELECT id, content FROM episodes WHERE tokens IS NULL LIMIT ?", (batch,)
            ).fetchall()
            if not rows:
                return total
            counts = self.db.tokenizer.count_many([r[1] for r in rows])
            with self.db.transaction() as conn:
                conn.executemany("UPDATE episodes SET tokens = ? WHERE id = ?", [(n, r[0]) for r, n in zip(rows, counts)])
            total += len(rows)

    def page(self, session_id: str, *, after_seq: int = -1, limit: int = 200) -> list[Episode]:
        """Episodes with seq > after_seq, ascending (keyset paging)."""
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after_seq, limit),
        )
        return [_episode(r) for r in rows]

    def before(self, session_id: str, *, before_seq: int, limit: int = 200) -> list[Episode]:
        """Episodes with seq < before_seq, returned ascending (paging backwards)."""
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
            (session_id, before_seq, limit),
        ).fetchall()
        return [_episode(r) for r in reversed(rows)]

    def range(self, session_id: str, first_seq: int, last_seq: int) -> list[Episode]:
        """Episodes ``first_seq``..``last_seq`` of a session, in order."""
        rows = self.db.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last_seq),
        )
        return [_episode(r) for r in rows]

    def each(self, session_id: str, *, batch: int = 1000) -> Iterator[Episode]:
        """Every episode of a session, in order, a page at a time."""
        after = -1
        while True:
            page = self.page(session_id, after_seq=after, limit=batch)
            if not page:
                return
            yield from page
            after = page[-1].seq

    def at(self, session_id: str, seq: int) -> Episode | None:
        row = self.db.conn.execute(
            f"SELECT {_EPISODE_COLS} FROM episodes WHERE session_id = ? AND seq = ?", (session_id, seq)
        ).fetchone()
        return _episode(row) if row else None

    def get(self, episode_id: str) -> Episode | None:
        """One episode by id (None if there is no such episode)."""
        row = self.db.conn.execute(f"SELECT {_EPISODE_COLS} FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return _episode(row) if row else None

    def texts(self, episode_ids: Iterable[str], *, batch: int = 500) -> dict[str, str]:
        """Content of the given episodes that exist, by id: lets an import tell a message the
        source changed from one it already holds, reading only the episodes it names."""
        return self._by_id("content", episode_ids, batch)

    def seqs(self, episode_ids: Iterable[str], *, batch: int = 500) -> dict[str, int]:
        """``{id: seq}`` of the given episodes that exist: where another tool's summary, which names
        the messages it covers, falls in a session."""
        return self._by_id("seq", episode_ids, batch)

    def _by_id(self, column: str, episode_ids: Iterable[str], batch: int) -> dict[str, Any]:
        """``{id: column}`` of the given episodes that exist, a batch of ids per query."""
        wanted = list(dict.fromkeys(episode_ids))
        out: dict[str, Any] = {}
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            marks = ", ".join("?" * len(chunk))
            out.update(self.db.conn.execute(f"SELECT id, {column} FROM episodes WHERE id IN ({marks})", chunk).fetchall())
        return out

    def content(self, episode_id: str) -> str | None:
        """One episode's text by id (None if there is no such episode)."""
        row = self.db.conn.execute("SELECT content FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return str(row[0]) if row else None

    def stats(self, session_id: str, first_seq: int, last_seq: int, conn: sqlite3.Connection | None = None
              ) -> tuple[int, str, str]:
        """(tokens, min created_at, max created_at) of a seq range, from the unique index
        (``conn``: inside a caller's transaction)."""
        row = (conn or self.db.conn).execute(
            "SELECT coalesce(sum(tokens), 0), min(created_at), max(created_at), count(*) FROM episodes "
            "WHERE session_id = ? AND seq BETWEEN ? AND ?",
            (session_id, first_seq, last_seq),
        ).fetchone()
        if row[3] != last_seq - first_seq + 1:
            raise StoreError(f"episodes #{first_seq}–{last_seq} of {session_id} are not all present")
        return row[0], row[1], row[2]

    def token_list(self, session_id: str, first_seq: int, last_seq: int) -> list[int]:
        """The token counts of a range, in seq order (seqs have no gaps, so the list's index is
        ``seq - first_seq``), without the text: what the planner sizes chunks with. An episode
        another tool wrote without a count is estimated at 4 characters a token. A plain list, not a
        pair per episode: planning the whole 1M-episode file reads ~860k of them (issue 20)."""
        return [row[0] for row in self.db.conn.execute(
            "SELECT CASE WHEN tokens IS NULL THEN length(content) / 4 ELSE tokens END "
            "FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last_seq),
        )]

    def ids(self, session_id: str, first_seq: int, last_seq: int, conn: sqlite3.Connection | None = None
            ) -> list[str]:
        """Ids of a range, in order (a leaf's source edges)."""
        return [r[0] for r in (conn or self.db.conn).execute(
            "SELECT id FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last_seq),
        )]

    def headers(self, session_id: str, after_seq: int, last_seq: int, limit: int) -> list[tuple[str, int, int, str, str]]:
        """``(id, seq, tokens, created_at, role)`` of up to ``limit`` episodes after ``after_seq``, up
        to ``last_seq``: what a context listing needs, without the text."""
        return [tuple(r) for r in self.db.conn.execute(
            "SELECT id, seq, coalesce(tokens, 0), created_at, role FROM episodes "
            "WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            (session_id, after_seq, last_seq, limit),
        )]
