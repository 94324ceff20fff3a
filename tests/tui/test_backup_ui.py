"""A backup before a bulk run: the run dialog of a repair or a whole-session re-summarise offers it (``b``),
the copy is made (with its progress) before the run starts, and a failed copy runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hiermem_tui.store import Store, StoreError
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens import backup as backup_screen
from hiermem_tui.tui.screens.backup import BackupScreen
from hiermem_tui.tui.screens.confirm import ConfirmScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from tests.tui.conftest import screen_shown, wait_for, wait_for_footer, wait_for_text
from tests.tui.test_repair_ui import opened, settings_for, store  # noqa: F401 (a fixture: the "dag" session)

pytestmark = pytest.mark.usefixtures("utc_tz")


def copies(store: Store) -> list[Path]:
    return sorted(p for p in store.path.parent.iterdir() if ".backup-" in p.name)


async def ready_dialog(pilot, app: HiermemApp, key: str) -> RunDialog:  # type: ignore[no-untyped-def]
    """The run dialog of ``key``, planned and probed (Ollama is unreachable here: extractive is the default)."""
    await pilot.press(key)
    dialog = await screen_shown(pilot, RunDialog)
    await wait_for(pilot, lambda: dialog.counts is not None and dialog.status is not None and not dialog.probing)
    return dialog


async def test_a_repair_backs_the_file_up_first_when_asked(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await ready_dialog(pilot, app, "X")
        await wait_for_text(pilot, "Back up the file first")
        await wait_for_footer(pilot, "b Backup")
        await pilot.press("b")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(r.kind == "repair" and r.status == "done" for r in store.runs.of_session("dag")),
                       timeout=20)
        await wait_for(pilot, lambda: any(n.title == "Backed up" for n in app._notifications))
    [copy] = copies(store)
    with Store.open(copy, readonly=True) as before:  # the copy is the file from before the run
        assert [r.kind for r in before.runs.of_session("dag")] == []
        assert before.health.check().ok


async def test_without_the_box_no_copy_is_made_and_a_pass_does_not_offer_one(tmp_path: Path,
                                                                              store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        dialog = await ready_dialog(pilot, app, "p")
        assert not dialog.query("#run-backup")
        await pilot.press("escape")
        await ready_dialog(pilot, app, "X")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(r.kind == "repair" and r.status == "done" for r in store.runs.of_session("dag")),
                       timeout=20)
    assert copies(store) == []


async def test_a_whole_session_redo_confirms_then_backs_up_then_runs(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await ready_dialog(pilot, app, "W")
        await pilot.press("b")
        await pilot.press("enter")
        await screen_shown(pilot, ConfirmScreen)
        assert copies(store) == []  # nothing before the yes
        await pilot.press("y")
        await wait_for(pilot, lambda: any(r.kind == "resummarize-session" and r.status == "done"
                                          for r in store.runs.of_session("dag")), timeout=20)
    [copy] = copies(store)
    with Store.open(copy, readonly=True) as before:
        assert not [r for r in before.runs.of_session("dag") if r.kind == "resummarize-session"]


async def test_a_failed_backup_runs_nothing(tmp_path: Path, store: Store,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kw: object) -> object:
        raise StoreError("cannot write /nowhere/copy.db: no space left on device")

    monkeypatch.setattr(backup_screen, "backup", broken)
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await ready_dialog(pilot, app, "X")
        await pilot.press("b")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.title == "Backup failed" for n in app._notifications))
        await wait_for(pilot, lambda: not isinstance(app.screen, BackupScreen))
        assert "no space left" in next(str(n.message) for n in app._notifications if n.title == "Backup failed")
        assert app.run_state is None
    assert [r for r in store.runs.of_session("dag") if r.kind == "repair"] == []
