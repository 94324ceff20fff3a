"""``hiermem-tui doctor``: files broken on purpose, with real SQLite writes, and what doctor says of each.

Each case starts from a healthy file (compacted, one summary re-made, the search index built),
breaks one thing the way a bad sync, a foreign tool or a crash would (dropping a guard trigger
where the schema forbids the change), and checks that doctor names it — kind, session, ids —
that ``--fix`` repairs what is fixable and reports the rest, that doctor alone writes nothing,
and that no fix changes an episode.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hiermem_tui.compaction.planner import plan_condense
from hiermem_tui.store import SCHEMA_VERSION, Store
from hiermem_tui.store.db import Db
from hiermem_tui.store.health import KINDS, Health
from hiermem_tui.store.search_index import build_search_index
from hiermem_tui.tokens import Tokenizer

from ._cli import run, sha
from ._engine_fixtures import SMALL, add_episodes, extractive_runner, small_policy_env  # noqa: F401 (a fixture)
from .test_migrations import _write_version_1

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.usefixtures("small_policy_env")  # CLI runs read the small test policy, nothing else


def doctor(db: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, out, err = run("doctor", "--db", str(db), "--json", *extra)
    assert "Traceback" not in err, err
    return code, json.loads(out)


def beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name and p.name.startswith(path.stem))


def sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def one(path: Path, query: str, *params: object) -> object:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query, params).fetchone()[0]
    finally:
        conn.close()


def episodes_of(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM episodes ORDER BY id").fetchall()
    finally:
        conn.close()


def kinds(report: dict) -> list[tuple[str, str | None]]:  # type: ignore[type-arg]
    return sorted((p["kind"], p["session"]) for p in report["problems"])


@pytest.fixture(scope="module")
def healthy_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three sessions: "a" compacted to depth 2 with one leaf re-made (a superseded version, a
    resummarize run), "b" compacted, "c" too short to summarise; the search index built."""
    tokenizer = Tokenizer()
    path = tmp_path_factory.mktemp("doctor") / "healthy.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "a", 0, 60)
        add_episodes(store, "b", 0, 30)
        add_episodes(store, "c", 0, 3)
        runner = extractive_runner(store, tokenizer)
        asyncio.run(runner.compact("a"))
        asyncio.run(runner.compact("b"))
        leaf = [s for s in store.dag.summaries("a") if s.depth == 0][1]
        asyncio.run(runner.remake.summary(leaf.id))
        build_search_index(store)
        assert store.stats.summary_count("a") > store.sessions.get("a").summaries  # type: ignore[union-attr]
    return path


@pytest.fixture
def db(tmp_path: Path, healthy_template: Path) -> Path:
    path = tmp_path / "hiermem.db"
    shutil.copy(healthy_template, path)
    return path


def leaf_of(path: Path, session: str, index: int) -> str:
    """The ``index``-th active leaf of a session, by coverage."""
    return str(one(path, "SELECT id FROM summaries WHERE session_id = ? AND depth = 0 AND status = 'active' "
                   "ORDER BY first_seq LIMIT 1 OFFSET ?", session, index))


def parent_of(path: Path, summary_id: str) -> str:
    return str(one(path, "SELECT parent_id FROM summaries WHERE id = ?", summary_id))


def fix_and_recheck(db: Path) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """``doctor --fix`` (which must back up first and leave every episode as it was), then a plain doctor."""
    episodes = episodes_of(db)
    before = set(db.parent.iterdir())
    code, fixed = doctor(db, "--fix")
    backups = [p for p in set(db.parent.iterdir()) - before if ".backup-" in p.name]
    assert len(backups) == 1 and fixed["backup"] == str(backups[0]), (fixed, backups)
    assert doctor(backups[0])[1]["problems"], "the backup was taken before the fix"
    assert episodes_of(db) == episodes
    code_after, after = doctor(db)
    assert code_after == code
    return fixed, after


# ---------------------------------------------------------------- healthy files
def test_a_healthy_file_passes_and_doctor_writes_nothing(db: Path) -> None:
    before = sha(db)
    code, report = doctor(db)
    assert code == 0 and report["ok"] is True and report["problems"] == []
    assert set(report) == {"ok", "checked", "problems"}
    assert report["checked"]["sessions"] == 3 and report["checked"]["episodes"] == 93
    assert report["checked"]["summaries"] > 0 and report["checked"]["edges"] > report["checked"]["summaries"]
    assert report["checked"]["schema_version"] == SCHEMA_VERSION and report["checked"]["search_pending"] == 0
    assert sha(db) == before and beside(db) == []
    code, out, _ = run("doctor", "--db", str(db), "--full")
    assert code == 0 and out.startswith("ok: 3 sessions, 93 episodes")


def test_an_empty_file_is_healthy(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    assert doctor(path) == (0, {"ok": True, "checked": {"schema_version": 0, "sessions": 0, "episodes": 0,
                                                        "summaries": 0}, "problems": []})
    assert path.read_bytes() == b""


def test_a_file_in_use_by_another_connection_is_checked_as_it_is(db: Path, tokenizer: Tokenizer) -> None:
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "a", 60, 5)  # a -wal with committed rows in it
        assert Path(str(db) + "-wal").exists()
        code, report = doctor(db)
        assert code == 0, report
        assert report["checked"]["episodes"] == 98  # the -wal's rows, and their index entries with them:
        assert report["checked"]["search_pending"] == 0 and report["checked"]["search_rows"] >= 98


# ---------------------------------------------------------------- broken on purpose
def test_deleted_edges_are_named_and_the_leaf_is_set_aside(db: Path, tokenizer: Tokenizer) -> None:
    leaf = leaf_of(db, "a", 2)
    sql(db, f"DELETE FROM summary_sources WHERE summary_id = '{leaf}'")
    before = sha(db)
    code, report = doctor(db)
    assert code == 1 and sha(db) == before and beside(db) == []
    [problem] = report["problems"]
    assert problem["kind"] == "edges_missing" and problem["session"] == "a" and problem["ids"] == [leaf]
    assert problem["fixable"] is True
    _, out, _ = run("doctor", "--db", str(db))
    assert out.splitlines()[0].startswith(f"edges_missing     session a  {leaf}: leaf #")

    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True and fixed["ok"] is True
    assert any(leaf in line and "set aside" in line for line in fixed["fixed"])
    with Store.open(db, tokenizer=tokenizer) as store:
        kept = store.dag.get(leaf)
        assert kept is not None and kept.status == "superseded" and kept.superseded_by == "doctor:edges_missing"
        asyncio.run(extractive_runner(store, tokenizer).compact("a"))  # the next pass re-makes that part
        remade = store.dag.covering_chain("a", kept.first_seq)
        assert remade and remade[0].id != leaf and remade[0].status == "active"
        assert extractive_runner(store, tokenizer).plan_leaf("a") == []
        assert plan_condense(store.dag.spans("a"), SMALL.condense_fanout) == []
    code, report = doctor(db)
    assert code == 0 and report["ok"]  # the set-aside leaf is known broken: not reported again


def test_one_edge_pointing_elsewhere_is_a_broken_edge(db: Path) -> None:
    leaf = leaf_of(db, "b", 1)
    sql(db, f"UPDATE summary_sources SET source_id = 'b/0' WHERE summary_id = '{leaf}' AND position = 1")
    code, report = doctor(db)
    [problem] = report["problems"]
    assert code == 1 and problem["kind"] == "edges_broken" and problem["ids"] == [leaf]
    assert "edge 1 names b/0" in problem["detail"]
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True


def test_a_source_summary_gone_is_named_and_what_cannot_be_fixed_stays_reported(db: Path) -> None:
    leaf = leaf_of(db, "a", 2)
    parent = parent_of(db, leaf)
    sql(db, "DROP TRIGGER summaries_no_delete", f"DELETE FROM summaries WHERE id = '{leaf}'")
    code, report = doctor(db)
    assert code == 1
    found = {(p["kind"], p["session"]): p for p in report["problems"]}
    assert found[("edges_broken", "a")]["ids"] == [parent, leaf] and found[("edges_broken", "a")]["fixable"]
    assert found[("foreign_key", None)]["ids"] == [leaf] and not found[("foreign_key", None)]["fixable"]
    assert ("aggregates", "a") in found and ("run_counters", "a") in found
    fixed, after = fix_and_recheck(db)
    # the parent is set aside and the counts follow the rows; the deleted row's own edges cannot be mended
    assert kinds(after) == [("foreign_key", None)] and after["ok"] is False
    assert one(db, "SELECT status FROM summaries WHERE id = ?", parent) == "superseded"


def test_wrong_aggregates_counts_and_times_are_recomputed(db: Path) -> None:
    leaf = leaf_of(db, "b", 0)
    sql(db,
        "DROP TRIGGER episodes_ai",  # an episode the aggregates never hear of
        "INSERT INTO episodes (id, session_id, seq, role, content, created_at, tokens) "
        "VALUES ('b/late', 'b', 30, 'user', 'a late message', '2025-03-02T00:00:00.000Z', 4)",
        "UPDATE runs SET normal = normal + 2 WHERE session_id = 'b'",
        f"UPDATE summaries SET end_at = '2030-01-01T00:00:00.000Z', source_tokens = 1 WHERE id = '{leaf}'")
    code, report = doctor(db)
    assert code == 1
    assert kinds(report) == [("aggregates", "b"), ("run_counters", "b"), ("source_tokens", "b"),
                             ("time_range", "b"), ("time_range", "b")]  # the leaf, and its parent's union
    aggregates = next(p for p in report["problems"] if p["kind"] == "aggregates")
    assert "episode_count 30 (rows: 31)" in aggregates["detail"]
    assert all(p["fixable"] for p in report["problems"])
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True
    assert one(db, "SELECT episode_count FROM sessions WHERE id = 'b'") == 31


def test_an_emptied_search_index_is_rebuilt(db: Path, tokenizer: Tokenizer) -> None:
    sql(db, "INSERT INTO search_index (search_index) VALUES ('delete-all')")
    code, report = doctor(db)
    [problem] = report["problems"]
    assert code == 1 and problem["kind"] == "search_index" and problem["session"] is None and problem["fixable"]
    assert "holds 0 of the" in problem["detail"]
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True and any("rebuilt the search index" in line for line in fixed["fixed"])
    code, out, _ = run("search", "--db", str(db), "Episode 7 of b", "--json")
    assert code == 0 and any(hit["id"] == "b/7" for hit in json.loads(out))


def test_rows_missing_from_search_are_recorded_again(db: Path) -> None:
    sql(db, "DROP TRIGGER search_docs_no_delete", "DELETE FROM search_docs WHERE ref_id IN ('c/1', 'c/2')")
    code, report = doctor(db)
    [problem] = report["problems"]
    assert code == 1 and (problem["kind"], problem["session"]) == ("search_unrecorded", "c")
    assert sorted(problem["ids"]) == ["c/1", "c/2"] and "2 episodes" in problem["detail"]
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True


def test_overlapping_active_leaves_are_reported_not_fixed(db: Path) -> None:
    old = one(db, "SELECT id FROM summaries WHERE session_id = 'a' AND status = 'superseded' AND depth = 0")
    sql(db, f"UPDATE summaries SET status = 'active', superseded_by = NULL WHERE id = '{old}'")
    code, report = doctor(db)
    assert code == 1
    [overlap] = report["problems"]
    assert overlap["kind"] == "overlap" and old in overlap["ids"] and not overlap["fixable"]
    before = sha(db)
    code, fixed = doctor(db, "--fix")  # nothing it may repair: no backup, nothing written
    assert code == 1 and fixed == report | {"checked": fixed["checked"]} and "fixed" not in fixed
    assert sha(db) == before and beside(db) == []


def test_a_broken_parent_link_is_relinked(db: Path) -> None:
    leaf = leaf_of(db, "a", 0)
    sql(db, f"UPDATE summaries SET parent_id = NULL WHERE id = '{leaf}'")
    code, report = doctor(db)
    assert code == 1 and [(p["kind"], p["ids"][0]) for p in report["problems"]
                          if p["kind"] == "parent_link"] == [("parent_link", leaf)]
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True and one(db, "SELECT parent_id FROM summaries WHERE id = ?", leaf) is not None


def test_a_run_left_running_by_a_killed_process(db: Path) -> None:
    """A real process records a run and is SIGKILLed before it can finish it."""
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom hiermem_tui.store import Store\n"
         "s = Store.open(sys.argv[1]); r = s.runs.start('b', 'full', 'extractive', None)\n"
         "print(r.id, flush=True)\ntime.sleep(600)\n", str(db)],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        run_id = child.stdout.readline().strip()  # type: ignore[union-attr]
        code, report = doctor(db)
        assert code == 0, report  # its process is alive: not a problem
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    before = sha(db)
    code, report = doctor(db)
    [problem] = report["problems"]
    assert code == 1 and problem == {"kind": "run_dead", "session": "b", "ids": [run_id], "fixable": True,
                                     "detail": f"run {run_id} still reads running but process {child.pid} on "
                                               f"{os.uname().nodename} is gone"}
    assert sha(db) == before and one(db, "SELECT status FROM runs WHERE id = ?", run_id) == "running"
    fixed, after = fix_and_recheck(db)
    assert after["ok"] is True and one(db, "SELECT status FROM runs WHERE id = ?", run_id) == "interrupted"
    assert any(run_id in line and "interrupted" in line for line in fixed["fixed"])


def test_an_older_schema_is_upgraded_by_fix_and_then_checked(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """A schema-1 file whose leaf was written without edges: --fix upgrades it, then sets the leaf aside."""
    path = tmp_path / "v1.db"
    _, leaf = _write_version_1(path, tokenizer)
    before = sha(path)
    code, report = doctor(path)
    assert code == 1 and kinds(report) == [("schema_old", None)] and report["problems"][0]["fixable"]
    assert sha(path) == before and beside(path) == []
    code, fixed = doctor(path, "--fix")
    assert code == 0 and fixed["ok"] is True
    assert fixed["fixed"][0] == f"upgraded the schema from 1 to {SCHEMA_VERSION}"
    assert any(f"set aside {leaf}" in line for line in fixed["fixed"])
    assert one(path, "PRAGMA user_version") == SCHEMA_VERSION


def test_damaged_pages_are_reported_in_one_line_each(db: Path) -> None:
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'search_docs'").fetchone()[0]
    conn.close()
    raw = bytearray(db.read_bytes())
    raw[(root - 1) * page_size + 8 : root * page_size] = b"\xee" * (page_size - 8)
    db.write_bytes(bytes(raw))
    code, out, err = run("doctor", "--db", str(db))
    assert code == 1 and "Traceback" not in err
    assert any(line.startswith("sqlite ") for line in out.splitlines()), out
    code, report = doctor(db, "--fix")  # nothing it may repair there: no backup, no write
    assert code == 1 and "fixed" not in report and not any(".backup-" in p for p in beside(db))


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kind", ["missing", "directory", "truncated", "newer", "foreign", "text"])
def test_a_file_doctor_cannot_read_is_one_line_exit_2_and_left_alone(tmp_path: Path, db: Path, kind: str) -> None:
    path = tmp_path / "bad.db"
    if kind == "directory":
        path.mkdir()
    elif kind == "truncated":
        path.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    elif kind == "newer":
        shutil.copy(db, path)
        sql(path, "PRAGMA user_version = 99")
    elif kind == "foreign":
        sql(path, "CREATE TABLE moz_places (id INTEGER, url TEXT)")
    elif kind == "text":
        path.write_text("notes\n")
    before = sha(path) if path.is_file() else None
    for extra in ((), ("--fix",), ("--json",)):
        code, out, err = run("doctor", "--db", str(path), *extra)
        assert code == 2 and out == "" and err.startswith("hiermem-tui: ") and err.count("\n") == 1, (kind, err)
        assert (sha(path) if path.is_file() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("bad")) == (
        [] if kind == "missing" else ["bad.db"])
    if kind == "newer":
        assert "newer hiermem-tui" in err


# ---------------------------------------------------------------- the core API
def test_every_kind_is_documented_and_the_check_reads_nothing_it_may_not(db: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"`{kind}`" in readme, kind
    checking = Db(db, readonly=True, checking=True)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            checking.conn.execute("DELETE FROM meta")
        report = Health(checking).check()
    finally:
        checking.close()
    assert report.ok and beside(db) == []


def test_the_last_result_is_kept_in_the_file(db: Path, tokenizer: Tokenizer) -> None:
    sql(db, "UPDATE sessions SET summary_count = 0 WHERE id = 'b'")
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.health.last() is None
        report = store.health.check()
        store.health.record(report)
        last = store.health.last()
        assert last is not None and not last.ok and last.problems == 1 and last.fixable == 1
        assert last.kinds == {"aggregates": 1} and last.first[0].session == "b"
    fix_and_recheck(db)
    with Store.open(db, tokenizer=tokenizer) as store:
        last = store.health.last()
        assert last is not None and last.ok and last.fixed >= 1
