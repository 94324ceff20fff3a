"""Opening the search, context, stats and run-history screens, and jumping from them into a session.

Why one module: four screens are reached from two places (the sessions list and a session)
by key and by palette; keeping the glue here keeps the edits to those two shared screens to a
binding and one line each. Screens are imported when first opened, so the session screen
does not pay for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hiermem_tui.tui.palette import PaletteCommand

if TYPE_CHECKING:
    from textual.app import App

    from hiermem_tui.tui.screens.session import SessionScreen


def open_search(app: App[object], session_id: str | None = None) -> None:
    """The search screen, over every session or (from a session) over that one."""
    from hiermem_tui.tui.screens.search import SearchScreen

    app.push_screen(SearchScreen(session_id))


def open_context(app: App[object], session_id: str) -> None:
    from hiermem_tui.tui.screens.context import ContextScreen

    app.push_screen(ContextScreen(session_id))


def open_stats(app: App[object], session_id: str | None = None) -> None:
    from hiermem_tui.tui.screens.stats import StatsScreen

    app.push_screen(StatsScreen(session_id))


def open_history(app: App[object], session_id: str | None = None) -> None:
    from hiermem_tui.tui.screens.run_history import RunHistoryScreen

    app.push_screen(RunHistoryScreen(session_id))


async def show_in_session(
    app: App[object], session_id: str, *, summary_id: str | None = None, seq: int | None = None,
    versions: bool = False,
) -> bool:
    """Show a summary (in the tree) or an episode (in the transcript) of ``session_id``.

    If the screen under the current one is that session, the current one closes and the
    jump happens there (a search started from the session); otherwise the session opens on
    top, so ``esc`` comes back to the list the jump came from. ``versions`` opens the
    versions of ``summary_id`` over it (a superseded summary is not in the tree).
    """
    from hiermem_tui.tui.screens.session import SessionScreen
    from hiermem_tui.tui.screens.versions import VersionsScreen

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
        app.push_screen(VersionsScreen(summary_id, ref_year=target.tree.ref_year),
                        callback=lambda changed: target.reload() if changed else None)
    if not ok:
        app.notify("That is not in this session's tree any more (re-summarised since?); press r to refresh.",
                   severity="warning", markup=False)
    return ok


def session_commands(screen: SessionScreen) -> Iterable[PaletteCommand]:
    """The session screen's palette entries for these screens."""
    sid = screen.session_id
    yield PaletteCommand("Search this session", "Full-text search of its episodes and summaries",
                         lambda: open_search(screen.app, sid), "/")
    yield PaletteCommand("What the model sees", "Top summaries + raw tail within a token budget; copy or save",
                         lambda: open_context(screen.app, sid), "m")
    yield PaletteCommand("Session stats", "Compression, summaries per depth and tier, fidelity, model time",
                         lambda: open_stats(screen.app, sid), "i")
    yield PaletteCommand("Run history of this session", "Every run, why it ended, the summaries it made",
                         lambda: open_history(screen.app, sid), "h")


def home_commands(app: App[object]) -> Iterable[PaletteCommand]:
    """The sessions list's palette entries for these screens (file-wide)."""
    yield PaletteCommand("Search all sessions", "Full-text search of every episode and summary",
                         lambda: open_search(app), "f")
    yield PaletteCommand("Stats of the whole file", "Compression, summaries per depth and tier, fidelity, runs",
                         lambda: open_stats(app), "i")
    yield PaletteCommand("Run history", "Every compaction run in the file, newest first",
                         lambda: open_history(app), "h")
