"""f4 masks secrets on screen (for sharing it) and shows them again; the choice is saved; the stored text is not changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from textual.pilot import Pilot

from hiermem_tui.config import Settings, load_settings
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.context import ContextScreen
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.detail_pane import DetailPane
from hiermem_tui.tui.widgets.transcript import Transcript
from tests.tui.conftest import app_for, save_with_w, screen_shown, screen_text, wait_for, wait_for_text
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



@asynccontextmanager
async def leaky_session(tmp_path: Path) -> AsyncIterator[tuple[HiermemApp, Pilot[None], Store]]:
    """The app on the leaky session's screen, secrets masked (f4 on)."""
    store = leaky_store(tmp_path / "hiermem.db")
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml", mask_secrets=True)
    app = app_for(settings, store)
    try:
        async with app.run_test(size=(150, 40)) as pilot:
            await screen_shown(pilot, SessionsScreen)
            app.open_session("leaky")
            await screen_shown(pilot, SessionScreen)
            yield app, pilot, store
    finally:
        store.close()


async def test_copy_and_save_of_the_context_are_masked_as_the_screen_is(tmp_path: Path) -> None:
    """With f4 on, what the context screen copies (y) and saves (w) carries the marks the screen shows,
    not the keys; with it off, the text as stored (so the masked case is the setting's doing)."""
    async with leaky_session(tmp_path) as (app, pilot, _):
        await pilot.press("m")
        screen = await screen_shown(pilot, ContextScreen)
        await wait_for(pilot, lambda: screen.view is not None and screen.view.items)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.clipboard != "", show=lambda: app.clipboard)
        copied = app.clipboard
        assert "[secret: github token]" in copied and KEY[:8] not in copied, copied
        assert "git push https://[secret: github token]@github.com/acme/app.git" in copied

        saved = await save_with_w(pilot, tmp_path / "ctx.md")
        assert saved == copied and KEY[:8] not in saved

        await pilot.press("f4")  # secrets shown again: copy gives the stored text
        await wait_for(pilot, lambda: not app.settings.mask_secrets)
        app.copy_to_clipboard("")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.clipboard != "")
        assert KEY in app.clipboard and "[secret:" not in app.clipboard


async def test_selected_text_copies_as_masked_as_it_is_shown(tmp_path: Path) -> None:
    """Textual's own copy (select, then ctrl+c) takes the text as drawn: masked while f4 is on."""
    async with leaky_session(tmp_path) as (app, pilot, store):
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        detail = screen.query_one(DetailPane)
        detail.show_episode(store.episodes.at("leaky", 0), [])  # type: ignore[arg-type]
        await wait_for(pilot, lambda: "[secret: github token]" in detail.plain, show=lambda: detail.plain)
        detail.text_select_all()
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: "[secret: github" in app.clipboard, show=lambda: app.clipboard)
        assert KEY[:8] not in app.clipboard
