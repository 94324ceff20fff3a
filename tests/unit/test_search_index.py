"""Schema 3 on a file that already holds data: the index is built in resumable batches, with progress."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.search import build_search_index, search, search_index_status
from hiermem_tui.store import SCHEMA_VERSION, NewEpisode, Store
from hiermem_tui.store.db import _split_sql
from hiermem_tui.store.schema import MIGRATIONS
from tests.conftest import make_session


def write_version_2(path: Path, episodes: int = 25) -> None:
    """A file as schema 2 left it: two sessions, their episodes, a leaf over the first four."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for version, script in enumerate(MIGRATIONS[:2], 1):
        conn.execute("BEGIN")
        for statement in _split_sql(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    for sid in ("old", "older"):
        conn.execute("INSERT INTO sessions (id, title, source, created_at, updated_at) "
                     "VALUES (?, 'Old chat', 'jsonl', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')", (sid,))
        for seq in range(episodes):
            conn.execute(
                "INSERT INTO episodes (id, session_id, seq, role, content, created_at, tokens) "
                "VALUES (?, ?, ?, 'user', ?, '2024-01-01T00:00:00.000Z', 3)",
                (f"{sid}/{seq}", sid, seq, f"pelican number {seq} of {sid}"),
            )
    conn.execute(
        "INSERT INTO summaries (id, session_id, depth, kind, status, tier, backend, prompt_version, content, tokens, "
        "source_tokens, first_seq, last_seq, start_at, end_at, created_at) VALUES ('s_old', 'old', 0, 'leaf', "
        "'active', 'normal', 'extractive', 'v1', 'a summary mentioning a heron', 5, 12, 0, 3, "
        "'2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z')"
    )
    conn.close()


def indexed_rows(store: Store) -> tuple[int, int]:
    """(rows recorded in search_docs, rows in the FTS index); each row recorded once, indexed at most once."""
    docs, distinct = store.db.conn.execute("SELECT count(*), count(DISTINCT ref_id || kind) FROM search_docs").fetchone()
    fts = store.db.conn.execute("SELECT count(*) FROM search_index_docsize").fetchone()[0]
    assert docs == distinct and fts <= docs
    return docs, fts


def has_dedup_index(store: Store) -> bool:
    return store.db.conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'search_docs'").fetchone()[0] > 0


def test_upgrade_indexes_older_rows_in_batches_with_progress(tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v2.db"
    write_version_2(path)
    with Store.open(path, tokenizer=tokenizer) as store:
        assert store.db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        status = search_index_status(store)
        assert status.pending and (status.done, status.total) == (0, 51)
        assert indexed_rows(store)[1] == 0  # nothing indexed yet: the migration itself is instant
        seen: list[tuple[int, int]] = []
        assert build_search_index(store, lambda d, t: seen.append((d, t)), batch=7) == 51
        assert seen[0] == (0, 51) and seen[-1] == (51, 51)
        assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) > 7  # one update per batch
        assert not search_index_status(store).pending
        assert indexed_rows(store) == (51, 51)
        assert {h.id for h in search(store, "pelican", limit=100).hits} == {
            f"{s}/{i}" for s in ("old", "older") for i in range(25)}
        assert [h.id for h in search(store, "heron").hits] == ["s_old"]
        assert build_search_index(store) == 0  # nothing left to do


def test_a_killed_build_resumes_and_rows_written_meanwhile_are_not_indexed_twice(tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v2.db"
    write_version_2(path)

    class Killed(Exception):
        pass

    def die_after_two_batches(done: int, total: int) -> None:
        if done >= 10:
            raise Killed

    with Store.open(path, tokenizer=tokenizer) as store:
        with pytest.raises(Killed):
            build_search_index(store, die_after_two_batches, batch=5)
        assert search_index_status(store).pending
        assert indexed_rows(store) == (10, 10)
        assert has_dedup_index(store)  # while older rows are being recorded, none is recorded twice
        # Meanwhile a new session arrives (indexed by the trigger), and an old one grows.
        make_session(store, "new", 3)
        store.episodes.append("older", [NewEpisode("late", "user", "a late pelican", None)])
    with Store.open(path, tokenizer=tokenizer) as store:  # "next start"
        assert build_search_index(store, batch=5) == 45  # the 41 older rows left and the 4 new ones
        assert indexed_rows(store) == (55, 55)
        assert not has_dedup_index(store)  # gone with the backfill: imports do not pay for it
        assert len(search(store, "pelican", limit=100).hits) == 51
        assert {h.session_id for h in search(store, "episode", limit=100).hits} == {"new"}


def test_a_read_only_file_searches_what_is_indexed_and_builds_nothing(tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v2.db"
    write_version_2(path, episodes=4)
    Store.open(path, tokenizer=tokenizer).close()  # migrated, index not built yet
    path.chmod(0o444)
    try:
        with Store.open(path, tokenizer=tokenizer) as store:
            assert store.readonly
            assert build_search_index(store) == 0
            assert search_index_status(store).pending
            assert search(store, "pelican").hits == ()
    finally:
        path.chmod(0o644)


def test_new_rows_are_recorded_by_the_trigger_and_indexed_in_bulk_by_the_next_search(store: Store) -> None:
    assert not search_index_status(store).pending and not has_dedup_index(store)
    make_session(store, "s", 3)
    status = search_index_status(store)
    assert status.pending and (status.done, status.total) == (0, 3)
    assert indexed_rows(store) == (3, 0)  # recorded by the trigger, not indexed row by row
    assert len(search(store, "episode").hits) == 3  # the search indexed them first
    assert not search_index_status(store).pending and indexed_rows(store) == (3, 3)
