"""The Store: one hiermem-tui database file, as a small facade over named repositories.

``Store.open`` decides whether a file is ours and upgrades it (db.py); the store then hands
out one repository per part of the schema, all sharing one :class:`~.db.Db` (connections,
transactions, read snapshots): ``store.sessions``, ``store.episodes``, ``store.dag`` (summaries
and their edges), ``store.briefs`` (each session's brief and its versions), ``store.runs``, ``store.marks``, ``store.speeds``, ``store.ways`` (how each model summarises), ``store.search`` and
``store.stats``, and ``store.health`` (the doctor's checks). Every query against our schema is in
one of them; the rest of the app calls their named methods.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..tokens import Tokenizer
from .briefs import Briefs
from .dag import Dag
from .db import Db, DamagedDatabase, StoreError, check_schema, connect, inspect_file, migrate, probe_version
from .episodes import Episodes
from .health import Health
from .marks import Marks
from .queries import SearchQueries, StatsQueries
from .runs import Runs
from .schema import SCHEMA_VERSION
from .search_index import index_at_commit
from .sessions import Sessions
from .speeds import Speeds
from .ways import Ways


class Store:
    """A hiermem-tui database. Build with :meth:`open`; pass it to whatever needs it."""

    def __init__(self, path: Path, readonly: bool, tokenizer: Tokenizer | None = None, *, checking: bool = False
                 ) -> None:
        self.db = Db(path, readonly, tokenizer, checking=checking)
        self.db.write_hooks.append(index_at_commit)  # what a write records is searchable when it commits
        self.sessions = Sessions(self.db)
        self.episodes = Episodes(self.db)
        self.dag = Dag(self.db, self.sessions, self.episodes)
        self.runs = Runs(self.db)
        self.briefs = Briefs(self.db)
        self.marks = Marks(self.db)
        self.speeds = Speeds(self.db)
        self.ways = Ways(self.db)
        self.search = SearchQueries(self.db)
        self.stats = StatsQueries(self.db)
        self.health = Health(self.db)

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def readonly(self) -> bool:
        return self.db.readonly

    @property
    def tokenizer(self) -> Tokenizer:
        return self.db.tokenizer

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        create: bool = True,
        tokenizer: Tokenizer | None = None,
    ) -> Store:
        """Open (or create) a database, refusing anything that is not ours without touching it.

        A file we cannot write opens read-only for browsing. Runs left ``running`` by a
        process that no longer exists are marked ``interrupted``.
        """
        p = Path(path).expanduser()
        kind = inspect_file(p)
        if kind == "new" and not create:
            raise StoreError(f"{p} does not exist")
        if kind == "sqlite" and not readonly and (not os.access(p, os.W_OK) or not p.stat().st_mode & 0o222):
            # no write bit for anyone is the user saying "read-only", even to root
            readonly = True
        if kind == "sqlite" and not readonly and not os.access(p.parent, os.W_OK):
            readonly = True  # SQLite needs to create -wal/-journal files next to it
        if kind == "new" and readonly:
            raise StoreError(f"{p} does not exist (and read-only mode cannot create it)")
        try:
            version = 0
            if kind == "sqlite":
                # Decide whether the file is ours with a read-only look that leaves nothing
                # behind (no -wal/-shm) — a refused file must stay exactly as it was.
                probe = connect(p, readonly=True, probe=True)
                try:
                    version = check_schema(probe, p)
                finally:
                    probe.close()
            if not readonly:
                conn = connect(p, readonly=False)
                try:
                    if version < SCHEMA_VERSION:
                        conn.execute("PRAGMA journal_mode = WAL")
                        migrate(conn, version)
                    elif conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        conn.execute("PRAGMA journal_mode = WAL")
                finally:
                    conn.close()
            elif version < SCHEMA_VERSION:
                raise StoreError(f"{p} is read-only and needs an upgrade (schema {version}) before it can be read")
        except sqlite3.DatabaseError as exc:
            raise DamagedDatabase(f"{p} is damaged or not a database ({exc})") from None
        except UnicodeDecodeError:
            raise DamagedDatabase(f"{p} is damaged: its schema is not valid text") from None
        store = cls(p, readonly, tokenizer)
        if not readonly:
            store.runs.mark_interrupted()
        return store

    @classmethod
    def open_reader(cls, path: str | os.PathLike[str], *, tokenizer: Tokenizer | None = None) -> Store:
        """A store that only reads and leaves the file exactly as it was: no migration, no run marked
        interrupted, no search index caught up, no -wal/-shm left behind (the connections of
        ``doctor``: :func:`~.db.connect_checking`). What the MCP server serves from.

        Refuses, in one line and without touching it, a missing, empty, foreign, damaged or newer
        file, and one of an older schema (it needs the upgrade any writing command makes).
        """
        p = Path(path).expanduser()
        version = probe_version(p)
        if not version:
            raise StoreError(f"{p} is an empty database: import some chats first (`hiermem-tui import PATH`)")
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"{p} has an older schema ({version}): open it once with hiermem-tui (the TUI, or any "
                f"command that writes) to upgrade it, then serve it"
            )
        return cls(p, True, tokenizer, checking=True)

    def close(self) -> None:
        self.db.close()

    def release_thread(self) -> None:
        """Close the calling thread's connection; the thread may open a new one later."""
        self.db.release_thread()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
