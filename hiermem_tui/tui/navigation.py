"""Every screen the app opens is opened here: the one place that knows the screen stack.

Why one object: screens are reached from many places (a key on the sessions list and on a
session, the palette, a run ending, a search hit); opening them through ``app.nav`` keeps
those places to one call each and gives every modal its callback in one shape. It imports the
screens it opens; no screen imports it (they reach it as ``self.app.nav``), so there is no cycle
to hide behind imports inside functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.backup import BackupScreen
from hiermem_tui.tui.screens.chain import ChainPicker
from hiermem_tui.tui.screens.compare import CompareScreen
from hiermem_tui.tui.screens.confirm import ConfirmScreen
from hiermem_tui.tui.screens.context import ContextScreen, SavePrompt
from hiermem_tui.tui.screens.help import HelpScreen
from hiermem_tui.tui.screens.import_sources import ImportScreen
from hiermem_tui.tui.screens.prompts import PromptsScreen
from hiermem_tui.tui.screens.run_dialog import RunChoice, RunDialog
from hiermem_tui.tui.screens.run_history import RunHistoryScreen
from hiermem_tui.tui.screens.search import SearchScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.settings import SettingsScreen
from hiermem_tui.tui.screens.stats import StatsScreen
from hiermem_tui.tui.screens.versions import VersionsScreen

if TYPE_CHECKING:
    from hiermem_tui.store import Summary
    from hiermem_tui.tui.app_base import AppBase
    from hiermem_tui.tui.run_job import RunAction


class Navigator:
    """Opens screens on the app's stack (owned by the app as ``app.nav``)."""

    def __init__(self, app: AppBase) -> None:
        self.app = app

    # ------------------------------------------------------------------ full screens
    def session(self, session_id: str) -> None:
        """Show one session (a backlog running in the background takes it next)."""
        self.app.push_screen(SessionScreen(session_id))
        self.app.backlog.promote(session_id)

    def search(self, session_id: str | None = None) -> None:
        """The search screen, over every session or (from a session) over that one."""
        self.app.push_screen(SearchScreen(session_id))

    def context(self, session_id: str) -> None:
        self.app.push_screen(ContextScreen(session_id))

    def stats(self, session_id: str | None = None, *, run_doctor: bool = False) -> None:
        """The stats screen; ``run_doctor``: with the doctor checking the file at once."""
        self.app.push_screen(StatsScreen(session_id, run_doctor=run_doctor))

    def history(self, session_id: str | None = None) -> None:
        self.app.push_screen(RunHistoryScreen(session_id))

    def import_sources(self) -> None:
        """The Import screen: the chat histories found on this machine, or a typed path."""
        if not isinstance(self.app.screen, ImportScreen):
            self.app.push_screen(ImportScreen())

    def help(self) -> None:
        if not isinstance(self.app.screen, HelpScreen):
            self.app.push_screen(HelpScreen())

    def settings(self) -> None:
        if not isinstance(self.app.screen, SettingsScreen):
            self.app.push_screen(SettingsScreen())

    def prompts(self) -> None:
        if not isinstance(self.app.screen, PromptsScreen):
            self.app.push_screen(PromptsScreen())

    async def show_in_session(
        self, session_id: str, *, summary_id: str | None = None, seq: int | None = None, versions: bool = False,
    ) -> bool:
        """Show a summary (in the tree) or an episode (in the transcript) of ``session_id``.

        If the screen under the current one is that session, the current one closes and the
        jump happens there (a search started from the session); otherwise the session opens on
        top, so ``esc`` comes back to the list the jump came from. ``versions`` opens the
        versions of ``summary_id`` over it (a superseded summary is not in the tree).
        """
        app = self.app
        stack = app.screen_stack
        below = stack[-2] if len(stack) >= 2 else None
        if isinstance(below, SessionScreen) and below.session_id == session_id:
            app.pop_screen()
            target = below
        else:
            target = SessionScreen(session_id)
            await app.push_screen(target)
        ok = True
        if summary_id is not None and not versions:
            ok = target.focus_summary(summary_id)
        elif seq is not None:
            ok = target.focus_episode(seq)
        if versions and summary_id is not None:
            self.versions(summary_id, target.dag_tree.ref_year, target.reload)
        if not ok:
            app.notify("That is not in this session's tree any more (re-summarised since?); press r to refresh.",
                       severity="warning", markup=False)
        return ok

    # ------------------------------------------------------------------ modals
    def versions(self, summary_id: str, ref_year: int | None, on_change: Callable[[], object]) -> None:
        """Every version of a summary (restore one); ``on_change`` runs when one was restored."""
        def closed(changed: bool | None) -> None:
            if changed:
                on_change()

        self.app.push_screen(VersionsScreen(summary_id, ref_year=ref_year), callback=closed)

    def compare(self, old: Summary, new: Summary, run_id: str, *, on_close: Callable[[], object]) -> None:
        """Old and new text of a re-summarised summary: keep or revert."""
        def closed(_reverted: bool | None) -> None:
            on_close()

        self.app.push_screen(CompareScreen(old, new, run_id), callback=closed)

    def covering_chain(self, seq: int, chain: Sequence[Summary], ref_year: int | None, where: str | None,
                       on_pick: Callable[[str | None], object]) -> None:
        """The summaries covering an episode, leaf to top; ``on_pick`` gets the chosen summary's id."""
        picker = ChainPicker(seq, list(chain), fmt.Palette.from_app(self.app), ref_year, where)
        def picked(summary_id: str | None) -> None:
            on_pick(summary_id)

        self.app.push_screen(picker, callback=picked)

    def confirm(self, title: str, text: Text | str, *, confirm: str, danger: bool,
                on_answer: Callable[[bool | None], object]) -> None:
        def answered(yes: bool | None) -> None:
            on_answer(yes)

        self.app.push_screen(ConfirmScreen(title, text, confirm=confirm, danger=danger), callback=answered)

    def run_dialog(self, action: RunAction, session_id: str, *, subject: str, detail: Text | str,
                   on_choice: Callable[[RunChoice | None], object]) -> None:
        def chosen(choice: RunChoice | None) -> None:
            on_choice(choice)

        self.app.push_screen(RunDialog(action, session_id, subject=subject, detail=detail), callback=chosen)

    def backup(self, dest: Path, *, on_done: Callable[[Path | None], object]) -> None:
        """Copy the database to ``dest`` (with progress); ``on_done`` gets the copy's path, or None
        when the copy failed or was stopped."""
        def copied(path: Path | None) -> None:
            on_done(path)

        self.app.push_screen(BackupScreen(dest), callback=copied)

    def save_path(self, default: Path, on_path: Callable[[str | None], object]) -> None:
        """Ask where to save a file (``on_path`` gets None when the user cancelled)."""
        def given(path: str | None) -> None:
            on_path(path)

        self.app.push_screen(SavePrompt(default), callback=given)

    # ------------------------------------------------------------------ palette entries
    def session_commands(self, sid: str) -> Iterable[PaletteCommand]:
        """The session screen's palette entries for search, context, stats and run history."""
        yield PaletteCommand("Search this session", "Full-text search of its episodes and summaries",
                             lambda: self.search(sid), "/")
        yield PaletteCommand("What the model sees", "Top summaries + raw tail within a token budget; copy or save",
                             lambda: self.context(sid), "m")
        yield PaletteCommand("Session stats", "Compression, summaries per depth and tier, fidelity, model time",
                             lambda: self.stats(sid), "i")
        yield PaletteCommand("Run history of this session", "Every run, why it ended, the summaries it made",
                             lambda: self.history(sid), "h")

    def home_commands(self) -> Iterable[PaletteCommand]:
        """The sessions list's palette entries for those screens (file-wide)."""
        yield PaletteCommand("Search all sessions", "Full-text search of every episode and summary",
                             lambda: self.search(), "f")
        yield PaletteCommand("Stats of the whole file", "Compression, summaries per depth and tier, fidelity, runs",
                             lambda: self.stats(), "i")
        yield PaletteCommand("Run history", "Every compaction run in the file, newest first",
                             lambda: self.history(), "h")
        yield PaletteCommand("Import chat history", "The histories found on this machine, or a path: tick, import",
                             self.import_sources, "I")
        yield PaletteCommand("Doctor: check the whole file", "Damage, broken summaries, wrong counts, the search "
                             "index, runs left running (on the stats screen)", lambda: self.stats(run_doctor=True))
