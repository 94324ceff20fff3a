"""f4 masks secrets on screen (for sharing it) and shows them again; the choice is saved; the stored text is not changed."""

from __future__ import annotations

from pathlib import Path

from hiermem_tui.config import Settings, load_settings
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.transcript import Transcript
from tests.tui.conftest import app_for, screen_shown, screen_text, wait_for, wait_for_text
from tests.unit.secret_corpus import PLANTED

KEY = next(p for p in PLANTED if p.name == "github classic token").secret
STRIPE = next(p for p in PLANTED if p.name == "stripe live key").secret


def leaky_store(path: Path) -> Store:
    store = Store.open(path)
    store.sessions.upsert("leaky", title=f"deploy with {STRIPE}", source="test")
    store.episodes.append("leaky", [
        NewEpisode("0", "user", f"push with git push https://{KEY}@github.com/acme/app.git", None),
        NewEpisode("1", "assistant", "done: pushed", None),
    ])
    return store


async def test_f4_masks_secrets_on_screen_and_shows_them_again(tmp_path: Path) -> None:
    store = leaky_store(tmp_path / "hiermem.db")
    before = [e.content for e in store.episodes.each("leaky")]
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml")
    app = app_for(settings, store)
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            await screen_shown(pilot, SessionsScreen)
            await wait_for_text(pilot, STRIPE[:12])  # the title, as stored
            await pilot.press("f4")
            await wait_for_text(pilot, "[secret: stripe access key]")
            assert STRIPE[:12] not in screen_text(app)
            assert app.settings.mask_secrets and load_settings(settings.config_path).mask_secrets

            app.open_session("leaky")
            screen = await screen_shown(pilot, SessionScreen)
            detail = screen.query_one(DetailPane)
            detail.show_episode(store.episodes.at("leaky", 0), [])  # type: ignore[arg-type]
            await wait_for(pilot, lambda: "[secret: github token]" in detail.plain, show=lambda: detail.plain)
            assert KEY not in detail.plain
            await pilot.press("t")  # the transcript
            # (the mark may wrap at its space: look for its first half)
            await wait_for(pilot, lambda: screen.query_one(Transcript).display and "[secret: github" in
                           screen_text(app), show=lambda: screen_text(app))
            assert KEY[:12] not in screen_text(app)

            await pilot.press("f4")
            await wait_for(pilot, lambda: not app.settings.mask_secrets, show=lambda: app.settings)
            await wait_for(pilot, lambda: "[secret:" not in screen_text(app) and KEY[:8] in screen_text(app),
                           show=lambda: screen_text(app))
            assert STRIPE in screen_text(app)  # the title in the header
            assert not app.settings.mask_secrets and not load_settings(settings.config_path).mask_secrets
            assert [e.content for e in store.episodes.each("leaky")] == before  # only the screen was masked
    finally:
        store.close()


async def test_the_palette_offers_it(tmp_path: Path) -> None:
    store = leaky_store(tmp_path / "hiermem.db")
    app = app_for(Settings(db_path=store.path, config_path=tmp_path / "config.toml"), store)
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            await screen_shown(pilot, SessionsScreen)
            titles = [c.title for c in app.palette_commands()]
            assert "Mask secrets on screen" in titles
            app.action_toggle_mask_secrets()
            await wait_for(pilot, lambda: "Show secrets on screen" in [c.title for c in app.palette_commands()])
    finally:
        store.close()
