"""Sessions: one row per conversation, with the aggregates the lists show (kept by triggers).

Every list is a page in SQL (sort, filter, ``LIMIT``/``OFFSET``), or a keyset walk by id, so
10k sessions never sit in memory and the sessions table never counts episodes itself.

A session whose source kept no times (``Session.times_known`` false: oterm, ShareGPT, some JSONL)
has no place in an order by time: its ``created_at`` is the store's invented one and its
``updated_at`` is when it was imported, not when anyone last wrote in it. So the time orders
(:data:`TIME_SORTS`) list every session with real times first, in the order asked for, and those
without after them, either way — as a sheet lists its blank cells last — among themselves by
when they were imported, in the same direction. Ordered by their import time among the others
they read as the newest chats of all, by the invented time as the oldest.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from .db import Db
from .models import SYNTHETIC_BASE, Session, iso, utcnow
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
BACKLOG_ORDERS = {
    "newest": ("updated_at", "DESC"),
    "oldest": ("updated_at", "ASC"),
    "largest": ("(token_count - covered_tokens + top_tokens)", "DESC"),
}
"""The backlog's orders: last activity first or last, or the most a model would see now first."""
_SESSION_COLS = (
    "id, title, source, source_ref, created_at, updated_at, episode_count, token_count, summary_count, "
    "max_depth, covered_episodes, covered_tokens, fallback_count, top_tokens, last_summarized_seq, "
    "last_summary_at, metadata, min_retention, "
    "(SELECT b.about FROM briefs b WHERE b.session_id = sessions.id AND b.status = 'active')"
)
"""A session's columns, and its brief's about line (the active brief, found by its unique index)."""


def _session(row: sqlite3.Row | tuple[Any, ...]) -> Session:
    meta = row[16]
    return Session(
        id=row[0], title=row[1], source=row[2], source_ref=row[3], created_at=row[4], updated_at=row[5],
        episodes=row[6], tokens=row[7], summaries=row[8], max_depth=row[9], covered_episodes=row[10],
        covered_tokens=row[11], fallbacks=row[12], top_tokens=row[13], last_summarized_seq=row[14],
        last_summary_at=row[15], metadata=json.loads(meta) if meta else {}, min_retention=row[17], about=row[18],
    )


def _filter(text: str | None) -> tuple[str, list[Any]]:
    """The condition (no ``WHERE``) of a text filter on title, id or source, and its parameters."""
    if not text:
        return "", []
    like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return "(title LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' OR source LIKE ? ESCAPE '\\')", [like, like, like]


def _where(*conditions: str) -> str:
    kept = [c for c in conditions if c]
    return "WHERE " + " AND ".join(kept) if kept else ""


def _sort(sort: str) -> str:
    expr = SESSION_SORTS.get(sort)
    if expr is None:
        raise ValueError(f"unknown sort {sort!r}; choose from {', '.join(SESSION_SORTS)}")
    return expr


TIME_SORTS = frozenset({"updated", "created"})
"""The orders by time, where a session without times comes after the ones with (module docstring)."""
_UNTIMED = "substr(created_at, 1, 8) = '2000-01-'"
"""``not Session.times_known`` in SQL (``models.synthetic_stamp`` of its ``created_at``)."""


def _parts(sort: str) -> list[tuple[str, str]]:
    """``(condition, order key)`` of each part of a listing, listed one after the other: every session by
    ``sort``, or for a time order the sessions with times by it, then those without by their import
    time (``updated_at``). Kept apart, each part's ``ORDER BY`` is a column: "updated" walks its index."""
    expr = _sort(sort)
    if sort not in TIME_SORTS:
        return [("", expr)]
    return [(f"NOT {_UNTIMED}", expr), (_UNTIMED, "updated_at")]


class Sessions:
    """The sessions table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def get(self, session_id: str) -> Session | None:
        row = self.db.conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _session(row) if row else None

    def titles(self, session_ids: list[str]) -> dict[str, str]:
        """``{id: title}`` of the given sessions that exist (a page of search hits names its sessions)."""
        out: dict[str, str] = {}
        for start in range(0, len(session_ids), 500):
            chunk = session_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self.db.conn.execute(f"SELECT id, title FROM sessions WHERE id IN ({marks})", chunk))
        return out

    def count(self, text: str | None = None) -> int:
        return self._count(text, "")

    def _count(self, text: str | None, condition: str) -> int:
        """Sessions matching ``text`` and the SQL ``condition`` (one of this module's, never a caller's)."""
        match, params = _filter(text)
        return int(self.db.conn.execute(f"SELECT count(*) FROM sessions {_where(match, condition)}", params)
                   .fetchone()[0])

    def page(
        self,
        *,
        sort: str = "updated",
        descending: bool = True,
        text: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Session]:
        """A page of sessions in the given order (ties broken by id; in a time order, the sessions without
        times after the others: module docstring)."""
        direction = "DESC" if descending else "ASC"
        match, params = _filter(text)
        out: list[Session] = []
        parts = _parts(sort)
        for n, (condition, key) in enumerate(parts):
            sql = f"SELECT {_SESSION_COLS} FROM sessions {_where(match, condition)} ORDER BY {key} {direction}, " \
                  f"id {direction}"
            args = list(params)
            if limit is not None:
                sql += " LIMIT ? OFFSET ?"
                args += [limit - len(out), offset]
            rows = [_session(r) for r in self.db.conn.execute(sql, args)]
            out += rows
            if n + 1 == len(parts) or (limit is not None and len(out) >= limit):
                break
            # the next part starts where this one ended: past the rest of the offset
            offset = 0 if rows else max(0, offset - self._count(text, condition))
        return out

    def position(
        self, session_id: str, *, sort: str = "updated", descending: bool = True, text: str | None = None
    ) -> int | None:
        """Where ``session_id`` stands in :meth:`page` with the same order and filter (0-based),
        or None when it is not listed: lets a list keep its cursor on a session while others
        move around it. One count over the sort's index where it has one (and, for a session
        without times, one count of the sessions with times, which come before it)."""
        match, params = _filter(text)
        before = 0
        for condition, key in _parts(sort):
            row = self.db.conn.execute(
                f"SELECT {key} FROM sessions {_where(match, condition, 'id = ?')}", [*params, session_id]
            ).fetchone()
            if row is None:
                before += self._count(text, condition) if condition else 0
                continue
            op = ">" if descending else "<"
            ahead = f"({key} {op} ? OR ({key} = ? AND id {op} ?))"
            sql = f"SELECT count(*) FROM sessions {_where(match, condition, ahead)}"
            return before + int(self.db.conn.execute(sql, [*params, row[0], row[0], session_id]).fetchone()[0])
        return None

    def each(self, *, batch: int = 1000) -> Iterator[Session]:
        """Every session, by id, paged with a keyset so memory stays flat."""
        after = ""
        while True:
            rows = self.db.conn.execute(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after, batch)
            ).fetchall()
            if not rows:
                return
            for r in rows:
                yield _session(r)
            after = rows[-1][0]

    def backlog_page(
        self,
        order: str,
        *,
        fresh_tail: int | None,
        fanout: int | None,
        if_over: int | None = None,
        after: tuple[Any, str] | None = None,
        limit: int = 500,
        idle_before: str | None = None,
        briefs: bool = False,
    ) -> tuple[list[Session], tuple[Any, str] | None]:
        """A page of the sessions that may have summaries due, in ``order`` (:data:`BACKLOG_ORDERS`),
        from the aggregates alone: episodes outside the fresh tail that no leaf covers
        (``fresh_tail``; None: leaves not wanted; a session unchanged since ``idle_before`` keeps no tail), at least ``fanout`` active summaries (None: condensations not wanted), or
        (``briefs``) two episodes or more and no brief covering the newest; ``if_over``: more uncompacted
        tokens than that. Keyset paged: pass the returned key as ``after`` for the next page (None: no more)."""
        if order not in BACKLOG_ORDERS:
            raise ValueError(f"unknown order {order!r}; choose from {', '.join(BACKLOG_ORDERS)}")
        expr, direction = BACKLOG_ORDERS[order]
        maybe: list[str] = []
        params: list[Any] = []
        if fresh_tail is not None:
            maybe.append("episode_count - ? > covered_episodes")
            params.append(fresh_tail)
            if idle_before is not None:
                maybe.append("(updated_at < ? AND episode_count > covered_episodes)")
                params.append(idle_before)
        if briefs:
            maybe.append("(episode_count >= 2 AND NOT EXISTS (SELECT 1 FROM briefs b WHERE b.session_id = sessions.id "
                         "AND b.status = 'active' AND b.last_seq >= sessions.episode_count - 1))")
        if fanout is not None:
            maybe.append("summary_count >= ?")
            params.append(fanout)
        if not maybe:
            return [], None
        where = [f"({' OR '.join(maybe)})"]
        if if_over is not None:
            where.append("(token_count - covered_tokens + top_tokens) > ?")
            params.append(if_over)
        if after is not None:
            op = "<" if direction == "DESC" else ">"
            where.append(f"({expr} {op} ? OR ({expr} = ? AND id {op} ?))")
            params += [after[0], after[0], after[1]]
        rows = self.db.conn.execute(
            f"SELECT {_SESSION_COLS}, {expr} FROM sessions WHERE {' AND '.join(where)} "
            f"ORDER BY {expr} {direction}, id {direction} LIMIT ?", [*params, limit]).fetchall()
        if not rows:
            return [], None
        key = (rows[-1][-1], rows[-1][0]) if len(rows) == limit else None
        return [_session(r) for r in rows], key

    def upsert(
        self,
        session_id: str,
        *,
        title: str,
        source: str,
        source_ref: str | None = None,
        created_at: datetime | None = None,
        metadata: dict[str, Any] | None = None,
        fallback_title: str = "",
    ) -> bool:
        """Create the session if new (returns True); otherwise refresh its title/metadata.

        ``fallback_title`` is the title when ``title`` is empty and the session has none yet (a new
        one, or one stored untitled); a title already stored is never replaced by it."""
        with self.db.transaction() as conn:
            exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            meta = json.dumps(metadata or {}, ensure_ascii=False, sort_keys=True)
            if exists:
                conn.execute(
                    "UPDATE sessions SET title = CASE WHEN ? <> '' THEN ? WHEN title = '' THEN ? ELSE title END, "
                    "metadata = ? WHERE id = ?",
                    (title, title, fallback_title, meta, session_id),
                )
                return False
            title = title or fallback_title
            # A source without times: the session starts at SYNTHETIC_BASE (the mark of that), and its
            # last activity is now, so the lists (ordered by it) show it where it was imported.
            stamp = iso(created_at) if created_at else iso(SYNTHETIC_BASE)
            conn.execute(
                "INSERT INTO sessions (id, title, source, source_ref, created_at, updated_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, title, source, source_ref, stamp, stamp if created_at else utcnow(), meta),
            )
            return True
