"""Fixture databases for TUI tests, built through the store's public API (no SQL, no mocks).

Times are fixed and the app gets a fixed clock, so relative dates ("3d ago") are stable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.tui.app import HiermemApp, make_app

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
    store.upsert_session(spec.id, title=spec.title, source=spec.source, created_at=spec.start)
    body = " ".join(f"word{i}" for i in range(spec.words))
    store.append_episodes(
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
        store.write_summaries([SummaryWrite(_summary(spec.id, sid, 0, tier), episode_range=(first, last))])
    for group in spec.condense:
        sid = new_id("s")
        sources = [leaf_ids[i] for i in group]
        store.write_summaries([SummaryWrite(_summary(spec.id, sid, 1, "normal"), source_ids=sources)])


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
    with store.transaction():
        for i in range(count):
            sid = f"s{i:05d}"
            when = start + timedelta(minutes=i)
            store.upsert_session(sid, title=f"Bulk session {i:05d}", source="demo", created_at=when)
            store.append_episodes(sid, [NewEpisode("0", "user", f"hello {i}", when)])


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


def app_for(settings: Settings, store: Store) -> HiermemApp:
    """The app as tests use it: no Ollama probe, a fixed clock."""
    return make_app(settings, store, probe_backend=False, clock=fixed_clock)


def screen_text(app: HiermemApp) -> str:
    """Everything on the current screen now, as plain text (what a user would read)."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in strips)


async def wait_for(pilot: object, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the app run until ``predicate()`` holds (timers, workers); fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.02)  # type: ignore[attr-defined]
