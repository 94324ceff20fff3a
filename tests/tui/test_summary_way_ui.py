"""How a model summarises, in the TUI: the run dialog's picker says each model's way (calibrated or not), a run
from it writes the way the model was calibrated to, and the settings screen shows the calibrated scores and saves
the ``summary_way`` override."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Select

from hiermem_tui.config import load_settings
from hiermem_tui.store import Store
from hiermem_tui.store.ways import ModelWay
from hiermem_tui.summarize.writes import WRITES_SUFFIX
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.settings import SettingsScreen
from tests.fakeollama import FakeOllama
from tests.tui._session_fixtures import add_episodes, app_for
from tests.tui.conftest import screen_shown, screen_text, wait_for, wait_for_text
from tests.tui.test_runs_ui import fake, open_dialog, settings_for  # noqa: F401 (fake: a fixture)

SIZE = (150, 40)
pytestmark = pytest.mark.usefixtures("utc_tz")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    add_episodes(store, "work", "Plan the garden", 30)
    store.ways.record(ModelWay("llama3.2:latest", "writes", "ollama", "", 0.62, 0.91, 0, 0, "calibrate-v1", 8, 60.0))
    yield store
    store.close()


async def test_the_picker_says_each_models_way_and_a_run_writes_as_calibrated(tmp_path: Path, store: Store,
                                                                              fake: FakeOllama) -> None:
    app = app_for(settings_for(tmp_path, store, fake.url), store)
    async with app.run_test(size=SIZE) as pilot:
        app.open_session("work")
        await screen_shown(pilot, SessionScreen)
        dialog = await open_dialog(app, pilot, "l")
        notes = {o.model: o.note for o in dialog.options if o.backend == "ollama"}
        assert notes["llama3.2:latest"].endswith("writes, calibrated")
        assert notes["qwen2.5:0.5b"].endswith("titles, not calibrated")
        await wait_for_text(pilot, "writes, calibrated")
        assert dialog.chosen is not None and dialog.chosen.model == "llama3.2:latest"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Leaf pass done" in n.message or "Leaf pass done" in str(n.title)
                                          for n in app._notifications))
    leaves = [s for s in store.dag.summaries("work") if s.depth == 0]
    assert leaves and all(s.prompt_version.endswith(WRITES_SUFFIX) for s in leaves)


async def test_the_settings_show_the_calibration_and_save_the_override(tmp_path: Path, store: Store,
                                                                        fake: FakeOllama) -> None:
    settings = settings_for(tmp_path, store, fake.url, model="llama3.2:latest")
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("comma")
        screen = await screen_shown(pilot, SettingsScreen)
        assert "writes: titles 62%, writes 91%" in screen_text(app)
        screen.query_one("#field-summary_way", Select).value = "titles"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert app.settings.summary_way == "titles"
    assert settings.config_path is not None and load_settings(settings.config_path).summary_way == "titles"
