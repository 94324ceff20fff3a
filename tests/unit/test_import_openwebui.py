"""Open WebUI webui.db importer: current branch only, broken rows, cycles; and a sniff matrix
over every input format these five importers know, so no two claim the same file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.importers import jsonl, llm, openwebui, oterm, sharegpt
from hiermem_tui.importers.base import FormatError, Problems, read_head
from tests.unit.test_import_jsonl import write_text_samples
from tests.unit.test_import_llm import build_legacy_db, build_threads_db
from tests.unit.test_import_oterm import build_oterm_db

WEBUI_SCHEMA = """
CREATE TABLE user (id TEXT PRIMARY KEY, name TEXT, email TEXT, role TEXT, created_at INTEGER);
CREATE TABLE chat (id TEXT PRIMARY KEY, user_id TEXT, title TEXT, chat JSON, created_at BIGINT,
    updated_at BIGINT, share_id TEXT, archived BOOLEAN, pinned BOOLEAN, meta JSON, folder_id TEXT);
-- Open WebUI's channel messages: a "message" table that must not make it look like oterm.
CREATE TABLE message (id TEXT PRIMARY KEY, user_id TEXT, channel_id TEXT, content TEXT,
    data JSON, meta JSON, created_at BIGINT, updated_at BIGINT);
"""

T = 1714557600  # 2024-05-01T10:00:00Z


def _msg(mid: str, parent: str | None, role: str, content: Any, ts: int, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "parentId": parent, "childrenIds": [], "role": role, "content": content,
            "timestamp": ts, **extra}


def _tree(current: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"title": "from json", "history": {"currentId": current, "messages": {m["id"]: m for m in messages}}}


def build_webui_db(path: Path) -> Path:
    """chat-a: an edited question and a regenerated answer (current = second answer of the
    edited branch); chat-b: a parent cycle; chat-c: broken JSON; chat-d: no title, archived,
    ms timestamps and an attachment; chat-e: no messages."""
    branchy = _tree(
        "a3b",
        _msg("s0", None, "system", "You are terse.", T),
        _msg("u1", "s0", "user", "How tall is K2?", T + 10),
        _msg("a1", "u1", "assistant", "8,611 m.", T + 20, model="llama3"),
        _msg("u2", "s0", "user", "How tall is K2, in feet?", T + 30),  # edited question
        _msg("a3", "u2", "assistant", "About 28,000 ft.", T + 40, model="llama3"),
        _msg("a3b", "u2", "assistant", "28,251 ft.", T + 50, model="qwen2"),  # regenerated
    )
    cyclic = _tree("x2", _msg("x1", "x2", "user", "loop one", T), _msg("x2", "x1", "assistant", "loop two", T + 1))
    attach = _tree(
        "d2",
        _msg("d1", None, "user", [{"type": "text", "text": "What is in this picture?"}], (T + 100) * 1000,
             files=[{"type": "image", "name": "cat.jpg"}]),
        _msg("d2", "d1", "assistant", "A cat on a sofa.", (T + 101) * 1000),
        _msg("d3", "d2", "robot", "unknown role", T + 102),
    )
    attach["history"]["messages"]["d3"]["parentId"] = "d2"
    attach["history"]["currentId"] = "d3"
    with sqlite3.connect(path) as db:
        db.executescript(WEBUI_SCHEMA)
        db.execute("INSERT INTO user VALUES ('u', 'Ada', 'ada@example.invalid', 'admin', ?)", (T,))
        rows = [
            ("chat-a", "u", "K2 height", json.dumps(branchy), T, T + 60, 0, 1),
            ("chat-b", "u", "Loop", json.dumps(cyclic), T + 1, T + 1, 0, 0),
            ("chat-c", "u", "Broken", '{"history": {"currentId": ', T + 2, T + 2, 0, 0),
            ("chat-d", "u", "", json.dumps(attach), T + 3, T + 3, 1, 0),
            ("chat-e", "u", "New Chat", json.dumps({"history": {"currentId": None, "messages": {}}}),
             T + 4, T + 4, 0, 0),
        ]
        db.executemany(
            "INSERT INTO chat (id, user_id, title, chat, created_at, updated_at, archived, pinned) "
            "VALUES (?,?,?,?,?,?,?,?)", rows,
        )
    return path


def _parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(openwebui.parse(path, problems)), problems


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def test_only_the_current_branch_is_imported(tmp_path: Path) -> None:
    sessions, _ = _parse(build_webui_db(tmp_path / "webui.db"))
    chat = sessions[0]
    assert (chat.id, chat.title, chat.source) == ("openwebui:chat-a", "K2 height", "openwebui")
    assert [e.source_id for e in chat.episodes] == ["s0", "u2", "a3b"]
    assert [e.role for e in chat.episodes] == ["system", "user", "assistant"]
    assert [e.content for e in chat.episodes][1:] == ["How tall is K2, in feet?", "28,251 ft."]
    assert [e.created_at for e in chat.episodes] == [_utc(T), _utc(T + 30), _utc(T + 50)]
    assert chat.episodes[2].metadata == {"model": "qwen2"}
    assert chat.created_at == _utc(T)
    assert chat.metadata == {"pinned": True}


def test_cycles_broken_rows_and_fallbacks(tmp_path: Path) -> None:
    sessions, problems = _parse(build_webui_db(tmp_path / "webui.db"))
    by_id = {s.id: s for s in sessions}
    assert list(by_id) == ["openwebui:chat-a", "openwebui:chat-b", "openwebui:chat-d"]
    assert [e.content for e in by_id["openwebui:chat-b"].episodes] == ["loop one", "loop two"]
    d = by_id["openwebui:chat-d"]
    assert d.title == "from json"  # empty title column → the JSON's title
    assert d.metadata == {"archived": True}
    assert [e.content for e in d.episodes] == ["What is in this picture?\n\n[attachment: cat.jpg]", "A cat on a sofa."]
    assert d.episodes[0].created_at == _utc(T + 100)  # milliseconds understood
    assert problems.reasons == {
        "cycle in message parents": 1,
        "chat JSON is not valid": 1,
        "unknown role 'robot'": 1,
        "chat with no messages": 1,
    }
    assert "webui.db:chat chat-c: chat JSON is not valid" in problems.examples


def test_not_openwebui_raises_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not an Open WebUI webui.db"):
        _parse(build_oterm_db(tmp_path / "store.db"))
    with pytest.raises(FormatError, match="not a SQLite database"):
        _parse(write_text_samples(tmp_path)["claude_ai"])


def test_source_file_is_never_modified(tmp_path: Path) -> None:
    path = build_webui_db(tmp_path / "webui.db")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _parse(path)
    openwebui.sniff(path, read_head(path))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert [p.name for p in tmp_path.iterdir()] == ["webui.db"]


def test_parse_is_deterministic(tmp_path: Path) -> None:
    path = build_webui_db(tmp_path / "webui.db")
    assert _parse(path)[0] == _parse(path)[0]


def test_sniff_matrix_each_input_claimed_by_at_most_its_own_importer(tmp_path: Path) -> None:
    inputs = write_text_samples(tmp_path)
    inputs["llm_legacy"] = build_legacy_db(tmp_path / "legacy.db")
    build_threads_db(tmp_path / "threads.db")
    inputs["llm_threads"] = tmp_path / "threads.db"
    inputs["oterm"] = build_oterm_db(tmp_path / "store.db")
    inputs["openwebui"] = build_webui_db(tmp_path / "webui.db")
    unrelated = tmp_path / "notes.db"
    with sqlite3.connect(unrelated) as db:
        db.execute("CREATE TABLE chat (id INTEGER, body TEXT)")
        db.execute("CREATE TABLE message (id INTEGER, body TEXT)")
    inputs["unrelated_sqlite"] = unrelated
    expected = {
        "jsonl": "jsonl", "sharegpt": "sharegpt", "sharegpt_lines": "sharegpt",
        "llm_legacy": "llm", "llm_threads": "llm", "oterm": "oterm", "openwebui": "openwebui",
    }
    importers = (jsonl, sharegpt, llm, oterm, openwebui)
    for name, path in inputs.items():
        head = read_head(path)
        claimed = [imp.NAME for imp in importers if imp.sniff(path, head)]
        assert claimed == ([expected[name]] if name in expected else []), name
