"""Keys: every binding has an id, so a user can move it in the settings file.

``[keymap]`` in the config file maps binding ids to keys (Textual's ``App.set_keymap``), for
example ``"app.help" = "f9"`` or ``"app.quit" = "ctrl+q"``; the help screen lists
every id with its keys. Ids are ``<where>.<what>``: ``app`` for the keys that work everywhere,
then one prefix per screen or widget (``sessions``, ``session``, ``search``, ``transcript`` …).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from textual.binding import Binding, BindingType


def app_bindings() -> list[BindingType]:
    """The keys that work on every screen."""
    return [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="app.help"),
        Binding("comma,f2", "settings", "Settings", show=False, key_display=",", id="app.settings"),
        Binding("f3", "prompts", "Prompts", show=False, id="app.prompts"),
        Binding("f4", "toggle_mask_secrets", "Mask secrets on screen", show=False, id="app.mask_secrets"),
        Binding("ctrl+r", "refresh_backend", "Re-check backend", show=False, id="app.refresh_backend"),
        Binding("ctrl+t", "next_theme", "Next theme", show=False, id="app.next_theme"),
    ]


def binding_ids(bindings: Iterable[BindingType]) -> Iterator[tuple[str, str, str]]:
    """``(id, keys, description)`` of the bindings that have an id, in order."""
    for b in bindings:
        if isinstance(b, Binding) and b.id:
            yield b.id, b.key, b.description


def unknown_ids(keymap: dict[str, str]) -> list[str]:
    """The ids in a ``[keymap]`` table that no binding has (a typo, or a key that was renamed).
    Asked at every start, so nothing is looked up when the table is empty (the usual case)."""
    if not keymap:
        return []
    known = {binding_id for binding_id, _keys, _what in known_ids()}
    return sorted(k for k in keymap if k not in known)


def keys_markdown(keymap: dict[str, str]) -> str:
    """The help screen's table of every binding id, its keys (the user's own where the
    settings file moves them) and what it does."""
    def cell(text: str) -> str:
        return "`" + text.replace("`", "'").replace("|", "/") + "`"

    lines = ["| id | keys | what |", "|---|---|---|"]
    for binding_id, keys, what in known_ids():
        lines.append(f"| {cell(binding_id)} | {cell(keymap.get(binding_id, keys))} | {what or '—'} |")
    return "\n".join(lines)


def known_ids() -> list[tuple[str, str, str]]:
    """Every binding id of the app, its screens and widgets (for the help screen and the config check)."""
    from hiermem_tui.tui.screens import (
        backup, compare, confirm, context, help, import_sources, prompts, report, run_dialog, run_history,
        search, session, sessions, settings, stats, versions,
    )
    from hiermem_tui.tui.widgets import coverage_map, detail_pane, sessions_table, transcript

    classes = [
        sessions.SessionsScreen, sessions_table.SessionsTable, session.SessionScreen, coverage_map.CoverageMap,
        transcript.Transcript, detail_pane.ChainPicker, search.SearchScreen, context.ContextScreen,
        context.SavePrompt, report.ReportScreen, stats.StatsScreen, run_history.RunHistoryScreen,
        run_dialog.RunDialog, compare.CompareScreen, versions.VersionsScreen, confirm.ConfirmScreen,
        backup.BackupScreen, settings.SettingsScreen, prompts.PromptsScreen, help.HelpScreen,
        import_sources.ImportScreen,
    ]
    out = list(binding_ids(app_bindings()))
    for cls in classes:
        out.extend(binding_ids(getattr(cls, "BINDINGS", [])))
    return out
