"""Pinned and excluded episodes.

Marks are the user's instructions to the summariser: a *pinned* episode must be carried
verbatim by every summary covering it; an *excluded* one (a secret, noise) is never given
to a summariser. Removing the row undoes the mark. Summaries made before a mark changed do
not change by themselves (they are immutable): ``check`` and the UI say which ones disagree,
and re-summarising them applies the marks.
"""

from __future__ import annotations

from typing import Literal

from .db import Db, StoreError
from .models import utcnow

Mark = Literal["pin", "exclude"]


class Marks:
    """The episode_marks table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def set(self, session_id: str, seq: int, mark: Mark | None) -> None:
        """Pin or exclude episode ``seq`` (``None`` removes its mark)."""
        if mark not in (None, "pin", "exclude"):
            raise StoreError(f"unknown mark {mark!r}: use pin or exclude")
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id FROM episodes WHERE session_id = ? AND seq = ?", (session_id, seq)).fetchone()
            if row is None:
                raise StoreError(f"no episode #{seq} in session {session_id}")
            if mark is None:
                conn.execute("DELETE FROM episode_marks WHERE episode_id = ?", (row[0],))
            else:
                conn.execute(
                    "INSERT INTO episode_marks (episode_id, session_id, seq, mark, created_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (episode_id) DO UPDATE SET mark = excluded.mark, created_at = excluded.created_at",
                    (row[0], session_id, seq, mark, utcnow()),
                )

    def of(self, session_id: str, first_seq: int = 0, last_seq: int | None = None) -> dict[int, Mark]:
        """``{seq: mark}`` for the marked episodes of a seq range (the whole session by default)."""
        last = last_seq if last_seq is not None else 2**62
        rows = self.db.conn.execute(
            "SELECT seq, mark FROM episode_marks WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last),
        )
        return {int(r[0]): r[1] for r in rows}

    def marked(self, session_id: str) -> list[tuple[int, Mark, str]]:
        """``(seq, mark, episode created_at)`` of every marked episode, in order (for the map)."""
        rows = self.db.conn.execute(
            "SELECT m.seq, m.mark, e.created_at FROM episode_marks m JOIN episodes e ON e.id = m.episode_id "
            "WHERE m.session_id = ? ORDER BY m.seq",
            (session_id,),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]
