"""Read-only access to other apps' SQLite files (llm, oterm, Open WebUI, lossless-claw, lossless-code).

Shared so that every SQLite importer opens a user's database the same careful way (it must
never be changed, nor get stray ``-wal``/``-shm`` files), adapts to whatever schema version it
meets, and turns SQLite failures into one-line ``FormatError``s instead of tracebacks.

The tables and columns of a source, and the quoting of the names read from it, come from
sqlite-utils (the library llm writes its own ``logs.db`` with), given our own ``mode=ro``
connection: it never opens the file itself. It is imported here, when a source is first
read, never at module import: the TUI's start and ``--version`` do not load it (a test holds
that; ARCHITECTURE §8 has the figures).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote as url_quote

from hiermem_tui.importers.base import FormatError

if TYPE_CHECKING:
    import sqlite_utils

SQLITE_MAGIC = b"SQLite format 3\x00"
Schema = dict[str, set[str]]


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open a source database so that nothing can change it.

    ``mode=ro`` refuses every write. A WAL-mode file needs its ``-wal``/``-shm`` to be read;
    when no ``-wal`` exists (the owning app closed cleanly) all data is in the main file, and
    ``immutable=1`` is used so SQLite does not create stray ``-wal``/``-shm`` files next to
    the user's database. If the owning app is running, the ``-wal`` exists and is read.
    """
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not header.startswith(SQLITE_MAGIC):
        raise FormatError(f"{path.name} is not a SQLite database")
    params = "mode=ro"
    if len(header) > 18 and header[18] == 2 and not Path(f"{path}-wal").exists():
        params += "&immutable=1"
    uri = f"file:{url_quote(str(path.absolute()))}?{params}"
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.row_factory = sqlite3.Row
        # SQLite does not check that TEXT is UTF-8; a foreign or crashed writer can leave bytes
        # that are not. Decoding leniently costs that cell its odd bytes, not the whole source.
        conn.text_factory = _lenient_text
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if conn is not None:
            conn.close()
        raise FormatError(f"cannot open SQLite database {path.name}: {_reason(exc)}") from None
    return conn


def _lenient_text(data: bytes) -> str:
    """``text_factory``: TEXT cells as str, invalid UTF-8 replaced by U+FFFD."""
    return data.decode("utf-8", errors="replace")


def _reason(exc: Exception) -> str:
    """One line about a failure. sqlite3 raises UnicodeDecodeError when the error message it
    builds quotes schema text that is not UTF-8 (a garbled ``sqlite_master``)."""
    if isinstance(exc, UnicodeDecodeError):
        return "its schema is damaged (text that is not UTF-8)"
    return str(exc).replace("\n", " ")


def text_or_none(value: object) -> str | None:
    """A cell read from a column meant to hold text, as text: SQLite stores whatever type it
    is given, so an app's "TEXT" column can hold an integer, a real or a BLOB. BLOBs are decoded
    as UTF-8 (bad bytes replaced), numbers written out; NULL stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def int_or_none(value: object) -> int | None:
    """A cell read from a column meant to hold a number, as an int (None: NULL, or not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, bytes)):
        return None
    try:
        return int(value)
    except (ValueError, OverflowError):
        return None


def source_db(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """sqlite-utils over our read-only connection: no plugins, no PRAGMA of its own (it would set
    ``recursive_triggers`` on the connection otherwise)."""
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)


def quote(name: str) -> str:
    """An SQL identifier, quoted (table and column names come from the file: never trusted)."""
    from sqlite_utils.db import quote_identifier

    return quote_identifier(name)


def read_schema(conn: sqlite3.Connection) -> Schema:
    """Table name → column names, so importers adapt to the schema version they meet."""
    return {str(table.name): {str(column.name) for column in table.columns} for table in source_db(conn).tables}


def sniff_sqlite(path: Path, head: bytes, accept: Callable[[Schema], bool]) -> bool:
    """Shared sniff: a SQLite header, then a look at the tables (never raises)."""
    if not head.startswith(SQLITE_MAGIC):
        return False
    try:
        conn = open_readonly(path)
    except FormatError:
        return False
    try:
        return accept(read_schema(conn))
    except (sqlite3.Error, UnicodeDecodeError):
        return False
    finally:
        conn.close()


@contextmanager
def open_source(
    path: Path, accept: Callable[[Schema], bool], what: str
) -> Iterator[tuple[sqlite3.Connection, Schema]]:
    """The read-only connection and schema of a source that ``accept`` recognises; closed on exit.

    Fails with ``<file> is not <what>`` when the tables are not the format's. A SQLite error
    while the body reads (a damaged page, a file locked away) becomes one ``FormatError`` line.
    """
    conn = open_readonly(path)
    try:
        try:
            schema = read_schema(conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise FormatError(f"cannot read SQLite database {path.name}: {_reason(exc)}") from None
        if not accept(schema):
            raise FormatError(f"{path.name} is not {what}")
        try:
            yield conn, schema
        except sqlite3.Error as exc:
            raise FormatError(f"error reading {path.name}: {_reason(exc)}") from exc
    finally:
        conn.close()


def count_sessions(path: Path, accept: Callable[[Schema], bool], query: Callable[[Schema], str | None]) -> int | None:
    """How many conversations a source holds, by one cheap query (``query`` picks it for the
    schema met; None from it: only a full read could tell). None on any failure: a count is
    only a hint next to a path, never a reason to fail."""
    try:
        with open_source(path, accept, "the format") as (conn, schema):
            sql = query(schema)
            return None if sql is None else int(conn.execute(sql).fetchone()[0])
    except (FormatError, sqlite3.Error, UnicodeDecodeError, TypeError, ValueError):
        return None


def select_list(present: set[str], wanted: tuple[str, ...]) -> str:
    """``a, b, NULL AS c`` — read optional columns without a query per schema version."""
    return ", ".join(quote(c) if c in present else f"NULL AS {quote(c)}" for c in wanted)
