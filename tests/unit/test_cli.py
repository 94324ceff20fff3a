"""CLI contracts (ARCHITECTURE §6): exit codes, one-line errors, JSON shapes, idempotent import."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hiermem_tui import __version__
from hiermem_tui.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write_jsonl(path: Path, sessions: dict[str, int], *, start_hour: int = 9) -> Path:
    lines = []
    for sid, n in sessions.items():
        for i in range(n):
            lines.append(json.dumps({
                "session": sid,
                "title": f"Title of {sid}",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"message {i} in {sid}: some words to count",
                "created_at": f"2025-05-0{1 + i // 20}T{start_hour + (i % 20) // 4:02d}:{(i * 7) % 60:02d}:00Z",
            }))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_version_from_the_installed_console_script() -> None:
    exe = Path(sys.executable).with_name("hiermem-tui")
    res = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert res.returncode == 0
    assert res.stdout.strip() == f"hiermem-tui {__version__}"


def test_import_then_sessions_json_contract(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 6, "beta": 3})
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0, err
    assert "2 session(s), 2 new; 9 episode(s) added" in out
    code, out, _ = run("sessions", "--db", str(db), "--json")
    assert code == 0
    rows = json.loads(out)
    assert {r["id"] for r in rows} == {"alpha", "beta"}
    required = {"id", "title", "source", "episodes", "tokens", "summaries", "max_depth", "covered_episodes",
                "fallbacks", "created_at", "updated_at"}
    for r in rows:
        assert required <= set(r)
    alpha = next(r for r in rows if r["id"] == "alpha")
    assert alpha["episodes"] == 6 and alpha["title"] == "Title of alpha" and alpha["source"] == "jsonl"
    assert alpha["tokens"] > 0 and alpha["summaries"] == 0 and alpha["max_depth"] is None


def test_reimport_changes_nothing_and_grown_source_appends(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 6})
    assert run("import", "--db", str(db), str(src))[0] == 0
    before = json.loads(run("sessions", "--db", str(db), "--json")[1])
    code, out, _ = run("import", "--db", str(db), str(src))
    assert code == 0 and "0 episode(s) added, 6 already present" in out
    assert json.loads(run("sessions", "--db", str(db), "--json")[1]) == before
    write_jsonl(src, {"alpha": 9})
    code, out, _ = run("import", "--db", str(db), str(src))
    assert "3 episode(s) added, 6 already present" in out
    exported = json.loads(run("export", "--db", str(db), "--session", "alpha")[1])
    assert [e["seq"] for e in exported["episodes"]] == list(range(9))


def test_malformed_lines_are_skipped_and_reported(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 4})
    with src.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"session": "alpha", "role": "wizard", "content": "x"}) + "\n")
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0
    assert "4 episode(s) added" in out
    assert "skipped 2 malformed record(s)" in err


def test_not_the_format_is_exit_2_and_leaves_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    bad = tmp_path / "notes.txt"
    bad.write_text("just some notes\nnothing structured\n")
    code, out, err = run("import", "--db", str(db), "--format", "jsonl", str(bad))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("hiermem-tui: ")
    code, out, err = run("import", "--db", str(db), str(bad))
    assert code == 2 and "format" in err
    assert json.loads(run("sessions", "--db", str(db), "--json")[1]) == []


@pytest.mark.parametrize(
    ("argv", "prefix", "detail"),
    [
        (["bogus"], "hiermem-tui: ", "argument COMMAND: invalid choice: 'bogus'"),
        (["--no-such-flag"], "hiermem-tui: ", "unrecognized arguments: --no-such-flag"),
        (["import", "--format", "nope", "x"], "hiermem-tui import: ", "argument --format: invalid choice: 'nope'"),
        (["import"], "hiermem-tui import: ", "the following arguments are required: PATH"),
    ],
)
def test_usage_errors_name_the_program_once(argv: list[str], prefix: str, detail: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(prefix + detail), err
    assert err.count("hiermem-tui") == 1, err


@pytest.mark.parametrize("kind", ["text", "foreign", "newer", "directory"])
def test_bad_database_files_are_one_line_exit_2_and_unchanged(tmp_path: Path, kind: str) -> None:
    import sqlite3

    target = tmp_path / "x.db"
    if kind == "text":
        target.write_text("hello\n")
    elif kind == "foreign":
        c = sqlite3.connect(target)
        c.execute("CREATE TABLE notes (body TEXT)")
        c.commit()
        c.close()
    elif kind == "newer":
        assert run("demo", "--db", str(target), "--sessions", "1", "--episodes", "3")[0] == 0
        c = sqlite3.connect(target)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.execute("PRAGMA user_version = 999")
        c.close()
    else:
        target.mkdir()
    before = None if target.is_dir() else hashlib.sha256(target.read_bytes()).hexdigest()
    src = write_jsonl(tmp_path / "in.jsonl", {"a": 2})
    for argv in (["sessions", "--db", str(target)], ["import", "--db", str(target), str(src)]):
        code, out, err = run(*argv)
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and "Traceback" not in err and str(target) in err
    if before:
        assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_usage_errors_are_one_line_exit_2() -> None:
    code, out, err = run("export")
    assert code == 2 and err.count("\n") == 1 and "--session" in err
    code, out, err = run("frobnicate")
    assert code == 2 and err.count("\n") == 1


def test_export_markdown_is_literal(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    src = tmp_path / "in.jsonl"
    hostile = "# not a heading\n```\n[bold]x[/bold] [@click=app.quit] \x1b[31mred\n```"
    src.write_text(json.dumps({"session": "h", "role": "user", "content": hostile}) + "\n")
    assert run("import", "--db", str(db), str(src))[0] == 0
    code, out, _ = run("export", "--db", str(db), "--session", "h", "--format", "markdown")
    assert code == 0
    assert "````text\n" + hostile + "\n````" in out


def test_export_json_contract(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 5})
    run("import", "--db", str(db), str(src))
    out_file = tmp_path / "out.json"
    code, _, err = run("export", "--db", str(db), "--session", "alpha", "-o", str(out_file))
    assert code == 0, err
    data = json.loads(out_file.read_text())
    # §6's four parts, what redaction masked (issue 23: nothing in these messages) and the brief (issue 35:
    # none before a pass)
    assert set(data) == {"session", "episodes", "summaries", "runs", "brief", "redacted"} and data["brief"] is None
    assert data["redacted"] == {"masked": True, "secrets": 0, "by_kind": {}}
    assert set(data["session"]) >= {"id", "title", "source", "episodes", "tokens"}
    assert set(data["episodes"][0]) >= {"id", "seq", "role", "created_at", "tokens", "content"}
    assert data["episodes"][0]["content"] == "message 0 in alpha: some words to count"
    code, _, err = run("export", "--db", str(db), "--session", "nope")
    assert code == 2 and "no session" in err


def test_sessions_on_missing_db_does_not_create_it(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    code, out, _ = run("sessions", "--db", str(db), "--json")
    assert code == 0 and json.loads(out) == [] and not db.exists()


def test_db_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("HIERMEM_DB", str(db))
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 2})
    assert run("import", str(src))[0] == 0
    assert db.exists()


def test_import_on_a_terminal_shows_progress_and_clears_it(tmp_path: Path) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 4, "beta": 2})
    out, err = io.StringIO(), Tty()
    assert main(["import", "--db", str(tmp_path / "h.db"), str(src)], stdout=out, stderr=err) == 0
    shown = err.getvalue()
    assert "file 1/1 · reading in.jsonl · " in shown  # the first update shows at once, the rest ten a second
    assert shown.endswith("\r\x1b[K")  # the live line is erased before the summary is printed
    assert "2 session(s), 2 new" in out.getvalue()


def test_import_in_a_pipe_prints_no_progress(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", {"alpha": 4})
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), str(src))
    assert code == 0 and err == ""


def test_import_line_says_when_messages_changed_in_the_source(tmp_path: Path) -> None:
    """oterm 0.26.1 overwrote a regenerated reply in place (tests/fixtures/oterm/make_fixtures.py)."""
    stores = Path(__file__).resolve().parents[1] / "fixtures" / "oterm"
    db = str(tmp_path / "h.db")
    assert run("import", "--db", db, str(stores / "machine-a.db"))[1].rstrip().endswith(
        "2 new; 7 episode(s) added, 0 already present"
    )
    code, out, err = run("import", "--db", db, str(stores / "machine-a-regenerated.db"))
    assert (code, err) == (0, "")
    assert out.rstrip().endswith(
        "0 new; 1 episode(s) added, 6 already present; 1 added as new version(s) of message(s) the source changed"
    )
