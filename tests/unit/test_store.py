"""The store: opening rules, migrations, aggregates, idempotent appends, paging, guards."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from hiermem_tui.store import (
    SCHEMA_VERSION,
    DamagedDatabase,
    ForeignDatabase,
    InvariantViolation,
    NewEpisode,
    NewerSchema,
    NewSummary,
    NotADatabase,
    ReadOnlyError,
    Store,
    StoreError,
    Summary,
    SummaryWrite,
    new_id,
)
from tests.conftest import T0, make_session


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leaf(store: Store, sid: str, a: int, b: int, *, tier: str = "normal", run_id: str | None = None) -> str:
    i = new_id("s")
    store.dag.write([SummaryWrite(NewSummary(i, sid, 0, tier, "extractive", None, "leaf-v1", f"leaf {a}-{b}", 5,
                                                   run_id=run_id), episode_range=(a, b))])
    return i


def condense(store: Store, sid: str, sources: list[str], depth: int = 1, tier: str = "normal") -> str:
    i = new_id("s")
    store.dag.write([SummaryWrite(NewSummary(i, sid, depth, tier, "extractive", None, "c-v1", "cond", 3),
                                        source_ids=sources)])
    return i


# ---------------------------------------------------------------- opening


def test_new_path_creates_wal_database_with_schema(db_path: Path) -> None:
    s = Store.open(db_path)
    try:
        conn = s.db.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"sessions", "episodes", "summaries", "summary_sources", "runs", "meta"} <= tables
    finally:
        s.close()


def test_reopen_keeps_data_and_version(db_path: Path, tokenizer) -> None:
    with Store.open(db_path, tokenizer=tokenizer) as s:
        make_session(s, "a", 5)
    with Store.open(db_path, tokenizer=tokenizer) as s:
        assert s.sessions.get("a").episodes == 5


@pytest.mark.parametrize(
    "content",
    [b"hello, this is a text file\n", b"\x89PNG\r\n\x1a\n" + b"\x00" * 200, b"SQLite format 3"],
)
def test_not_sqlite_is_refused_and_untouched(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "x.db"
    p.write_bytes(content)
    before = digest(p)
    with pytest.raises((NotADatabase, DamagedDatabase)) as err:
        Store.open(p)
    assert str(p) in str(err.value) and "\n" not in str(err.value)
    assert digest(p) == before
    assert not (tmp_path / "x.db-wal").exists()


def test_foreign_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    conn.commit()
    conn.close()
    before = digest(p)
    with pytest.raises(ForeignDatabase, match="another application"):
        Store.open(p)
    assert digest(p) == before


def test_foreign_sqlite_with_a_sessions_table_is_still_foreign(tmp_path: Path) -> None:
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    before = digest(p)
    with pytest.raises(ForeignDatabase):
        Store.open(p)
    assert digest(p) == before


def test_newer_schema_is_refused_and_untouched(db_path: Path) -> None:
    Store.open(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 3}")
    conn.close()
    before = digest(db_path)
    with pytest.raises(NewerSchema, match="newer hiermem-tui"):
        Store.open(db_path)
    assert digest(db_path) == before


def test_truncated_database_is_refused_and_untouched(tmp_path: Path, tokenizer) -> None:
    good = tmp_path / "good.db"
    with Store.open(good, tokenizer=tokenizer) as s:
        make_session(s, "a", 200, words=60)
        s.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = good.read_bytes()
    bad = tmp_path / "bad.db"
    bad.write_bytes(data[: len(data) // 2])
    before = digest(bad)
    with pytest.raises(DamagedDatabase, match="truncated"):
        Store.open(bad)
    assert digest(bad) == before


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        Store.open(tmp_path)


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(tmp_path / "nope" / "x.db")


def test_read_only_file_opens_for_browsing_and_refuses_writes(db_path: Path, tokenizer) -> None:
    with Store.open(db_path, tokenizer=tokenizer) as s:
        make_session(s, "a", 6)
        s.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.chmod(db_path, 0o444)
    try:
        before = digest(db_path)
        s = Store.open(db_path, tokenizer=tokenizer)
        try:
            assert s.readonly
            assert s.sessions.get("a").episodes == 6
            assert len(s.episodes.page("a", limit=3)) == 3
            with pytest.raises(ReadOnlyError, match="read-only"):
                s.sessions.upsert("b", title="x", source="t")
        finally:
            s.close()
        assert digest(db_path) == before
    finally:
        os.chmod(db_path, 0o644)


# ---------------------------------------------------------------- episodes


def test_append_is_idempotent_and_appends_only_new_tail(store: Store) -> None:
    make_session(store, "a", 10)
    first = store.sessions.get("a")
    # same source again: nothing changes
    eps = [NewEpisode(str(i), "user", f"x{i}", T0) for i in range(10)]
    assert store.episodes.append("a", eps) == (0, 10)
    assert store.sessions.get("a") == first
    # the source grew by 3
    grown = eps + [NewEpisode(str(i), "assistant", f"new {i}", T0 + timedelta(hours=i)) for i in range(10, 13)]
    assert store.episodes.append("a", grown) == (3, 10)
    s = store.sessions.get("a")
    assert s.episodes == 13
    assert [e.seq for e in store.episodes.page("a", after_seq=9)] == [10, 11, 12]
    assert store.episodes.at("a", 12).content == "new 12"


def test_missing_timestamps_are_filled_deterministically_and_flagged(store: Store) -> None:
    store.sessions.upsert("s", title="t", source="test", created_at=T0)
    store.episodes.append("s", [
        NewEpisode("0", "user", "a", None),
        NewEpisode("1", "assistant", "b", T0 + timedelta(minutes=5)),
        NewEpisode("2", "user", "c", None),
    ])
    eps = store.episodes.page("s")
    assert [e.synthetic_time for e in eps] == [True, False, True]
    assert eps[0].created_at == "2025-03-01T09:00:00.000Z"
    assert eps[2].created_at == "2025-03-01T09:05:01.000Z"


def test_episode_aggregates_track_tokens_and_last_activity(store: Store, tokenizer) -> None:
    make_session(store, "a", 7)
    eps = store.episodes.page("a")
    s = store.sessions.get("a")
    assert s.tokens == sum(tokenizer.count(e.content) for e in eps) == sum(e.tokens for e in eps)
    assert s.updated_at == eps[-1].created_at


def test_keyset_paging_forward_and_backward(store: Store) -> None:
    make_session(store, "a", 1000, words=3)
    seen = []
    after = -1
    while page := store.episodes.page("a", after_seq=after, limit=128):
        seen.extend(e.seq for e in page)
        after = page[-1].seq
    assert seen == list(range(1000))
    back = store.episodes.before("a", before_seq=500, limit=10)
    assert [e.seq for e in back] == list(range(490, 500))


def test_episodes_are_immutable_and_never_deleted(store: Store) -> None:
    make_session(store, "a", 3)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        with store.db.transaction() as conn:
            conn.execute("UPDATE episodes SET content = 'changed' WHERE seq = 0")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        with store.db.transaction() as conn:
            conn.execute("DELETE FROM episodes")
    assert store.sessions.get("a").episodes == 3


def test_other_tools_can_insert_rows_directly_and_aggregates_follow(store: Store, tokenizer) -> None:
    """The README documents the schema for other writers: triggers keep aggregates right."""
    conn = sqlite3.connect(store.path)
    conn.execute(
        "INSERT INTO sessions (id, title, source, created_at, updated_at) VALUES "
        "('ext', 'from another tool', 'mytool', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')"
    )
    conn.executemany(
        "INSERT INTO episodes (id, session_id, seq, role, content, created_at) VALUES (?, 'ext', ?, ?, ?, ?)",
        [(f"ext/{i}", i, "user", f"hello number {i}", f"2025-01-01T00:0{i}:00.000Z") for i in range(4)],
    )
    conn.commit()
    conn.close()
    s = store.sessions.get("ext")
    assert s.episodes == 4 and s.tokens == 0 and s.updated_at == "2025-01-01T00:03:00.000Z"
    assert store.episodes.fill_missing_tokens() == 4
    assert store.sessions.get("ext").tokens == sum(tokenizer.count(f"hello number {i}") for i in range(4))


# ---------------------------------------------------------------- summaries


def recomputed(store: Store, sid: str) -> dict:
    """Aggregates recomputed from scratch, to compare with what the triggers kept."""
    act = store.dag.summaries(sid)
    leaves = [s for s in act if s.kind == "leaf"]
    return {
        "summaries": len(act),
        "max_depth": max((s.depth for s in act), default=None),
        "covered_episodes": sum(s.episode_count for s in leaves),
        "covered_tokens": sum(s.source_tokens for s in leaves),
        "fallbacks": sum(s.tier == "fallback" for s in act),
        "top_tokens": sum(s.tokens for s in act if s.parent_id is None),
    }


def aggregates(store: Store, sid: str) -> dict:
    s = store.sessions.get(sid)
    return {k: getattr(s, k) for k in recomputed(store, sid)}


def test_summary_aggregates_follow_writes_supersedes_and_reverts(store: Store) -> None:
    make_session(store, "a", 40)
    run = store.runs.start("a", "leaf", "extractive", None)
    leaves = [leaf(store, "a", i * 8, i * 8 + 7, tier="fallback" if i == 2 else "normal", run_id=run.id)
              for i in range(4)]
    assert aggregates(store, "a") == recomputed(store, "a")
    assert store.sessions.get("a").covered_episodes == 32
    top = condense(store, "a", leaves)
    assert aggregates(store, "a") == recomputed(store, "a")
    assert store.sessions.get("a").max_depth == 1
    assert store.runs.get(run.id).tiers == {"normal": 3, "aggressive": 0, "fallback": 1}
    # re-summarise leaf 2 and its parent together (one transaction)
    redo = store.runs.start("a", "resummarize", "extractive", None)
    new_leaf, new_top = new_id("s"), new_id("s")
    store.dag.write([
        SummaryWrite(NewSummary(new_leaf, "a", 0, "normal", "extractive", None, "leaf-v1", "better", 4,
                                run_id=redo.id), episode_range=(16, 23), supersede=[leaves[2]]),
        SummaryWrite(NewSummary(new_top, "a", 1, "normal", "extractive", None, "c-v1", "better top", 3,
                                run_id=redo.id), source_ids=[leaves[0], leaves[1], new_leaf, leaves[3]],
                     supersede=[top]),
    ])
    assert aggregates(store, "a") == recomputed(store, "a")
    assert store.sessions.get("a").fallbacks == 0
    assert store.dag.get(leaves[2]).status == "superseded"
    assert store.dag.get(leaves[2]).superseded_by == new_leaf
    assert [v.id for v in store.dag.versions(new_leaf)] == [leaves[2], new_leaf]
    assert [s.id for s in store.dag.covering_chain("a", 17)] == [new_leaf, new_top]
    # revert brings the old pair back
    assert store.dag.revert_run(redo.id) == 2
    assert [s.id for s in store.dag.covering_chain("a", 17)] == [leaves[2], top]
    assert aggregates(store, "a") == recomputed(store, "a")
    assert store.sessions.get("a").fallbacks == 1


def test_invariants_are_enforced_on_write(store: Store) -> None:
    make_session(store, "a", 40)
    make_session(store, "b", 10)
    l1 = leaf(store, "a", 0, 9)
    l2 = leaf(store, "a", 10, 19)
    l3 = leaf(store, "a", 20, 29)
    with pytest.raises(InvariantViolation, match="overlap"):
        leaf(store, "a", 5, 12)
    with pytest.raises(InvariantViolation, match="contiguous"):
        condense(store, "a", [l1, l3])
    with pytest.raises(InvariantViolation, match="depth"):
        condense(store, "a", [l1, l2], depth=2)
    with pytest.raises(InvariantViolation, match="coverage order"):
        condense(store, "a", [l2, l1])
    with pytest.raises(StoreError, match="not all present"):
        leaf(store, "b", 5, 15)
    c = condense(store, "a", [l1, l2])
    with pytest.raises(InvariantViolation, match="active parent"):
        condense(store, "a", [l2, l3])
    assert store.dag.get(c).first_seq == 0 and store.dag.get(c).last_seq == 19
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        with store.db.transaction() as conn:
            conn.execute("DELETE FROM summaries")
    # nothing half-written by the refused attempts
    assert store.sessions.get("a").summaries == 4


def test_history_written_superseded_skips_the_active_rules_but_not_the_edges(store: Store) -> None:
    """An import keeps another tool's replaced summaries as old versions: they may overlap the
    active leaves and never become a parent, but their edges are checked as any summary's."""
    make_session(store, "a", 20)
    l1 = leaf(store, "a", 0, 9)
    l2 = leaf(store, "a", 10, 19)

    def old(i: str, depth: int, **edges: object) -> Summary:
        store.dag.write([SummaryWrite(NewSummary(i, "a", depth, "normal", "lossless-code", None, "imported", "old", 3,
                                                 created_at="2025-01-02T03:04:05.000Z"),
                                      superseded=True, superseded_by=l1, **edges)])  # type: ignore[arg-type]
        s = store.dag.get(i)
        assert s is not None
        return s

    overlapping = old("old-leaf", 0, episode_range=(5, 12))
    assert (overlapping.status, overlapping.superseded_by, overlapping.created_at) == (
        "superseded", l1, "2025-01-02T03:04:05.000Z")
    gap = old("old-top", 1, source_ids=[l1, "old-leaf"])  # not contiguous, one source superseded: fine for history
    assert gap.status == "superseded" and store.dag.get(l1).parent_id is None  # type: ignore[union-attr]
    assert store.sessions.get("a").summaries == 2  # type: ignore[union-attr]
    with pytest.raises(StoreError, match="not all present"):
        old("bad", 0, episode_range=(15, 25))
    with pytest.raises(InvariantViolation, match="depth"):
        old("bad", 2, source_ids=[l1, l2])
    with pytest.raises(InvariantViolation, match="cannot replace"):
        store.dag.write([SummaryWrite(NewSummary("bad", "a", 0, "normal", "x", None, "v", "t", 1),
                                      episode_range=(0, 9), supersede=[l1], superseded=True)])
    assert condense(store, "a", [l1, l2])  # the active tree is untouched by the history


def test_condensed_time_range_is_union_of_sources(store: Store) -> None:
    make_session(store, "a", 20)
    l1, l2 = leaf(store, "a", 0, 9), leaf(store, "a", 10, 19)
    c = store.dag.get(condense(store, "a", [l1, l2]))
    eps = store.episodes.page("a")
    assert (c.start_at, c.end_at) == (eps[0].created_at, eps[-1].created_at)
    assert c.source_tokens == store.dag.get(l1).tokens + store.dag.get(l2).tokens
    assert store.dag.get(l1).source_tokens == sum(e.tokens for e in eps[:10])
    assert store.dag.source_ids(l1) == [e.id for e in eps[:10]]


def test_unsummarised_ranges(store: Store) -> None:
    make_session(store, "a", 50)
    leaf(store, "a", 10, 19)
    leaf(store, "a", 30, 34)
    assert store.dag.unsummarised_ranges("a") == [(0, 9), (20, 29), (35, 49)]


def test_stale_running_run_becomes_interrupted_on_open(db_path: Path, tokenizer) -> None:
    with Store.open(db_path, tokenizer=tokenizer) as s:
        make_session(s, "a", 4)
        run = s.runs.start("a", "full", "extractive", None)
        live = s.runs.start("a", "full", "extractive", None)
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        with s.db.transaction() as conn:
            conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (int(dead.stdout), run.id))
    with Store.open(db_path, tokenizer=tokenizer) as s:
        assert s.runs.get(run.id).status == "interrupted"
        # a run owned by a live process on this host (here: us) is left alone
        assert s.runs.get(live.id).status == "running"


def test_a_finished_thread_can_release_its_connection(store: Store) -> None:
    import threading

    make_session(store, "a", 3)
    seen: list[int] = []

    def worker() -> None:
        seen.append(store.sessions.get("a").episodes)
        store.release_thread()

    before = len(store.db._pool._all)  # the pool's bookkeeping is what is under test
    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
        t.join()
    assert seen == [3] * 5
    assert len(store.db._pool._all) == before
    assert store.sessions.get("a").episodes == 3  # this thread's connection is untouched
