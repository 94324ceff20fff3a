"""The first start after a big import (issue 21 items 8 and 12): the TUI opens without waiting on the
search index (the app builds it in the background), says nothing on stderr about it for a read-only
file, and finds episodes without token counts through a partial index instead of reading the table."""

from __future__ import annotations

import io
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.commands.common import CliContext
from hiermem_tui.config import Settings
from hiermem_tui.launch import launch_tui
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.store.search_index import search_index_status

START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def imported(path: Path, episodes: int = 1500) -> None:
    """A file as an import by a version before this one left it: episodes recorded for search, the index
    not built (an import now indexes what it writes; this is what the launch still meets in older files)."""
    with Store.open(path) as store:
        store.db.write_hooks.clear()
        store.sessions.upsert("big", title="Big", source="jsonl", created_at=START)
        store.episodes.append("big", [NewEpisode(str(i), "user", f"message number {i}", START)
                                      for i in range(episodes)])


@dataclass
class _App:
    """Stands in for the Textual app: records what the launcher gave it, then "quits" at once."""

    store: Store
    kwargs: dict[str, Any]
    pending_at_start: bool = False
    return_code: int = 0
    ran: list[bool] = field(default_factory=list)

    def run(self) -> None:
        self.pending_at_start = search_index_status(self.store).pending
        self.ran.append(True)


@dataclass
class _Ctx(CliContext):
    readonly: bool = False

    def open_store(self, *, readonly: bool = False, create: bool = True) -> Store:
        return Store.open(self.settings.db_path, readonly=self.readonly or readonly, tokenizer=self.tokenizer)


@pytest.mark.parametrize("readonly", [False, True])
def test_the_tui_starts_without_building_the_index_and_says_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readonly: bool
) -> None:
    db = tmp_path / "big.db"
    imported(db)
    made: list[_App] = []

    def fake_make_app(settings: Settings, store: Store, **kwargs: Any) -> _App:
        made.append(_App(store, kwargs))
        return made[-1]

    monkeypatch.setattr("hiermem_tui.tui.app.make_app", fake_make_app)
    err = io.StringIO()
    ctx = _Ctx(settings=Settings(db_path=db, config_path=tmp_path / "c.toml"), stdout=io.StringIO(), stderr=err,
               readonly=readonly)
    assert launch_tui(ctx) == 0
    [app] = made
    assert app.ran and app.pending_at_start  # the app opened at once: the index is its background work
    assert app.kwargs.get("index_search") is True
    assert err.getvalue() == ""  # read-only: no "… rows not indexed for search yet" printed on quit


def test_episodes_without_token_counts_are_found_by_a_partial_index(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    imported(db, 10)
    with Store.open(db) as store:
        plan = store.db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT id, content FROM episodes WHERE tokens IS NULL LIMIT 5").fetchall()
        assert "USING INDEX episodes_tokens_missing" in " ".join(str(row[-1]) for row in plan)
    raw = sqlite3.connect(db)  # another tool appends an episode without a count
    raw.execute("INSERT INTO episodes (id, session_id, seq, role, content, created_at) VALUES "
                "('big/x', 'big', 10, 'user', 'three more words', '2025-01-01T00:00:00.000Z')")
    raw.commit()
    raw.close()
    with Store.open(db) as store:
        assert store.episodes.fill_missing_tokens() == 1
        assert store.db.conn.execute("SELECT tokens FROM episodes WHERE id = 'big/x'").fetchone()[0] == 3
        assert store.episodes.fill_missing_tokens() == 0
