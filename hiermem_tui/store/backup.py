"""A consistent copy of a database file while it is in use, with SQLite's online backup API.

Why one read transaction around the whole copy: the backup API copies a few thousand pages per
step (so a big file shows progress), and left to itself it restarts whenever another connection
writes between two steps — on a file a compaction keeps writing, that can mean never finishing.
Holding a read transaction on the source pins one snapshot of the WAL file for every step, so the
copy is the file as it was at that moment: everything committed before it began, nothing half
of a later write. Writers are not blocked meanwhile (WAL).

Why a temporary file and a rename: the destination appears whole or not at all. The copy is
checked (``PRAGMA quick_check``) before it is put in place, and without ``force`` an existing
destination is never overwritten (a hard link gives the name, which fails if it exists).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .db import Db, StoreError

PAGES_PER_STEP = 4096
"""Pages copied per backup step (16 MB at 4 KiB pages): progress a few times a second."""

Progress = Callable[[int, int], None]
"""``on_progress(pages copied, pages in all)``."""


@dataclass(frozen=True, slots=True)
class BackupResult:
    """What a backup copied: the snapshot's sessions and episodes, its size and how long it took."""

    path: Path
    sessions: int
    episodes: int
    pages: int
    bytes: int
    seconds: float


def default_backup_path(db_path: Path, now: datetime | None = None) -> Path:
    """``hiermem.backup-20261201-213000.db`` beside the file (``-2``, ``-3``… if that exists)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    suffix = db_path.suffix or ".db"
    candidate = db_path.with_name(f"{db_path.stem}.backup-{stamp}{suffix}")
    n = 2
    while candidate.exists():
        candidate = db_path.with_name(f"{db_path.stem}.backup-{stamp}-{n}{suffix}")
        n += 1
    return candidate


def check_destination(db_path: Path, dest: Path, *, force: bool = False) -> None:
    """Refuse (StoreError, one line) a destination the copy may not go to, before any work."""
    try:
        if dest.is_dir():
            raise StoreError(f"{dest} is a folder: give the backup a file name (for example {dest / db_path.name})")
        parent = dest.parent if str(dest.parent) else Path(".")
        if not parent.is_dir():
            raise StoreError(f"cannot write {dest}: folder {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise StoreError(f"cannot write {dest}: no permission to write in {parent}")
        if dest.exists() or dest.is_symlink():
            if dest.resolve() == db_path.resolve():
                raise StoreError(f"{dest} is the database itself: back it up to another file")
            if not force:
                raise StoreError(f"{dest} already exists: choose another name, or pass --force to replace it")
            for extra in ("-wal", "-shm", "-journal"):
                if dest.with_name(dest.name + extra).exists():
                    raise StoreError(f"{dest} may be in use (a {extra} file is beside it): "
                                     "close what has it open, or choose another name")
    except OSError as exc:
        raise StoreError(f"cannot use {dest}: {exc.strerror or exc}") from None


def backup(db: Db, dest: Path, *, force: bool = False, on_progress: Progress | None = None,
           pages_per_step: int = PAGES_PER_STEP) -> BackupResult:
    """Copy the file ``db`` is open on to ``dest``, consistently, while others may write to it.

    Runs on the calling thread's connection (outside any transaction of ours). Raises StoreError
    for a destination it may not use, or when the copy fails its check; ``dest`` is then untouched.
    """
    check_destination(db.path, dest, force=force)
    started = time.monotonic()
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    src = db.conn
    if src.in_transaction:
        raise StoreError("a backup cannot start inside a transaction")
    try:
        src.execute("BEGIN")
        try:
            # the snapshot starts at the first read: everything committed before now is in the copy
            sessions, episodes = src.execute(
                "SELECT count(*), coalesce(sum(episode_count), 0) FROM sessions").fetchone()
            target = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                src.backup(target, pages=pages_per_step,
                           progress=(lambda _s, left, total: on_progress(total - left, total)) if on_progress else None)
                verdict = target.execute("PRAGMA quick_check").fetchone()[0]
                pages = int(target.execute("PRAGMA page_count").fetchone()[0])
            finally:
                target.close()
        finally:
            src.execute("COMMIT")
        if verdict != "ok":
            raise StoreError(f"the copy failed its check ({verdict}); {dest} was not written")
        _fsync(tmp)
        _put_in_place(tmp, dest, force)
    except sqlite3.Error as exc:
        raise StoreError(f"could not back up {db.path}: {exc}") from None
    except OSError as exc:
        raise StoreError(f"could not write {dest}: {exc.strerror or exc}") from None
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
    return BackupResult(dest, int(sessions), int(episodes), pages, dest.stat().st_size, time.monotonic() - started)


def _put_in_place(tmp: Path, dest: Path, force: bool) -> None:
    if force:
        os.replace(tmp, dest)
    else:
        try:
            os.link(tmp, dest)  # fails if dest appeared meanwhile: never overwrite without --force
        except FileExistsError:
            raise StoreError(f"{dest} already exists: choose another name, or pass --force to replace it") from None
        except OSError:  # a file system without hard links
            if dest.exists():
                raise StoreError(f"{dest} already exists: choose another name, or pass --force to replace it") from None
            os.replace(tmp, dest)
    try:
        fd = os.open(dest.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    with path.open("rb+") as fh:
        os.fsync(fh.fileno())
