"""Opening the database for the reporting commands (search, context, stats, runs).

One place for what they share: a missing file or an unknown session is a one-line error
(exit 2), a zero-byte file is an empty database (no store, the command prints its empty
answer), and an older file is opened writable when it can be, so it is migrated to the
current schema (and runs left ``running`` by a dead process are marked ``interrupted``)
instead of being refused as "read-only and needs an upgrade".
"""

from __future__ import annotations

from ..store import Store
from .common import EXIT_USAGE, CliContext, CliError, path_state


def open_existing(ctx: CliContext, session_id: str | None = None) -> Store | None:
    """The store, or None for an empty file; raises CliError for a missing file or session."""
    path = ctx.settings.db_path
    state = path_state(path)
    if state == "missing":
        raise CliError(f"{path} does not exist", EXIT_USAGE)
    if state == "empty":
        if session_id is not None:
            raise CliError(f"no session {session_id!r} in {path} (the database is empty)", EXIT_USAGE)
        return None
    store = ctx.open_store(create=False)
    if session_id is not None and store.sessions.get(session_id) is None:
        store.close()
        raise CliError(f"no session {session_id!r} in {path}", EXIT_USAGE)
    return store


def check_limit(value: int, most: int) -> int:
    """``--limit`` must be from 1 to ``most``: a one-line error (exit 2) otherwise."""
    if not 1 <= value <= most:
        raise CliError(f"--limit must be from 1 to {most:,}, not {value}", EXIT_USAGE)
    return value
