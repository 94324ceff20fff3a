"""Measured model speeds: running sums of what each model did on each host, kept between runs (a model's
loads are not kept: they are no part of its speed).

Per-call timeouts and every time estimate come from these (summarize/speed.py); the runner
adds what a run measured when it ends. A row is keyed by backend, model and host (the Ollama
server's URL); a row with host ``''`` (measured before schema 7 told hosts apart, or by a
backend without one) is what any host of that model starts from until it has measured its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .db import Db
from .models import utcnow

if TYPE_CHECKING:
    from hiermem_tui.summarize.speed import ModelSpeed

ANY_HOST = ""
"""The host of a row that stands for every host of its model."""


class Speeds:
    """The model_speed table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def get(self, backend: str, model: str | None, host: str | None = None) -> ModelSpeed:
        """What is known of ``model``'s speed on ``host`` (empty sums when nothing is): that host's
        own row when it has measured any call, else the row without a host."""
        from hiermem_tui.summarize.speed import ModelSpeed

        if not model:
            return ModelSpeed()
        row = self.db.conn.execute(
            "SELECT calls, prompt_tokens, prompt_seconds, output_tokens, output_seconds, wait_seconds FROM model_speed "
            "WHERE backend = ? AND model = ? AND host IN (?, ?) AND (calls > 0 OR host = ?) "
            "ORDER BY host = ? LIMIT 1",
            (backend, model, host or ANY_HOST, ANY_HOST, ANY_HOST, ANY_HOST),
        ).fetchone()
        return ModelSpeed(*row) if row else ModelSpeed()

    def add(self, backend: str, model: str | None, delta: ModelSpeed, host: str | None = None) -> None:
        """Add what a run measured on ``host`` (None: no host) to the model's sums there."""
        if not model or delta.calls <= 0 or self.db.readonly:
            return
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO model_speed (backend, model, host, calls, prompt_tokens, prompt_seconds, output_tokens, "
                "output_seconds, wait_seconds, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (backend, model, host) DO UPDATE SET "
                "calls = calls + excluded.calls, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                "prompt_seconds = prompt_seconds + excluded.prompt_seconds, "
                "output_tokens = output_tokens + excluded.output_tokens, "
                "output_seconds = output_seconds + excluded.output_seconds, "
                "wait_seconds = wait_seconds + excluded.wait_seconds, updated_at = excluded.updated_at",
                (backend, model, host or ANY_HOST, delta.calls, delta.prompt_tokens, delta.prompt_seconds,
                 delta.output_tokens, delta.output_seconds, delta.wait_seconds, utcnow()),
            )
