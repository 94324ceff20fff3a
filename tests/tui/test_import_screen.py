"""The Import screen, driven like a user: found histories listed with counts, nothing imported
until the user ticks and says so, a typed path joining the list, progress and a line per source."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, SelectionList, Static

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.import_sources import ImportScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import app_for, screen_shown, wait_for, wait_for_footer, wait_for_text

SIZE = (120, 36)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOOL_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OTERM_DATA_DIR", "LLM_USER_PATH", "DATA_DIR", "LOSSLESS_VAULT_DIR",
             "XDG_CONFIG_HOME", "XDG_DATA_HOME")


def place(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest)
    return dest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with three histories at their tools' places (databases only: no folder to walk)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in TOOL_VARS:
        monkeypatch.delenv(var, raising=False)
    place(FIXTURES / "oterm" / "machine-a.db", home / ".local" / "share" / "oterm" / "store.db")
    place(FIXTURES / "lossless_claw" / "lcm.db", home / ".openclaw" / "lcm.db")
    place(FIXTURES / "lossless_code" / "vault.db", home / ".lossless-code" / "vault.db")
    return home


async def open_import(pilot: Pilot[object]) -> ImportScreen:
    """From the sessions list, ``I``: the Import screen."""
    await screen_shown(pilot, SessionsScreen)
    await pilot.press("I")
    return await screen_shown(pilot, ImportScreen)


def digests(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_found_histories_are_imported_only_once_ticked(settings: Settings, empty_store: Store,
                                                             home: Path) -> None:
    before = digests(home)
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await wait_for_text(pilot, "No sessions yet", "press I")
        await pilot.press("I")
        screen = await screen_shown(pilot, ImportScreen)
        listing = screen.query_one("#import-sources", SelectionList)
        await wait_for(pilot, lambda: listing.option_count == 3, show=lambda: listing.option_count)
        text = await wait_for_text(pilot, "0 of 3 ticked", "lossless-claw", "~/.openclaw/lcm.db", "2 sessions",
                                   "Nothing is ticked")
        assert "3 sessions" in text and "~/.lossless-code/vault.db" in text
        await wait_for_footer(pilot, "i Import ticked", "a All / none", "esc Back")
        await pilot.press("i")  # nothing ticked: nothing happens but a hint
        await wait_for_text(pilot, "Tick what to import first")
        assert empty_store.sessions.count() == 0
        await pilot.press("down", "down", "space")  # tick the second: lossless-claw
        await wait_for_text(pilot, "1 of 3 ticked", "Import 1 ticked")
        await pilot.press("i")
        await wait_for_text(pilot, "Done: 2 new sessions, 20 episodes added")
        await wait_for_text(pilot, "✓ ~/.openclaw/lcm.db (lossless-claw): 2 session(s), 2 new; 20 episode(s)")
        assert screen.log_lines == ["✓ ~/.openclaw/lcm.db (lossless-claw): 2 session(s), 2 new; 20 episode(s) added, "
                                    "0 already present; 5 summaries added, 0 already present"]
        assert {s.source for s in empty_store.sessions.each()} == {"lossless-claw"}
        await pilot.press("a")  # tick all (lossless-claw stays ticked: a second import adds nothing new)
        await wait_for_text(pilot, "3 of 3 ticked")
        await pilot.press("i")
        await wait_for_text(pilot, "Done: 5 new sessions")
        await wait_for(pilot, lambda: len(screen.log_lines) == 3)
        assert [line.split(": ", 1)[1][:22] for line in screen.log_lines] == [
            "2 session(s), 2 new; 7", "2 session(s), 0 new; 0", "3 session(s), 3 new; 2"]
        await pilot.press("escape")
        sessions = await screen_shown(pilot, SessionsScreen)
        await wait_for(pilot, lambda: sessions.table.row_count == 7, show=lambda: sessions.table.row_count)
    assert digests(home) == before  # other tools' files are only read


async def test_a_typed_path_joins_the_list_ticked(settings: Settings, empty_store: Store, home: Path,
                                                  tmp_path: Path) -> None:
    export = place(FIXTURES / "openwebui" / "bare-chats.json", tmp_path / "downloads" / "chats [1].json")
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot)
        listing = screen.query_one("#import-sources", SelectionList)
        await wait_for(pilot, lambda: listing.option_count == 3)
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*str(tmp_path / "nowhere.json"), "enter")
        await wait_for_text(pilot, "does not exist")
        assert listing.option_count == 3
        await pilot.press(*str(export), "enter")
        await wait_for(pilot, lambda: listing.option_count == 4)
        await wait_for_text(pilot, "Added 1 source from the path (ticked)", "1 of 4 ticked", "chats [1].json")
        screen.query_one("#import-start").focus()
        await pilot.press("enter")  # the button
        await wait_for_text(pilot, "Done: 2 new sessions, 4 episodes added", "(openwebui): 2 session(s), 2 new",
                            "B compacts everything in the background")
        assert {s.source for s in empty_store.sessions.each()} == {"openwebui"}
        # the import is followed by a plan of what is waiting, and says it: a finished chat of two messages is
        # summarised to its end (no fresh tail) and gets its brief, so each waits for a leaf and a brief
        await wait_for(pilot, lambda: app.backlog_waiting is not None)
        assert app.backlog_waiting is not None and app.backlog_waiting.summaries == 4
        assert set(app.backlog_waiting.per_session.values()) == {2}
        await wait_for(pilot, lambda: any("4 summaries waiting in 2 sessions" in n.message
                                          for n in app._notifications))


async def test_a_read_only_database_imports_nothing(settings: Settings, tmp_path: Path, home: Path) -> None:
    path = tmp_path / "ro.db"
    Store.open(path).close()
    path.chmod(0o444)
    store = Store.open(path)
    try:
        assert store.readonly
        app = app_for(settings, store)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_import(pilot)
            await wait_for(pilot, lambda: screen.query_one("#import-sources", SelectionList).option_count == 3)
            await wait_for_text(pilot, "The database is read-only")
            await pilot.press("a", "i")
            await wait_for_text(pilot, "3 of 3 ticked")
            assert screen.query_one("#import-start").disabled
            assert store.sessions.count() == 0
    finally:
        store.close()


def test_another_tools_summary_says_which_tool_and_model_made_it(empty_store: Store) -> None:
    from hiermem_tui.importers import import_paths
    from hiermem_tui.tui.widgets.detail_pane import made_by

    import_paths(empty_store, [FIXTURES / "lossless_claw" / "lcm.db"])
    lines = {made_by(s).plain for sid in [x.id for x in empty_store.sessions.each()]
             for s in empty_store.dag.summaries(sid)}
    assert "lossless-claw · emergency-fallback" in lines
    assert all(line.startswith("lossless-claw · ") and "prompt" not in line for line in lines), lines


async def test_a_typed_folder_is_named_as_typed_and_what_the_import_skipped_is_shown(
    settings: Settings, empty_store: Store, tmp_path: Path, home: Path
) -> None:
    """Issue 21 item 10: a typed path was listed under "Found on this machine", and the CLI's "skipped N
    malformed" lines (and a folder's unrecognised entries) were not shown."""
    folder = tmp_path / "exports"
    folder.mkdir()
    shutil.copy(FIXTURES / "chatgpt" / "broken_conversations.json", folder / "conversations.json")
    (folder / "README.md").write_text("where these came from\n")
    junk = [f"note-{i:02d}.txt" for i in range(7)]  # issue 36 item 5: more than the five once named
    for name in junk:
        (folder / name).write_text("not a chat\n")
    app = app_for(settings, empty_store)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await open_import(pilot)
        listing = screen.query_one("#import-sources", SelectionList)
        await wait_for(pilot, lambda: listing.option_count == 3)
        assert listing.border_title == "Found on this machine"
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*str(folder), "enter")
        await wait_for(pilot, lambda: listing.option_count == 4)
        note = screen.query_one("#import-note", Static)
        await wait_for(pilot, lambda: "Skipped" in str(note.content), show=lambda: str(note.content))
        assert str(note.content).endswith(f"Skipped 8 entries no importer recognises: README.md, {', '.join(junk)}.")
        assert listing.border_title == "Found on this machine, and the paths you typed"
        screen.query_one("#import-start").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("skipped" in line and "malformed" in line for line in screen.log_lines),
                       show=lambda: screen.log_lines)
        assert len(screen.log_lines) >= 3 and screen.log_lines[2].startswith("  "), screen.log_lines  # examples


async def test_the_status_says_what_a_long_import_is_at_and_the_session_gets_a_title(
    settings: Settings, empty_store: Store, tmp_path: Path, home: Path
) -> None:
    """Issue 36 item 8: while one big session was counted and written the status read "1 of 1 · 0 sessions ·
    0 episodes" for the whole time, and a chat without a title stayed untitled."""
    from hiermem_tui.tui.messages import ImportProgressed
    from tests.unit.test_import_progress import TITLE, one_big_session

    src = one_big_session(tmp_path / "big.jsonl", 40)
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot)
        status = screen.query_one("#import-status", Static)
        doing = "counting tokens: 400 of 1,200 messages of session big (1.4 M characters)"
        screen.post_message(ImportProgressed(0, 0, 1, 0, 0, doing))  # what the import's worker posts
        await wait_for(pilot, lambda: str(status.content) == f"1 of 1 · {doing}", show=lambda: str(status.content))
        screen.post_message(ImportProgressed(0, 0, 1, 1, 40))  # between two sessions: the counts
        await wait_for(pilot, lambda: str(status.content) == "1 of 1 · 1 session · 40 episodes")
        await wait_for(pilot, lambda: screen.query_one("#import-sources", SelectionList).option_count == 3)
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*str(src), "enter")
        await wait_for_text(pilot, "Added 1 source from the path (ticked)")
        screen.query_one("#import-start").focus()
        await pilot.press("enter")
        await wait_for_text(pilot, "Done: 1 new session, 40 episodes added")
    assert empty_store.sessions.get("big").title == TITLE
