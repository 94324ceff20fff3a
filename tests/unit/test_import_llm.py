"""llm logs.db importer: legacy responses, the threads/messages layout, and a file with both."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import llm
from hiermem_tui.importers.base import FormatError, Problems, read_head
from tests.unit.test_import_jsonl import write_text_samples

LEGACY_SCHEMA = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
CREATE TABLE responses (
    id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT, prompt_json TEXT,
    options_json TEXT, response TEXT, response_json TEXT,
    conversation_id TEXT REFERENCES conversations(id), duration_ms INTEGER,
    datetime_utc TEXT, input_tokens INTEGER, output_tokens INTEGER, token_details TEXT
);
CREATE TABLE tool_calls (id INTEGER PRIMARY KEY, response_id TEXT, tool_id INTEGER,
    name TEXT, arguments TEXT, tool_call_id TEXT);
CREATE TABLE tool_results (id INTEGER PRIMARY KEY, response_id TEXT, tool_id INTEGER,
    name TEXT, output TEXT, tool_call_id TEXT);
"""

# The newer content-addressed layout (one of its variants: text may live in fragments
# through part_fragments, tool details in a JSON payload).
THREADS_SCHEMA = """
CREATE TABLE messages (hash TEXT PRIMARY KEY, parent_hash TEXT, role TEXT, provider_metadata TEXT);
CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT, position INTEGER, type TEXT,
    tool_name TEXT, text TEXT, payload TEXT);
CREATE TABLE fragments (id INTEGER PRIMARY KEY, hash TEXT, content TEXT, datetime_utc TEXT, source TEXT);
CREATE TABLE part_fragments (part_id INTEGER, fragment_id INTEGER, "order" INTEGER);
CREATE TABLE attachments (id TEXT PRIMARY KEY, type TEXT, path TEXT, url TEXT, content BLOB);
CREATE TABLE part_attachments (part_id INTEGER, attachment_id TEXT, "order" INTEGER);
CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT, tip_message_hash TEXT, forked_from TEXT,
    datetime_utc TEXT);
CREATE TABLE turns (id TEXT PRIMARY KEY, thread_id TEXT, parent_message_hash TEXT,
    tip_message_hash TEXT, model TEXT, resolved_model TEXT, options_json TEXT, schema_id TEXT,
    input_tokens INTEGER, output_tokens INTEGER, token_details TEXT, duration_ms INTEGER,
    datetime_utc TEXT);
"""

T0 = datetime(2025, 5, 1, 10, 0, tzinfo=timezone.utc)


def _iso(minutes: int) -> str:
    return (T0 + timedelta(minutes=minutes)).replace(tzinfo=None).isoformat()


def build_legacy_db(path: Path) -> Path:
    """conv-a (2 rows, inserted out of time order, system prompt), conv-b (tool use),
    a response without a conversation, an empty conversation and an empty row."""
    with sqlite3.connect(path) as db:
        db.executescript(LEGACY_SCHEMA)
        db.executemany(
            "INSERT INTO conversations VALUES (?, ?, ?)",
            [("conv-a", "Knots for sailing", "gpt-4o-mini"), ("conv-b", "", "llama3"),
             ("conv-empty", "Never answered", "x")],
        )
        rows = [
            ("r2", "gpt-4o-mini", "And a bowline?", "You are a sailing coach.", "Rabbit out of the hole.",
             "conv-a", 1500, _iso(5), 12, 30),
            ("r1", "gpt-4o-mini", "How do I tie a reef knot?", "You are a sailing coach.",
             "Right over left, left over right.", "conv-a", 800, _iso(0), 10, 20),
            ("r3", "llama3", "What's the weather in Oslo?", None, "", "conv-b", None, _iso(10), None, None),
            ("r4", "llama3", "", None, "It is 4°C and raining.", "conv-b", None, _iso(11), None, None),
            ("r5", "llama3", "One-off question", None, "One-off answer", None, None, _iso(20), None, None),
            ("r6", "llama3", "", None, "", "conv-b", None, _iso(12), None, None),
        ]
        db.executemany(
            "INSERT INTO responses (id, model, prompt, system, response, conversation_id, duration_ms,"
            " datetime_utc, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        db.execute("INSERT INTO tool_calls VALUES (1, 'r3', 1, 'weather', '{\"city\": \"Oslo\"}', 'c1')")
        db.execute("INSERT INTO tool_results VALUES (1, 'r4', 1, 'weather', '4C rain', 'c1')")
    return path


class _Tree:
    """Writes messages the way llm does: hash over parent + content."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def add(self, parent: str | None, role: str, *parts: tuple) -> str:
        digest = hashlib.blake2b(json.dumps([parent, role, parts]).encode(), digest_size=8).hexdigest()
        h = f"b2:{digest}"
        self.db.execute("INSERT INTO messages (hash, parent_hash, role) VALUES (?, ?, ?)", (h, parent, role))
        for position, (kind, text, tool_name, payload) in enumerate(parts):
            self.db.execute(
                "INSERT INTO parts (message_hash, position, type, tool_name, text, payload) VALUES (?,?,?,?,?,?)",
                (h, position, kind, tool_name, text, json.dumps(payload) if payload else None),
            )
        return h


def build_threads_db(path: Path, with_legacy: bool = False) -> dict[str, str]:
    """thread-1: system, user, assistant (reasoning + text + tool call), tool result,
    assistant; a fork thread-2 off thread-1's first answer; returns the message hashes."""
    with sqlite3.connect(path) as db:
        if with_legacy:
            db.executescript(LEGACY_SCHEMA)
        db.executescript(THREADS_SCHEMA)
        tree = _Tree(db)
        h = {}
        h["sys"] = tree.add(None, "system", ("text", "Be brief.", None, None))
        h["u1"] = tree.add(h["sys"], "user", ("text", None, None, None), ("attachment", None, None, None))
        part_id = db.execute("SELECT id FROM parts WHERE message_hash = ? AND position = 0", (h["u1"],)).fetchone()[0]
        db.execute("INSERT INTO fragments (id, hash, content) VALUES (1, 'f', 'Summarise this file:\n')")
        db.execute("INSERT INTO fragments (id, hash, content) VALUES (2, 'g', 'notes.txt contents')")
        db.executemany("INSERT INTO part_fragments VALUES (?, ?, ?)", [(part_id, 2, 1), (part_id, 1, 0)])
        att_part = db.execute("SELECT id FROM parts WHERE message_hash = ? AND position = 1", (h["u1"],)).fetchone()[0]
        db.execute("INSERT INTO attachments VALUES ('att1', 'image/png', 'photo.png', NULL, NULL)")
        db.execute("INSERT INTO part_attachments VALUES (?, 'att1', 0)", (att_part,))
        h["a1"] = tree.add(
            h["u1"], "assistant",
            ("reasoning", "secret chain of thought", None, None),
            ("text", "Let me check the size.", None, None),
            ("tool_call", None, "file_size", {"arguments": {"path": "notes.txt"}}),
        )
        h["t1"] = tree.add(h["a1"], "tool", ("tool_result", None, "file_size", {"output": "2 KB"}))
        h["a2"] = tree.add(h["t1"], "assistant", ("text", "It is a short file about boats.", None, None))
        h["u_fork"] = tree.add(h["a1"], "user", ("text", "Actually, skip that.", None, None))
        h["a_fork"] = tree.add(h["u_fork"], "assistant", ("text", "Skipped.", None, None))
        db.executemany(
            "INSERT INTO threads (id, name, tip_message_hash, forked_from, datetime_utc) VALUES (?,?,?,?,?)",
            [("thread-1", "Boat notes", h["a2"], None, str(T0)),
             ("thread-2", None, h["a_fork"], "thread-1", str(T0 + timedelta(hours=1)))],
        )
        db.executemany(
            "INSERT INTO turns (id, thread_id, parent_message_hash, tip_message_hash, model, datetime_utc)"
            " VALUES (?,?,?,?,?,?)",
            [("turn-1", "thread-1", h["u1"], h["a1"], "m-one", _iso(1)),
             ("turn-2", "thread-1", h["t1"], h["a2"], "m-two", _iso(2)),
             ("turn-3", "thread-2", h["u_fork"], h["a_fork"], "m-one", _iso(70))],
        )
    return h


def _parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(llm.parse(path, problems)), problems


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_legacy_sessions_roles_order_ids_times(tmp_path: Path) -> None:
    sessions, problems = _parse(build_legacy_db(tmp_path / "logs.db"))
    by_id = {s.id: s for s in sessions}
    assert list(by_id) == ["llm:conv-a", "llm:conv-b", "llm:r5"]
    a = by_id["llm:conv-a"]
    assert a.title == "Knots for sailing" and a.metadata["model"] == "gpt-4o-mini"
    assert [(e.role, e.source_id) for e in a.episodes] == [
        ("system", "r1:system"), ("user", "r1:prompt"), ("assistant", "r1:response"),
        ("user", "r2:prompt"), ("assistant", "r2:response"),
    ]  # ordered by time, not insertion; the repeated system prompt is not repeated
    assert a.episodes[1].created_at == T0
    assert a.episodes[2].created_at == T0 + timedelta(milliseconds=800)
    assert a.episodes[2].metadata == {"model": "gpt-4o-mini", "input_tokens": 10, "output_tokens": 20}
    assert a.created_at == T0
    b = by_id["llm:conv-b"]
    assert [(e.role, e.content) for e in b.episodes] == [
        ("user", "What's the weather in Oslo?"),
        ("assistant", '[tool_call weather({"city":"Oslo"})]'),
        ("tool", "[tool_result weather] 4C rain"),
        ("assistant", "It is 4°C and raining."),
    ]
    assert b.title == "What's the weather in Oslo?"
    assert [e.content for e in by_id["llm:r5"].episodes] == ["One-off question", "One-off answer"]
    assert problems.count == 2
    assert problems.reasons["response row with neither prompt nor response"] == 1
    assert problems.reasons["conversation with no responses"] == 1


def test_threads_current_chain_parts_and_times(tmp_path: Path) -> None:
    h = build_threads_db(tmp_path / "logs.db")
    sessions, problems = _parse(tmp_path / "logs.db")
    assert problems.count == 0
    one, two = sessions
    assert (one.id, one.title, one.created_at) == ("llm:thread-1", "Boat notes", T0)
    assert [e.source_id for e in one.episodes] == [h["sys"], h["u1"], h["a1"], h["t1"], h["a2"]]
    assert [e.role for e in one.episodes] == ["system", "user", "assistant", "tool", "assistant"]
    assert one.episodes[1].content == "Summarise this file:\nnotes.txt contents\n\n[attachment: image/png photo.png]"
    assert one.episodes[2].content == 'Let me check the size.\n\n[tool_call file_size({"path":"notes.txt"})]'
    assert "secret" not in one.episodes[2].content
    assert one.episodes[3].content == "[tool_result file_size] 2 KB"
    # Each message takes the time of the earliest turn whose chain reaches it.
    assert [e.created_at for e in one.episodes] == [T0 + timedelta(minutes=m) for m in (1, 1, 1, 2, 2)]
    assert one.episodes[2].metadata == {"model": "m-one"}
    # The fork shares the prefix but not the other branch.
    assert [e.source_id for e in two.episodes] == [h["sys"], h["u1"], h["a1"], h["u_fork"], h["a_fork"]]
    assert two.title == "Summarise this file:"
    assert two.episodes[-1].created_at == T0 + timedelta(minutes=70)


def test_thread_cycle_and_missing_parent_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    with sqlite3.connect(path) as db:
        db.executescript(THREADS_SCHEMA)
        db.execute("INSERT INTO messages VALUES ('m1', 'm2', 'user', NULL)")
        db.execute("INSERT INTO messages VALUES ('m2', 'm1', 'assistant', NULL)")
        db.execute("INSERT INTO messages VALUES ('m3', 'gone', 'user', NULL)")
        for h, text in (("m1", "ping"), ("m2", "pong"), ("m3", "orphan")):
            db.execute("INSERT INTO parts (message_hash, position, type, text) VALUES (?, 0, 'text', ?)", (h, text))
        db.execute("INSERT INTO threads (id, tip_message_hash, datetime_utc) VALUES ('loop', 'm1', ?)", (str(T0),))
        db.execute("INSERT INTO threads (id, tip_message_hash, datetime_utc) VALUES ('gap', 'm3', ?)", (str(T0),))
        db.execute("INSERT INTO threads (id, tip_message_hash, datetime_utc) VALUES ('void', NULL, ?)", (str(T0),))
    sessions, problems = _parse(path)
    # Same thread time: ordered by id ("gap" < "loop").
    assert [[e.content for e in s.episodes] for s in sessions] == [["orphan"], ["pong", "ping"]]
    assert sessions[1].episodes[0].created_at == T0  # no turns: the thread's own time
    assert problems.reasons == {
        "cycle in message parents": 1,
        "thread refers to a missing message": 1,
        "thread with no messages": 1,
    }


def test_both_layouts_in_one_file_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    build_threads_db(path, with_legacy=True)
    with sqlite3.connect(path) as db:
        # thread-1 also logged the legacy way (fewer episodes: no tool messages) ...
        db.execute("INSERT INTO conversations VALUES ('thread-1', 'Boat notes', 'm-one')")
        db.execute(
            "INSERT INTO responses (id, prompt, response, conversation_id, datetime_utc) "
            "VALUES ('turn-1', 'Summarise this file', 'Let me check', 'thread-1', ?)", (_iso(1),)
        )
        # ... plus a conversation that only the legacy tables know.
        db.execute("INSERT INTO conversations VALUES ('old-chat', 'Before the upgrade', 'gpt-3.5')")
        db.execute(
            "INSERT INTO responses (id, prompt, response, conversation_id, datetime_utc) "
            "VALUES ('r-old', 'hello', 'hi there', 'old-chat', '2023-01-01T00:00:00')"
        )
    sessions, problems = _parse(path)
    ids = [s.id for s in sessions]
    assert sorted(ids) == ["llm:old-chat", "llm:thread-1", "llm:thread-2"]
    assert len(ids) == len(set(ids))
    thread_one = next(s for s in sessions if s.id == "llm:thread-1")
    assert thread_one.metadata["layout"] == "threads"  # the fuller copy wins
    assert len(thread_one.episodes) == 5
    assert next(s for s in sessions if s.id == "llm:old-chat").metadata["layout"] == "responses"
    assert problems.count == 0


def test_legacy_copy_wins_when_it_holds_more(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    build_threads_db(path, with_legacy=True)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO conversations VALUES ('thread-2', 'Fork', 'm')")
        for i in range(4):
            db.execute(
                "INSERT INTO responses (id, prompt, response, conversation_id, datetime_utc) VALUES (?,?,?,?,?)",
                (f"r{i}", f"q{i}", f"a{i}", "thread-2", _iso(i)),
            )
    sessions, _ = _parse(path)
    fork = [s for s in sessions if s.id == "llm:thread-2"]
    assert len(fork) == 1 and fork[0].metadata["layout"] == "responses" and len(fork[0].episodes) == 8


def test_not_llm_raises_format_error(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    with pytest.raises(FormatError, match="not an llm logs.db"):
        _parse(other)
    text = write_text_samples(tmp_path)["jsonl"]
    with pytest.raises(FormatError, match="not a SQLite database"):
        _parse(text)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with pytest.raises(FormatError):
        _parse(corrupt)


def test_sniff(tmp_path: Path) -> None:
    legacy = build_legacy_db(tmp_path / "legacy.db")
    build_threads_db(tmp_path / "threads.db")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE responses (id TEXT, body TEXT)")  # name clash, wrong columns
    assert llm.sniff(legacy, read_head(legacy))
    assert llm.sniff(tmp_path / "threads.db", read_head(tmp_path / "threads.db"))
    assert not llm.sniff(other, read_head(other))
    for name, path in write_text_samples(tmp_path).items():
        assert not llm.sniff(path, read_head(path)), name


def test_source_file_is_never_modified(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    build_threads_db(path, with_legacy=True)
    before = _sha(path)
    _parse(path)
    llm.sniff(path, read_head(path))
    assert _sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.db"]


def test_wal_mode_source(tmp_path: Path) -> None:
    """Clean WAL file: read without leaving -wal/-shm behind. Live writer: its -wal is read."""
    path = build_legacy_db(tmp_path / "logs.db")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=wal")
    db.close()
    before = _sha(path)
    assert len(_parse(path)[0]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.db"]
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute(
            "INSERT INTO responses (id, prompt, response, datetime_utc) VALUES ('late', 'new q', 'new a', ?)",
            (_iso(30),),
        )
        writer.commit()
        assert _sha(path) == before  # the new row lives only in logs.db-wal
        sessions, _ = _parse(path)
        assert "llm:late" in [s.id for s in sessions]
        assert _sha(path) == before
    finally:
        writer.close()


def test_parse_is_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    build_threads_db(path, with_legacy=True)
    build = sqlite3.connect(path)
    build.execute("INSERT INTO conversations VALUES ('c', 'n', 'm')")
    build.execute("INSERT INTO responses (id, prompt, response, conversation_id) VALUES ('x', 'p', 'r', 'c')")
    build.commit()
    build.close()
    assert _parse(path)[0] == _parse(path)[0]


def test_other_parts_variant_and_loose_turns(tmp_path: Path) -> None:
    """Another newer schema: tool details in columns, text by ``parts.fragment_id``; and a
    turn logged outside any thread becomes a session of its own."""
    path = tmp_path / "logs.db"
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE messages (hash TEXT PRIMARY KEY, parent_hash TEXT, role TEXT);
            CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT, position INTEGER, type TEXT,
                text TEXT, fragment_id INTEGER, redacted INTEGER, name TEXT, arguments TEXT,
                tool_call_id TEXT, server_executed INTEGER, output TEXT, exception TEXT);
            CREATE TABLE fragments (id INTEGER PRIMARY KEY, hash TEXT, content TEXT);
            CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT, tip_message_hash TEXT, datetime_utc TEXT);
            CREATE TABLE turns (id TEXT PRIMARY KEY, thread_id TEXT, parent_message_hash TEXT,
                tip_message_hash TEXT, model TEXT, datetime_utc TEXT);
            """
        )
        db.execute("INSERT INTO fragments VALUES (5, 'h', 'text from a fragment')")
        db.executemany(
            "INSERT INTO messages VALUES (?, ?, ?)",
            [("h1", None, "user"), ("h2", "h1", "assistant"), ("h3", "h2", "tool"),
             ("h4", None, "user"), ("h5", "h4", "assistant")],
        )
        db.executemany(
            "INSERT INTO parts (message_hash, position, type, text, fragment_id, name, arguments, output)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [("h1", 0, "text", None, 5, None, None, None),
             ("h2", 0, "tool_call", None, None, "add", '{"b": 2, "a": 1}', None),
             ("h3", 0, "tool_result", None, None, "add", None, "3"),
             ("h4", 0, "text", "loose prompt", None, None, None, None),
             ("h5", 0, "text", "loose answer", None, None, None, None)],
        )
        db.execute("INSERT INTO threads VALUES ('t', 'Maths', 'h3', ?)", (_iso(0),))
        db.execute("INSERT INTO turns VALUES ('turn-t', 't', 'h1', 'h2', 'm', ?)", (_iso(1),))
        db.execute("INSERT INTO turns VALUES ('turn-loose', NULL, 'h4', 'h5', 'm', ?)", (_iso(9),))
    sessions, problems = _parse(path)
    assert problems.count == 0
    assert [s.id for s in sessions] == ["llm:t", "llm:turn-loose"]
    assert [e.content for e in sessions[0].episodes] == [
        "text from a fragment", '[tool_call add({"a":1,"b":2})]', "[tool_result add] 3",
    ]
    # h3 came after the last turn: it keeps the previous message's time.
    assert [e.created_at for e in sessions[0].episodes] == [T0 + timedelta(minutes=1)] * 3
    assert [e.content for e in sessions[1].episodes] == ["loose prompt", "loose answer"]
    assert sessions[1].title == "loose prompt"


def test_awkward_path_characters(tmp_path: Path) -> None:
    """The path goes into a file: URI; '?', '#', '%' and spaces must not cut it short."""
    folder = tmp_path / "my logs #1?%20 é"
    folder.mkdir()
    path = build_legacy_db(folder / "logs.db")
    assert llm.sniff(path, read_head(path))
    assert len(_parse(path)[0]) == 3
