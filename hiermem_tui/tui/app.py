"""The Textual app: holds the store, the settings and the backend state; screens do the rest.

Why the app owns these: every screen needs them, and passing them in (no module-level
singletons, docs/ARCHITECTURE.md) keeps tests in control — :func:`make_app` is the one way
the CLI and every test builds the app, with ``probe_backend=False`` guaranteeing no network at
all. Plain objects the app owns do the rest of its work: ``nav`` (every screen it opens),
``runs`` (the compaction run: start, follow, cancel), ``backlog`` (compacting everything in the
background), ``follower`` (commits by anyone), ``indexer`` (the search index) and ``mask`` (secrets
masked on screen). What a run's or the backlog's worker reports reaches the object that shows it
through one table, :attr:`HiermemApp.relays`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from hiermem_tui.backend_status import probe_server
from hiermem_tui.config import ConfigError, Settings, save_settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app_base import AppBase, Clock, StoreHold
from hiermem_tui.tui.backlog_run import BacklogController
from hiermem_tui.tui.backlog_view import BacklogRunState
from hiermem_tui.tui.indexer import SearchIndexer
from hiermem_tui.tui.keymap import app_bindings, keymap_problems
from hiermem_tui.tui.live import StoreFollower
from hiermem_tui.tui.masking import ScreenMask
from hiermem_tui.tui.messages import (
    BacklogBegan,
    BacklogFinished,
    BacklogMoved,
    BacklogWaiting,
    BacklogWrote,
    BackendProbed,
    HostLost,
    IndexProgress,
    OpenSession,
    ReloadSession,
    RunAttempted,
    RunBegan,
    RunCallProgress,
    RunEnded,
    RunNotStarted,
    RunSummaryStarted,
    RunSummaryWritten,
    SessionsChanged,
    SettingsChanged,
    WorkerReport,
)
from hiermem_tui.tui.navigation import Navigator
from hiermem_tui.tui.palette import HiermemCommands, PaletteCommand
from hiermem_tui.tui.run_job import RunProgress
from hiermem_tui.tui.run_plans import RunPlanner
from hiermem_tui.tui.runs import RunController
from hiermem_tui.tui.screens.sessions import SessionsScreen

if TYPE_CHECKING:
    from textual.dom import DOMNode

FALLBACK_THEME = "textual-dark"
THEME_CYCLE = (
    "textual-dark", "textual-light", "nord", "gruvbox", "tokyo-night", "catppuccin-mocha",
    "catppuccin-latte", "dracula", "monokai", "solarized-light", "rose-pine", "flexoki",
)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


STORE_THREAD_WAIT_S = 30.0
"""On quit, the longest wait for a thread to let go of the store (:class:`StoreHold`)."""


class HiermemApp(AppBase):
    """hiermem-tui. Build it with :func:`make_app`. Compaction runs: :class:`RunController`
    (``runs``); what a run would do: :class:`RunPlanner` (``planner``); following what other
    processes write: :class:`StoreFollower` (``follower``); opening screens: :class:`Navigator`
    (``nav``); the search index: :class:`SearchIndexer` (``indexer``). Screens and widgets see it as
    :class:`AppBase` (its state and these objects)."""

    CSS_PATH = "app.tcss"
    TITLE = "hiermem"
    COMMANDS = App.COMMANDS | {HiermemCommands}
    BINDINGS = app_bindings()

    def __init__(
        self, settings: Settings, store: Store, *, probe_backend: bool = True, clock: Clock | None = None,
        follow: bool = True, index_search: bool = False, plan_backlog: bool = False, demo: bool = False,
        measure_speed: bool | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.demo = demo
        self.set_reactive(AppBase.settings, settings)
        self.clock: Clock = clock or utc_now
        self._probe_enabled = probe_backend
        self._follow = follow
        self._index_search = index_search
        self._plan_backlog = plan_backlog
        self._store_holds: list[StoreHold] = []
        self._quitting = False
        self.last_input_at = 0.0
        self.nav = Navigator(self)
        self.runs = RunController(self, announce_changes=not follow)
        self.backlog = BacklogController(self)
        self.planner = RunPlanner(self, measure=probe_backend if measure_speed is None else measure_speed)
        self.follower = StoreFollower(self)
        self.indexer = SearchIndexer(self)
        self.mask = ScreenMask()
        runs, backlog = self.runs, self.backlog
        self.relays: dict[type[WorkerReport], Callable[[Any], None]] = {
            RunBegan: runs.began, RunSummaryStarted: runs.summary_started, RunAttempted: runs.attempted,
            RunCallProgress: runs.call_progress, RunSummaryWritten: runs.summary_written, RunEnded: runs.ended,
            RunNotStarted: runs.not_started, HostLost: runs.host_lost,
            BacklogWaiting: backlog.waiting_planned, BacklogBegan: backlog.began, BacklogMoved: backlog.moved,
            BacklogWrote: backlog.wrote, BacklogFinished: backlog.finished,
        }
        """Each kind of :class:`WorkerReport` → what takes it: the run's state and notices (``runs``),
        the backlog's (``backlog``). The one place a worker's report is routed (:meth:`relay`)."""

    # ------------------------------------------------------------------ lifecycle
    def get_default_screen(self) -> Screen[None]:
        return SessionsScreen(id="sessions-screen")

    def on_mount(self) -> None:
        self.set_keymap(self.settings.keymap)
        if problems := keymap_problems(self.settings.keymap):
            self.notify("; ".join(problems) + f" ([keymap] in {self.settings.config_path}); "
                        "the help screen lists the ids and keys.", title="Keymap", severity="warning", markup=False)
        wanted = self.settings.theme
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self.theme = FALLBACK_THEME
            self.notify(f"Theme {wanted!r} is not available; using {FALLBACK_THEME}.", severity="warning", markup=False)
        self.refresh_backend()
        if self._follow:
            self.follower.start()
        if self._index_search and not self.store.readonly:
            # after the first frame: the build would otherwise compete with it for the cores
            self.call_after_refresh(self.indexer.start)
        if self._plan_backlog:
            # after the first frame too; then the app says what is waiting ("380 summaries waiting, ~3 h 10 m")
            self.call_after_refresh(lambda: self.backlog.plan_waiting(say=True))

    # ------------------------------------------------------------------ threads that use the store
    def store_worker(self, node: DOMNode, body: Callable[[], object], *, group: str, name: str = "",
                     exclusive: bool = False) -> StoreHold:
        """Run ``body`` in a thread worker of ``node`` (cancelled when ``node`` goes, as ``@work`` does)
        under a :class:`StoreHold` made now, before the thread starts: quitting cancels the worker and
        waits until its thread has released its connection, and a thread that had not begun by then
        never runs ``body``."""
        hold = self.store_thread()

        def in_thread() -> None:
            if not hold.begin():
                return
            try:
                body()
            finally:
                self.store.release_thread()
                hold.let_go()

        hold.worker = node.run_worker(in_thread, name=name, group=group, exclusive=exclusive, thread=True,
                                      exit_on_error=False)
        return hold

    def store_thread(self) -> StoreHold:
        """A hold quitting waits for (see :meth:`store_worker`); on the UI thread. One made once quitting
        has begun is stopped at once: its thread must not begin."""
        hold = StoreHold()
        if self._quitting:
            hold.stop()
        self._store_holds = [h for h in self._store_holds if not h.done]
        self._store_holds.append(hold)
        return hold

    # ------------------------------------------------------------------ search index
    def on_index_progress(self, message: IndexProgress) -> None:
        """The background build's progress (and a search screen's own catch-up, which bubbles here)."""
        done = message.finished or message.done >= message.total
        self.index_progress = None if done else (message.done, message.total)

    def watch_theme(self, theme: str) -> None:
        """Remember the theme the user picked (from the palette, ctrl+t or settings)."""
        if theme != self.settings.theme and self.is_running:
            self.update_settings(replace(self.settings, theme=theme))

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.last_input_at = time.monotonic()
        await super().on_event(event)

    # ------------------------------------------------------------------ settings
    def update_settings(self, new: Settings) -> bool:
        """Adopt and save ``new`` settings, then refresh what depends on them.

        Returns False if saving failed (the new settings are still used for this run).
        """
        previous = self.settings
        if new == previous:
            return True
        saved = True
        try:
            save_settings(new, previous)  # only what changed: this run's flags and environment stay out
        except (OSError, ConfigError) as exc:
            saved = False
            reason = exc.strerror or exc if isinstance(exc, OSError) else exc
            self.notify(f"Could not save settings to {new.config_path}: {reason}", severity="error", markup=False)
        self.settings = new
        if new.theme != self.theme and new.theme in self.available_themes:
            self.theme = new.theme
        if (new.ollama_host, new.model, new.backend) != (previous.ollama_host, previous.model, previous.backend):
            self.refresh_backend()
        if new.keymap != previous.keymap:
            self.set_keymap(new.keymap)
        self.tell_screens(SettingsChanged(new, previous))
        return saved

    def shown(self, text: str) -> str:
        """Chat text as the screen shows it: secrets masked while ``settings.mask_secrets`` is on
        (screen sharing), as the MCP server and ``export`` mask them (:class:`ScreenMask`)."""
        return self.mask.text(text) if self.settings.mask_secrets and text else text

    def shown_names(self, names: Sequence[str]) -> list[str]:
        """A summary's keywords, lost or made-up names as the screen shows them (see :meth:`shown`)."""
        return self.mask.names(names) if self.settings.mask_secrets else list(names)

    def tell_screens(self, message: SettingsChanged | ReloadSession) -> None:
        """Ask every screen on the stack to act on ``message`` (the app never calls into screens)."""
        for screen in self.screen_stack:
            screen.post_message(message)

    # ------------------------------------------------------------------ backend
    def refresh_backend(self) -> Worker[None] | None:
        """Probe the backend's first server again in a worker; a no-op when probing is off (tests) or
        the backend is the extractive one."""
        servers = self.settings.servers()
        if not self._probe_enabled or not servers:
            return None
        self.backend_probing = True
        server, model = servers[0], self.settings.model

        async def probe() -> None:
            self.post_message(BackendProbed(await probe_server(server, model)))

        return self.run_worker(probe(), group="backend", exclusive=True, exit_on_error=False)

    def on_backend_probed(self, message: BackendProbed) -> None:
        self.backend_state = message.status
        self.backend_probing = False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "backend" and event.state == WorkerState.ERROR:
            self.backend_probing = False
        elif event.worker.group == "compaction":
            self.runs.worker_changed(event)
        elif event.worker.group == "backlog" and event.state == WorkerState.ERROR:
            self.backlog_run = None
            self.backlog.control = None
            self.notify(f"The backlog's worker stopped: {event.worker.error}", title="Backlog failed",
                        severity="error", markup=False)

    async def on_unmount(self) -> None:
        """Quitting mid-run cancels it, so it is recorded as cancelled rather than left running; a
        backlog stops after its call in flight (the run it cut reads paused). Every thread using the store is waited for (a
        background index build stops after its batch, the follower after its poll, a doctor or a
        backup at its next step, an import after the source in hand), so the store, closed after
        the app returns, is never closed under one: no thread begins with it any more, each worker
        still using it is cancelled (loops stop at their next check) and waited for, up to
        :data:`STORE_THREAD_WAIT_S` for the step in hand."""
        self._quitting = True
        holds = list(self._store_holds)
        for hold in holds:
            hold.stop()
        await self.backlog.shutdown()
        await self.runs.shutdown()
        for hold in holds:
            if hold.worker is not None:
                hold.worker.cancel()
        for hold in holds:
            if not hold.done:
                await asyncio.to_thread(hold.wait, STORE_THREAD_WAIT_S)

    # ------------------------------------------------------------------ the run and the backlog
    @on(WorkerReport)
    def relay(self, message: WorkerReport) -> None:
        """A run's or the backlog's worker reported: hand it to what takes it (:attr:`relays`)."""
        self.relays[type(message)](message)

    def watch_run_state(self, old: RunProgress | None, new: RunProgress | None) -> None:
        if (old is None) != (new is None):
            self.refresh_bindings()  # the footer's "esc" says Cancel run only while one goes

    def watch_backlog_run(self, old: BacklogRunState | None, new: BacklogRunState | None) -> None:
        changed = (old is None) != (new is None) or (old is not None and new is not None and old.phase != new.phase)
        if changed and self.screen_stack:  # (none left while the app quits and the backlog stops)
            self.refresh_bindings()  # B starts, pauses or resumes; ctrl+x only while one runs

    # ------------------------------------------------------------------ navigation
    def open_session(self, session_id: str) -> None:
        """Show one session (for the CLI's ``--session`` and for tests)."""
        self.nav.session(session_id)

    def on_open_session(self, message: OpenSession) -> None:
        self.nav.session(message.session_id)

    def on_sessions_changed(self, message: SessionsChanged) -> None:
        """Pass store changes on to every screen (lists re-read their pages).

        The copies bubble back to the app after the screens handle them; they are marked
        ``broadcast`` so they are not sent round again.
        """
        if message.broadcast:
            return
        self.backlog.replan(message.session_ids)
        for screen in self.screen_stack:
            screen.post_message(SessionsChanged(message.session_ids, broadcast=True))

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The backlog's keys: ``B`` starts it, then pauses and resumes it; ``ctrl+x`` while it runs."""
        state = self.backlog_run
        if action == "backlog":
            return state is None
        if action == "backlog_pause":
            return state is not None and state.phase in ("planning", "running")
        if action == "backlog_resume":
            return state is not None and state.phase == "paused"
        if action == "backlog_stop":
            return state is not None and state.phase != "stopping"
        return True

    def action_backlog(self) -> None:
        self.backlog.request()

    def action_backlog_pause(self) -> None:
        self.backlog.pause()

    def action_backlog_resume(self) -> None:
        self.backlog.resume()

    def action_backlog_stop(self) -> None:
        if self.backlog.stop():
            self.notify("Stopping the backlog after the call in flight (it is kept).", timeout=3)

    def action_help(self) -> None:
        self.nav.help()

    def action_settings(self) -> None:
        self.nav.settings()

    def action_prompts(self) -> None:
        self.nav.prompts()

    def action_refresh_backend(self) -> None:
        if self.refresh_backend() is None:
            self.notify("Backend checks are off (extractive backend or test mode).", severity="information")

    def action_toggle_mask_secrets(self) -> None:
        on = not self.settings.mask_secrets
        self.update_settings(replace(self.settings, mask_secrets=on))
        self.notify("Secrets are masked on screen (f4 shows them)." if on else "Secrets are shown (f4 masks them).",
                    timeout=3, markup=False)

    def action_next_theme(self) -> None:
        themes = [t for t in THEME_CYCLE if t in self.available_themes]
        index = themes.index(self.theme) if self.theme in themes else -1
        self.theme = themes[(index + 1) % len(themes)]
        self.notify(f"Theme: {self.theme}", timeout=2, markup=False)

    def palette_commands(self) -> Iterable[PaletteCommand]:
        """App-wide commands for the command palette (screens add their own).

        Textual's system provider already lists Quit, Theme (the picker), Keys and Screenshot.
        """
        yield PaletteCommand("Help", "Keys and concepts", self.action_help, "?")
        if self.run_state is not None:
            yield PaletteCommand("Cancel the run", f"Stop the {self.run_state.job.label.lower()} (finished summaries "
                                 "are kept)", self.runs.cancel, "esc")
        state = self.backlog_run
        if state is None:
            waiting = self.backlog_waiting
            what = f": {waiting.line()}" if waiting is not None else ""
            yield PaletteCommand("Compact everything", f"Summarise what is due in every session, in the background{what}",
                                 self.action_backlog, "B")
        else:
            if state.phase == "paused":
                yield PaletteCommand("Resume the backlog", "Go on compacting in the background",
                                     self.action_backlog_resume, "B")
            else:
                yield PaletteCommand("Pause the backlog", "After the call in flight", self.action_backlog_pause, "B")
            yield PaletteCommand("Stop the backlog", "After the call in flight (kept); B starts it again later",
                                 self.action_backlog_stop, "ctrl+x")
        yield PaletteCommand("Settings", "Backend, servers, model, compaction policy", self.action_settings, ",")
        yield PaletteCommand("Prompts", "See and edit what the model is asked, per depth and tier", self.action_prompts,
                             "f3")
        yield PaletteCommand("Mask secrets on screen" if not self.settings.mask_secrets else "Show secrets on screen",
                             "API keys, tokens and passwords in chat text shown as [secret: kind], for screen sharing",
                             self.action_toggle_mask_secrets, "f4")
        yield PaletteCommand("Refresh backend status", "Probe the model server again", self.action_refresh_backend,
                             "ctrl+r")
        yield PaletteCommand(
            "Next theme", f"Switch from {self.theme} to the next built-in theme", self.action_next_theme, "ctrl+t"
        )


def make_app(settings: Settings, store: Store, *, probe_backend: bool = True, clock: Clock | None = None,
             follow: bool = True, index_search: bool = False, plan_backlog: bool = False,
             demo: bool = False, measure_speed: bool | None = None) -> HiermemApp:
    """The one way to build the app (CLI and tests). ``probe_backend=False``: never contact Ollama.
    ``measure_speed``: the run dialog may measure a model never timed with calls of its own (as ``backlog``
    does), so its times are the CLI's; by default when ``probe_backend``.

    ``clock`` returns "now" for relative dates; tests and snapshots pass a fixed one.
    ``follow=False``: do not watch the file for other writers (snapshots are still pictures).
    ``index_search``: build what the search index lacks in the background from the start (the CLI
    does; tests that are not about it leave the file as they made it). ``plan_backlog``: plan what is
    waiting across the file after the first frame and say it (the CLI does; the state column shows
    ``·`` until a plan is there). ``demo``: the file is the bundled demo's copy (``--demo``), whose
    summaries replay a model's recorded answers: the top bar says so rather than warn about Ollama.
    """
    return HiermemApp(settings, store, probe_backend=probe_backend, clock=clock, follow=follow,
                      index_search=index_search, plan_backlog=plan_backlog, demo=demo, measure_speed=measure_speed)
