"""Tick boxes read ticked or not by their glyph, not only by their colour (issue 36 item 11): the Import
screen's list of sources and the run dialog's boxes show ``▐✓▌`` when ticked and ``▐ ▌`` when not, where
Textual draws ``▐X▌`` either way, only in another colour (lost on a monochrome terminal, or to a reader who
does not see the colour)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import SelectionList

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.import_sources import ImportScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import STANDARD, app_for, build_db, screen_shown, wait_for, wait_for_text

SIZE = (120, 36)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TICKED, UNTICKED = "▐✓▌", "▐ ▌"


def line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


async def test_the_import_list_shows_which_sources_are_ticked_by_a_glyph(
    settings: Settings, empty_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("OTERM_DATA_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
                "LLM_USER_PATH", "DATA_DIR", "LOSSLESS_VAULT_DIR"):
        monkeypatch.delenv(var, raising=False)
    for src, dest in ((FIXTURES / "lossless_claw" / "lcm.db", home / ".openclaw" / "lcm.db"),
                      (FIXTURES / "lossless_code" / "vault.db", home / ".lossless-code" / "vault.db")):
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("I")
        screen = await screen_shown(pilot, ImportScreen)
        listing = screen.query_one("#import-sources", SelectionList)
        await wait_for(pilot, lambda: listing.option_count == 2, show=lambda: listing.option_count)
        text = await wait_for_text(pilot, "0 of 2 ticked", "~/.openclaw/lcm.db", "~/.lossless-code/vault.db")
        assert UNTICKED in line_with(text, "~/.openclaw/lcm.db") and UNTICKED in line_with(text, "vault.db")
        await pilot.press("down", "space")  # the first
        text = await wait_for_text(pilot, "1 of 2 ticked")
        ticked = [line for line in text.splitlines() if TICKED in line]
        unticked = [line for line in text.splitlines() if UNTICKED in line]
        assert len(ticked) == 1 and len(unticked) == 1 and "X" not in ticked[0][:6] + unticked[0][:6]


async def test_the_run_dialogs_boxes_show_a_tick_only_when_ticked(settings: Settings, tmp_path: Path) -> None:
    store = build_db(tmp_path / "hiermem.db", STANDARD)
    try:
        app = app_for(Settings(db_path=store.path, config_path=tmp_path / "config.toml", backend="extractive"),
                      store)
        async with app.run_test(size=SIZE) as pilot:
            await screen_shown(pilot, SessionsScreen)
            await pilot.press("p")
            await screen_shown(pilot, RunDialog)
            text = await wait_for_text(pilot, "Remember as the default backend and model")
            assert UNTICKED in line_with(text, "Remember as the default")
            await pilot.press("m")
            text = await wait_for_text(pilot, f"{TICKED} Remember as the default")
            assert UNTICKED not in line_with(text, "Remember as the default")
    finally:
        store.close()
