"""Reading JSONL session logs (Claude Code, Codex): a file or a folder of them, line by line.

Both tools append one JSON record per line to logs that collect in folders, together with
strays of other kinds. Decoding each line on its own, bounding the folder walk used for
sniffing and deciding when a stray file fails the import or is only skipped are one policy,
kept here so both formats follow it exactly and neither imports the other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._util import HEAD_BYTES
from hiermem_tui.importers.base import FormatError, Problems

PRECHECK_LINES = 50  # non-blank JSONL lines looked at to decide "is this the format at all"

_BAD = object()  # marks a line that did not decode


def decode_line(raw: bytes) -> tuple[Any, str]:
    """One JSONL line → ``(value, "")``, or ``(_BAD, reason)``; strict UTF-8 per line."""
    try:
        return json.loads(raw.decode("utf-8").removeprefix("\ufeff")), ""
    except UnicodeDecodeError:
        return _BAD, "invalid UTF-8"
    except RecursionError:
        return _BAD, "JSON nested too deeply"
    except ValueError:
        return _BAD, "not JSON"


def iter_jsonl(path: Path, problems: Problems | None, limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` per non-blank line; bad lines are reported (when ``problems``) and skipped.

    Each line is decoded on its own so one bad byte or bracket costs one line, not the file.
    """
    seen = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            seen += 1
            if limit is not None and seen > limit:
                return
            value, reason = decode_line(raw)
            if value is _BAD:
                if problems is not None:
                    problems.skip(reason, f"{path.name}:{lineno}")
                continue
            yield lineno, value


def head_records(head: bytes) -> list[Any]:
    """JSON values of the complete lines in a file head (for sniffing); bad lines are ignored."""
    lines = head.split(b"\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut off
    values = (decode_line(raw)[0] for raw in lines[:PRECHECK_LINES] if raw.strip())
    return [v for v in values if v is not _BAD]


def jsonl_files(path: Path) -> list[Path]:
    """Every ``*.jsonl`` under a folder, sorted, so imports are deterministic."""
    return sorted(p for p in path.rglob("*.jsonl") if p.is_file())


def sniff_dir(
    path: Path, pattern: str, check: Callable[[Path, bytes], bool], max_dirs: int = 200, max_depth: int = 5
) -> bool:
    """Judge a folder by the first matching file found in a bounded, sorted walk.

    Bounded so that pointing ``--format auto`` at a huge tree stays cheap; sorted so the same
    folder is always judged by the same file.
    """
    queue: list[tuple[Path, int]] = [(path, 0)]
    visited = 0
    while queue and visited < max_dirs:
        folder, depth = queue.pop(0)
        visited += 1
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_file() and entry.match(pattern):
                try:
                    with entry.open("rb") as fh:
                        return bool(check(entry, fh.read(HEAD_BYTES)))
                except OSError:
                    return False
        queue.extend((e, depth + 1) for e in entries if depth < max_depth and e.is_dir() and not e.name.startswith("."))
    return False


def read_jsonl_input(
    path: Path,
    problems: Problems,
    looks_right: Callable[[Any], bool],
    read_file: Callable[[Path], None],
    *,
    wrong_file: str,
    skip_reason: str,
    none_found: str,
) -> None:
    """Hand every log of a file-or-folder input to ``read_file``, in sorted order.

    A lone file that is not of the format (no ``looks_right`` record in its first lines) or
    cannot be read fails the import with ``<file>: <wrong_file>``; inside a folder such files
    are only skipped (``skip_reason``), since log folders collect strays. A folder with none of
    the format fails with ``<path>: <none_found>``.
    """
    files = jsonl_files(path) if path.is_dir() else [path]
    if not files:
        raise FormatError(f"{path}: no .jsonl files in this folder")
    read_any = False
    for file in files:
        label = str(file.relative_to(path)) if path.is_dir() else file.name
        try:
            if not any(looks_right(v) for _, v in iter_jsonl(file, None, PRECHECK_LINES)):
                if not path.is_dir():
                    raise FormatError(f"{label}: {wrong_file}")
                problems.skip(skip_reason, label)
                continue
            read_file(file)
        except OSError as exc:
            if not path.is_dir():
                raise FormatError(f"{label}: cannot read ({exc.strerror or exc})") from None
            problems.skip("unreadable file", label)
            continue
        read_any = True
    if not read_any:
        raise FormatError(f"{path}: {none_found}")
