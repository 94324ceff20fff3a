#!/usr/bin/env python3
"""Compose ``hiermem_tui/assets/demo/demo.jsonl``, the data ``hiermem-tui --demo`` opens, from the
authored conversations in ``scripts/demo_sessions/`` (one file per session).

Why files of text and not JSON: the conversations are long Markdown with code blocks, tool output and
tables. As text, a person reads and edits them as they appear and a diff shows the lines that changed;
JSON would put a whole reply on one line, its newlines and quotes escaped, and every timestamp by hand.
Everything is deterministic: running it twice writes the same bytes.

Usage:
    python scripts/make_demo_jsonl.py           # (re)write the bundled file
    python scripts/make_demo_jsonl.py --check   # exit 1 if the bundled file is out of date

A session's file is ``NN-<session id>.md``; ``NN`` is its place in the output. Its first line is
``# <title>``, then the script:
    @ 2026-05-11T19:42:00Z      sets the clock (next turn happens at exactly this time)
    == user +4m                 starts a turn; the gap is added to the clock (d/h/m/s, combinable: +1h20m)
    Without a gap, a turn comes a typical time after the previous one (see DEFAULT_GAP).
Every other line belongs to the turn above it. All content is literal text: markup-like strings and
backslash sequences are kept as written; blank lines at a turn's start and end are dropped.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "hiermem_tui" / "assets" / "demo" / "demo.jsonl"
SESSIONS_DIR = ROOT / "scripts" / "demo_sessions"

DEFAULT_GAP = {"user": timedelta(minutes=3), "assistant": timedelta(seconds=40),
               "tool": timedelta(seconds=15), "system": timedelta(0)}

_TURN = re.compile(r"^== (user|assistant|system|tool)(?: \+((?:\d+[dhms])+))?\s*$")
_AT = re.compile(r"^@ (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s*$")
_PART = re.compile(r"(\d+)([dhms])")
_UNIT = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_FILE = re.compile(r"^(\d+)-(.+)\.md$")


@dataclass(frozen=True)
class Session:
    """One authored conversation: a stable id, a title, and its script text."""

    id: str
    title: str
    script: str


def _gap(text: str) -> timedelta:
    return sum((timedelta(**{_UNIT[u]: int(n)}) for n, u in _PART.findall(text)), timedelta(0))


def parse_script(script: str) -> list[tuple[str, str, datetime]]:
    """Turn script text into (role, content, created_at) turns; raises ValueError on mistakes."""
    turns: list[tuple[str, str, datetime]] = []
    clock: datetime | None = None
    pinned = False  # an "@" line sets the time of the next turn exactly
    role: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if role is not None:
            content = "\n".join(lines).strip("\n")
            if not content.strip():
                raise ValueError(f"empty {role} turn after {turns[-1][2] if turns else 'start'}")
            turns.append((role, content, when))

    when = datetime.min.replace(tzinfo=timezone.utc)
    for line in script.splitlines():
        at, turn = _AT.match(line), _TURN.match(line)
        if at:
            flush()
            role, lines = None, []
            new = datetime.strptime(at.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            if clock is not None and new < clock:
                raise ValueError(f"clock goes backwards at {at.group(1)}")
            clock, pinned = new, True
        elif turn:
            flush()
            if clock is None:
                raise ValueError("script must start with an '@ <time>' line")
            role, lines = turn.group(1), []
            if not pinned:
                clock += _gap(turn.group(2)) if turn.group(2) else DEFAULT_GAP[role]
            pinned = False
            when = clock
        elif role is not None:
            lines.append(line)
        elif line.strip():
            raise ValueError(f"text outside a turn: {line[:60]!r}")
    flush()
    return turns


def read_session(path: Path) -> Session:
    """One session's file: ``NN-<id>.md``, a ``# <title>`` line, then the script."""
    name = _FILE.match(path.name)
    if name is None:
        raise ValueError(f"{path.name}: a session's file is named NN-<session id>.md")
    title, _, script = path.read_text(encoding="utf-8").partition("\n")
    if not title.startswith("# ") or not title[2:].strip():
        raise ValueError(f"{path.name}: the first line must be '# <title>'")
    return Session(name.group(2), title[2:], script)


def load_sessions(folder: Path = SESSIONS_DIR) -> list[Session]:
    """Every session's file in ``folder``, in the order of their numbers."""
    paths = sorted(folder.glob("*.md"), key=lambda p: (int(m.group(1)) if (m := _FILE.match(p.name)) else -1, p.name))
    sessions = [read_session(p) for p in paths]
    ids = [s.id for s in sessions]
    if len(set(ids)) != len(ids):
        raise ValueError(f"two files for one session id in {folder}")
    return sessions


def records(sessions: list[Session]) -> list[dict[str, str]]:
    """Native JSONL records (see DESIGN.md §6), checked for the things the TUI relies on."""
    out: list[dict[str, str]] = []
    for s in sessions:
        try:
            turns = parse_script(s.script)
        except ValueError as exc:
            raise ValueError(f"{s.id}: {exc}") from None
        for role, content, when in turns:
            bad = [c for c in content if ord(c) < 32 and c not in "\n\t"]
            if bad:
                raise ValueError(f"{s.id}: control character {bad[0]!r} in content; write it as text")
            out.append({"session": s.id, "title": s.title, "role": role, "content": content,
                        "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return out


def render(sessions: list[Session]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(sessions))


def main(argv: list[str]) -> int:
    try:
        sessions = load_sessions()
        text = render(sessions)
    except (OSError, ValueError) as exc:
        print(f"make_demo_jsonl: {exc}", file=sys.stderr)
        return 2
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python scripts/make_demo_jsonl.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    for s in sessions:
        turns = parse_script(s.script)
        days = len({when.date() for _, _, when in turns})
        print(f"{s.id:28} {len(turns):4} episodes over {days} day(s)")
    print(f"wrote {OUT} ({len(text.encode('utf-8')):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
