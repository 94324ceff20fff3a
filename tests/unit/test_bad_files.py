"""The CLI pointed at database files it must refuse, or treat with care.

Every refusal is exactly one ``hiermem-tui: …`` line on stderr with exit 2, never a traceback,
and leaves the file byte-identical with no ``-wal``/``-shm``/``-journal`` created next to it.
Tests run as root here, where permission bits do not stop reads; those cases assert what the
app does for root (it honours "no write bit" as read-only) and skip only what root cannot see.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ._cli import run, sha, strays

IS_ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("HIERMEM_DB", raising=False)


def assert_refused(result: tuple[int, str, str]) -> None:
    code, _, err = result
    assert code == 2, result
    assert err.startswith("hiermem-tui: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid native JSONL file: one session "s" of 120 long-ish episodes (so the DB has many pages)."""
    path = tmp_path_factory.mktemp("src") / "in.jsonl"
    lines = [json.dumps({"session": "s", "title": "Kept", "role": "user" if i % 2 else "assistant",
                         "content": f"episode {i} " + "words and more words " * 40}) for i in range(120)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def good_db(tmp_path_factory: pytest.TempPathFactory, source: Path) -> Path:
    """A real hiermem-tui database (WAL mode, closed cleanly) holding session "s"."""
    db = tmp_path_factory.mktemp("good") / "good.db"
    assert run("import", "--db", str(db), str(source))[0] == 0
    assert not strays(db)
    return db


def _sqlite(path: Path, *sql: str) -> None:
    conn = sqlite3.connect(path)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _patched(offset: int, data: bytes) -> Callable[[Path, Path], None]:
    """A copy of the good DB with bytes overwritten (a damaged header or first page)."""

    def make(path: Path, good: Path) -> None:
        raw = bytearray(good.read_bytes())
        raw[offset : offset + len(data)] = data
        path.write_bytes(bytes(raw))

    return make


def _garbled_schema(path: Path, good: Path) -> None:
    """One byte of the stored CREATE TABLE text replaced by an invalid UTF-8 byte (same length)."""
    raw = good.read_bytes()
    assert b"CREATE TABLE sessions" in raw
    path.write_bytes(raw.replace(b"CREATE TABLE sessions", b"CREATE TABLE\x9dsessions", 1))


def _truncated(path: Path, good: Path) -> None:
    raw = good.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _newer(path: Path, good: Path) -> None:
    shutil.copy(good, path)
    _sqlite(path, "PRAGMA user_version = 99")
    assert not strays(path)


BAD_FILES: dict[str, Callable[[Path, Path], None]] = {
    "text": lambda p, g: p.write_text("my notes, not a database\n"),
    "png": lambda p, g: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8),
    "sqlite-magic-only": lambda p, g: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 20),
    "truncated": _truncated,
    "foreign-app": lambda p, g: _sqlite(p, "CREATE TABLE moz_places (id INTEGER, url TEXT)",
                                        "INSERT INTO moz_places VALUES (1, 'https://example.org')"),
    "foreign-user-version": lambda p, g: _sqlite(p, "PRAGMA user_version = 7"),
    "newer-schema": _newer,
    "bad-read-version": _patched(18, b"\x01\x07"),
    "bad-schema-format": _patched(44, (99).to_bytes(4, "big")),
    "bad-page-size": _patched(16, b"\x00\x03"),
    "garbled-first-page": _patched(100, b"\xff" * 64),
    "garbled-schema-text": _garbled_schema,
}
DAMAGED_HEADER = {"bad-read-version", "bad-schema-format", "bad-page-size", "garbled-first-page", "garbled-schema-text"}
COMMANDS = {
    "sessions": ["sessions"],
    "sessions-json": ["sessions", "--json"],
    "import": ["import", "{source}"],
    "export": ["export", "--session", "s"],
    "doctor": ["doctor"],
    "doctor-fix": ["doctor", "--fix", "--json"],
    "backup": ["backup", "{dest}"],
}


def _cmd(name: str, db: Path, source: Path) -> list[str]:
    first, *rest = COMMANDS[name]
    return [first, "--db", str(db), *(a.format(source=source, dest=db.parent / "copy.db") for a in rest)]


def _xfail(request: pytest.FixtureRequest, when: bool, reason: str) -> None:
    if when:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_bad_database_file_is_refused_in_one_line_and_left_alone(
    request: pytest.FixtureRequest, tmp_path: Path, good_db: Path, source: Path, kind: str, command: str
) -> None:
    db = tmp_path / "hiermem.db"
    BAD_FILES[kind](db, good_db)
    before = sha(db)
    assert_refused(run(*_cmd(command, db, source)))
    assert sha(db) == before


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", ["text", "truncated", "foreign-app", "newer-schema"])
def test_refusing_a_file_creates_nothing_next_to_it(
    request: pytest.FixtureRequest, tmp_path: Path, good_db: Path, source: Path, kind: str, command: str
) -> None:
    db = tmp_path / "hiermem.db"
    BAD_FILES[kind](db, good_db)
    run(*_cmd(command, db, source))
    assert strays(db) == []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_directory_as_database_is_refused(tmp_path: Path, source: Path, command: str) -> None:
    folder = tmp_path / "data.db"
    folder.mkdir()
    assert_refused(run(*_cmd(command, folder, source)))
    assert list(folder.iterdir()) == [] and strays(folder) == []


# --------------------------------------------------------------------------- read-only and unreadable files


@pytest.fixture(params=[0o444, 0o000], ids=["mode-444", "mode-000"])
def locked_db(request: pytest.FixtureRequest, tmp_path: Path, good_db: Path) -> Path:
    db = tmp_path / "hiermem.db"
    shutil.copy(good_db, db)
    os.chmod(db, request.param)
    return db


def test_locked_file_browses_when_readable_and_refuses_import(locked_db: Path, source: Path) -> None:
    """0444 (and, for root, 0000 — root can read it, and no write bit means read-only even to root):
    listing and export work, import refuses in one line, the bytes do not change."""
    before = sha(locked_db)
    readable = IS_ROOT or os.stat(locked_db).st_mode & 0o444
    listing = run("sessions", "--db", str(locked_db), "--json")
    imported = run("import", "--db", str(locked_db), str(source))
    if readable:
        assert listing[0] == 0 and [s["id"] for s in json.loads(listing[1])] == ["s"], listing
        assert run("export", "--db", str(locked_db), "--session", "s")[0] == 0
        assert_refused(imported)
        assert "read-only" in imported[2]
    else:  # an unprivileged user cannot read a 0000 file at all
        assert_refused(listing)
        assert_refused(imported)
    assert sha(locked_db) == before


def test_locked_file_gets_no_wal_or_shm(locked_db: Path, source: Path) -> None:
    run("sessions", "--db", str(locked_db))
    run("import", "--db", str(locked_db), str(source))
    assert strays(locked_db) == []


def test_locked_file_is_checked_and_copied_but_not_fixed(locked_db: Path) -> None:
    before = sha(locked_db)
    readable = IS_ROOT or os.stat(locked_db).st_mode & 0o444
    doctor = run("doctor", "--db", str(locked_db))
    copied = run("backup", "--db", str(locked_db), str(locked_db.parent / "copy.db"))
    if readable:
        assert doctor[0] == 0 and doctor[1].startswith("ok: 1 session, 120 episodes"), doctor
        assert copied[0] == 0, copied
    else:
        assert_refused(doctor)
        assert_refused(copied)
    assert sha(locked_db) == before and strays(locked_db) == []


def test_database_in_a_folder_without_permission(tmp_path: Path, good_db: Path, source: Path) -> None:
    if IS_ROOT:
        pytest.skip("running as root: a mode-000 folder does not stop root, so this refusal cannot happen")
    folder = tmp_path / "locked"
    folder.mkdir()
    shutil.copy(good_db, folder / "hiermem.db")
    folder.chmod(0o000)
    try:
        for command in ("sessions", "import", "export"):
            assert_refused(run(*_cmd(command, folder / "hiermem.db", source)))
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("command", ["sessions", "import", "export", "doctor", "backup"])
def test_unstatable_database_path_is_one_line(tmp_path: Path, source: Path, command: str) -> None:
    db = tmp_path / ("x" * 300 + ".db")
    assert_refused(run(*_cmd(command, db, source)))


def test_unstatable_source_path_is_one_line(tmp_path: Path) -> None:
    assert_refused(run("import", "--db", str(tmp_path / "h.db"), str(tmp_path / ("y" * 300 + ".jsonl"))))


# --------------------------------------------------------------------------- an empty file


def test_import_into_an_empty_file_initialises_it(tmp_path: Path, source: Path) -> None:
    """An empty file is what `touch hiermem.db` makes: importing into it creates the database."""
    db = tmp_path / "hiermem.db"
    db.write_bytes(b"")
    code, out, err = run("import", "--db", str(db), str(source))
    assert code == 0, err
    assert "120 episode(s) added" in out
    rows = json.loads(run("sessions", "--db", str(db), "--json")[1])
    assert [(r["id"], r["episodes"]) for r in rows] == [("s", 120)]


def test_export_from_an_empty_file_is_refused_and_leaves_it_empty(tmp_path: Path) -> None:
    db = tmp_path / "hiermem.db"
    db.write_bytes(b"")
    assert_refused(run("export", "--db", str(db), "--session", "s"))
    assert db.read_bytes() == b"" and strays(db) == []


def test_an_empty_file_reads_as_an_empty_database(tmp_path: Path) -> None:
    db = tmp_path / "hiermem.db"
    db.write_bytes(b"")
    code, out, err = run("sessions", "--db", str(db), "--json")
    assert (code, json.loads(out or "null")) == (0, []), err
    code, _, err = run("export", "--db", str(db), "--session", "s")
    assert code == 2 and "does not exist" not in err
    assert db.read_bytes() == b""


# --------------------------------------------------------------------------- source files that crash an importer

BIG = "1" * 5000  # a JSON integer longer than Python's 4300-digit int/str conversion limit


def _db(tables: dict[str, str], rows: dict[str, list[tuple[object, ...]]]) -> Callable[[Path], None]:
    """A small SQLite source; columns are declared without types, so values keep the type they are given."""

    def make(path: Path) -> None:
        conn = sqlite3.connect(path)
        for name, cols in tables.items():
            conn.execute(f"CREATE TABLE {name} ({cols})")
            for row in rows.get(name, []):
                conn.execute(f"INSERT INTO {name} VALUES ({', '.join('?' * len(row))})", row)
        conn.commit()
        conn.close()

    return make


def _text(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text, encoding="utf-8")


def _lines(*records: object) -> Callable[[Path], None]:
    return _text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")


OK_LINE = {"session": "s", "role": "user", "content": "fine"}
LEGACY = {"responses": "id, model, prompt, system, response, conversation_id, datetime_utc, duration_ms",
          "conversations": "id, name, model"}
THREADS = {"threads": "id, name, tip_message_hash, datetime_utc", "messages": "hash, parent_hash, role",
           "parts": "id, message_hash, type, text, payload"}
OTERM = {"chat": "id, name, model, system", "message": "id, chat_id, author, text, images"}
OWUI = {"user": "id", "chat": "id, title, chat, created_at"}


def _owui(message: dict[str, object]) -> Callable[[Path], None]:
    chat = json.dumps({"history": {"currentId": "a", "messages": {"a": {"parentId": None, **message}}}})
    return _db(OWUI, {"chat": [("x", "t", chat, 1700000000)]})


def _chatgpt(create_time: str) -> str:
    return ('[{"id": "c", "current_node": "a", "create_time": %s, "mapping": {"a": {"parent": null, "message": '
            '{"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["hi"]}}}}}]' % create_time)


EDGE_ISO = "0001-01-01T00:00:00+01:00"  # valid ISO-8601, but converting it to UTC leaves datetime's range
BAD_SOURCES: dict[str, tuple[str, str, Callable[[Path], None], int, str | None]] = {
    # name: (format, file name, builder, expected exit code, the bug that breaks it today or None)
    "jsonl-edge-iso": ("jsonl", "a.jsonl", _lines({**OK_LINE, "created_at": EDGE_ISO}, OK_LINE), 0, None),
    "claude-code-edge-iso": ("claude-code", "a.jsonl", _lines({"type": "user", "sessionId": "s", "timestamp": EDGE_ISO,
                                                               "message": {"role": "user", "content": "hi"}}), 0,
                             None),
    "codex-edge-iso": ("codex", "a.jsonl", _lines({"timestamp": "9999-12-31T23:59:59-01:00", "type": "event_msg",
                                                   "payload": {"type": "user_message", "message": "hi"}}), 0, None),
    "llm-edge-iso": ("llm", "logs.db", _db(LEGACY, {"responses": [("r", "m", "hi", None, "yo", "c", EDGE_ISO, 1)]}),
                     0, None),
    "chatgpt-huge-epoch": ("chatgpt", "conversations.json", _text(_chatgpt("1" + "0" * 400)), 0, None),
    "openwebui-huge-epoch": ("openwebui", "webui.db", _owui({"role": "user", "content": "hi", "timestamp": 10**400
                                                             }), 0, None),
    "jsonl-year-999": ("jsonl", "a.jsonl", _lines({**OK_LINE, "created_at": "0999-06-01T00:00:00Z"}, OK_LINE), 0,
                       None),
    "jsonl-year-1": ("jsonl", "a.jsonl", _lines({**OK_LINE, "created_at": "0001-01-01T00:00:00Z"}), 0, None),
    "jsonl-year-9999-then-untimed": ("jsonl", "a.jsonl", _lines({**OK_LINE, "created_at": "9999-12-31T23:59:59Z"},
                                                                OK_LINE), 0, None),
    "jsonl-lone-surrogate": ("jsonl", "a.jsonl", _lines('{"session": "s", "role": "user", "content": "x \\ud800 y"}'),
                             0, None),
    "sharegpt-lone-surrogate": ("sharegpt", "d.json", _text(
        '[{"conversations": [{"from": "human", "value": "\\udfff"}]}]'), 0, None),
    "jsonl-bigint": ("jsonl", "a.jsonl", _lines('{"session": "s", "role": "user", "content": "x", "n": %s}' % BIG,
                                                OK_LINE), 0, None),
    "sharegpt-bigint": ("sharegpt", "d.json", _text('[{"id": "a", "n": %s, "conversations": []}]' % BIG), 2, None),
    "sharegpt-huge-piece-number": ("sharegpt", "d.json", _text(json.dumps([
        {"id": "a_" + "9" * 5000, "conversations": [{"from": "human", "value": "hi"}]},
        {"id": "a_1", "conversations": [{"from": "gpt", "value": "yo"}]}])), 0, None),
    "oterm-images-bigint": ("oterm", "store.db", _db(OTERM, {"chat": [(1, "n", "m", None)], "message": [
        (1, 1, "user", "hi", f"[{BIG}]")]}), 0, None),
    "claude-attachments-number": ("claude", "conversations.json", _text(json.dumps([{"uuid": "u", "chat_messages": [
        {"sender": "human", "text": "hi", "attachments": 5}]}])), 0, None),
    "claude-files-bool": ("claude", "conversations.json", _text(json.dumps([{"uuid": "u", "chat_messages": [
        {"sender": "human", "text": "hi", "files": True}]}])), 0, None),
    "openwebui-files-number": ("openwebui", "webui.db", _owui({"role": "user", "content": "hi", "files": 5}), 0,
                               None),
    "llm-system-int": ("llm", "logs.db", _db(LEGACY, {"responses": [("r", "m", "hi", 5, "yo", "c", None, 1)]}), 0,
                       None),
    "llm-prompt-blob": ("llm", "logs.db", _db(LEGACY, {"responses": [("r", "m", b"hi", None, "yo", "c", None, 1)]}), 0,
                        None),
    "llm-model-blob": ("llm", "logs.db", _db(LEGACY, {"responses": [("r", b"m", "hi", None, "yo", "c", None, 1)]}), 0,
                       None),
    "llm-conversation-name-int": ("llm", "logs.db", _db(LEGACY, {"conversations": [("c", 7, "m")], "responses": [
        ("r", "m", "hi", None, "yo", "c", None, 1)]}), 0, None),
    "llm-huge-duration": ("llm", "logs.db", _db(LEGACY, {"responses": [("r", "m", "hi", None, "yo", "c",
                                                                        "2024-05-01T10:00:00", 10**15)]}), 0,
                          None),
    "llm-role-int": ("llm", "logs.db", _db(THREADS, {"threads": [("t", "n", "h", None)], "messages": [("h", None, 3)],
                                                     "parts": [(1, "h", "text", "hi", None)]}), 0,
                     None),
    "llm-part-text-int": ("llm", "logs.db", _db(THREADS, {"threads": [("t", "n", "h", None)], "messages": [
        ("h", None, "user")], "parts": [(1, "h", "text", 3, None)]}), 0, None),
    "llm-payload-bad-utf8": ("llm", "logs.db", _db(THREADS, {"threads": [("t", "n", "h", None)], "messages": [
        ("h", None, "user")], "parts": [(1, "h", "tool_call", None, b'"\xff"')]}), 0, None),
    "oterm-name-int": ("oterm", "store.db", _db(OTERM, {"chat": [(1, 5, "m", None)], "message": [
        (1, 1, "user", "hi", None)]}), 0, None),
    "oterm-model-blob": ("oterm", "store.db", _db(OTERM, {"chat": [(1, "n", b"m", None)], "message": [
        (1, 1, "user", "hi", None)]}), 0, None),
    "oterm-one-undecodable-cell": ("oterm", "store.db", _db(OTERM, {"chat": [(1, "n", "m", None)], "message": [
        (1, 1, "user", "fine", None), (2, 1, "assistant", "x", None)]}), 0, None),
}


def _undecodable(path: Path) -> None:
    """Make message 2's text invalid UTF-8 (what a crashed or foreign writer can leave behind)."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE message SET text = CAST(x'ff6f6b' AS TEXT) WHERE id = 2")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("case", list(BAD_SOURCES))
def test_odd_source_file_imports_or_is_refused_in_one_line(
    request: pytest.FixtureRequest, tmp_path: Path, case: str
) -> None:
    fmt, name, build, expected, bug = BAD_SOURCES[case]
    if bug:
        request.applymarker(pytest.mark.xfail(strict=True, reason=bug))
    source = tmp_path / name
    build(source)
    if case == "oterm-one-undecodable-cell":
        _undecodable(source)
    result = run("import", "--db", str(tmp_path / "h.db"), "--format", fmt, str(source))
    if expected == 2:
        assert_refused(result)
    elif case == "llm-role-int":
        # role 3 is not a role: the only message is skipped and reported, so no session is made
        assert result[0] == 0 and "skipped" in result[2], result
        assert json.loads(run("sessions", "--db", str(tmp_path / "h.db"), "--json")[1]) == []
    else:
        assert result[0] == 0, result
        exported = run("export", "--db", str(tmp_path / "h.db"), "--session", json.loads(
            run("sessions", "--db", str(tmp_path / "h.db"), "--json")[1])[0]["id"])
        assert exported[0] == 0 and json.loads(exported[1])["episodes"], exported


@pytest.mark.parametrize("fmt", ["llm", "oterm", "openwebui"])
def test_sqlite_source_with_a_garbled_schema_is_a_format_error(tmp_path: Path, fmt: str) -> None:
    from hiermem_tui.importers import FormatError, Problems, get_importer

    tables = {"llm": LEGACY, "oterm": OTERM, "openwebui": OWUI}[fmt]
    path = tmp_path / "source.db"
    _db(tables, {})(path)
    first = next(iter(tables))
    name = first.encode()
    path.write_bytes(path.read_bytes().replace(b"CREATE TABLE " + name, b"CREATE TABLE\x9d" + name, 1))
    with pytest.raises(FormatError):
        list(get_importer(fmt).parse(path, Problems()))
