"""oterm store.db importer: chats, system prompts, author mapping, orphans, read-only access."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.importers import ImportReport, load_session, oterm
from hiermem_tui.importers.base import FormatError, ParsedEpisode, ParsedSession, Problems, read_head
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.unit._imported import assert_keeps_both, contents, fresh_store, import_as_former, import_each
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
    assert [s.former_ids for s in sessions] == [["oterm:1"], ["oterm:2"]]
    for session, chat in zip(sessions, ("1", "2")):
        assert re.fullmatch(f"oterm:{chat}-[0-9a-f]{{12}}", session.id), session.id
    haiku, tides = sessions
    assert haiku.title == "Haiku practice" and haiku.source == "oterm"
    assert haiku.metadata == {"model": "llama3.2", "provider": "ollama", "chat_id": "1"}
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


# --- stores written by oterm 0.26.1's own code (tests/fixtures/oterm/make_fixtures.py) ---

OTERM = Path(__file__).resolve().parents[1] / "fixtures" / "oterm"


def test_real_store_as_oterm_wrote_it() -> None:
    sessions, problems = _parse(OTERM / "machine-a.db")
    assert problems.count == 0
    sourdough, rust = sessions
    assert sourdough.title == "Sourdough starter" and rust.title == "Rust lifetimes"
    assert [(e.role, e.source_id) for e in sourdough.episodes] == [
        ("system", "system"), ("user", "1"), ("assistant", "2"), ("user", "3"), ("assistant", "4"),
    ]
    assert sourdough.episodes[0].content == "You are a patient baker."
    assert sourdough.metadata == {"model": "llama3.2:latest", "provider": "ollama", "chat_id": "1"}
    assert rust.episodes[0].content == "Why does the borrow checker reject this?\n\n[1 image attached]"


def test_two_machines_stores_keep_both(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """Both stores have a chat 1 whose message 1 is "hello": only the reply tells them apart."""
    both = assert_keeps_both(tmp_path, tokenizer, OTERM / "machine-a.db", OTERM / "machine-b.db")
    titles = sorted(title for title, _ in both.values())
    assert titles == ["Rust lifetimes", "Sourdough starter", "Tax questions"]
    assert sum(len(eps) for _, eps in both.values()) == 7 + 4


def test_regenerated_reply_is_a_new_version_and_the_old_one_stays(tmp_path: Path, tokenizer: Tokenizer) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        first, second, again = import_each(
            store, OTERM / "machine-a.db", OTERM / "machine-a-regenerated.db", OTERM / "machine-a-regenerated.db"
        )
        assert (second.sessions_created, second.episodes_appended, second.episodes_present) == (0, 1, 6)
        assert second.episodes_revised == 1 and second.problems.count == 0
        assert (again.episodes_appended, again.episodes_present, again.episodes_revised) == (0, 7, 0)
        sourdough = next(s for s in store.sessions.each() if s.title == "Sourdough starter")
        episodes = list(store.episodes.each(sourdough.id))
        old, new = episodes[4], episodes[5]
        assert old.content.startswith("Not dead, just hungry") and old.id == f"{sourdough.id}/4"
        assert new.content.startswith("It is alive.") and new.id == f"{sourdough.id}/4~2"
        assert new.metadata == {"revision_of": old.id, "revision": 2}
        renamed = next(s for s in store.sessions.each() if s.id != sourdough.id)
        assert renamed.title == "Borrow checker"  # a rename in oterm is the chat's own new name


def _import_as_legacy(store: Store, path: Path) -> None:
    """What the importer before session ids were unique wrote: the same episodes under ``oterm:<chat id>``."""
    import_as_former(store, oterm, path)


def test_legacy_sessions_keep_their_ids_on_reimport(tmp_path: Path, tokenizer: Tokenizer) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        _import_as_legacy(store, OTERM / "machine-a.db")
        before = contents(store)
        assert sorted(before) == ["oterm:1", "oterm:2"]
        (report,) = import_each(store, OTERM / "machine-a.db")
        assert (report.sessions_created, report.episodes_appended, report.episodes_present) == (0, 0, 7)
        assert contents(store) == before
        (report,) = import_each(store, OTERM / "machine-a-regenerated.db")  # a legacy session still grows
        assert (report.sessions_created, report.episodes_revised) == (0, 1)
        assert store.sessions.get("oterm:2").title == "Borrow checker"
        (report,) = import_each(store, OTERM / "machine-b.db")  # another chat 1: a session of its own
        assert report.sessions_created == 1 and report.episodes_present == 0
        assert store.sessions.get("oterm:1").title == "Sourdough starter"
        assert len(contents(store)) == 3


def test_legacy_session_a_second_store_was_merged_into_is_left_to_its_own_chat(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """The old bug: machine B's chat 1 was folded into oterm:1 and renamed it. Re-importing B
    now gives B its own session; re-importing A gives oterm:1 its own name back."""
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        _import_as_legacy(store, OTERM / "machine-a.db")
        _import_as_legacy(store, OTERM / "machine-b.db")
        assert store.sessions.get("oterm:1").title == "Tax questions"  # the damage, as it was
        (b,) = import_each(store, OTERM / "machine-b.db")
        assert (b.sessions_created, b.episodes_appended) == (1, 4)
        tax = next(s for s in store.sessions.each() if s.id.startswith("oterm:1-"))
        assert tax.title == "Tax questions"
        assert [e.content for e in store.episodes.each(tax.id)][:2] == ["hello", "Hi there! What's on your mind?"]
        (a,) = import_each(store, OTERM / "machine-a.db")
        assert (a.sessions_created, a.episodes_appended) == (0, 0)
        assert store.sessions.get("oterm:1").title == "Sourdough starter"


def test_a_reasoning_models_thinking_goes_to_metadata_not_into_the_answer() -> None:
    """Issue 36 item 9: oterm kept ``<think>…</think>`` in the reply's text, so the thinking was shown as
    the answer and summarised as said; Open WebUI's and Claude.ai's reasoning goes to metadata."""
    (session,), problems = _parse(OTERM / "reasoning.db")
    assert [(e.role, e.content) for e in session.episodes] == [
        ("user", "Is 221 prime?"),
        ("assistant", "No. 221 = 13 × 17, so it is not prime."),
        ("user", "What does the <think> tag in your reply mean?"),  # a user's words stay as written
        ("assistant", "It marks where I reason before answering: what stands between <think> and </think> is my "
                      "scratch work, not the answer."),
        ("user", "And 223?"),
    ]
    first, second = session.episodes[1], session.episodes[3]
    assert first.metadata == {"reasoning": "Try the small primes. 221 / 13 = 17, so 13 × 17 = 221.\nSo it is composite."}
    assert second.metadata is None  # an empty block: nothing to keep
    assert problems.examples == ["reasoning.db:message 6: message with only reasoning"] and problems.count == 1


def _raw_oterm(path: Path) -> list[ParsedSession]:
    """The chats with every message's text as oterm holds it, under the id hashed over that text:
    what an importer that left ``<think>`` in the text wrote."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id, author, text FROM message WHERE chat_id = 1 ORDER BY id").fetchall()
        name = db.execute("SELECT name FROM chat WHERE id = 1").fetchone()[0]
    episodes = [ParsedEpisode(role=author, content=text, source_id=str(mid)) for mid, author, text in rows]
    return [ParsedSession(id=oterm.session_id(1, episodes), title=name, source="oterm", episodes=episodes,
                          metadata={"chat_id": "1"})]


def test_a_chat_imported_with_its_thinking_in_the_text_keeps_its_id_and_gains_nothing(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        for parsed in _raw_oterm(OTERM / "reasoning.db"):
            load_session(store, parsed, "earlier", ImportReport())
        before = contents(store)
        (report,) = import_each(store, OTERM / "reasoning.db")
        assert (report.sessions_created, report.episodes_appended, report.episodes_revised) == (0, 0, 0)
        assert report.episodes_present == 5 and contents(store) == before
    with fresh_store(tmp_path / "new.db", tokenizer) as store:
        import_each(store, OTERM / "reasoning.db")
        assert list(contents(store)) == list(before)  # the same session id, imported fresh
