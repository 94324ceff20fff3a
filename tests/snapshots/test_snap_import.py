"""Snapshots of the Import screen (reviewed by eye before accepting): what a test HOME holds,
one source imported from it; and the page a machine with no history at the standard places gets.

Deterministic: HOME is a folder of the test's own (paths show as ``~/…``), the tools' variables
are unset, the database path is relative, the clock fixed and nothing follows the file.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, SelectionList
from textual.widgets._toast import Toast

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.import_sources import ImportScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import app_for, screen_shown, wait_for, wait_until_shown

SIZE = (120, 36)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOOL_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OTERM_DATA_DIR", "LLM_USER_PATH", "DATA_DIR", "LOSSLESS_VAULT_DIR",
             "XDG_CONFIG_HOME", "XDG_DATA_HOME")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Work in tmp_path (a relative DB path in the header) with an empty HOME of its own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in TOOL_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield home


def _fill(home: Path) -> None:
    """Claude Code and Codex folders and three databases, each where its tool keeps it."""
    shutil.copytree(FIXTURES / "claude_code" / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex" / "sessions", home / ".codex" / "sessions")
    for src, dest in ((FIXTURES / "oterm" / "machine-a.db", home / ".local" / "share" / "oterm" / "store.db"),
                      (FIXTURES / "lossless_claw" / "lcm.db", home / ".openclaw" / "lcm.db"),
                      (FIXTURES / "lossless_code" / "vault.db", home / ".lossless-code" / "vault.db")):
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)


def _app(store: Store, home: Path) -> HiermemApp:
    return app_for(Settings(db_path=Path("hiermem.db"), config_path=home.parent / "config.toml"), store, follow=False)


async def _import_screen(pilot: Pilot, sources: int) -> ImportScreen:
    await screen_shown(pilot, SessionsScreen)
    await pilot.press("I")
    screen = await screen_shown(pilot, ImportScreen)
    listing = screen.query_one("#import-sources", SelectionList)
    await wait_for(pilot, lambda: listing.option_count == sources, show=lambda: listing.option_count)
    return screen


def test_import_screen_after_importing_one(snap_compare, home: Path) -> None:
    _fill(home)
    store = Store.open(Path("hiermem.db"))

    async def run_before(pilot: Pilot) -> None:
        screen = await _import_screen(pilot, 5)
        await pilot.press("down", "down", "down", "down", "space")  # lossless-claw, the fourth
        await wait_until_shown(pilot, "1 of 5 ticked")
        await pilot.press("i")
        await wait_for(pilot, lambda: len(screen.log_lines) == 1)
        await pilot.press("up", "space")  # oterm ticked for the next import
        # the import is followed by a plan of what waits, said in a toast (test_import_screen.py reads it): toasts
        # time out, so the picture is taken once it was said and cleared
        await wait_for(pilot, lambda: pilot.app.backlog_waiting is not None)  # type: ignore[attr-defined]
        pilot.app.clear_notifications()
        await wait_for(pilot, lambda: not pilot.app.screen.query(Toast))
        await wait_until_shown(pilot, "Done: 2 new sessions", "lossless-claw): 2 session(s)", "2 of 5 ticked",
                               "i Import ticked")

    assert snap_compare(_app(store, home), terminal_size=SIZE, run_before=run_before)
    store.close()


def test_import_screen_nothing_found(snap_compare, home: Path) -> None:
    store = Store.open(Path("hiermem.db"))

    async def run_before(pilot: Pilot) -> None:
        await _import_screen(pilot, 0)
        box = pilot.app.screen.query_one("#import-path", Input)
        await wait_for(pilot, lambda: box.has_focus)  # typing a path is what is left
        box.cursor_blink = False  # a steady cursor: the picture must not depend on when the blink was
        await wait_until_shown(pilot, "No chat history found", "none found", "esc Back")

    assert snap_compare(_app(store, home), terminal_size=SIZE, run_before=run_before)
    store.close()
