"""The store's connections: one per thread, opened on first use, closed together.

Why a module of its own: how a connection is opened (read-only, checking, WAL, the busy timeout)
is :mod:`.db`'s business; which thread holds which connection, and closing them all in the
right order, is this one's.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable


class ConnectionPool:
    """One connection per thread (sqlite3 connections are not to be shared across threads).

    Owned by one Store instance; not a global. Textual workers and the CLI's parallel
    runner each get their own connection, and WAL lets readers go on while one writes.
    """

    def __init__(self, opener: Callable[[], sqlite3.Connection]) -> None:
        """``opener`` opens one connection to the file, as the store wants it (``db.connect``)."""
        self._opener = opener
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._opener()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def release(self) -> None:
        """Close this thread's connection (a worker thread that is about to end calls it, so
        a long TUI session does not collect one idle connection per finished run)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        conn.close()

    def close(self) -> None:
        with self._lock:
            # Newest first: with ``checking`` connections, the first one may be the read-write one
            # (the file was quiet) and later ones plain read-only (its -wal existed by then); only
            # a read-write connection closing last removes the -wal/-shm.
            for conn in reversed(self._all):
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
