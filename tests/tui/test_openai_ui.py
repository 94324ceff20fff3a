"""An OpenAI-compatible server in the TUI: the run dialog lists the models of every configured server (an
Ollama one and an OpenAI-compatible one here, both real fakes on loopback) and runs the one picked; the
settings screen takes the server's base URL and the openai backend, refuses the backend without a URL, and
saves the URL but never the key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Select

from hiermem_tui.config import Settings, load_settings
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.settings import SettingsScreen, settings_from_form
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.fakeollama import FakeOllama
from tests.fakeopenai import FakeModel, FakeOpenAI
from tests.tui.conftest import screen_shown, wait_for, wait_for_chats, wait_for_text
from tests.tui.test_runs_ui import POLICY, SIZE, open_dialog, opened

pytestmark = pytest.mark.usefixtures("utc_tz")
SERVED = "qwen2.5-coder-1.5b-instruct-q4_k_m"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    from tests.tui._session_fixtures import add_episodes

    store = Store.open(tmp_path / "hiermem.db")
    add_episodes(store, "work", "Plan the garden", 30)
    yield store
    store.close()


def both(tmp_path: Path, store: Store, ollama: str, openai: str, **kw: object) -> Settings:
    return Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=ollama,
                    openai_base_url=f"{openai}/v1", policy=POLICY, **kw)  # type: ignore[arg-type]


async def test_the_run_dialog_lists_every_configured_servers_models_and_runs_the_openai_one(
        tmp_path: Path, store: Store) -> None:
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",)) as ollama, \
            FakeOpenAI(models=[FakeModel(SERVED)]) as openai:
        settings = both(tmp_path, store, ollama.url, openai.url, backend="openai")
        async with opened(settings, store) as (app, pilot, screen):
            dialog = await open_dialog(app, pilot, "l")
            await wait_for(pilot, lambda: len(dialog.statuses) == 2)
            keys = [o.key for o in dialog.options]
            assert keys == ["extractive:", f"openai:{SERVED}", "ollama:llama3.2:latest"]
            assert dialog.chosen is not None and dialog.chosen.key == f"openai:{SERVED}"  # the backend's kind first
            host = openai.url.removeprefix("http://")
            text = await wait_for_text(pilot, SERVED, "llama3.2:latest", f"openai {host}", f"OpenAI-compatible {openai.url}/v1",
                                       f"ollama {ollama.url.removeprefix('http://')}")
            assert "1 served" in text and "1 installed" in text
            await pilot.press("enter")
            await wait_for_chats(pilot, openai, 1)
            await wait_for(pilot, lambda: app.run_state is None and bool(store.runs.of_session("work")))
        [run] = store.runs.of_session("work")
        assert (run.status, run.backend, run.model) == ("done", "openai", SERVED)
        assert ollama.chat_requests == []


async def test_picking_an_ollama_model_runs_it_on_ollama(tmp_path: Path, store: Store) -> None:
    with FakeOllama(models=("llama3.2:latest",)) as ollama, FakeOpenAI(models=[SERVED]) as openai:
        async with opened(both(tmp_path, store, ollama.url, openai.url, backend="openai"), store) as (app, pilot, _):
            dialog = await open_dialog(app, pilot, "l")
            await wait_for(pilot, lambda: len(dialog.options) == 3)
            dialog.query_one(OptionList).highlighted = 2
            await pilot.press("enter")
            await wait_for_chats(pilot, ollama, 1)
            await wait_for(pilot, lambda: app.run_state is None and bool(store.runs.of_session("work")))
        [run] = store.runs.of_session("work")
        assert (run.backend, run.model) == ("ollama", "llama3.2:latest") and openai.chat_requests == []


async def test_a_wrong_key_shows_on_the_dialog_and_extractive_still_works(
        tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with FakeOpenAI(models=[SERVED], key="sk-right") as openai:
        settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml", backend="openai",
                            openai_base_url=f"{openai.url}/v1", policy=POLICY)
        async with opened(settings, store) as (app, pilot, _):
            dialog = await open_dialog(app, pilot, "l")
            await wait_for_text(pilot, f"{openai.url}/v1 refused the key in $OPENAI_API_KEY", "extractive still works")
            assert dialog.status is not None and dialog.status.error is not None
            assert dialog.status.error.endswith("(HTTP 401 on /v1/models)")
            assert dialog.chosen is not None and dialog.chosen.backend == "extractive"


async def test_the_settings_screen_takes_the_openai_backend_and_its_url_and_never_saves_the_key(
        tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    config = tmp_path / "config.toml"
    from tests.tui.conftest import app_for

    app = app_for(Settings(db_path=store.path, config_path=config), store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("comma")
        screen = await screen_shown(pilot, SettingsScreen)
        await wait_for_text(pilot, "OpenAI base URL", "key from $OPENAI_API_KEY")
        screen.query_one("#field-backend", Select).value = "openai"
        await pilot.press("ctrl+s")
        await wait_for_text(pilot, "the openai backend needs the OpenAI base URL of its server")
        assert app.screen is screen and not config.exists()
        screen.query_one("#field-openai_base_url", Input).value = "gpu-box:8000"
        screen.query_one("#field-model", Input).value = SERVED
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
    saved = load_settings(config)
    assert (saved.backend, saved.openai_base_url, saved.model) == ("openai", "http://gpu-box:8000/v1", SERVED)
    assert [tuple(s) for s in saved.servers()] == [("openai", "http://gpu-box:8000/v1")]
    assert "sk-secret" not in config.read_text(encoding="utf-8")


def test_the_settings_form_checks_the_base_url(tmp_path: Path) -> None:
    base = Settings(db_path=tmp_path / "x.db")
    values = {"ollama_host": base.ollama_host, "model": "", "backend": "openai", "timeout_s": "120",
              "keep_alive": "10m", "parallel": "1", "openai_base_url": "http://"}
    with pytest.raises(Exception, match="OpenAI base URL must look like"):
        settings_from_form(values, base)
    assert settings_from_form({**values, "openai_base_url": "127.0.0.1:11720"}, base).openai_base_url == \
        "http://127.0.0.1:11720/v1"
    assert settings_from_form({**values, "backend": "ollama", "openai_base_url": ""}, base).openai_base_url is None
