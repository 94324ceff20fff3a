"""Schema 3 on a file that already holds data: the index is built in resumable batches, with progress."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.search import build_search_index, search, search_index_status
from hiermem_tui.store import SCHEMA_VERSION, NewEpisode, Store, search_index
from hiermem_tui.store.db import _split_sql
from hiermem_tui.store.schema import MIGRATIONS
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.watch import Watcher
from tests.conftest import make_session
from tests.unit._cli import sha, strays


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
        # Meanwhile a new session arrives, and an old one grows: recorded by the trigger, and indexed as
        # they are written (what was recorded so far is indexed: the backlog is the unrecorded rows).
        make_session(store, "new", 3)
        store.episodes.append("older", [NewEpisode("late", "user", "a late pelican", None)])
        assert indexed_rows(store) == (14, 14)
    with Store.open(path, tokenizer=tokenizer) as store:  # "next start"
        assert build_search_index(store, batch=5) == 41  # the older rows left
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


def test_rows_are_indexed_in_the_transaction_that_writes_them(store: Store, db_path: Path) -> None:
    assert not search_index_status(store).pending and not has_dedup_index(store)
    make_session(store, "s", 3)
    assert not search_index_status(store).pending
    assert indexed_rows(store) == (3, 3)  # searchable by any reader as soon as they are there
    with pytest.raises(RuntimeError), store.db.transaction():
        store.episodes.append("s", [NewEpisode("gone", "user", "never written", None)])
        raise RuntimeError("a write that fails")
    assert indexed_rows(store) == (3, 3)  # neither the row nor its index entry
    other = sqlite3.connect(db_path)  # another tool's row: recorded by the trigger, not indexed
    with other:
        other.execute("INSERT INTO episodes (id, session_id, seq, role, content, created_at) VALUES "
                      "('s/x', 's', 3, 'tool', 'written by someone else: quokka', '2025-03-01T10:00:00.000Z')")
    other.close()
    assert indexed_rows(store) == (4, 3) and search_index_status(store).pending
    store.episodes.append("s", [NewEpisode("late", "user", "a late pelican", None)])
    assert indexed_rows(store) == (5, 5)  # our next write indexed the small backlog with its own row
    assert [h.id for h in search(store, "quokka").hits] == ["s/x"]


def test_what_each_watch_tick_brings_is_indexed_for_a_reader(store: Store, db_path: Path, tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    live.write_text('{"session": "s", "role": "user", "content": "a quokkafish appears"}\n')
    watcher = Watcher(store, [live], settle_s=30.0)
    for n, word in enumerate(("quokkafish", "pelicanfish"), 1):
        assert watcher.tick().episodes == 1
        with Store.open_reader(db_path) as reader:  # the MCP server, beside a running watch
            result = search(reader, word)
            assert len(result.hits) == 1 and (result.scanned, result.unindexed) == (0, 0)
            assert search_index_status(reader).missing == 0 and indexed_rows(reader) == (n, n)
        with live.open("a") as fh:
            fh.write('{"session": "s", "role": "assistant", "content": "then a pelicanfish"}\n')


def test_a_backlog_bigger_than_a_batch_is_left_to_the_build(store: Store, db_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_index, "BATCH", 2)
    make_session(store, "s", 1)
    other = sqlite3.connect(db_path)
    with other:
        for seq in (1, 2, 3):
            other.execute("INSERT INTO episodes (id, session_id, seq, role, content, created_at) VALUES "
                          "(?, 's', ?, 'tool', 'by another tool', '2025-03-01T10:00:00.000Z')", (f"s/{seq}", seq))
    other.close()
    store.episodes.append("s", [NewEpisode("late", "user", "a late pelican", None)])
    assert indexed_rows(store) == (5, 1)  # a write does not take on a big backlog: it waits with it
    assert build_search_index(store) == 4 and indexed_rows(store) == (5, 5)


def test_a_damaged_index_never_costs_a_write(db_path: Path, tokenizer: Tokenizer) -> None:
    with Store.open(db_path, tokenizer=tokenizer) as store:
        make_session(store, "s", 2)
    other = sqlite3.connect(db_path)
    with other:  # the index's structure record, garbled: FTS5 cannot open the table any more
        other.execute("UPDATE search_index_data SET block = x'ffffffffffff' WHERE id = 10")
    other.close()
    with Store.open(db_path, tokenizer=tokenizer) as store:
        assert store.episodes.append("s", [NewEpisode("late", "user", "a late pelican", None)]) == (1, 0)
        assert store.db.conn.execute("SELECT count(*) FROM episodes").fetchone()[0] == 3
        status = search_index_status(store)
        assert status.pending and status.missing == 1  # recorded, waiting for the index to be rebuilt


def written_by_an_older_version(path: Path, tokenizer: Tokenizer, sessions: dict[str, list[str]],
                                indexed: bool = False) -> None:
    """Sessions written as versions before this one wrote them: recorded for search, not indexed."""
    with Store.open(path, tokenizer=tokenizer) as store:
        if not indexed:
            store.db.write_hooks.clear()
        for sid, texts in sessions.items():
            store.sessions.upsert(sid, title=sid, source="jsonl")
            store.episodes.append(sid, [NewEpisode(str(i), "user", t, None) for i, t in enumerate(texts)])


def test_a_reader_searches_the_rows_the_index_has_not_reached(tmp_path: Path, tokenizer: Tokenizer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.db"
    written_by_an_older_version(path, tokenizer, {"kept": ["an indexed heron", "a heron again"]}, indexed=True)
    written_by_an_older_version(path, tokenizer, {"a": ["the quokkafish swims", "heron and quokkafish"],
                                                  "b": ["quokkafish pie", "nothing here"]})
    before = sha(path)
    with Store.open_reader(path, tokenizer=tokenizer) as reader:
        assert search_index_status(reader).missing == 4
        result = search(reader, "quokkafish")
        assert {h.id for h in result.hits} == {"a/0", "a/1", "b/0"}
        assert (result.unindexed, result.scanned) == (0, 4)
        both = search(reader, "heron")  # the index's hits and the scan's, ranked together
        assert {h.id for h in both.hits} == {"kept/0", "kept/1", "a/1"}
        assert [h.id for h in search(reader, "quokkafish", session_id="b").hits] == ["b/0"]
        assert [h.snippet.text for h in search(reader, '"quokkafish pie"').hits] == ["quokkafish pie"]
        monkeypatch.setattr(search_index, "SCAN_ROWS", 2)  # bounded: the newest rows, the rest counted
        bounded = search(reader, "quokkafish")
        assert [h.id for h in bounded.hits] == ["b/0"] and (bounded.unindexed, bounded.scanned) == (2, 2)
    assert sha(path) == before and strays(path) == []
