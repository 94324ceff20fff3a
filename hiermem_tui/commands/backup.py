"""``hiermem-tui backup [--db PATH] DEST [--force]``: a consistent copy of the file, even while it is in use.

The copy is the file as it was when the backup began (SQLite's online backup API inside one read
transaction, see store/backup.py): a compaction or an import going on in another process
meanwhile neither blocks it nor ends up half in it. It is checked before it is put in place, and
``DEST`` is never overwritten unless ``--force`` is given. Exit codes: 0 done, 1 the copy failed,
2 bad usage or a source that is not a readable hiermem-tui database (left exactly as it was).

:func:`take_backup` is what ``repair --backup`` and ``resummarize --backup`` call before they start.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..store import Store, StoreError
from ..store.backup import BackupResult, backup, check_destination
from ..store.db import Db, probe_version
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option
from .doctor import DoctorBar
from ..words import counted


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("backup", help="copy the database safely, even while another process writes to it")
    add_db_option(p)
    p.add_argument("dest", metavar="DEST", help="the copy to write (must not exist)")
    p.add_argument("--force", action="store_true", help="replace DEST if it exists")
    p.set_defaults(func=run)


def add_backup_option(p: argparse.ArgumentParser) -> None:
    """``--backup DEST`` for the commands that replace summaries in bulk (repair, resummarize)."""
    p.add_argument("--backup", metavar="DEST", type=Path,
                   help="first copy the database to DEST (which must not exist), as `hiermem-tui backup` does")


def describe(result: BackupResult) -> str:
    return (f"backed up {counted(result.sessions, 'session')}, {counted(result.episodes, 'episode')} ({result.bytes / 1e6:,.1f} MB) "
            f"to {result.path} in {result.seconds:.1f} s")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    path = ctx.settings.db_path
    dest = Path(args.dest).expanduser()
    try:
        version = probe_version(path)
        if version is None or version == 0:
            raise StoreError(f"{path} is empty: there is nothing to back up")
        check_destination(path, dest, force=args.force)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    bar = DoctorBar(ctx)
    db = Db(path, readonly=True, checking=True)
    try:
        result = backup(db, dest, force=args.force, on_progress=bar.pages)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_FAILED) from None
    finally:
        bar.clear()
        db.close()
    ctx.say(describe(result))
    return EXIT_OK


def take_backup(ctx: CliContext, store: Store, dest: Path | None) -> None:
    """Before a bulk re-summarise: back the open store up to ``dest`` (nothing when None); a one-line
    error (exit 1, nothing run) when the copy cannot be made."""
    if dest is None:
        return
    bar = DoctorBar(ctx)
    try:
        result = backup(store.db, dest.expanduser(), on_progress=bar.pages)
    except StoreError as exc:
        raise CliError(f"{exc}; nothing was run", EXIT_FAILED) from None
    finally:
        bar.clear()
    ctx.warn(f"hiermem-tui: {describe(result)}")


def check_backup_destination(ctx: CliContext, dest: Path | None) -> None:
    """Refuse a ``--backup DEST`` that cannot be used before anything is opened (exit 2)."""
    if dest is None:
        return
    try:
        check_destination(ctx.settings.db_path, dest.expanduser())
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
