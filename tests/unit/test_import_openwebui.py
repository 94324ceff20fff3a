"""Open WebUI webui.db importer: current branch only, broken rows, cycles; and a sniff matrix
over every input format these five importers know, so no two claim the same file."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.importers import jsonl, llm, openwebui, oterm, sharegpt
from hiermem_tui.importers.base import FormatError, Problems, read_head
from hiermem_tui.tokens import Tokenizer
from tests.unit._imported import fresh_store, import_each
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
EXPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "openwebui"


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
    with pytest.raises(FormatError, match=r"not an Open WebUI chat export .*\(looks like a Claude.ai export\)"):
        _parse(write_text_samples(tmp_path)["claude_ai"])
    with pytest.raises(FormatError, match="neither an Open WebUI webui.db nor its chat export"):
        _parse(write_text_samples(tmp_path)["jsonl"])


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
    inputs["openwebui_export"] = EXPORTS / "chat-export-a.json"
    unrelated = tmp_path / "notes.db"
    with sqlite3.connect(unrelated) as db:
        db.execute("CREATE TABLE chat (id INTEGER, body TEXT)")
        db.execute("CREATE TABLE message (id INTEGER, body TEXT)")
    inputs["unrelated_sqlite"] = unrelated
    expected = {
        "jsonl": "jsonl", "sharegpt": "sharegpt", "sharegpt_lines": "sharegpt",
        "llm_legacy": "llm", "llm_threads": "llm", "oterm": "oterm", "openwebui": "openwebui",
        "openwebui_export": "openwebui",
    }
    importers = (jsonl, sharegpt, llm, oterm, openwebui)
    for name, path in inputs.items():
        head = read_head(path)
        claimed = [imp.NAME for imp in importers if imp.sniff(path, head)]
        assert claimed == ([expected[name]] if name in expected else []), name


# --- the chat export (Settings → Chats → Export), shaped as tests/fixtures/openwebui/make_fixtures.py says ---


def test_export_follows_the_current_branch_and_keeps_reasoning_out_of_the_text() -> None:
    sessions, problems = _parse(EXPORTS / "chat-export-a.json")
    assert problems.count == 0
    weather, k2 = sessions
    assert k2.id == "openwebui:0c4f2a1e-9b8d-4c7e-a6f5-e4d3c2b1a090"
    assert (k2.title, k2.metadata) == ("K2 height", {"pinned": True})
    assert k2.created_at == datetime(2025, 5, 1, 10, 0, tzinfo=timezone.utc)
    assert [(e.role, e.content) for e in k2.episodes] == [
        ("user", "How tall is K2, in feet?"),  # the edited question, not the first one
        ("assistant", "K2 is **28,251 ft** (8,611 m) tall."),  # the regenerated answer, without its <details>
    ]
    assert k2.episodes[1].metadata == {
        "reasoning": "The user wants K2's height in feet.\n8,611 m × 3.2808 ≈ 28,251 ft.",
        "reasoning_seconds": 3,
        "model": "qwen3:8b",
    }
    assert [e.content for e in weather.episodes] == [
        "Will I need an umbrella in Lisbon tomorrow? My itinerary is attached.\n\n[attachment: itinerary.pdf]",
        '[tool_call get_weather] {"city": "Lisbon"}\n[tool_result get_weather] Sunny, 21 °C, 0% rain\n'
        "No umbrella needed: sunny and 21 °C.",
    ]
    assert all("<details" not in e.content and "&quot;" not in e.content for s in sessions for e in s.episodes)


def test_export_is_detected_and_accepted_by_format_openwebui(tmp_path: Path) -> None:
    from hiermem_tui.importers import detect

    for name in ("chat-export-a.json", "chat-export-b.json"):
        assert detect(EXPORTS / name) == "openwebui"
    single = tmp_path / "chat-export-1746093600000.json"  # a chat's own ⋯ → Download → Export chat (.json)
    single.write_text(json.dumps([json.loads((EXPORTS / "chat-export-a.json").read_text())[1]]))
    assert detect(single) == "openwebui"
    assert [s.title for s in _parse(single)[0]] == ["K2 height"]


def test_bare_chat_objects_import_like_the_export(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """One row's chat JSON alone, or a list of them (what Open WebUI's Import Chats takes): the
    same episodes as the export; with no id, the session is named by its opening messages."""
    from hiermem_tui.importers import detect

    for name in ("bare-chat.json", "bare-chats.json"):
        assert detect(EXPORTS / name) == "openwebui"
    (one,), problems = _parse(EXPORTS / "bare-chat.json")
    both, _ = _parse(EXPORTS / "bare-chats.json")
    exported, _ = _parse(EXPORTS / "chat-export-a.json")
    assert problems.count == 0
    assert re.fullmatch(r"openwebui:chat-[0-9a-f]{12}", one.id) and one.title == "Lisbon weather"
    assert one.created_at == exported[0].created_at == datetime(2025, 5, 1, 11, 0, tzinfo=timezone.utc)  # ms

    def texts(sessions: list[Any]) -> list[tuple[str, list[tuple[str, str]]]]:
        return [(s.title, [(e.role, e.content) for e in s.episodes]) for s in sessions]

    assert texts(both) == texts(exported) and texts([one]) == texts(exported[:1])
    assert both[0].id == one.id != both[1].id
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        first, again = import_each(store, EXPORTS / "bare-chat.json", EXPORTS / "bare-chats.json")
        assert (first.sessions_created, again.sessions_created, again.episodes_present) == (1, 1, 2)
    not_a_chat = tmp_path / "one.json"
    not_a_chat.write_text('{"title": "no history here"}')
    with pytest.raises(FormatError, match="neither an Open WebUI webui.db nor its chat export"):
        _parse(not_a_chat)


def webui_db_from_export(export: Path, db: Path) -> Path:
    """The webui.db an instance with exactly the chats of ``export`` would have (its chat rows)."""
    chats = json.loads(export.read_text())
    with sqlite3.connect(db) as conn:
        conn.executescript(WEBUI_SCHEMA)
        conn.executemany(
            "INSERT INTO chat (id, user_id, title, chat, created_at, updated_at, share_id, archived, pinned, meta,"
            " folder_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(c["id"], c["user_id"], c["title"], json.dumps(c["chat"]), c["created_at"], c["updated_at"],
              c["share_id"], c["archived"], c["pinned"], json.dumps(c["meta"]), c["folder_id"]) for c in chats],
        )
    return db


def test_database_and_export_of_the_same_chats_are_the_same_sessions(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """The webui.db row and the exported chat object carry the same id and JSON: no duplicates."""
    db = webui_db_from_export(EXPORTS / "chat-export-a.json", tmp_path / "webui.db")
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        from_db, from_export = import_each(store, db, EXPORTS / "chat-export-a.json")
        assert (from_db.sessions_created, from_db.episodes_appended) == (2, 4)
        assert (from_export.sessions_created, from_export.episodes_appended, from_export.episodes_present) == (0, 0, 4)


def _export_with(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "chat-export.json"
    chat = {"history": {"currentId": "a", "messages": {"a": {"id": "a", "parentId": None, "role": "assistant",
                                                             "content": content, "timestamp": T}}}}
    path.write_text(json.dumps([{"id": "c1", "user_id": "u", "title": "t", "chat": chat, "created_at": T}]))
    return path


@pytest.mark.parametrize(
    ("content", "text", "meta"),
    [
        # Older versions quoted the reasoning without HTML-escaping it.
        ('<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds</summary>\n'
         "> a > b\n> \n> so a\n</details>\nA is bigger.", "A is bigger.",
         {"reasoning": "a > b\n\nso a", "reasoning_seconds": 2}),
        # Still thinking when the chat was saved; extra attributes.
        ('<details type="reasoning" done="false" view="" last_tool_call_name="">\n<summary>Thinking…</summary>\n'
         "&gt; first &amp; second\n</details>\n", None, {"reasoning": "first & second"}),
        ('Here:\n<details type="code_interpreter" done="true" output="">\n<summary>Analyzed</summary>\n'
         "```python\nprint(1 &lt; 2)\n```\n</details>\nDone.",
         "Here:\n[code_interpreter]\n```python\nprint(1 < 2)\n```\nDone.",
         {}),
        ("No blocks, <b>literal</b> text.", "No blocks, <b>literal</b> text.", {}),
    ],
)
def test_details_blocks_become_metadata_or_plain_text(
    tmp_path: Path, content: str, text: str | None, meta: dict[str, Any]
) -> None:
    sessions, problems = _parse(_export_with(tmp_path, content))
    if text is None:  # reasoning only: nothing a reader would see, and said so
        assert sessions == [] and problems.reasons["message with only reasoning"] == 1
        return
    (session,) = sessions
    assert session.episodes[0].content == text
    assert (session.episodes[0].metadata or {}) == meta


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[]", None),  # an account without chats: nothing to import, not an error
        ('[{"id": "x", "mapping": {}}]', r"not an Open WebUI chat export .*looks like a ChatGPT export"),
        ('{"id": "x", "chat": {}}', "neither an Open WebUI webui.db nor its chat export"),
        ('[{"id": "x", "chat": {"history": ', "not valid JSON"),
    ],
)
def test_export_that_is_not_one_fails_in_one_line(tmp_path: Path, body: str, message: str | None) -> None:
    path = tmp_path / "chat-export.json"
    path.write_text(body)
    if message is None:
        assert _parse(path) == ([], Problems())
        return
    with pytest.raises(FormatError, match=message):
        _parse(path)


def test_entries_before_the_first_chat_are_reported_not_fatal(tmp_path: Path) -> None:
    chats = json.loads((EXPORTS / "chat-export-b.json").read_text())
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps([7, {"id": "nochat"}, *chats]))
    sessions, problems = _parse(path)
    assert [s.title for s in sessions] == ["Home office deduction"]
    assert problems.reasons == {"entry is not a chat (no 'chat' object)": 2}


def test_replies_stored_with_raw_details_by_an_earlier_version_are_not_new_versions(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """Earlier versions kept the <details> HTML in the text; re-importing must not re-add those
    replies as "changed" when only our rendering changed, not Open WebUI's data."""
    from hiermem_tui.importers import ImportReport, load_session

    export = EXPORTS / "chat-export-a.json"
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        report = ImportReport()
        for parsed in openwebui.parse(export, Problems()):
            for ep in parsed.episodes:  # what the earlier version stored
                ep.content = ep.former_content or ep.content
                ep.metadata = {"model": ep.metadata["model"]} if ep.metadata else None
            load_session(store, parsed, str(export), report)
        assert sum("<details" in e.content for s in store.sessions.each() for e in store.episodes.each(s.id)) == 2
        (again,) = import_each(store, export)
        assert (again.episodes_appended, again.episodes_present, again.episodes_revised) == (0, 4, 0)
        assert again.problems.count == 0
