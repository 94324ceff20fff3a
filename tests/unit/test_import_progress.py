"""A long import says how far it is, and an untitled chat is titled by what its user asked (issue 36
item 8: a 50 MB one-session JSONL imported for 55 s with no progress and an empty title)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import hiermem_tui.importers.loading as importers
from hiermem_tui.commands import import_
from tests.unit._cli import run

ASKED = ("Why does the CSV parser drop every second row when the file starts with a byte order mark "
         "and uses CRLF line endings?")
TITLE = ASKED[:79].rstrip() + "…"  # the first line the user wrote, clipped


def one_big_session(path: Path, messages: int, *, title: str | None = None, first: str = ASKED) -> Path:
    """One session, no title: a first question with a pasted log (one long line), then a long exchange."""
    pasted = first + "\n" + ";".join(f"row {i},value {i * 7}" for i in range(20_000))
    with path.open("w", encoding="utf-8") as fh:
        for i in range(messages):
            record = {"session": "big", "role": "user" if i % 2 == 0 else "assistant",
                      "content": pasted if i == 0 else f"Message {i}: " + "the parser reads each row " * 40}
            if title is not None:
                record["title"] = title
            fh.write(json.dumps(record) + "\n")
    return path


def titles(db: Path) -> dict[str, str]:
    return {row["id"]: row["title"] for row in json.loads(run("sessions", "--db", str(db), "--json")[1])}


def test_a_long_import_writes_progress_lines_and_titles_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_, "PROGRESS_AFTER_S", 0.0)  # as if it had already run for a while
    monkeypatch.setattr(import_, "PROGRESS_EVERY_S", 0.0)  # every step a line
    monkeypatch.setattr(importers, "COUNT_BATCH", 100_000)  # ~1.4 M characters: 14 batches
    src = one_big_session(tmp_path / "big.jsonl", 1200)
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0, err
    assert out == f"{src} (jsonl): 1 session(s), 1 new; 1200 episode(s) added, 0 already present\n"  # stdout: results
    lines = err.splitlines()
    assert lines and all(line.startswith("hiermem-tui: importing big.jsonl, file 1 of 1, ") for line in lines), lines
    assert lines[0].endswith(": reading big.jsonl")
    counts = [int(m[1].replace(",", "")) for line in lines
              if (m := re.search(r": counting tokens: ([\d,]+) of 1,200 messages of session big \(1\.\d M characters\)$",
                                 line))]
    assert counts[0] == 0 and counts[-1] == 1200 and len(set(counts)) >= 10 and counts == sorted(counts)
    assert any(re.search(r": writing 1,200 messages of session big \(1\.\d M characters\)$", line) for line in lines)
    assert lines[-1].endswith(": 1 session, 1,200 episodes so far")
    assert titles(db) == {"big": TITLE}


def test_a_short_import_says_nothing_on_stderr(tmp_path: Path) -> None:
    src = one_big_session(tmp_path / "small.jsonl", 4)
    code, _, err = run("import", "--db", str(tmp_path / "h.db"), str(src))  # PROGRESS_AFTER_S not reached
    assert (code, err) == (0, "")


def test_a_title_from_the_source_wins_and_a_fallback_never_replaces_one(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    run("import", "--db", str(db), str(one_big_session(tmp_path / "a.jsonl", 2)))
    assert titles(db) == {"big": TITLE}
    grown = one_big_session(tmp_path / "b.jsonl", 4, first="Something else entirely")  # (a conflict, reported)
    run("import", "--db", str(db), str(grown))
    assert titles(db) == {"big": TITLE}
    run("import", "--db", str(db), str(one_big_session(tmp_path / "c.jsonl", 6, title="CSV rows")))
    assert titles(db) == {"big": "CSV rows"}
