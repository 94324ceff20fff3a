"""Measured model speeds: running sums of what each model did, kept between runs.

Per-call timeouts and every time estimate come from these (summarize/speed.py); the runner
adds what a run measured when it ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .db import Db
from .models import utcnow

if TYPE_CHECKING:
    from hiermem_tui.summarize.speed import ModelSpeed


class Speeds:
    """The model_speed table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def get(self, backend: str, model: str | None) -> ModelSpeed:
        """What is known of ``model``'s speed (empty sums when nothing is)."""
        from hiermem_tui.summarize.speed import ModelSpeed

        if not model:
            return ModelSpeed()
        row = self.db.conn.execute(
            "SELECT calls, prompt_tokens, prompt_seconds, output_tokens, output_seconds FROM model_speed "
            "WHERE backend = ? AND model = ?",
            (backend, model),
        ).fetchone()
        return ModelSpeed(*row) if row else ModelSpeed()

    def add(self, backend: str, model: str | None, delta: ModelSpeed) -> None:
        """Add what a run measured to the model's sums."""
        if not model or delta.calls <= 0 or self.db.readonly:
            return
        with self.db.transaction() as conn:
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
