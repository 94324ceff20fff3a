"""oterm store.db importer: chats, system prompts, author mapping, orphans, read-only access."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.importers import oterm
from hiermem_tui.importers.base import FormatError, Problems, read_head
from tests.unit.test_import_jsonl import write_text_samples
from tests.unit.test_import_llm import build_legacy_db

OTERM_SCHEMA = """
CREATE TABLE chat (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, model TEXT NOT NULL,
    system TEXT, format TEXT, parameters TEXT, keep_alive INTEGER, tools TEXT, provider TEXT);
CREATE TABLE message (id INTEGER PRIMARY KEY AUTOINCREMENT, chat_id INTEGER NOT NULL,
    author TEXT NOT NULL, text TEXT NOT NULL, images TEXT,
    FOREIGN KEY(chat_id) REFERENCES chat(id) ON DELETE CASCADE);
"""


def build_oterm_db(path: Path) -> Path:
    """Chat 1 (system prompt, image), chat 2 (old "me"/"ollama" authors, a bad author),
    chat 3 (no messages) and messages left behind by a deleted chat 9."""
    with sqlite3.connect(path) as db:
        db.executescript(OTERM_SCHEMA)
        db.executemany(
            "INSERT INTO chat (id, name, model, system, provider) VALUES (?,?,?,?,?)",
            [(1, "Haiku practice", "llama3.2", "Reply only in haiku.", "ollama"),
             (2, None, "mistral", None, None),
             (3, "Empty", "mistral", None, None)],
        )
        db.executemany(
            "INSERT INTO message (id, chat_id, author, text, images) VALUES (?,?,?,?,?)",
            [(1, 1, "user", "Write about rain.", None),
             (2, 2, "me", "Old-style question about tides?", "[]"),
             (3, 1, "assistant", "Soft rain on tin roofs\nthe gutter hums its one note\nnight keeps the rhythm", None),
             (4, 9, "user", "from a deleted chat", None),
             (5, 2, "ollama", "Two high tides a day.", None),
             (6, 1, "user", "Now about this photo.", json.dumps(["aGVsbG8=", "d29ybGQ="])),
             (7, 2, "narrator", "not a speaker", None),
             (8, 2, "me", "", None)],
        )
    return path


def _parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(oterm.parse(path, problems)), problems


def test_sessions_roles_order_and_ids(tmp_path: Path) -> None:
    sessions, problems = _parse(build_oterm_db(tmp_path / "store.db"))
    assert [s.id for s in sessions] == ["oterm:1", "oterm:2"]
    haiku, tides = sessions
    assert haiku.title == "Haiku practice" and haiku.source == "oterm"
    assert haiku.metadata == {"model": "llama3.2", "provider": "ollama"}
    assert [(e.role, e.source_id) for e in haiku.episodes] == [
        ("system", "system"), ("user", "1"), ("assistant", "3"), ("user", "6"),
    ]
    assert haiku.episodes[0].content == "Reply only in haiku."
    assert haiku.episodes[2].content.count("\n") == 2  # literal text kept
    assert haiku.episodes[3].content == "Now about this photo.\n\n[2 images attached]"
    assert [(e.role, e.content) for e in tides.episodes] == [
        ("user", "Old-style question about tides?"), ("assistant", "Two high tides a day."),
    ]
    assert tides.title == "Old-style question about tides?"
    assert all(e.created_at is None for s in sessions for e in s.episodes)
    assert all(s.created_at is None for s in sessions)
    assert problems.reasons == {
        "unknown author 'narrator'": 1,
        "empty message": 1,
        "messages of a deleted chat": 1,
        "chat with no messages": 1,
    }


def test_old_message_table_without_id_orders_by_rowid(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE chat (id INTEGER PRIMARY KEY, name TEXT, model TEXT, context TEXT, system TEXT)")
        db.execute("CREATE TABLE message (chat_id INTEGER, author TEXT, text TEXT)")
        db.execute("INSERT INTO chat VALUES (4, 'old', 'llama2', '[]', NULL)")
        db.executemany("INSERT INTO message VALUES (4, ?, ?)", [("me", "first"), ("ollama", "second"), ("me", "third")])
    sessions, problems = _parse(path)
    assert problems.count == 0
    assert [(e.content, e.source_id) for e in sessions[0].episodes] == [("first", "1"), ("second", "2"), ("third", "3")]


def test_not_oterm_raises_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not an oterm store.db"):
        _parse(build_legacy_db(tmp_path / "logs.db"))
    with pytest.raises(FormatError, match="not a SQLite database"):
        _parse(write_text_samples(tmp_path)["sharegpt"])


def test_sniff(tmp_path: Path) -> None:
    own = build_oterm_db(tmp_path / "store.db")
    assert oterm.sniff(own, read_head(own))
    llm_db = build_legacy_db(tmp_path / "logs.db")
    assert not oterm.sniff(llm_db, read_head(llm_db))
    for name, path in write_text_samples(tmp_path).items():
        assert not oterm.sniff(path, read_head(path)), name


def test_source_file_is_never_modified(tmp_path: Path) -> None:
    path = build_oterm_db(tmp_path / "store.db")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _parse(path)
    oterm.sniff(path, read_head(path))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert [p.name for p in tmp_path.iterdir()] == ["store.db"]


def test_parse_is_deterministic(tmp_path: Path) -> None:
    path = build_oterm_db(tmp_path / "store.db")
    assert _parse(path)[0] == _parse(path)[0]
