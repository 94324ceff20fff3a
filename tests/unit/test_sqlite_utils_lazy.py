"""sqlite-utils reads other tools' SQLite files (issue 21 item 11), and only the commands that read
such files load it: the TUI's start and ``--version`` never do (measured with ``-X importtime``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hiermem_tui.importers._sqlite import open_readonly, read_schema, select_list

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

TUI_START = """
import asyncio, sys, tempfile
from pathlib import Path
from hiermem_tui.cli import build_parser
from hiermem_tui.config import Settings
from hiermem_tui.launch import launch_tui
from hiermem_tui.store import Store
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.screens.sessions import SessionsScreen

async def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    store = Store.open(tmp / "h.db")
    app = make_app(Settings(db_path=tmp / "h.db", config_path=tmp / "c.toml"), store, probe_backend=False,
                   index_search=True)
    async with app.run_test() as pilot:
        while not isinstance(app.screen, SessionsScreen):
            await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
    store.close()

asyncio.run(main())
print("SQLITE_UTILS", "sqlite_utils" in sys.modules)
"""


def importtime_modules(*args: str) -> set[str]:
    """The modules a fresh interpreter imported running ``args`` (from ``-X importtime``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def test_version_does_not_import_sqlite_utils() -> None:
    loaded = importtime_modules("-m", "hiermem_tui.cli", "--version")
    assert "hiermem_tui.importers._sqlite" in loaded and "sqlite_utils" not in loaded  # its user, not it


def test_the_tui_start_does_not_import_sqlite_utils() -> None:
    out = subprocess.run([sys.executable, "-c", TUI_START], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "SQLITE_UTILS False" in out.stdout, out.stdout + out.stderr


def test_importing_an_llm_file_does_import_it(tmp_path: Path) -> None:
    loaded = importtime_modules("-m", "hiermem_tui.cli", "import", "--db", str(tmp_path / "h.db"),
                                str(FIXTURES / "llm" / "logs-036-a.db"))
    assert "sqlite_utils" in loaded


@pytest.mark.parametrize("fixture", ["llm/logs-027-a.db", "llm/logs-036-a.db", "oterm/machine-a.db",
                                     "lossless_claw/lcm.db", "lossless_code/vault.db"])
def test_the_schema_comes_from_sqlite_utils_over_our_read_only_connection(fixture: str) -> None:
    import sqlite_utils

    conn = open_readonly(FIXTURES / fixture)
    try:
        schema = read_schema(conn)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert set(schema) == set(names)
        for table in names:
            assert schema[table] == set(sqlite_utils.Database(conn, recursive_triggers=False)[table].columns_dict)
        assert conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 0  # nothing set on our connection
        assert conn.execute("PRAGMA query_only").fetchone() is not None
    finally:
        conn.close()


def test_names_read_from_a_file_are_quoted() -> None:
    assert select_list({'we"ird', "a"}, ("a", 'we"ird', "gone")) == '"a", "we""ird", NULL AS "gone"'
