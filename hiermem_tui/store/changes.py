"""Noticing what other connections committed, cheaply: for views that stay open on a file that
another process (``hiermem-tui watch``, a script) or another thread is writing.

``PRAGMA data_version`` moves when another connection commits — one call, no table read — and
only then are the rows added since the last look found by rowid. Sessions, episodes and
summaries are never deleted, so their rowids only grow: finding what is new costs the new
rows, never a scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from .store import Store

_TABLES = (("sessions", "id"), ("episodes", "session_id"), ("summaries", "session_id"))


class ChangeFeed:
    """Polls one connection for commits made elsewhere; call :meth:`poll` from one thread.

    ``PRAGMA data_version`` belongs to a connection, so the feed reads through the calling
    thread's connection of ``store`` and must always be polled from that same thread.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version: int | None = None
        self._marks: tuple[int, ...] = ()

    def poll(self) -> tuple[str, ...] | None:
        """``None``: nothing was committed since the last poll (the first poll only takes the
        baseline). Else the ids of sessions that got new rows (the session itself, episodes,
        summaries), or ``()`` when only other changes were committed (a run finished, a summary
        was superseded or restored, a title changed) and any session may be affected."""
        conn = self.store.conn
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return None
        first = self._version is None
        self._version = version
        with self.store.read_snapshot():
            marks = self._max_rowids(conn)
            if first:
                self._marks = marks
                return None
            touched: dict[str, None] = {}
            for (table, column), since in zip(_TABLES, self._marks):
                for (sid,) in conn.execute(f"SELECT DISTINCT {column} FROM {table} WHERE rowid > ?", (since,)):
                    touched[sid] = None
            self._marks = marks
        return tuple(touched)

    @staticmethod
    def _max_rowids(conn: sqlite3.Connection) -> tuple[int, ...]:
        return tuple(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0] for table, _ in _TABLES)
