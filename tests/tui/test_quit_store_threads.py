"""Quitting waits for every thread that uses the store: the store is closed after the app returns, and
closing a connection another thread is stepping crashes SQLite. A screen's worker still in the store
when the app quits is cancelled and waited for (a loop stops at its next check); a worker cancelled
before its thread began is no wait.

Each held thread waits on an event, never on a sleep: it goes on only once quitting waits for it
(:class:`HeldThread` watches the app's waits), so a quit that does not wait returns while the thread
is still held, whatever the machine's load.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import SelectionList

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.store.health import Progress
from hiermem_tui.tui.app import STORE_THREAD_WAIT_S, HiermemApp
from hiermem_tui.tui.app_base import StoreHold
from hiermem_tui.tui.screens import import_sources
from hiermem_tui.tui.screens.import_sources import ImportScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui._session_fixtures import app_for
from tests.tui.conftest import DEADLINE, screen_shown, wait_for, wait_for_text
from tests.tui.test_doctor_ui import SIZE, open_stats
from tests.tui.test_find_screens import env  # noqa: F401 (a fixture: the "dag" session and a raw one)
from tests.tui.test_import_screen import home  # noqa: F401 (a fixture: a HOME with three histories)

pytestmark = pytest.mark.usefixtures("utc_tz")

class HeldThread:
    """A worker thread of ``group`` held in place (:meth:`here`) until quitting waits for it, and whether
    it had released its connection to the store by the time the app returned."""

    def __init__(self, group: str, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.thread: int | None = None
        self.reached = threading.Event()
        self.waited = threading.Event()
        self.released = threading.Event()
        wait, release = StoreHold.wait, store.release_thread

        def quit_waits(hold: StoreHold, timeout: float) -> bool:
            if hold.worker is not None and hold.worker.group == group:
                self.waited.set()
            return wait(hold, timeout)

        def released() -> None:
            release()
            if threading.get_ident() == self.thread:
                self.released.set()

        monkeypatch.setattr(StoreHold, "wait", quit_waits)
        monkeypatch.setattr(store, "release_thread", released)

    def here(self) -> None:
        """In the worker's thread: the first call holds it until quitting waits for it."""
        if self.thread is None:
            self.thread = threading.get_ident()
            self.reached.set()
            self.waited.wait(DEADLINE)

    @asynccontextmanager
    async def quitting(self, app: HiermemApp, size: tuple[int, int]) -> AsyncIterator[Pilot[None]]:
        """Run the app; leaving the block quits it while the thread is held."""
        try:
            async with app.run_test(size=size) as pilot:
                yield pilot
            assert self.waited.is_set(), "quitting did not wait for the held thread"
            assert self.released.is_set(), "the held thread still had the store when the app returned"
        finally:  # after a failure: let the thread go and release its connection before the store closes
            self.waited.set()
            self.released.wait(DEADLINE)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, Store], HeldThread]:
    return lambda group, store: HeldThread(group, store, monkeypatch)


async def test_quitting_waits_for_a_doctor_still_checking(env: tuple[Settings, Store],
                                                          held: Callable[[str, Store], HeldThread]) -> None:
    settings, store = env
    doctor = held("doctor", store)
    real = store.health.check

    def check(*, on_progress: Progress | None = None, **kw: object) -> object:
        def progress(phase: str, done: int, total: int) -> None:
            assert on_progress is not None
            on_progress(phase, done, total)  # stops the check once its worker is cancelled
            if phase == "sessions":
                doctor.here()  # mid-check

        return real(on_progress=progress, **kw)  # type: ignore[arg-type]

    store.health.check = check  # type: ignore[method-assign]
    app = app_for(settings, store, follow=False)
    async with doctor.quitting(app, SIZE) as pilot:
        await open_stats(pilot, app)
        await wait_for_text(pilot, "Not checked yet")
        await pilot.press("d")
        await wait_for(pilot, doctor.reached.is_set)
    assert store.health.last() is None  # stopped at its next step: nothing kept


async def test_quitting_stops_an_import_after_the_source_in_hand(settings: Settings, empty_store: Store, home: Path,
                                                                 held: Callable[[str, Store], HeldThread],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    importer = held("import-run", empty_store)
    real = import_sources.import_paths

    def import_paths(*args: object, **kw: object) -> object:
        importer.here()  # before the first source
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(import_sources, "import_paths", import_paths)
    app = app_for(settings, empty_store, follow=False)
    async with importer.quitting(app, (120, 36)) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await pilot.press("I")
        screen = await screen_shown(pilot, ImportScreen)
        listing = screen.query_one("#import-sources", SelectionList)
        await wait_for(pilot, lambda: listing.option_count == 3, show=lambda: listing.option_count)
        await pilot.press("a")
        await wait_for_text(pilot, "3 of 3 ticked")
        await pilot.press("i")
        await wait_for(pilot, importer.reached.is_set)
    assert len({s.source for s in empty_store.sessions.each()}) == 1  # the source in hand, and no other


async def test_a_worker_cancelled_before_its_thread_began_is_no_wait_on_quit(env: tuple[Settings, Store],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    settings, store = env
    app = app_for(settings, store, follow=False)
    holds: list[StoreHold] = []
    real = app.store_worker

    def store_worker(*args: object, **kw: object) -> StoreHold:
        holds.append(real(*args, **kw))  # type: ignore[arg-type]
        return holds[-1]

    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stats(pilot, app)
        await wait_for_text(pilot, "Not checked yet")
        fetched: list[int] = []
        fetch = screen.fetch
        monkeypatch.setattr(screen, "fetch", lambda: fetched.append(1) or fetch())
        monkeypatch.setattr(app, "store_worker", store_worker)
        screen.load()
        screen.load()  # the same exclusive group: the first worker is cancelled before its thread began
        first, second = holds
        await wait_for(pilot, lambda: second.done)
        assert fetched == [1] and not first.done  # its thread never began; nothing else will end its hold
        quitting = time.monotonic()
    assert first.done
    assert time.monotonic() - quitting < STORE_THREAD_WAIT_S
