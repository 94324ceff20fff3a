"""Keys: every binding has an id, so a user can move it in the settings file.

``[keymap]`` in the config file maps binding ids to keys (Textual's ``App.set_keymap``), for
example ``"app.help" = "f9"`` or ``"app.quit" = "ctrl+q"``; the help screen lists
every id with its keys. Ids are ``<where>.<what>``: ``app`` for the keys that work everywhere,
then one prefix per screen or widget (``sessions``, ``session``, ``search``, ``transcript`` …).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from textual.binding import Binding, BindingType
from textual.keys import Keys, key_to_character


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
        # one key for the backlog: start it (the dialog), then pause and resume it; only one of the three is on
        Binding("B", "backlog", "Compact everything", show=False, key_display="B", id="app.backlog"),
        Binding("B", "backlog_pause", "Pause backlog", key_display="B", id="app.backlog_pause"),
        Binding("B", "backlog_resume", "Resume backlog", key_display="B", id="app.backlog_resume"),
        Binding("ctrl+x", "backlog_stop", "Stop backlog", id="app.backlog_stop"),
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


MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
KEY_NAMES = frozenset(k.value.rsplit("+", 1)[-1] for k in Keys if not k.value.startswith("<"))
"""Names Textual gives keys that are not characters (``f9``, ``home``, ``pageup``, ``escape`` …)."""


def key_name(key: str) -> str:
    """One key as Textual names it in its events: a character by its name (``?`` → ``question_mark``)."""
    key = key.strip()
    if len(key) == 1 and not key.isalnum():
        try:
            return unicodedata.name(key).lower().replace(" ", "_").replace("-", "_")
        except ValueError:
            return key
    return key


def is_known_key(key: str) -> bool:
    """Whether Textual can ever send ``key`` (``ctrl+shift+nonsense`` it cannot)."""
    *mods, name = key.strip().split("+")
    if not name or any(m not in MODIFIERS for m in mods):
        return False
    return len(name) == 1 or name in KEY_NAMES or key_to_character(name) is not None


def keymap_problems(keymap: dict[str, str]) -> list[str]:
    """What is wrong with a ``[keymap]`` table, one line each: ids no binding has, key names
    Textual does not know, and keys another binding of the same screen already takes (one of
    the two would never fire). Empty for an empty table: nothing is looked up at a plain start."""
    if not keymap:
        return []
    problems = []
    if unknown := unknown_ids(keymap):
        problems.append(f"No key has the id {', '.join(unknown)}")
    for binding_id, keys in sorted(keymap.items()):
        bad = [k.strip() for k in keys.split(",") if not is_known_key(k)]
        if bad:
            problems.append(f"{binding_id} = {keys!r}: {', '.join(bad)} is no key name Textual knows")
    problems.extend(_shadowed(keymap))
    return problems


def _shadowed(keymap: dict[str, str]) -> list[str]:
    """A moved key that meets another binding's key on one screen (its widgets and the app's keys
    included), where the two did not meet before the move (``?`` closing the help screen it opened is
    by design)."""
    by_design = _meetings({})
    found: list[str] = []
    for where, first, second, key, what in _meetings(keymap):
        if (where, first, second, key, what) in by_design or not (first in keymap or second in keymap):
            continue
        moved, other = (first, second) if first in keymap else (second, first)
        line = f"{moved} = {key!r}: on {where} that key is {other} ({what[other] or '—'}) already"
        if line not in found:
            found.append(line)
    return found


def _meetings(keymap: dict[str, str]) -> list[tuple[str, str, str, str, dict[str, str]]]:
    """``(screen, id, id, key, descriptions)`` for every two bindings one key reaches on one screen."""
    out = []
    app = list(binding_ids(app_bindings()))
    for where, bindings in screen_groups():
        taken: dict[str, str] = {}
        what = {binding_id: desc for binding_id, _keys, desc in [*bindings, *app]}
        for binding_id, keys, _desc in [*bindings, *app]:
            for key in keymap.get(binding_id, keys).split(","):
                owner = taken.setdefault(key_name(key), binding_id)
                if owner != binding_id:
                    out.append((where, owner, binding_id, key.strip(), what))
    return out


def keys_markdown(keymap: dict[str, str]) -> str:
    """The help screen's table of every binding id, its keys (the user's own where the
    settings file moves them) and what it does."""
    def cell(text: str) -> str:
        return "`" + text.replace("`", "'").replace("|", "/") + "`"

    lines = ["| id | keys | what |", "|---|---|---|"]
    for binding_id, keys, what in known_ids():
        lines.append(f"| {cell(binding_id)} | {cell(keymap.get(binding_id, keys))} | {what or '—'} |")
    return "\n".join(lines)


def screen_groups() -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Each screen's name with the bindings of the screen and of the widgets on it (ids, keys, what):
    what can meet on one screen. The app's own keys work on all of them."""
    # Imported here, not at the top: the help and settings screens import this module (the keys
    # they list), and this function lists every screen's keys, theirs too.
    from hiermem_tui.tui.screens import (
        backup, chain, compare, confirm, context, help, import_sources, prompts, report, run_dialog, run_history,
        search, session, sessions, settings, stats, versions,
    )
    from hiermem_tui.tui.widgets import coverage_map, dag_tree, lists, sessions_table, transcript

    listed = lists.KeyedOptionList
    groups: list[tuple[str, list[type]]] = [
        ("the sessions list", [sessions.SessionsScreen, sessions_table.SessionsTable]),
        ("the session screen", [session.SessionScreen, coverage_map.CoverageMap, transcript.Transcript,
                                dag_tree.DagTree]),
        ("the covering chain", [chain.ChainPicker, listed]),
        ("search", [search.SearchScreen, listed]),
        ("what the model sees", [context.ContextScreen, listed]),
        ("the save prompt", [context.SavePrompt]),
        ("a report", [report.ReportScreen]),
        ("stats", [stats.StatsScreen]),
        ("run history", [run_history.RunHistoryScreen, listed]),
        ("the run dialog", [run_dialog.RunDialog, listed]),
        ("compare", [compare.CompareScreen]),
        ("versions", [versions.VersionsScreen, listed]),
        ("confirm", [confirm.ConfirmScreen]),
        ("backup", [backup.BackupScreen]),
        ("settings", [settings.SettingsScreen]),
        ("prompts", [prompts.PromptsScreen, listed]),
        ("help", [help.HelpScreen]),
        ("import", [import_sources.ImportScreen, lists.KeyedSelectionList]),
    ]
    return [(name, [b for cls in classes for base in cls.__mro__ for b in binding_ids(vars(base).get("BINDINGS", []))])
            for name, classes in groups]


def known_ids() -> list[tuple[str, str, str]]:
    """Every binding id of the app, its screens and widgets (for the help screen and the config check),
    each once."""
    out = list(binding_ids(app_bindings()))
    seen = {binding_id for binding_id, _keys, _what in out}
    for _where, bindings in screen_groups():
        for entry in bindings:
            if entry[0] not in seen:
                seen.add(entry[0])
                out.append(entry)
    return out
