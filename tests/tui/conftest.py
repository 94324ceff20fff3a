"""Fixture databases for TUI tests, built through the store's public API (no SQL, no mocks),
and the helpers every TUI test and snapshot waits with (:func:`wait_for` and the ones built on it).

Times are fixed and the app gets a fixed clock, so relative dates ("3d ago") are stable.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

import pytest
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.tui.app import HiermemApp, make_app
from hiermem_tui.tui.screens.context import SavePrompt
from tests.fakeollama import FakeOllama

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
"""The app's "now" in tests and snapshots."""


def fixed_clock() -> datetime:
    return NOW


@dataclass
class SessionSpec:
    """A session to build: ``leaves`` are (first_seq, last_seq, tier); ``condense`` groups leaf indexes."""

    id: str
    title: str
    episodes: int
    start: datetime
    source: str = "jsonl"
    leaves: Sequence[tuple[int, int, str]] = ()
    condense: Sequence[Sequence[int]] = ()
    words: int = 40
    gap: timedelta = field(default=timedelta(minutes=3))


def add_session(store: Store, spec: SessionSpec) -> None:
    """Write one session, its episodes, and the summaries the spec asks for."""
    store.sessions.upsert(spec.id, title=spec.title, source=spec.source, created_at=spec.start)
    body = " ".join(f"word{i}" for i in range(spec.words))
    store.episodes.append(
        spec.id,
        [
            NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", f"message {i}: {body}", spec.start + i * spec.gap)
            for i in range(spec.episodes)
        ],
    )
    leaf_ids: list[str] = []
    for first, last, tier in spec.leaves:
        sid = new_id("s")
        leaf_ids.append(sid)
        store.dag.write([SummaryWrite(_summary(spec.id, sid, 0, tier), episode_range=(first, last))])
    for group in spec.condense:
        sid = new_id("s")
        sources = [leaf_ids[i] for i in group]
        store.dag.write([SummaryWrite(_summary(spec.id, sid, 1, "normal"), source_ids=sources)])


def _summary(session_id: str, sid: str, depth: int, tier: str) -> NewSummary:
    return NewSummary(
        id=sid, session_id=session_id, depth=depth, tier=tier,  # type: ignore[arg-type]
        backend="extractive", model=None,
        prompt_version="test", content=f"summary {sid}", tokens=12,
    )


def build_db(path: Path, specs: Sequence[SessionSpec]) -> Store:
    store = Store.open(path)
    for spec in specs:
        add_session(store, spec)
    return store


def bulk_sessions(store: Store, count: int, *, start: datetime = NOW - timedelta(days=400)) -> None:
    """``count`` one-episode sessions ``s00000``… in one transaction (fast enough for 10k)."""
    with store.db.transaction():
        for i in range(count):
            sid = f"s{i:05d}"
            when = start + timedelta(minutes=i)
            store.sessions.upsert(sid, title=f"Bulk session {i:05d}", source="demo", created_at=when)
            store.episodes.append(sid, [NewEpisode("0", "user", f"hello {i}", when)])


STANDARD = [
    SessionSpec(
        "alpha", "Alpha: fix the flaky CI build", 40, NOW - timedelta(days=2), "claude-code",
        leaves=[(0, 7, "normal"), (8, 15, "normal"), (16, 23, "fallback")], condense=[(0, 1, 2)],
    ),
    SessionSpec("beta", "Beta: plan the garden", 6, NOW - timedelta(hours=5), "chatgpt"),
    SessionSpec(
        "gamma", "Gamma: rust borrow checker questions", 120, NOW - timedelta(days=30), "codex", words=400,
        leaves=[(i * 10, i * 10 + 9, "normal") for i in range(10)], condense=[(0, 1, 2, 3), (4, 5, 6, 7)],
    ),
]
"""Three sessions with different sizes, sources, summaries and ages."""


@pytest.fixture
def utc_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times show in the local zone: pin it to UTC so assertions on times hold anywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db_path=tmp_path / "hiermem.db", config_path=tmp_path / "config.toml")


@pytest.fixture
def standard_store(tmp_path: Path) -> Iterator[Store]:
    store = build_db(tmp_path / "hiermem.db", STANDARD)
    yield store
    store.close()


@pytest.fixture
def empty_store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    yield store
    store.close()


def app_for(settings: Settings, store: Store, *, follow: bool = True) -> HiermemApp:
    """The app as tests use it: no Ollama probe, a fixed clock (``follow=False``: snapshots)."""
    return make_app(settings, store, probe_backend=False, clock=fixed_clock, follow=follow)


DEADLINE = 30.0
"""Seconds a TUI test waits for a condition before it fails. Generous on purpose: with another process
keeping both cores busy one app step can take a second or more, and a condition that holds returns at once."""


def screen_text(app: App[object]) -> str:
    """Everything on the current screen now, as plain text (what a user would read)."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in strips)


def footer_text(app: App[object]) -> str:
    """The bottom line of the screen: the footer's key hints."""
    return screen_text(app).splitlines()[-1]


async def wait_for(pilot: Pilot[object], predicate: Callable[[], object], timeout: float = DEADLINE, *,
                   show: Callable[[], object] | None = None) -> None:
    """Let the app run until ``predicate()`` holds (timers, workers, repaints); fail after ``timeout`` s.

    This, not ``pilot.pause()``, is how a test waits for the UI: a pause waits until the process
    *looks* idle, and a process starved of CPU by another one looks idle too. ``show`` names what
    to print when the deadline passes (the value the test was waiting on).
    """
    deadline = time.monotonic() + timeout
    step = 0.01
    while not predicate():
        if not pilot.app.is_running:
            raise AssertionError("the app stopped while the test waited for it")
        if time.monotonic() > deadline:
            got = f"; {show()!r}" if show is not None else ""
            raise AssertionError(f"condition not met within {timeout} s{got}")
        # Plain sleeps (the app runs meanwhile), longer as the wait goes on: a Pilot.pause() per poll
        # would make every widget answer a message, CPU taken from the app on a machine short of it.
        await asyncio.sleep(step)
        step = min(step * 1.5, 0.1)


async def wait_for_text(pilot: Pilot[object], *texts: str, timeout: float = DEADLINE) -> str:
    """Wait until the screen shows every one of ``texts`` (a widget draws its new state a refresh after
    it changed); return the screen's text."""
    app = pilot.app
    await wait_for(pilot, lambda: all(t in screen_text(app) for t in texts), timeout,
                   show=lambda: [t for t in texts if t not in screen_text(app)])
    return screen_text(app)


async def wait_for_footer(pilot: Pilot[object], *hints: str, timeout: float = DEADLINE) -> str:
    """Wait until the footer shows every hint (``"p Compact"``), and return it.

    Textual builds a footer after its screen's bindings settle, one refresh after the screen
    appears, and rebuilds it when they change (focus moves, a run starts): until then it is empty
    or stale, so a test reads it only through this."""
    app = pilot.app

    def shows() -> bool:
        footer = footer_text(app)
        return bool(footer.strip()) and all(h in footer for h in hints)

    await wait_for(pilot, shows, timeout, show=lambda: footer_text(app))
    return footer_text(app)


async def wait_for_chats(pilot: Pilot[object], fake: FakeOllama, n: int, timeout: float = DEADLINE) -> None:
    """Wait until the fake Ollama server has had ``n`` chat requests, the app running meanwhile;
    on timeout say what the app was doing (its screen, run and notices)."""
    app = pilot.app
    await wait_for(pilot, lambda: len(fake.chat_requests) >= n, timeout, show=lambda: {
        "chats": len(fake.chat_requests), "screen": app.screen, "run": getattr(app, "run_state", None),
        "notices": [f"{x.title}: {x.message}" for x in app._notifications]})


S = TypeVar("S", bound=Screen[Any])


async def screen_shown(pilot: Pilot[object], kind: type[S], timeout: float = DEADLINE) -> S:
    """Wait until a ``kind`` screen is on top, has run its ``on_mount`` and drawn its footer; return it."""
    app = pilot.app

    def ready() -> bool:
        screen = app.screen
        return isinstance(screen, kind) and screen.is_mounted and (
            not screen.query(Footer) or bool(screen.query(FooterKey)))

    await wait_for(pilot, ready, timeout, show=lambda: app.screen)
    await wait_for(pilot, lambda: painted(app), timeout, show=lambda: unpainted(app)[:5])
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def save_with_w(pilot: Pilot[object], target: Path) -> str:
    """Press w (save), give ``target`` in the save prompt; the saved file's text."""
    app = pilot.app
    await pilot.press("w")
    await wait_for(pilot, lambda: isinstance(app.screen, SavePrompt))
    app.screen.query_one(Input).value = str(target)
    await pilot.press("enter")
    await wait_for(pilot, lambda: target.exists())
    return target.read_text(encoding="utf-8")


def visible_screens(app: App[object]) -> list[Screen[Any]]:
    """The top screen, and the screens seen through it (a dialog's translucent background)."""
    screens: list[Screen[Any]] = [app.screen]
    for behind in app._background_screens:  # type: ignore[attr-defined]
        if screens[-1].styles.background.a >= 1:
            break
        screens.append(behind)
    return screens


def unpainted(app: App[object]) -> list[str]:
    """What is still to be handled or drawn: messages queued for the app or for any widget of the
    visible screens, and changes the top screen has not drawn yet (layout, recompose, repaint).
    Empty when the picture is up to date.

    Screens seen behind a dialog, and widgets, are checked by their queues only: Textual leaves
    their repaint flags set after it has drawn them (a hidden widget keeps its own set). What a
    dialog's background shows is checked by the text itself (see :func:`wait_until_shown`).
    Reads Textual internals (pinned to one version in pyproject.toml)."""
    pending: list[str] = []
    if not app._message_queue.empty():  # type: ignore[attr-defined]  # e.g. a broadcast on its way to the screens
        pending.append("app: queued messages")
    top = app.screen
    flags = ("_layout_required", "_repaint_required", "_scroll_required", "_recompose_required")
    pending += [f"{top!r}: {flag}" for flag in ("_dirty_widgets", *flags) if getattr(top, flag)]
    for screen in visible_screens(app):
        for widget in screen.walk_children(with_self=True):
            # a widget that refreshes queues itself a message, which is how its screen learns of it
            if not widget._message_queue.empty():  # type: ignore[attr-defined]
                pending.append(f"{widget!r}: queued messages")
    return pending


def painted(app: App[object]) -> bool:
    """True when nothing is left to handle or draw (see :func:`unpainted`)."""
    return not unpainted(app)


async def wait_painted(pilot: Pilot[object], timeout: float = DEADLINE) -> None:
    """Wait until every visible screen has drawn its last change (before reading rendered lines)."""
    await wait_for(pilot, lambda: painted(pilot.app), timeout, show=lambda: unpainted(pilot.app)[:5])


def shown_text(app: App[object]) -> str:
    """The text a snapshot would photograph now: the top screen over the screens visible behind it,
    rendered the way ``App.export_screenshot`` renders them."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(  # type: ignore[attr-defined]
        full=True, screen_stack=app._background_screens))  # type: ignore[attr-defined]
    return console.export_text()


async def wait_until_shown(pilot: Pilot[object], *texts: str, timeout: float = DEADLINE) -> None:
    """Wait until the app has handled what was queued, the top screen has painted, and a snapshot
    would show every one of ``texts``.

    A snapshot's ``run_before`` ends with this, naming what the picture is about (including what a
    dialog's background shows: a screen behind a dialog reaches the picture a repaint later, and the
    compare snapshot once caught it before), so the photo is the settled state and not whichever
    frame a busy machine let through."""
    app = pilot.app
    await wait_for(pilot, lambda: painted(app) and all(t in shown_text(app) for t in texts), timeout,
                   show=lambda: {"missing": [t for t in texts if t not in shown_text(app)], "pending": unpainted(app)[:5]})
