"""Running the CLI in process and looking at the files it leaves: what the command tests share."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from hiermem_tui.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """``hiermem-tui ARGV…`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def strays(path: Path) -> list[str]:
    """Files SQLite may leave next to a database (``-wal``, ``-shm``, ``-journal``)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-"))
