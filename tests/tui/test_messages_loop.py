"""A store-change broadcast reaches every screen once and settles (no echo loop)."""

from __future__ import annotations


import pytest

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.messages import SessionsChanged
from tests.tui.conftest import app_for


async def test_sessions_changed_broadcast_settles(
    settings: Settings, standard_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[bool] = []
    original = HiermemApp.on_sessions_changed

    def counting(self: HiermemApp, message: SessionsChanged) -> None:
        calls.append(message.broadcast)
        original(self, message)

    monkeypatch.setattr(HiermemApp, "on_sessions_changed", counting)
    app = app_for(settings, standard_store)
    async with app.run_test() as pilot:
        await pilot.pause()
        screens = len(app.screen_stack)
        app.post_message(SessionsChanged(("x",)))
        for _ in range(10):
            await pilot.pause()
        settled = len(calls)
        for _ in range(10):
            await pilot.pause()
        assert len(calls) == settled, "the broadcast keeps echoing"
        assert calls.count(False) == 1 and calls.count(True) <= screens
