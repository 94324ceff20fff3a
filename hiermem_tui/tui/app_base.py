"""The app as screens and widgets see it: its state, the objects it owns and the few methods they
call, typed, without importing the app's module.

Why a base class in a leaf module: Textual's ``getters.app(AppBase)`` checks the app's class when a
screen or widget reads ``self.app``. Naming :class:`~hiermem_tui.tui.app.HiermemApp` there would
import ``tui/app.py`` — and with it the navigator, every screen, the run controller and the engine —
whenever any widget module is imported: a cycle that only function-level imports kept from failing.
This module imports Textual, the settings and nothing else of ours at run time; the app
(``tui/app.py``) derives from :class:`AppBase` and does the work.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from textual.app import App
from textual.reactive import var

from hiermem_tui.config import Settings

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.worker import Worker

    from hiermem_tui.backend_status import BackendStatus
    from hiermem_tui.store import Store
    from hiermem_tui.tui.backlog_run import BacklogController
    from hiermem_tui.tui.backlog_view import BacklogRunState, Waiting
    from hiermem_tui.tui.indexer import SearchIndexer
    from hiermem_tui.tui.live import StoreFollower
    from hiermem_tui.tui.navigation import Navigator
    from hiermem_tui.tui.run_job import RunProgress
    from hiermem_tui.tui.run_plans import RunPlanner
    from hiermem_tui.tui.runs import RunController

Clock = Callable[[], datetime]


class StoreHold:
    """One thread's hold on the app's store, from before the thread starts until it has let go.

    Why: the store is closed after the app quits, and closing a connection another thread is stepping
    crashes SQLite (a segfault in CI, once). So quitting waits for every hold (``app.store_worker``
    makes one per worker). It is made on the UI thread before the thread starts, so a quit that comes
    first still waits; and quitting stops it, so a thread that has not begun by then (its worker was
    cancelled before it ran, or it is still queued) never touches the store and is no wait.
    """

    def __init__(self) -> None:
        self.worker: Worker[None] | None = None
        """The worker whose thread holds the store (quitting cancels it); None for a thread of one's own."""
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._began = self._stopped = False

    @property
    def done(self) -> bool:
        """The thread has let go of the store, or will never touch it."""
        return self._done.is_set()

    def begin(self) -> bool:
        """Before the thread first touches the store; False if quitting came first: it must not."""
        with self._lock:
            self._began = not self._stopped
            return self._began

    def let_go(self) -> None:
        """The thread is done with the store (its connection released)."""
        self._done.set()

    def stop(self) -> None:
        """Quitting: a thread that has not begun never will, and is done now."""
        with self._lock:
            self._stopped = True
            if not self._began:
                self._done.set()

    def wait(self, timeout: float) -> bool:
        """Block until :attr:`done` (True) or ``timeout`` seconds (False); from a thread, not the UI's."""
        return self._done.wait(timeout)


class AppBase(App[None]):
    """What every screen and widget may use of the app (``self.app``, typed by ``getters.app``).

    The app owns ``store``, ``clock`` (now, for relative dates), ``nav`` (every screen it opens),
    ``runs`` (the compaction run), ``backlog`` (compacting everything in the background), ``planner`` (what a run would do, before it starts),
    ``follower`` (commits by other processes) and ``indexer`` (the search index); its reactives below are what
    indicators watch.
    """

    backend_state: var[BackendStatus | None] = var(None)
    """The last backend probe (None: not probed yet, or probing is off)."""
    backend_probing: var[bool] = var(False)
    """A probe is running now."""
    settings: var[Settings] = var(Settings, init=False)
    """Current settings; replace through :meth:`update_settings` so they are saved."""
    run_state: var[RunProgress | None] = var(None)
    """The compaction run going now (None: none); run indicators draw it."""
    index_progress: var[tuple[int, int] | None] = var(None)
    """The search index being built in the background: (rows done, rows in all); None when none is."""
    backlog_waiting: var[Waiting | None] = var(None)
    """What is due across the file, per session, as last planned (None: not planned yet)."""
    backlog_run: var[BacklogRunState | None] = var(None)
    """The backlog compacting in the background (None: none); its indicator and the state column draw it."""

    store: Store
    demo: bool
    """The file is the bundled demo's copy (``--demo``): its summaries replay recorded answers, no model needed."""
    clock: Clock
    nav: Navigator
    runs: RunController
    backlog: BacklogController
    planner: RunPlanner
    follower: StoreFollower
    indexer: SearchIndexer
    last_input_at: float
    """``time.monotonic()`` of the last key press or click: background reloads wait for a pause."""

    @abstractmethod
    def update_settings(self, new: Settings) -> bool:
        """Adopt and save ``new`` settings; False if saving failed (they are used all the same)."""

    @abstractmethod
    def shown(self, text: str) -> str:
        """Chat text as the screen shows it (secrets masked while ``settings.mask_secrets`` is on)."""

    @abstractmethod
    def shown_names(self, names: Sequence[str]) -> list[str]:
        """Names (keywords, lost or made-up names) as the screen shows them."""

    @abstractmethod
    def store_worker(self, node: DOMNode, body: Callable[[], object], *, group: str, name: str = "",
                     exclusive: bool = False) -> StoreHold:
        """Run ``body`` in a thread worker of ``node`` that may use the store: quitting cancels the worker
        and waits for its thread to let go of the store. Every thread worker that uses the store starts here."""

    @abstractmethod
    def store_thread(self) -> StoreHold:
        """A hold for a thread of one's own that uses the store (not a worker: see :meth:`store_worker`)."""

    @abstractmethod
    def refresh_backend(self) -> Worker[None] | None:
        """Probe the backend again in a worker (None when probing is off)."""
