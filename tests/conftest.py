"""Fixtures shared by every test layer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import fake_ollama  # noqa: F401  (a fixture: the fake Ollama server)

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def _import_progress_off_a_terminal_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import that runs over ``PROGRESS_AFTER_S`` writes progress lines on stderr, and a busy machine can
    make any test's import that slow: tests that look at stderr would then see lines they do not expect.
    The tests of those lines set it (to 0) themselves."""
    from hiermem_tui.commands import import_

    monkeypatch.setattr(import_, "PROGRESS_AFTER_S", float("inf"))


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's ``$OPENAI_API_KEY`` / ``$OPENAI_BASE_URL`` never reach a test's settings or requests."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="session")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.db"


@pytest.fixture
def store(db_path: Path, tokenizer: Tokenizer) -> Iterator[Store]:
    s = Store.open(db_path, tokenizer=tokenizer)
    yield s
    s.close()


def make_session(
    store: Store,
    session_id: str,
    n: int,
    *,
    title: str = "",
    start: datetime = T0,
    step: timedelta = timedelta(minutes=3),
    words: int = 30,
) -> None:
    """A session of ``n`` alternating user/assistant episodes with distinct, countable text."""
    store.sessions.upsert(session_id, title=title or f"session {session_id}", source="test", created_at=start)
    eps = [
        NewEpisode(
            key=str(i),
            role="user" if i % 2 == 0 else "assistant",
            content=f"Episode {i} of {session_id}. " + " ".join(f"word{(i * 7 + j) % 97}" for j in range(words)),
            created_at=start + step * i,
        )
        for i in range(n)
    ]
    store.episodes.append(session_id, eps)
