"""The native JSONL import format (ARCHITECTURE §6): one message per line.

``{"session": "ID", "title": "…"?, "role": "user|assistant|system|tool", "content": "…",
"created_at": "ISO-8601"?}``. It is the format other tools can always produce, so the parser
is strict about each line (a bad line is skipped and reported, never guessed at) but lenient
about the file (blank lines, interleaved sessions, a BOM). An assistant line whose content opens with
``<think>…</think>`` (a reasoning model's reply as Ollama streamed it) keeps that block in the episode's
metadata (``reasoning``), not in its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hiermem_tui.importers._sqlite import SQLITE_MAGIC
from hiermem_tui.importers._util import ONLY_REASONING, take_reasoning
from hiermem_tui.importers.base import (
    ROLES,
    FormatError,
    ParsedEpisode,
    ParsedSession,
    Problems,
    is_iso_text,
    utc_from_iso,
)

NAME = "jsonl"
DESCRIPTION = "Native JSONL: one {session, role, content, title?, created_at?} object per line"

# How many non-blank lines may go by without one valid record before we decide the file is
# some other format. Small enough to fail fast on a wrong --format, large enough to survive
# a few damaged lines at the top of a genuine file.
PROBE_LINES = 20


@dataclass(slots=True)
class _Pending:
    """A session being collected: kept minimal because a whole file is held until EOF."""

    title: str = ""
    episodes: list[ParsedEpisode] = field(default_factory=list)


def _record(obj: object) -> tuple[str, str | None, ParsedEpisode] | str:
    """Validate one decoded line: ``(session, title, episode)`` or the reason it is bad."""
    if not isinstance(obj, dict):
        return "line is not a JSON object"
    session = obj.get("session")
    if not isinstance(session, str) or not session.strip():
        return "missing or invalid 'session'"
    role = obj.get("role")
    if not isinstance(role, str) or role.strip().lower() not in ROLES:
        return "missing or invalid 'role'"
    content = obj.get("content")
    if not isinstance(content, str):
        return "missing or invalid 'content'"
    if not content.strip():
        return "empty 'content'"
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        return "invalid 'title' (not a string)"
    raw_time = obj.get("created_at")
    created_at: datetime | None = None
    if raw_time is not None:
        created_at = utc_from_iso(raw_time)
        if created_at is None and not is_iso_text(raw_time):  # an absurd but well-formed time is just missing
            return "invalid 'created_at' (not ISO-8601 text)"
    episode = ParsedEpisode(role=role.strip().lower(), content=content, created_at=created_at)
    if not take_reasoning(episode):
        return ONLY_REASONING
    return session, title, episode


def _decode_line(raw: bytes, lineno: int) -> object:
    """Decode one line strictly, so bad bytes are reported rather than silently replaced.

    Raises UnicodeDecodeError / JSONDecodeError / RecursionError for the caller to report.
    """
    text = raw.decode("utf-8")
    if lineno == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return json.loads(text)


def _check_line(raw: bytes, lineno: int) -> tuple[str, str | None, ParsedEpisode] | str:
    """One raw line → a valid record or the reason it is skipped."""
    try:
        obj = _decode_line(raw, lineno)
    except UnicodeDecodeError:
        return "invalid UTF-8"
    except (ValueError, RecursionError):  # ValueError covers JSONDecodeError and huge integers
        return "not valid JSON"
    return _record(obj)


def parse_line(raw: bytes, lineno: int) -> tuple[str, str | None, ParsedEpisode] | str:
    """One line (without its newline) → ``(session, title, episode)`` or the reason it is skipped.

    Public for readers that take a file a line at a time from a byte offset (watch mode),
    so they judge each line exactly as :func:`parse` does.
    """
    return _check_line(raw, lineno)


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Group the file's lines by session, keeping line order, and yield sessions in order of
    first appearance. The whole file is read before the first yield because sessions may
    interleave; only the parsed episodes are kept, not the raw lines."""
    sessions: dict[str, _Pending] = {}
    valid = 0
    nonblank = 0
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            nonblank += 1
            result = _check_line(raw, lineno)
            if isinstance(result, str):
                problems.skip(result, f"{path.name}:{lineno}")
            else:
                session_id, title, episode = result
                pending = sessions.setdefault(session_id, _Pending())
                if not pending.title and title and title.strip():
                    pending.title = title.strip()
                pending.episodes.append(episode)
                valid += 1
            if not valid and nonblank >= PROBE_LINES:
                raise FormatError(
                    f"{path.name} is not native JSONL: none of the first {PROBE_LINES} lines "
                    "is a {session, role, content} record"
                )
    if not valid:
        raise FormatError(f"{path.name} is not native JSONL: no {{session, role, content}} records")
    for session_id, pending in sessions.items():
        first_time = next((e.created_at for e in pending.episodes if e.created_at), None)
        yield ParsedSession(
            id=session_id,
            title=pending.title,
            source=NAME,
            episodes=pending.episodes,
            created_at=first_time,
        )


def sniff(path: Path, head: bytes) -> bool:
    """True when one of the first complete lines is a native record.

    Other JSONL formats (Claude Code, Codex, ShareGPT) never have top-level ``session`` +
    ``role`` + ``content`` together, so one valid record is enough evidence.
    """
    if not head or head.startswith(SQLITE_MAGIC):
        return False
    lines = head.split(b"\n")
    if len(head) >= 65536 and not head.endswith(b"\n"):
        if len(lines) == 1:
            # One line longer than the head cannot be decoded; accept it only in the shape
            # our own writers use (session key first), since message text may mention keys.
            text = head.decode("utf-8", errors="ignore").lstrip("\ufeff")
            return re.match(r'\s*\{\s*"session"\s*:\s*"', text) is not None
        lines = lines[:-1]  # the last line is cut off
    seen = 0
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        seen += 1
        if seen > PROBE_LINES:
            break
        if not isinstance(_check_line(raw.rstrip(b"\r"), index + 1), str):
            return True
    return False
