"""Runs: every compaction job, recorded before it writes anything and finished whatever happens.

A run left ``running`` by a process that no longer exists is marked ``interrupted`` when the
file is next opened (DESIGN §3, invariant 6); a run of a live process is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .dag import _jdict, new_id
from .models import Run, utcnow

if TYPE_CHECKING:
    from .store import Store

_RUN_COLS = (
    "id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive, fallback, "
    "summaries_created, llm_seconds, wall_seconds, error, target, rejections, planned"
)


def _run(r: Sequence[Any]) -> Run:
    return Run(*r[:16], rejections=_jdict(r[16]), planned=r[17])


class RunsMixin:
    """Run records; mixed into :class:`Store`."""

    def start_run(
        self: Store, session_id: str, kind: str, backend: str, model: str | None, target: str | None = None,
        *, planned: int | None = None,
    ) -> Run:
        rid = new_id("r")
        pid, host = self.runner_identity()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, session_id, kind, status, backend, model, started_at, target, pid, host, planned) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (rid, session_id, kind, backend, model, utcnow(), target, pid, host, planned),
            )
        run = self.get_run(rid)
        assert run is not None
        return run

    def finish_run(self: Store, run_id: str, status: str, *, wall_seconds: float, error: str | None = None) -> Run:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, wall_seconds = ?, error = ? WHERE id = ?",
                (status, utcnow(), wall_seconds, error, run_id),
            )
        run = self.get_run(run_id)
        assert run is not None
        return run

    def get_run(self: Store, run_id: str) -> Run | None:
        row = self.conn.execute(f"SELECT {_RUN_COLS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def runs(self: Store, session_id: str) -> list[Run]:
        rows = self.conn.execute(
            f"SELECT {_RUN_COLS} FROM runs WHERE session_id = ? ORDER BY started_at, id", (session_id,)
        )
        return [_run(r) for r in rows]

    def mark_interrupted_runs(self: Store) -> int:
        """Runs left ``running`` by a process that is gone become ``interrupted``.

        A run whose process is still alive on this host (a concurrent CLI run) is left alone.
        """
        rows = self.conn.execute("SELECT id, pid, host FROM runs WHERE status = 'running'").fetchall()
        _, host = self.runner_identity()
        dead = [r[0] for r in rows if not (r[2] == host and r[1] and _alive(r[1]))]
        if not dead:
            return 0
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE runs SET status = 'interrupted', finished_at = coalesce(finished_at, ?), "
                "error = coalesce(error, 'the process running it stopped') WHERE id = ? AND status = 'running'",
                [(utcnow(), rid) for rid in dead],
            )
        return len(dead)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
