"""The database file itself: opening it safely, one connection per thread, transactions.

Every check that can refuse a file runs *before* anything is written to it: a file that is
not SQLite, belongs to another application, is damaged or has a newer schema is left
byte-identical and reported in one line. Only then do we switch on WAL and migrate.

:class:`Db` is what every repository of the store (sessions, episodes, the DAG, runs, …)
shares: the file's path and mode, a connection for the calling thread, ``transaction()`` and
``read_snapshot()``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from .pool import ConnectionPool
from .schema import APP_ID, MIGRATIONS, OUR_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    from hiermem_tui.tokens import Tokenizer

WriteHook = Callable[[sqlite3.Connection], "Callable[[sqlite3.Connection], None] | None"]
"""Called as a write transaction begins; may return a step to run in it just before it commits."""

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 30_000


class StoreError(Exception):
    """A problem with the database file, worded for the user (one line)."""


class NotADatabase(StoreError):
    pass


class ForeignDatabase(StoreError):
    pass


class NewerSchema(StoreError):
    pass


class DamagedDatabase(StoreError):
    pass


class ReadOnlyError(StoreError):
    """A write was attempted on a database opened read-only."""


def _ro_uri(path: Path, immutable: bool = False) -> str:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def _configure(conn: sqlite3.Connection, readonly: bool) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if not readonly:
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -32000")


def _quiet(path: Path) -> bool:
    """No -wal beside the file: no process has it open for writing right now."""
    return not path.with_name(path.name + "-wal").exists()


def connect(path: Path, readonly: bool, *, probe: bool = False) -> sqlite3.Connection:
    """A new connection with our pragmas. ``isolation_level=None``: we issue BEGIN ourselves.

    Read-only connections to a quiet file that nobody may write (a ``probe`` before deciding
    whether the file is ours, or a file without write permission) use ``immutable=1``: a plain
    ``mode=ro`` open of a WAL file creates -wal/-shm beside it and leaves them there.
    """
    if readonly and _quiet(path) and (probe or not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222):
        conn = sqlite3.connect(_ro_uri(path, immutable=True), uri=True, isolation_level=None, check_same_thread=False)
        _configure(conn, readonly)
        return conn
    if readonly:
        conn = sqlite3.connect(_ro_uri(path), uri=True, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as exc:
            # Only a WAL file whose -shm cannot be created (read-only folder) is read as
            # immutable; "locked" and other errors are real and must not be papered over.
            if "unable to open" not in str(exc) and "readonly" not in str(exc).replace("-", ""):
                conn.close()
                raise
            conn.close()
            conn = sqlite3.connect(_ro_uri(path, immutable=True), uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    _configure(conn, readonly)
    return conn


def connect_checking(path: Path) -> sqlite3.Connection:
    """A connection that only reads and leaves the file exactly as it was (``doctor``, ``backup``).

    A quiet file we could write is opened read-write with ``query_only`` on: SQLite refuses every
    write, and closing the last connection removes the -wal/-shm it made (a ``mode=ro`` open
    would leave them behind). A file in use by another process, or one we may not write, gets
    the usual read-only connection (the -wal/-shm are that process's, or cannot be made).
    """
    writable = os.access(path, os.W_OK) and bool(path.stat().st_mode & 0o222) and os.access(path.parent, os.W_OK)
    if not (_quiet(path) and writable):
        return connect(path, readonly=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    _configure(conn, readonly=True)
    return conn


def inspect_file(path: Path) -> str:
    """Classify ``path`` without writing: 'new' (absent or empty), 'sqlite', or raise StoreError."""
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as exc:
        raise StoreError(f"cannot use {path}: {exc.strerror or exc}") from None
    if is_dir:
        raise NotADatabase(f"{path} is a directory, not a database file")
    if not exists:
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.exists():
            raise StoreError(f"cannot create {path}: folder {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise StoreError(f"cannot create {path}: no permission to write in {parent}")
        return "new"
    try:
        with path.open("rb") as fh:
            head = fh.read(100)
    except PermissionError:
        raise StoreError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not head:
        return "new"
    if not head.startswith(SQLITE_MAGIC):
        raise NotADatabase(f"{path} is not a hiermem-tui database (not an SQLite file)")
    if len(head) < 100:
        raise DamagedDatabase(f"{path} is damaged: the SQLite header is truncated")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    page_count = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96]
    # With a -wal beside it, another process may be mid-checkpoint (header already says N
    # pages, file not yet extended): only a quiescent file can be judged by its size.
    quiescent = not path.with_name(path.name + "-wal").exists()
    if quiescent and header_valid and page_count and path.stat().st_size < page_size * page_count:
        raise DamagedDatabase(
            f"{path} is damaged: truncated ({path.stat().st_size} bytes, header says {page_size * page_count})"
        )
    return "sqlite"


def check_schema(conn: sqlite3.Connection, path: Path) -> int:
    """Return the schema version of an SQLite file we may use; raise if it is not ours.

    0 means an empty SQLite file that we may initialise.
    """
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise DamagedDatabase(f"{path} is damaged or not a database ({exc})") from None
    user_tables = {t for t in tables if not t.startswith("sqlite_")}
    if not user_tables:
        if version:
            raise ForeignDatabase(f"{path} is an SQLite file of another application (user_version {version})")
        return 0
    app = None
    if "meta" in user_tables:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
            app = row[0] if row else None
        except sqlite3.DatabaseError:
            app = None
    if app != APP_ID:
        shown = ", ".join(sorted(user_tables)[:5])
        raise ForeignDatabase(
            f"{path} belongs to another application (tables: {shown}); hiermem-tui will not touch it"
        )
    if version > SCHEMA_VERSION:
        raise NewerSchema(
            f"{path} was written by a newer hiermem-tui (schema {version}; this version knows up to "
            f"{SCHEMA_VERSION}): upgrade hiermem-tui"
        )
    missing = OUR_TABLES - user_tables
    if version >= 1 and missing:
        raise DamagedDatabase(f"{path} is missing tables {', '.join(sorted(missing))}")
    return version


def probe_version(path: Path) -> int | None:
    """The schema version of an existing file we may read (0: an SQLite file without tables), or
    None for a zero-byte one; raise StoreError for anything else. Writes nothing, leaves nothing
    next to it: what ``doctor`` and ``backup`` decide with before they read."""
    try:
        exists = path.exists()
    except OSError as exc:
        raise StoreError(f"cannot use {path}: {exc.strerror or exc}") from None
    if not exists:
        raise StoreError(f"{path} does not exist")
    if inspect_file(path) == "new":
        return None
    try:
        probe = connect(path, readonly=True, probe=True)
        try:
            return check_schema(probe, path)
        finally:
            probe.close()
    except sqlite3.DatabaseError as exc:
        raise DamagedDatabase(f"{path} is damaged or not a database ({exc})") from None
    except UnicodeDecodeError:
        raise DamagedDatabase(f"{path} is damaged: its schema is not valid text") from None


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Apply every migration after ``version``, each in its own transaction with its user_version.

    Foreign keys are off while migrating (SQLite's procedure for rebuilding a table that
    others reference) and checked before each commit, so a migration cannot leave a
    dangling reference behind.
    """
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        for target in range(version + 1, SCHEMA_VERSION + 1):
            script = MIGRATIONS[target - 1]
            conn.execute("BEGIN IMMEDIATE")
            try:
                # executescript would COMMIT first; run statement by statement inside our transaction.
                for statement in _split_sql(script):
                    conn.execute(statement)
                broken = conn.execute("PRAGMA foreign_key_check").fetchone()
                if broken is not None:
                    raise DamagedDatabase(f"migration {target} would leave a dangling reference in {broken[0]}")
                conn.execute(f"PRAGMA user_version = {target}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")


def _split_sql(script: str) -> list[str]:
    """Split a script into complete statements (triggers contain ';' inside BEGIN…END)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


class Db:
    """One open database file, shared by the store's repositories.

    Reads go through :attr:`conn` (the calling thread's connection); every write happens in
    a short :meth:`transaction` (``BEGIN IMMEDIATE``, so a concurrent process waits on the busy
    timeout instead of failing, and a crash leaves either all of a write or none of it).
    """

    def __init__(self, path: Path, readonly: bool, tokenizer: Tokenizer | None = None, *, checking: bool = False) -> None:
        """``checking``: read-only connections that leave no trace (:func:`connect_checking`)."""
        self.path = path
        self.readonly = readonly or checking
        self._pool = ConnectionPool(partial(connect_checking, path) if checking else partial(connect, path, readonly))
        self._tokenizer = tokenizer
        self._tx_depth: dict[int, int] = {}
        self.write_hooks: list[WriteHook] = []
        """What every write transaction does besides its own writes (the Store keeps the search index
        current with one): each is called after ``BEGIN IMMEDIATE``, and the step it returns runs last,
        inside the transaction, so it lands with the writes or not at all."""

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        return self._pool.get()

    @property
    def tokenizer(self) -> Tokenizer:
        """The token counter writes use (created on first use: it loads a 1.7 MB vocabulary)."""
        if self._tokenizer is None:
            from hiermem_tui.tokens import Tokenizer

            self._tokenizer = Tokenizer()
        return self._tokenizer

    def require_writable(self) -> None:
        if self.readonly:
            raise ReadOnlyError(f"{self.path} is open read-only: browsing works, changes are refused")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested uses join the outer one. The outermost runs
        :attr:`write_hooks` (after ``BEGIN``; their steps after the caller's writes, before ``COMMIT``)."""
        self.require_writable()
        conn = self.conn
        key = id(conn)
        depth = self._tx_depth.get(key, 0)
        if depth == 0:
            conn.execute("BEGIN IMMEDIATE")
        self._tx_depth[key] = depth + 1
        try:
            last_steps = [step for hook in self.write_hooks if (step := hook(conn)) is not None] if depth == 0 else []
            yield conn
            for step in last_steps:
                step(conn)
        except BaseException:
            self._tx_depth[key] = depth
            if depth == 0:
                conn.execute("ROLLBACK")
            raise
        else:
            self._tx_depth[key] = depth
            if depth == 0:
                conn.execute("COMMIT")

    @contextmanager
    def read_snapshot(self) -> Iterator[sqlite3.Connection]:
        """Reads that must agree with each other (an export) see one moment of the file,
        even while another process writes: one read transaction around all of them."""
        conn = self.conn
        key = id(conn)
        if self._tx_depth.get(key, 0) or conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        self._tx_depth[key] = 1
        try:
            yield conn
        finally:
            self._tx_depth[key] = 0
            conn.execute("COMMIT")

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the main file and truncate it (a file about to be copied
        or shipped is then one file)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def release_thread(self) -> None:
        """Close the calling thread's connection; the thread may open a new one later."""
        self._pool.release()

    def close(self) -> None:
        self._pool.close()
