"""Helpers for the compaction tests: sessions with known text, runners on either backend."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.compaction import CancelToken, Runner, RunEvent
from hiermem_tui.config import Policy
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.summarize import ExtractiveBackend, OllamaBackend, Summariser
from hiermem_tui.tokens import Tokenizer

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
IN_USE = 10 ** 9
"""An ``idle_after`` no test session reaches (their times are in 2025): a session is in use, its fresh tail
kept raw, unless a test asks for an idle one."""
SMALL = Policy(fresh_tail=4, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
               condense_fanout=2, condensed_target_tokens=80, fidelity_threshold=0.0, idle_after=IN_USE)


def episode_text(session_id: str, i: int, words: int = 20) -> str:
    """Distinct sentences per episode so the extractive digest is always shorter than its input."""
    body = " ".join(f"w{(i * 13 + j) % 89}" for j in range(words))
    return f"Episode {i} of {session_id} starts here. {body}. Middle part {i}. It ends with item {i}."


def add_episodes(store: Store, session_id: str, start: int, count: int, *, words: int = 20) -> None:
    """Append episodes ``start..start+count-1`` (creating the session if needed)."""
    if store.sessions.get(session_id) is None:
        store.sessions.upsert(session_id, title=f"Session {session_id}", source="test", created_at=T0)
    store.episodes.append(session_id, [
        NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", episode_text(session_id, i, words),
                   T0 + timedelta(minutes=2 * i))
        for i in range(start, start + count)
    ])


def extractive_runner(
    store: Store, tokenizer: Tokenizer, policy: Policy = SMALL, *, parallel: int = 1,
    events: list[RunEvent] | None = None, cancel: CancelToken | None = None,
) -> Runner:
    summariser = Summariser(ExtractiveBackend(tokenizer), tokenizer)
    return Runner(store, summariser, policy, parallel=parallel,
                  on_event=events.append if events is not None else None, cancel=cancel)


def ollama_runner(
    store: Store, tokenizer: Tokenizer, url: str, policy: Policy = SMALL, *, parallel: int = 1,
    events: list[RunEvent] | None = None, cancel: CancelToken | None = None, model: str | None = "llama3.2",
    backoff: tuple[float, ...] = (0.0, 0.0, 0.0),
) -> tuple[Runner, OllamaBackend]:
    """A runner over the real Ollama client pointed at ``url``. Backoff is shortened (it is a
    documented Summariser setting) so tests of a dying server do not wait seconds."""
    backend = OllamaBackend(url, model, tokenizer, timeout_s=30)
    summariser = Summariser(backend, tokenizer, retry_backoff_s=backoff)
    runner = Runner(store, summariser, policy, parallel=parallel,
                    on_event=events.append if events is not None else None, cancel=cancel)
    return runner, backend


def write_policy_config(path: Path, policy: Policy = SMALL) -> Path:
    """A config file holding only ``[policy]``, for CLI runs (pointed at by $HIERMEM_CONFIG)."""
    path.write_text("[policy]\n" + "".join(f"{k} = {getattr(policy, k)}\n" for k in policy.__dataclass_fields__),
                    encoding="utf-8")
    return path


@pytest.fixture
def small_policy_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CLI runs use SMALL through a private config; no user config or OLLAMA_HOST leaks in.
    Test modules take it with ``from ._engine_fixtures import small_policy_env as config``
    and mark it autouse there."""
    cfg = write_policy_config(tmp_path / "config.toml")
    monkeypatch.setenv("HIERMEM_CONFIG", str(cfg))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    return cfg

