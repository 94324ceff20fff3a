"""A store-change broadcast reaches every screen once and settles (no echo loop)."""

from __future__ import annotations


import pytest

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.messages import SessionsChanged
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import app_for, screen_shown, wait_for


async def test_sessions_changed_broadcast_settles(
    settings: Settings, standard_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[bool] = []
    reached: list[SessionsChanged] = []
    original = HiermemApp.on_sessions_changed
    original_screen = SessionsScreen.on_sessions_changed

    def counting(self: HiermemApp, message: SessionsChanged) -> None:
        calls.append(message.broadcast)
        original(self, message)

    def screen_counting(self: SessionsScreen, message: SessionsChanged) -> None:
        reached.append(message)
        original_screen(self, message)

    monkeypatch.setattr(HiermemApp, "on_sessions_changed", counting)
    monkeypatch.setattr(SessionsScreen, "on_sessions_changed", screen_counting)
    app = app_for(settings, standard_store)
    async with app.run_test() as pilot:
        await screen_shown(pilot, SessionsScreen)
        screens = len(app.screen_stack)
        app.post_message(SessionsChanged(("x",)))
        await wait_for(pilot, lambda: calls.count(False) == 1 and len(reached) == 1)  # sent round, and arrived
        # An echo would keep messages going round. Each pause lets every message already queued for
        # the app and the screen be handled (Pilot counts the queues down: rounds of events, not time),
        # so ten rounds are more than the three the broadcast needs to settle, and ten more must add nothing.
        for _ in range(10):
            await pilot.pause()
        settled = len(calls)
        for _ in range(10):
            await pilot.pause()
        assert len(calls) == settled, "the broadcast keeps echoing"
        assert calls.count(False) == 1 and calls.count(True) <= screens and len(reached) == 1


def test_every_report_a_worker_posts_has_one_relay(settings: Settings, empty_store: Store) -> None:
    """The app routes what the run's and the backlog's workers post through one table: a kind of
    report without an entry there would reach nothing."""
    from hiermem_tui.tui import messages

    kinds = {v for v in vars(messages).values()
             if isinstance(v, type) and issubclass(v, messages.WorkerReport) and v is not messages.WorkerReport}
    assert len(kinds) == 13
    assert set(app_for(settings, empty_store).relays) == kinds
