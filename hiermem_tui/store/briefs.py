"""Briefs: a short summary of each whole session (what it was about, decided, made, where it ended).

A session has at most one active brief; making a new one supersedes the old, which is kept as a version
like any summary (nothing is thrown away). A brief records the episode range it covers (``first_seq`` to
``last_seq``): a session whose newest episode is past it has a stale brief, and its next pass re-makes the
brief, not its summaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .db import Db
from .models import Brief, utcnow
from .rows import new_id

_COLS = ("id, session_id, status, title, about, text, first_seq, last_seq, tier, backend, model, prompt_version, "
         "tokens, llm_seconds, run_id, created_at")


def _brief(r: Sequence[Any]) -> Brief:
    return Brief(*r)


class Briefs:
    """The briefs table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def active(self, session_id: str) -> Brief | None:
        """The session's brief, or None when it has none yet."""
        row = self.db.conn.execute(
            f"SELECT {_COLS} FROM briefs WHERE session_id = ? AND status = 'active'", (session_id,)).fetchone()
        return _brief(row) if row else None

    def versions(self, session_id: str) -> list[Brief]:
        """Every brief the session has had, newest first."""
        rows = self.db.conn.execute(
            f"SELECT {_COLS} FROM briefs WHERE session_id = ? ORDER BY created_at DESC, id DESC", (session_id,))
        return [_brief(r) for r in rows]

    def about_of(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The about line of each of these sessions' briefs (those that have one): one query for a page."""
        if not session_ids:
            return {}
        marks = ",".join("?" * len(session_ids))
        rows = self.db.conn.execute(
            f"SELECT session_id, about FROM briefs WHERE status = 'active' AND session_id IN ({marks})",
            tuple(session_ids))
        return {sid: about for sid, about in rows}

    def write(self, session_id: str, *, title: str, about: str, text: str, first_seq: int, last_seq: int, tier: str,
              backend: str, model: str | None, prompt_version: str, tokens: int, llm_seconds: float,
              run_id: str | None) -> Brief:
        """Make ``text`` the session's brief; the brief it had becomes ``superseded``."""
        bid = new_id("b")
        with self.db.transaction() as conn:
            conn.execute("UPDATE briefs SET status = 'superseded' WHERE session_id = ? AND status = 'active'",
                         (session_id,))
            conn.execute(
                f"INSERT INTO briefs ({_COLS}) VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (bid, session_id, title, about, text, first_seq, last_seq, tier, backend, model, prompt_version,
                 tokens, llm_seconds, run_id, utcnow()))
        made = self.active(session_id)
        assert made is not None
        return made

    def stale(self, session_id: str, last_seq: int | None) -> bool:
        """Whether the session needs a (new) brief: it has episodes, and no brief covers its newest one."""
        if last_seq is None:
            return False
        brief = self.active(session_id)
        return brief is None or brief.last_seq < last_seq
