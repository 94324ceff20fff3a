"""The prompts screen: shows the exact text sent, edits are saved to the config with their own
version, a default comes back with ctrl+r, an instruction without {material} is refused."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

from hiermem_tui.config import Settings, load_settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import notes
from hiermem_tui.summarize.prompts import DEFAULT_TEMPLATES, PromptSet
from hiermem_tui.tui.screens.prompts import PromptsScreen
from tests.tui._session_fixtures import app_for
from tests.tui.conftest import screen_text, wait_for


async def test_edit_save_reset_and_refuse(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    store = Store.open(tmp_path / "hiermem.db")
    app = app_for(Settings(db_path=store.path, config_path=cfg), store)
    try:
        async with app.run_test(size=(150, 44)) as pilot:
            await pilot.press("f3")
            await wait_for(pilot, lambda: isinstance(app.screen, PromptsScreen))
            screen = app.screen
            assert isinstance(screen, PromptsScreen)
            preview = lambda: str(screen.query_one("#prompts-preview").render())  # noqa: E731
            await wait_for(pilot, lambda: "ImportError: cannot import name 'load_config'" in preview())
            assert "num_predict" in preview()  # the text as sent: notes (the default) ask a leaf's key lines, no prior
            assert "<previous_summary>" not in preview() and notes.LEAF_ASK in preview()
            assert "- user: " in preview() and "notes: one call like this per leaf, of its key lines" in preview()
            assert " default " in str(screen.query_one("#prompts-version").render())
            instruction = screen.query_one("#prompts-instruction", TextArea)
            instruction.load_text("Notes for a lawyer:\n{material}\nAt most {words} words.")
            await wait_for(pilot, lambda: preview().startswith("system: ") and "Notes for a lawyer:\n" in preview())
            assert " edited " in str(screen.query_one("#prompts-version").render())
            instruction.load_text("No material here")
            await wait_for(pilot, lambda: "must contain {material}" in screen_text(app))
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: any("Not saved" in str(n.message) for n in app._notifications))
            assert isinstance(app.screen, PromptsScreen) and not cfg.exists()
            instruction.load_text("Notes for a lawyer:\n{material}")
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: not isinstance(app.screen, PromptsScreen))
        saved = load_settings(cfg).prompts
        assert saved["leaf.normal"]["instruction"] == "Notes for a lawyer:\n{material}"
        assert PromptSet(saved).version("leaf.normal").startswith("leaf-v4~")
        async with app_for(load_settings(cfg), store).run_test(size=(150, 44)) as pilot:
            app2 = pilot.app
            await pilot.press("f3")
            await wait_for(pilot, lambda: isinstance(app2.screen, PromptsScreen))
            screen = app2.screen
            assert isinstance(screen, PromptsScreen)
            await wait_for(pilot, lambda: screen.query_one("#prompts-instruction", TextArea).text.startswith("Notes"))
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: screen.query_one("#prompts-instruction", TextArea).text
                           == DEFAULT_TEMPLATES["leaf.normal"].instruction)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: not isinstance(app2.screen, PromptsScreen))
        assert load_settings(cfg).prompts == {}
    finally:
        store.close()
