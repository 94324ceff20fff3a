"""Runs: every compaction job, recorded before it writes anything and finished whatever happens.

A run left ``running`` by a process that no longer exists is marked ``interrupted`` when the
file is next opened (docs/ARCHITECTURE.md, invariant 6); a run of a live process is left alone.
The history pages newest first with a keyset on ``(started_at, id)`` (index ``runs_started``),
so a file with years of runs lists its first page as fast as an empty one.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from .db import Db
from .models import Run, utcnow
from .rows import jdict, new_id

_RUN_COLS = (
    "id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive, fallback, "
    "summaries_created, llm_seconds, wall_seconds, error, target, rejections, planned, flagged"
)


def _run(r: Sequence[Any]) -> Run:
    # the first 16 columns are Run's first 16 fields, in order (``_RUN_COLS``); mypy cannot
    # see the slice's length
    return Run(*r[:16], rejections=jdict(r[16]), planned=r[17], flagged=r[18])  # type: ignore[misc]


def runner_identity() -> tuple[int, str]:
    """This process and host: recorded on a run, so a later open can tell a dead one."""
    return os.getpid(), socket.gethostname()


class Runs:
    """The runs table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def start(
        self, session_id: str, kind: str, backend: str, model: str | None, target: str | None = None,
        *, planned: int | None = None,
    ) -> Run:
        rid = new_id("r")
        pid, host = runner_identity()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (id, session_id, kind, status, backend, model, started_at, target, pid, host, planned) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (rid, session_id, kind, backend, model, utcnow(), target, pid, host, planned),
            )
        run = self.get(rid)
        assert run is not None
        return run

    def finish(self, run_id: str, status: str, *, wall_seconds: float, error: str | None = None) -> Run:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, wall_seconds = ?, error = ? WHERE id = ?",
                (status, utcnow(), wall_seconds, error, run_id),
            )
        run = self.get(run_id)
        assert run is not None
        return run

    def get(self, run_id: str) -> Run | None:
        row = self.db.conn.execute(f"SELECT {_RUN_COLS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def of_session(self, session_id: str) -> list[Run]:
        """A session's runs, oldest first (the export)."""
        rows = self.db.conn.execute(
            f"SELECT {_RUN_COLS} FROM runs WHERE session_id = ? ORDER BY started_at, id", (session_id,)
        )
        return [_run(r) for r in rows]

    def newest(
        self, session_id: str | None = None, *, limit: int = 200, before: tuple[str, str] | None = None
    ) -> tuple[list[Run], bool]:
        """Runs newest first (one session, or the whole file), ``limit`` of them older than the
        ``(started_at, id)`` cursor ``before``; and whether there are older ones still."""
        clauses, params = [], []
        if session_id is not None:
            clauses.append("session_id = ?")
            params.append(session_id)
        if before is not None:
            clauses.append("(started_at, id) < (?, ?)")
            params.extend(before)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.db.conn.execute(
            f"SELECT {_RUN_COLS} FROM runs {where} ORDER BY started_at DESC, id DESC LIMIT ?", (*params, limit + 1)
        ).fetchall()
        return [_run(r) for r in rows[:limit]], len(rows) > limit

    def dead_running(self) -> list[tuple[str, str, int | None, str | None]]:
        """``(run id, session, pid, host)`` of the runs left ``running`` by a process that is gone.

        A run whose process is still alive on this host (a concurrent CLI run) is not one of them. A
        run recorded on another host counts as gone: this process cannot tell (the file is not
        meant to be shared live across machines).
        """
        rows = self.db.conn.execute(
            "SELECT id, session_id, pid, host FROM runs WHERE status = 'running' ORDER BY started_at, id"
        ).fetchall()
        _, host = runner_identity()
        return [(r[0], r[1], r[2], r[3]) for r in rows if not (r[3] == host and r[2] and _alive(r[2]))]

    def mark_interrupted(self) -> int:
        """Runs left ``running`` by a process that is gone become ``interrupted``.

        A run whose process is still alive on this host (a concurrent CLI run) is left alone.
        """
        dead = [r[0] for r in self.dead_running()]
        if not dead:
            return 0
        with self.db.transaction() as conn:
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
