"""Help, settings, themes and the command palette."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, Markdown

from hiermem_tui.config import ConfigError, Policy, Settings, load_settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.help import HelpScreen, help_markdown
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.screens.settings import POLICY_HINTS, SettingsScreen, settings_from_form
from hiermem_tui.tui.widgets.sessions_table import SessionsTable
from tests.tui.conftest import NOW, SessionSpec, add_session, app_for, screen_shown, wait_for, wait_for_text

SIZE = (120, 36)


async def test_help_opens_with_question_mark_and_f1_and_closes(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("question_mark")
        await screen_shown(pilot, HelpScreen)
        text = await wait_for_text(pilot, "Keys")
        for words in ("Keys", "command palette", "Fresh tail", "Coverage", "Tier"):
            assert words in text or words in help_markdown(), words
        await pilot.press("escape")
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("f1")
        await screen_shown(pilot, HelpScreen)
        await pilot.press("q")  # closes help, does not quit the app
        await screen_shown(pilot, SessionsScreen)
        assert app.is_running


async def open_palette(pilot: Pilot[HiermemApp]) -> CommandList:
    """ctrl+p, then wait until the palette has the keyboard (what is typed next goes to its search)."""
    await pilot.press("ctrl+p")
    palette = await screen_shown(pilot, CommandPalette)
    await wait_for(pilot, lambda: isinstance(pilot.app.focused, Input) and pilot.app.focused.screen is palette)
    return palette.query_one(CommandList)


def test_help_text_explains_every_concept() -> None:
    text = help_markdown()
    for term in ("Session", "Episode", "Summary", "Depth", "Tier", "Fresh tail", "Coverage", "hiermem-tui import"):
        assert term in text, term


async def test_command_palette_lists_app_and_screen_actions(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        commands = await open_palette(pilot)
        await wait_for(pilot, lambda: commands.option_count > 10)
        titles = {str(commands.get_option_at_index(i).prompt).split("\n")[0] for i in range(commands.option_count)}
        for title in (
            "Open session", "Filter sessions", "Sort by tokens", "Sort by last activity", "Reverse sort order",
            "Settings", "Help", "Refresh backend status", "Next theme", "Quit", "Theme",
        ):
            assert any(t.startswith(title) for t in titles), (title, titles)
        # searching and choosing runs the action
        await pilot.press(*"sort by tok")
        await wait_for(
            pilot, lambda: commands.option_count >= 1 and "tokens" in str(commands.get_option_at_index(0).prompt)
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.sort == "tokens", show=lambda: table.sort)


async def test_palette_finds_sessions_by_title_and_shows_them_literally(settings: Settings, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "p.db")
    add_session(store, SessionSpec("s1", "[$accent]tricky [@click=app.quit]title[/]", 3, NOW))
    add_session(store, SessionSpec("s2", "Plan the garden", 3, NOW))
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        commands = await open_palette(pilot)
        await pilot.press(*"tricky")
        await wait_for(pilot, lambda: commands.option_count >= 1
                       and "tricky" in str(commands.get_option_at_index(0).prompt))
        prompts = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
        assert any("Open [$accent]tricky [@click=app.quit]title[/]" in p for p in prompts), prompts
        await wait_for_text(pilot, "[$accent]tricky")
        await pilot.press("enter")  # the session hit is the only one: it opens that session
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionScreen"
                       or any("session view is not available" in str(n.message) for n in app._notifications))
        assert app.is_running
        if type(app.screen).__name__ == "SessionScreen":
            assert app.screen.session_id == "s1"  # type: ignore[attr-defined]
    store.close()


async def test_theme_choice_is_saved_to_the_config_file(settings: Settings, standard_store: Store) -> None:
    config = settings.config_path
    assert config is not None and not config.exists()
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        assert not config.exists()  # opening the app writes nothing
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: app.theme != "textual-dark")
        chosen = app.theme
        assert load_settings(config).theme == chosen
        app.theme = "nord"  # as the Theme picker in the palette does
        await wait_for(pilot, lambda: app.settings.theme == "nord")
        assert load_settings(config).theme == "nord"
    # the next start uses it
    app2 = app_for(load_settings(config), standard_store)
    async with app2.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        assert app2.theme == "nord"


async def test_unknown_theme_in_config_falls_back(settings: Settings, standard_store: Store) -> None:
    app = app_for(replace(settings, theme="no-such-theme"), standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        assert app.theme == "textual-dark"


def _set_field(screen: SettingsScreen, field: str, value: str) -> None:
    """Type into a field (the form reads the values when it saves)."""
    from textual.widgets import Input

    screen.query_one(f"#field-{field}", Input).value = value


async def test_settings_screen_saves_a_policy_change(settings: Settings, standard_store: Store) -> None:
    config = settings.config_path
    assert config is not None
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("comma")
        screen = await screen_shown(pilot, SettingsScreen)
        _set_field(screen, "fresh_tail", "8")
        _set_field(screen, "model", "qwen2.5:3b")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert app.settings.policy.fresh_tail == 8 and app.settings.model == "qwen2.5:3b"
    saved = load_settings(config)
    assert saved.policy.fresh_tail == 8
    assert saved.model == "qwen2.5:3b"
    assert saved.policy.condense_fanout == settings.policy.condense_fanout


async def test_settings_screen_rejects_a_bad_value_with_a_message(settings: Settings, standard_store: Store) -> None:
    config = settings.config_path
    assert config is not None
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        screen = await screen_shown(pilot, SettingsScreen)
        _set_field(screen, "condense_fanout", "1")
        await pilot.press("ctrl+s")
        await wait_for_text(pilot, "condense_fanout must be at least 2")
        assert app.screen is screen  # still open
        assert app.settings.policy.condense_fanout == 4
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
    assert not config.exists()  # nothing was saved


def test_every_policy_field_has_its_hint_in_the_form() -> None:
    """The form lists every field of the policy; each says in a few words what it does (idle_after had none)."""
    assert set(POLICY_HINTS) == {f.name for f in fields(Policy)}
    assert all(0 < len(hint) <= 34 for hint in POLICY_HINTS.values())  # the hint column's width, uncut


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ollama_host", "http://", "Ollama host must look like"),
        ("ollama_host", "localhost:notaport", "bad port"),
        ("timeout_s", "soon", "timeout must be a number"),
        ("timeout_s", "0", "more than 0"),
        ("parallel", "0", "parallel must be at least 1"),
        ("leaf_chunk_tokens", "", "policy.leaf_chunk_tokens must be a whole number"),
        ("leaf_chunk_tokens", "0", "policy.leaf_chunk_tokens must be a positive whole number"),
        ("keep_alive", " ", "keep alive must not be empty"),
    ],
)
def test_settings_form_validation(field: str, value: str, message: str, tmp_path: Path) -> None:
    base = Settings(db_path=tmp_path / "x.db")
    values = {
        "ollama_host": base.ollama_host, "model": "", "backend": "ollama", "timeout_s": "300", "keep_alive": "10m",
        "parallel": "1", "theme": "nord", "fresh_tail": "16", "leaf_chunk_tokens": "3000", "leaf_min_episodes": "4",
        "leaf_target_tokens": "1200", "condense_fanout": "4", "condensed_target_tokens": "2000",
    }
    assert settings_from_form(values, base).theme == "nord"
    with pytest.raises(ConfigError, match=message):
        settings_from_form({**values, field: value}, base)


def test_settings_form_normalises_a_bare_host(tmp_path: Path) -> None:
    base = Settings(db_path=tmp_path / "x.db")
    values = {
        "ollama_host": "gpu-box", "model": " llama3.2 ", "backend": "extractive", "timeout_s": "12.5",
        "keep_alive": "1h", "parallel": "2", "fresh_tail": "0", "leaf_chunk_tokens": "3000", "leaf_min_episodes": "4",
        "leaf_target_tokens": "1200", "condense_fanout": "4", "condensed_target_tokens": "2000",
    }
    new = settings_from_form(values, base)
    assert new.ollama_host == "http://gpu-box:11434"
    got = (new.model, new.backend, new.timeout_s, new.parallel, new.policy.fresh_tail)
    assert got == ("llama3.2", "extractive", 12.5, 2, 0)


async def test_a_keymap_from_the_settings_file_moves_a_key_and_names_unknown_ids(
    settings: Settings, standard_store: Store
) -> None:
    moved = replace(settings, keymap={"app.help": "f9", "sessions.not_a_binding": "x"})
    app = app_for(moved, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await wait_for(pilot, lambda: any("sessions.not_a_binding" in str(n.message) for n in app._notifications))
        assert not any("app.help" in str(n.message) for n in app._notifications)  # a known id is not a warning
        await pilot.press("f9")
        help_screen = await screen_shown(pilot, HelpScreen)
        markdown = help_screen.query_one("#help-text", Markdown).source
        assert "| `app.help` | `f9` | Help |" in markdown
        assert "| `session.toggle_view` |" in markdown
        assert app.screen_stack.count(help_screen) == 1


async def test_a_theme_change_saves_the_theme_only_not_this_runs_flags_nor_the_default_host(
    tmp_path: Path, standard_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 item 2: ctrl+t after `--ollama-host … --model …` wrote the dead host and the one-off
    model into the file (and dropped the user's comments); with no flags the default host was
    written, so $OLLAMA_HOST was ignored from then on."""
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    config = tmp_path / "config.toml"
    config.write_text("# mine: keep me\nkeep_alive = \"30m\"\nsomething_new = true\n")
    flagged = replace(load_settings(config, ollama_host="http://127.0.0.1:9", model="qwen-oneoff:7b"),
                      db_path=tmp_path / "hiermem.db")
    app = app_for(flagged, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "theme" in config.read_text())
    text = config.read_text()
    assert "# mine: keep me" in text and "something_new = true" in text and 'keep_alive = "30m"' in text
    assert "ollama_host" not in text and "qwen-oneoff" not in text and "backend" not in text
    monkeypatch.setenv("OLLAMA_HOST", "http://env-host:11434")
    later = load_settings(config)
    assert later.ollama_host == "http://env-host:11434" and later.model is None


async def test_a_key_name_textual_does_not_know_and_a_shadowed_key_are_warned_about_at_start(
    settings: Settings, standard_store: Store
) -> None:
    """Issue 21 item 5: only unknown ids were warned about; a nonsense key name or a key another
    binding on the same screen already takes just never worked."""
    moved = replace(settings, keymap={"app.quit": "ctrl+shift+nonsense", "session.find": "t", "app.help": "f9"})
    app = app_for(moved, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await wait_for(pilot, lambda: any(n.title == "Keymap" for n in app._notifications))
        [notice] = [str(n.message) for n in app._notifications if n.title == "Keymap"]
        assert "app.quit = 'ctrl+shift+nonsense': ctrl+shift+nonsense is no key name Textual knows" in notice
        assert "session.find = 't': on the session screen that key is session.toggle_view" in notice
        assert "app.help" not in notice  # f9 is a key, and free
