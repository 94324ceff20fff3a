"""Finding chat histories at their standard places (``sources``) and importing them all
(``import --discover``) under a test HOME, leaving every source byte for byte as it was."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.importers.discover import discover
from tests.unit.test_import_openwebui import build_webui_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOOL_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OTERM_DATA_DIR", "LLM_USER_PATH", "DATA_DIR", "LOSSLESS_VAULT_DIR",
             "XDG_CONFIG_HOME", "XDG_DATA_HOME")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME holding every kind of history at its tool's default place; no tool variables set."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in TOOL_VARS:
        monkeypatch.delenv(var, raising=False)
    shutil.copytree(FIXTURES / "claude_code" / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex" / "sessions", home / ".codex" / "sessions")
    place(FIXTURES / "oterm" / "machine-a.db", home / ".local" / "share" / "oterm" / "store.db")
    place(FIXTURES / "llm" / "logs-027-a.db", home / ".config" / "io.datasette.llm" / "logs.db")
    (home / ".open-webui").mkdir()
    build_webui_db(home / ".open-webui" / "webui.db")
    place(FIXTURES / "lossless_claw" / "lcm.db", home / ".openclaw" / "lcm.db")
    place(FIXTURES / "lossless_code" / "vault.db", home / ".lossless-code" / "vault.db")
    return home


def place(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest)


def every_file(root: Path) -> dict[str, str]:
    """Every file below ``root`` (hidden ones too) with its sha256: what must not change."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_sources_json_finds_every_kind_at_its_default_place(home: Path) -> None:
    code, out, err = run("sources", "--json")
    assert code == 0, err
    assert json.loads(out) == [
        {"format": "claude-code", "path": str(home / ".claude/projects"), "sessions": None, "files": 3},
        {"format": "codex", "path": str(home / ".codex/sessions"), "sessions": None, "files": 2},
        {"format": "oterm", "path": str(home / ".local/share/oterm/store.db"), "sessions": 2},
        {"format": "llm", "path": str(home / ".config/io.datasette.llm/logs.db"), "sessions": 2},
        {"format": "openwebui", "path": str(home / ".open-webui/webui.db"), "sessions": 5},
        {"format": "lossless-claw", "path": str(home / ".openclaw/lcm.db"), "sessions": 2},
        {"format": "lossless-code", "path": str(home / ".lossless-code/vault.db"), "sessions": 3},
    ]
    code, out, _ = run("sources")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["claude-code", "3", "files", str(home / ".claude/projects")]
    assert lines[-2].split() == ["lossless-code", "3", "sessions", str(home / ".lossless-code/vault.db")]
    assert lines[-1] == "import them all with `hiermem-tui import --discover`"


def test_tool_variables_point_elsewhere(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.move(str(home / ".claude"), tmp_path / "claude-config")
    shutil.move(str(home / ".codex"), tmp_path / "codex-home")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    found = {s.format: s.path for s in discover()}
    assert found["claude-code"] == tmp_path / "claude-config" / "projects"
    assert found["codex"] == tmp_path / "codex-home" / "sessions"


def test_a_place_holding_something_else_is_not_offered(home: Path) -> None:
    (home / ".openclaw" / "lcm.db").write_text("not a database")
    shutil.rmtree(home / ".codex" / "sessions")
    (home / ".codex" / "sessions").mkdir()  # an empty folder: nothing to import
    assert {s.format for s in discover()} == {"claude-code", "oterm", "llm", "openwebui", "lossless-code"}


def test_nothing_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in TOOL_VARS:
        monkeypatch.delenv(var, raising=False)
    assert run("sources", "--json")[1].strip() == "[]"
    code, out, _ = run("sources")
    assert code == 0 and out.startswith("no chat histories found")
    code, _, err = run("import", "--db", str(tmp_path / "h.db"), "--discover")
    assert code == 0 and "no chat histories found" in err
    code, _, err = run("import", "--db", str(tmp_path / "h.db"))
    assert code == 2 and err == "hiermem-tui import: the following arguments are required: PATH, or --discover " \
                                "(see --help)\n"


def test_import_discover_imports_everything_and_changes_no_source(home: Path, tmp_path: Path) -> None:
    before = every_file(home)
    db = str(tmp_path / "h.db")
    code, out, err = run("import", "--db", db, "--discover")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(" (", 1)[1].split(")", 1)[0] for line in lines] == [
        "claude-code", "codex", "oterm", "llm", "openwebui", "lossless-claw", "lossless-code"]
    assert all(" new; " in line and " 0 already present" in line for line in lines), out
    assert "5 summaries added" in lines[5] and "7 summaries added" in lines[6]
    sessions = json.loads(run("sessions", "--db", db, "--json")[1])
    assert {s["source"] for s in sessions} == {"claude-code", "codex", "oterm", "llm", "openwebui", "lossless-claw",
                                               "lossless-code"}
    assert every_file(home) == before  # byte for byte, and no -wal/-shm (or any other file) appeared
    code, out, _ = run("import", "--db", db, "--discover")
    assert code == 0 and all(", 0 new; 0 episode(s) added" in line for line in out.splitlines()), out
    assert every_file(home) == before


def test_sources_help_says_where_it_looks() -> None:
    """Issue 21 item 10: `sources --help` did not say where it looks. Every place standard_places knows
    (Linux defaults, each tool's variable) is named in it."""
    import contextlib

    from hiermem_tui.importers.discover import standard_places

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["sources", "--help"], stdout=out)
    text = out.getvalue()
    home = Path("/home/u")
    env = {"CLAUDE_CONFIG_DIR": "/v/CLAUDE_CONFIG_DIR", "CODEX_HOME": "/v/CODEX_HOME", "OTERM_DATA_DIR": "/v/OTERM_DATA_DIR",
           "LLM_USER_PATH": "/v/LLM_USER_PATH", "DATA_DIR": "/v/DATA_DIR", "LOSSLESS_VAULT_DIR": "/v/LOSSLESS_VAULT_DIR"}
    for fmt, path in standard_places(env, home):
        assert f"\n  {fmt} " in text
        if "Library" in path.parts or "pipx" in path.parts or "uv" in path.parts:
            continue
        shown = (f"${path.parts[2]}/" + "/".join(path.parts[3:]) if str(path).startswith("/v/")
                 else "~/" + str(path.relative_to(home)))
        assert shown in text, shown
