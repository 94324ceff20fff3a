"""What every CLI subcommand gets: resolved settings, a way to open the store, and I/O.

Subcommands live one per module in ``commands/`` and expose ``register(subparsers)`` and
``run(args, ctx) -> int``. Errors are raised as :class:`CliError` and printed by ``cli.main``
as one line on stderr with the right exit code — never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..config import Settings
from ..store import Store, StoreError
from ..tokens import Tokenizer

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing failure: ``message`` goes to stderr as one line, ``code`` is the exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE, *, prog: str = "hiermem-tui") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.prog = prog  # printed before the message: ``hiermem-tui import: …`` for a subcommand's usage error


@dataclass
class CliContext:
    settings: Settings
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    tokenizer: Tokenizer | None = None

    @property
    def is_tty(self) -> bool:
        """Progress bars only on an interactive terminal (never in pipes, tests or CI logs)."""
        return is_tty(self.stderr)

    def open_store(self, *, readonly: bool = False, create: bool = True) -> Store:
        """Open the configured DB; any refusal becomes a one-line error with exit 2."""
        path = self.settings.db_path
        if create and not readonly:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CliError(f"cannot create {path.parent}: {exc.strerror or exc}") from None
        try:
            return Store.open(path, readonly=readonly, create=create, tokenizer=self.tokenizer)
        except StoreError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None

    def open_writable(self) -> Store:
        store = self.open_store()
        if store.readonly:
            store.close()
            raise CliError(f"{self.settings.db_path} is read-only: cannot write to it", EXIT_USAGE)
        return store

    def say(self, text: str) -> None:
        print(text, file=self.stdout)

    def warn(self, text: str) -> None:
        print(text, file=self.stderr)


def is_tty(stream: TextIO) -> bool:
    """``stream`` is an interactive terminal (False for pipes, files, test buffers)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def path_state(path: Path) -> str:
    """'missing', 'empty' (a zero-byte file, as `touch` makes) or 'present'; a path that cannot
    even be looked at (too long, no permission on a folder) is a one-line CliError."""
    try:
        if not path.exists():
            return "missing"
        return "empty" if path.is_file() and path.stat().st_size == 0 else "present"
    except OSError as exc:
        raise CliError(f"cannot use {path}: {exc.strerror or exc}", EXIT_USAGE) from None


def add_db_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand that repeats --db must not reset a value given before it
    parser.add_argument(
        "--db", metavar="PATH", default=argparse.SUPPRESS,
        help="database file (default: $HIERMEM_DB or hiermem.db in the user data dir)",
    )
