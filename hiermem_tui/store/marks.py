"""Pinned and excluded episodes, measured model speeds, and fidelity kept on summaries.

Marks are the user's instructions to the summariser: a *pinned* episode must be carried
verbatim by every summary covering it; an *excluded* one (a secret, noise) is never given
to a summariser. Removing the row undoes the mark. Summaries made before a mark changed do
not change by themselves (they are immutable): ``check`` and the UI say which ones disagree,
and re-summarising them applies the marks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .db import StoreError
from .models import utcnow

if TYPE_CHECKING:
    from hiermem_tui.summarize.speed import ModelSpeed

    from .store import Store

Mark = Literal["pin", "exclude"]


class MarksMixin:
    """Episode marks, model speed and fidelity updates; mixed into :class:`Store`."""

    # ------------------------------------------------------------------ marks
    def set_mark(self: Store, session_id: str, seq: int, mark: Mark | None) -> None:
        """Pin or exclude episode ``seq`` (``None`` removes its mark)."""
        if mark not in (None, "pin", "exclude"):
            raise StoreError(f"unknown mark {mark!r}: use pin or exclude")
        with self.transaction() as conn:
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

    def marks(self: Store, session_id: str, first_seq: int = 0, last_seq: int | None = None) -> dict[int, Mark]:
        """``{seq: mark}`` for the marked episodes of a seq range (the whole session by default)."""
        last = last_seq if last_seq is not None else 2**62
        rows = self.conn.execute(
            "SELECT seq, mark FROM episode_marks WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first_seq, last),
        )
        return {int(r[0]): r[1] for r in rows}

    def marked_episodes(self: Store, session_id: str) -> list[tuple[int, Mark, str]]:
        """``(seq, mark, episode created_at)`` of every marked episode, in order (for the map)."""
        rows = self.conn.execute(
            "SELECT m.seq, m.mark, e.created_at FROM episode_marks m JOIN episodes e ON e.id = m.episode_id "
            "WHERE m.session_id = ? ORDER BY m.seq",
            (session_id,),
        )
        return [(int(r[0]), r[1], r[2]) for r in rows]

    # ------------------------------------------------------------------ model speed
    def model_speed(self: Store, backend: str, model: str | None) -> ModelSpeed:
        """What is known of ``model``'s speed (empty sums when nothing is)."""
        from hiermem_tui.summarize.speed import ModelSpeed

        if not model:
            return ModelSpeed()
        row = self.conn.execute(
            "SELECT calls, prompt_tokens, prompt_seconds, output_tokens, output_seconds FROM model_speed "
            "WHERE backend = ? AND model = ?",
            (backend, model),
        ).fetchone()
        return ModelSpeed(*row) if row else ModelSpeed()

    def add_model_speed(self: Store, backend: str, model: str | None, delta: ModelSpeed) -> None:
        """Add what a run measured to the model's sums."""
        if not model or delta.calls <= 0 or self.readonly:
            return
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO model_speed (backend, model, calls, prompt_tokens, prompt_seconds, output_tokens, "
                "output_seconds, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (backend, model) DO UPDATE SET "
                "calls = calls + excluded.calls, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                "prompt_seconds = prompt_seconds + excluded.prompt_seconds, "
                "output_tokens = output_tokens + excluded.output_tokens, "
                "output_seconds = output_seconds + excluded.output_seconds, updated_at = excluded.updated_at",
                (backend, model, delta.calls, delta.prompt_tokens, delta.prompt_seconds, delta.output_tokens,
                 delta.output_seconds, utcnow()),
            )

    # ------------------------------------------------------------------ fidelity
    def set_fidelity(
        self: Store, summary_id: str, identifiers: int, kept: int, lost: Sequence[str], novel: Sequence[str],
        key: int | None = None, key_kept: int | None = None,
    ) -> None:
        """Record a measurement for a summary made before fidelity was measured (``check``)."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE summaries SET fid_identifiers = ?, fid_kept = ?, fid_lost = ?, fid_novel = ?, fid_key = ?, "
                "fid_key_kept = ? WHERE id = ?",
                (identifiers, kept, json.dumps(list(lost), ensure_ascii=False) if lost else None,
                 json.dumps(list(novel), ensure_ascii=False) if novel else None, key, key_kept, summary_id),
            )
