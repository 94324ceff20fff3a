"""``import --format auto`` on a folder holding several kinds of export imports every kind.

Found on ../shared/samples: a ChatGPT ``conversations.json`` beside a Claude Code folder; the
folder was claimed whole by the Claude Code importer and the ChatGPT file passed over in silence.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from hiermem_tui.cli import main
from hiermem_tui.importers.folders import plan_auto

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def sessions(db: Path) -> dict[str, str]:
    code, out, err = run("sessions", "--db", str(db), "--json")
    assert code == 0, err
    return {row["id"]: row["source"] for row in json.loads(out)}


def mixed_folder(tmp: Path) -> Path:
    folder = tmp / "exports"
    folder.mkdir()
    shutil.copy(FIXTURES / "chatgpt" / "conversations.json", folder / "conversations.json")
    shutil.copytree(FIXTURES / "claude_code" / "projects", folder / "claude-code")
    (folder / "README.md").write_text("where these exports came from\n")
    (folder / ".DS_Store").write_bytes(b"\x00\x01")  # hidden: neither imported nor reported
    return folder


def test_every_kind_in_a_mixed_folder_is_imported_and_the_rest_named(tmp_path: Path) -> None:
    folder = mixed_folder(tmp_path)
    apart = tmp_path / "apart.db"  # the same files imported one path at a time
    for part in (folder / "conversations.json", folder / "claude-code"):
        assert run("import", "--db", str(apart), str(part))[0] == 0
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(folder))
    assert code == 1, err  # the README was left out: named, and the exit status says so
    assert [line.split(": ")[0] for line in out.splitlines()] == [
        f"{folder / 'claude-code'} (claude-code)", f"{folder / 'conversations.json'} (chatgpt)"]
    assert err.strip().splitlines() == [f"hiermem-tui: {folder}: skipped 1 entry no importer recognises: README.md"]
    got = sessions(db)
    assert got == sessions(apart) and {"chatgpt", "claude-code"} <= set(got.values())
    code, out, _ = run("import", "--db", str(db), str(folder))  # again: nothing new, nothing lost
    assert code == 1 and all(" 0 new; 0 episode(s) added" in line for line in out.splitlines())


def test_a_folder_of_one_kind_is_still_one_import() -> None:
    projects = FIXTURES / "claude_code" / "projects"
    plan = plan_auto(projects)
    assert (plan.parts, plan.skipped) == ([(projects, "claude-code")], [])


def test_a_folder_with_nothing_recognised_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("buy flour\n")
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), str(tmp_path / "notes"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "cannot tell what format" in err


def tools_folder(tmp: Path) -> Path:
    """What the issue tried: each tool's files in a subfolder of their own, most holding one file."""
    from tests.unit.test_import_openwebui import build_webui_db

    folder = tmp / "tools"
    folder.mkdir()
    shutil.copytree(FIXTURES / "codex" / "sessions", folder / "codex")
    (folder / "oterm").mkdir()
    shutil.copy(FIXTURES / "oterm" / "machine-a.db", folder / "oterm" / "store.db")
    (folder / "claude").mkdir()
    shutil.copy(FIXTURES / "claude_ai" / "conversations.json", folder / "claude" / "conversations.json")
    (folder / "llm").mkdir()
    shutil.copy(FIXTURES / "llm" / "logs-036-a.db", folder / "llm" / "logs.db")
    (folder / "owi").mkdir()
    build_webui_db(folder / "owi" / "webui.db")
    return folder


def test_a_folder_of_tool_subfolders_imports_every_file_with_its_own_format(tmp_path: Path) -> None:
    folder = tools_folder(tmp_path)
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(folder))
    assert code == 0, err
    assert "no importer recognises" not in err  # (the Open WebUI fixture's malformed chats are reported)
    assert [line.split(": ")[0] for line in out.splitlines()] == [
        f"{folder / 'claude'} (claude)", f"{folder / 'codex'} (codex)",
        f"{folder / 'llm' / 'logs.db'} (llm)", f"{folder / 'oterm' / 'store.db'} (oterm)",
        f"{folder / 'owi' / 'webui.db'} (openwebui)"]
    assert {"claude", "codex", "llm", "oterm", "openwebui"} <= set(sessions(db).values())


def test_what_a_folder_import_leaves_out_is_named_and_the_exit_status_says_so(tmp_path: Path) -> None:
    folder = tools_folder(tmp_path)
    (folder / "oterm" / "config.json").write_text('{"theme": "dark"}\n')
    (folder / "notes").mkdir()
    (folder / "notes" / "todo.txt").write_text("buy flour\n")
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), str(folder))
    assert code == 1
    assert f"{folder / 'oterm' / 'store.db'} (oterm)" in out
    lines = err.splitlines()
    at = lines.index(f"hiermem-tui: {folder}: skipped 2 entries no importer recognises:")
    assert lines[at + 1:at + 3] == ["  notes", "  oterm/config.json"]


def test_every_entry_a_folder_import_skips_is_named_one_per_line(tmp_path: Path) -> None:
    """Issue 36 item 5: a folder import named 5 of the 15 entries it skipped, then "…"."""
    import sqlite3

    folder = mixed_folder(tmp_path)  # ChatGPT and Claude Code exports, a README
    junk = {
        "LICENSE": "MIT License\n", "notes.txt": "buy flour\n", "photo.png": "\x89PNG\r\n",
        "data.csv": "a,b\n1,2\n", "empty.json": "", "settings.json": '{"theme": "dark"}\n',
        "list.json": "[1, 2, 3]\n", "events.jsonl": '{"event": "click"}\n{"event": "scroll"}\n',
        "script.py": "print('hi')\n", "page.html": "<html><body>hi</body></html>\n", "Makefile": "all:\n",
        "chat.md": "## user\nhello\n", "broken.json": '{"mapping": ', "config.toml": "x = 1\n",
    }
    for name, text in junk.items():
        (folder / name).write_text(text, encoding="utf-8")
    with sqlite3.connect(folder / "inventory.db") as db:
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
    (folder / "drafts").mkdir()
    (folder / "drafts" / "todo.txt").write_text("write the report\n")
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), str(folder))
    assert code == 1
    assert len(out.splitlines()) == 2  # both exports imported
    skipped = sorted([*junk, "README.md", "inventory.db", "drafts"])
    assert err.splitlines() == [
        f"hiermem-tui: {folder}: skipped {len(skipped)} entries no importer recognises:",
        *(f"  {name}" for name in skipped)]
