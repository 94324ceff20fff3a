"""Backing the file up before a big run: a small modal with the copy's progress.

Why a modal: the run must not start until the copy is whole (a repair or a whole-session
re-summarise replaces many summaries, and the backup is the way back), and a copy of a big file
takes seconds. The copy runs in a thread worker (store/backup.py, consistent while others write);
progress and the outcome come back as :class:`~hiermem_tui.tui.messages.BackupProgress` /
:class:`~hiermem_tui.tui.messages.BackupDone`. ``esc`` stops it: nothing is left behind, nothing runs.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Footer, ProgressBar, Static
from textual.worker import get_current_worker

from hiermem_tui.store import StoreError
from hiermem_tui.store.backup import backup
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.messages import BackupDone, BackupProgress
from hiermem_tui.tui.screens.base import AppModal
from hiermem_tui.words import counted


class _Stopped(Exception):
    """Raised from the progress callback to stop the copy (SQLite aborts the backup)."""


class BackupScreen(AppModal[Path | None]):
    """Copies the app's database to ``dest``; dismisses with the copy's path, or None (failed, stopped)."""

    CSS_PATH = "runs.tcss"
    BINDINGS = [Binding("escape", "stop", "Stop", key_display="esc", id="backup.stop")]

    def __init__(self, dest: Path) -> None:
        super().__init__()
        self.dest = dest
        self._ticket = 1

    def compose(self) -> ComposeResult:
        with Vertical(id="backup-panel", classes="dialog") as panel:
            panel.border_title = Content("Backing up first")
            panel.border_subtitle = "esc stop"
            yield Static(Text(f"Copying the database to {one_line(str(self.dest), 200)} — the run starts when the "
                              "copy is whole and checked."), id="backup-body")
            yield ProgressBar(total=None, show_eta=False, id="backup-progress")
        yield Footer()

    def on_mount(self) -> None:
        ticket = self._ticket
        self.app.store_worker(self, lambda: self._copy(ticket), group="backup", exclusive=True)

    def _copy(self, ticket: int) -> None:
        """In a store worker: the copy, stopped at its next step by esc or by quitting (nothing is left)."""
        worker = get_current_worker()
        store = self.store

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Stopped
            self.post_message(BackupProgress(ticket, done, total))

        try:
            result = backup(store.db, self.dest, on_progress=progress)
        except _Stopped:
            return
        except StoreError as exc:
            self.post_message(BackupDone(ticket, None, error=one_line(str(exc), 300)))
            return
        self.post_message(BackupDone(ticket, result.path, f"{counted(result.episodes, 'episode')}, {result.bytes / 1e6:,.1f} MB"))

    def on_backup_progress(self, message: BackupProgress) -> None:
        message.stop()
        if message.ticket == self._ticket:
            self.query_one(ProgressBar).update(total=message.total, progress=message.done)

    def on_backup_done(self, message: BackupDone) -> None:
        message.stop()
        if message.ticket != self._ticket:
            return
        if message.path is None:
            self.app.notify(f"{message.error}. Nothing ran.", title="Backup failed", severity="error", markup=False)
        else:
            self.app.notify(f"{one_line(str(message.path), 200)} ({message.summary})", title="Backed up",
                            timeout=4, markup=False)
        self.dismiss(message.path)

    def action_stop(self) -> None:
        self._ticket += 1  # whatever the stopped copy still reports is dropped
        self.workers.cancel_group(self, "backup")
        self.app.notify("The backup was stopped: nothing ran.", timeout=3)
        self.dismiss(None)
