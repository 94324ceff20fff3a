"""Upgrading a file written by an older hiermem-tui: data kept, new columns and aggregates right."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.store import SCHEMA_VERSION, NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.store.db import _split_sql
from hiermem_tui.store.schema import MIGRATIONS
from hiermem_tui.summarize.ollama_backend import normalize_host
from hiermem_tui.summarize.speed import ModelSpeed
from tests.conftest import make_session

from ._cli import run as cli


def _write_version_1(path: Path, tokenizer) -> tuple[str, str]:
    """A file as hiermem-tui 0.1 (schema 1) left it: a session, a leaf, a condensed summary."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for statement in _split_sql(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("COMMIT")
    conn.execute(
        "INSERT INTO sessions (id, title, source, created_at, updated_at) "
        "VALUES ('old', 'Old chat', 'jsonl', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')"
    )
    for seq in range(8):
        conn.execute(
            "INSERT INTO episodes (id, session_id, seq, role, content, created_at, tokens) "
            "VALUES (?, 'old', ?, 'user', ?, ?, 10)",
            (f"old/{seq}", seq, f"message {seq}", f"2024-01-01T00:00:0{seq}.000Z"),
        )
    cols = ("id, session_id, depth, kind, status, tier, backend, prompt_version, content, tokens, source_tokens, "
            "first_seq, last_seq, start_at, end_at, created_at")
    conn.execute(
        f"INSERT INTO summaries ({cols}) VALUES ('s_leaf', 'old', 0, 'leaf', 'active', 'fallback', 'extractive', "
        "'leaf-v1', 'leaf text', 5, 80, 0, 7, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:07.000Z', "
        "'2024-01-02T00:00:00.000Z')"
    )
    conn.close()
    return "old", "s_leaf"


def test_version_1_file_upgrades_in_place_and_keeps_everything(tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v1.db"
    sid, leaf_id = _write_version_1(path, tokenizer)
    with Store.open(path, tokenizer=tokenizer) as store:
        assert store.db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        session = store.sessions.get(sid)
        assert session is not None
        assert (session.episodes, session.tokens, session.summaries, session.fallbacks) == (8, 80, 1, 1)
        assert session.min_retention is None  # nothing measured yet
        old = store.dag.get(leaf_id)
        assert old is not None and old.content == "leaf text"
        assert old.fidelity is None and old.retention is None and old.rejections == ()
        # the new triggers keep the old aggregates and add the retention one
        new = NewSummary(new_id("s"), sid, 1, "normal", "extractive", None, "c-v1", "cond", 3,
                         fidelity=Fidelity(10, 7, ("foo_bar", "`x`", "1234"), ()))
        store.dag.write([SummaryWrite(new, source_ids=[leaf_id])])
        session = store.sessions.get(sid)
        assert session is not None
        assert session.summaries == 2 and session.max_depth == 1 and session.top_tokens == 3
        assert session.min_retention == 0.7
        written = store.dag.get(new.id)
        assert written is not None and written.fidelity == Fidelity(10, 7, ("foo_bar", "`x`", "1234"), ())
        assert written.retention == 0.7


def test_rejections_are_kept_per_summary_and_counted_per_run(tmp_path: Path, tokenizer) -> None:
    with Store.open(tmp_path / "r.db", tokenizer=tokenizer) as store:
        make_session(store, "s", 8)
        run = store.runs.start("s", "leaf", "ollama", "m")
        rejected = [{"tier": "normal", "reason": "loop", "detail": "a sentence repeated 3 times"},
                    {"tier": "aggressive", "reason": "echo", "detail": "transcript line prefix"}]
        for i, (a, b) in enumerate(((0, 3), (4, 7))):
            ns = NewSummary(new_id("s"), "s", 0, "fallback", "extractive", None, "extractive-v1", f"d{i}", 4,
                            run_id=run.id, rejections=rejected[: i + 1])
            store.dag.write([SummaryWrite(ns, episode_range=(a, b))])
        got = store.runs.get(run.id)
        assert got is not None and got.rejections == {"loop": 2, "echo": 1}
        leaves = store.dag.summaries("s")
        assert [len(s.rejections) for s in leaves] == [1, 2]
        assert leaves[1].rejections[1]["reason"] == "echo"


def test_runs_of_a_version_1_file_survive_the_table_rebuild(tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v1runs.db"
    sid, leaf_id = _write_version_1(path, tokenizer)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO runs (id, session_id, kind, status, backend, started_at, normal, summaries_created, error) "
        "VALUES ('r_old', 'old', 'leaf', 'failed', 'ollama', '2024-01-02T00:00:00.000Z', 1, 1, 'Ollama went away')"
    )
    conn.execute("UPDATE summaries SET run_id = 'r_old' WHERE id = ?", (leaf_id,))
    conn.close()
    with Store.open(path, tokenizer=tokenizer) as store:
        run = store.runs.get("r_old")
        assert run is not None and (run.status, run.error, run.normal) == ("failed", "Ollama went away", 1)
        assert run.rejections == {} and run.planned is None
        assert store.db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store.dag.get(leaf_id).run_id == "r_old"
        # the new kind is accepted
        repair = store.runs.start(sid, "repair", "ollama", "m")
        assert store.runs.get(repair.id).kind == "repair"


MODEL = "llama3.2:latest"
OLD = ModelSpeed(4, 4000, 40.0, 400, 40.0)
"""What a file of schema 6 measured of the model (100 tok/s in, 10 out), on no host in particular."""




def _write_version(path: Path, last: int) -> sqlite3.Connection:
    """A file as a hiermem-tui of schema ``last`` made it (every migration up to it); its connection."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for version, migration in enumerate(MIGRATIONS[:last], start=1):
        conn.execute("BEGIN")
        for statement in _split_sql(migration):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    return conn


def _write_version_6(path: Path) -> None:
    conn = _write_version(path, 6)
    conn.execute(
        "INSERT INTO model_speed (backend, model, calls, prompt_tokens, prompt_seconds, output_tokens, output_seconds, "
        "updated_at) VALUES ('ollama', ?, ?, ?, ?, ?, ?, '2025-01-01T00:00:00.000Z')",
        (MODEL, OLD.calls, OLD.prompt_tokens, OLD.prompt_seconds, OLD.output_tokens, OLD.output_seconds),
    )
    conn.close()


def test_version_6_speeds_upgrade_and_stand_for_any_host_until_it_measures_its_own(
        tmp_path: Path, tokenizer) -> None:
    path = tmp_path / "v6.db"
    _write_version_6(path)
    a, b = normalize_host("hostA"), normalize_host("hostB")
    with Store.open(path, tokenizer=tokenizer) as store:
        assert store.db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.speeds.get("ollama", MODEL) == OLD
        assert store.speeds.get("ollama", MODEL, a) == OLD == store.speeds.get("ollama", MODEL, b)
        mine = ModelSpeed(2, 8000, 2.0, 200, 1.0)
        store.speeds.add("ollama", MODEL, mine, a)
        store.speeds.add("ollama", MODEL, mine, a)
        assert store.speeds.get("ollama", MODEL, a) == mine.merged(mine)  # its own, not the old row
        assert store.speeds.get("ollama", MODEL, b) == OLD  # still the fallback
        assert store.speeds.get("ollama", MODEL) == OLD
        rows = store.db.conn.execute("SELECT host, calls FROM model_speed ORDER BY host").fetchall()
        assert [tuple(r) for r in rows] == [("", 4), (a, 4)]
    # the read-only reader (the MCP server's) opens the upgraded file and reads the same
    reader = Store.open_reader(path, tokenizer=tokenizer)
    try:
        assert reader.speeds.get("ollama", MODEL, b) == OLD
        assert reader.speeds.get("ollama", MODEL, a).calls == 4
    finally:
        reader.close()


RUN_COLUMNS = ("id, session_id, kind, status, backend, model, started_at, finished_at, normal, aggressive, fallback, "
               "summaries_created, llm_seconds, wall_seconds, error, target, pid, host, rejections, planned, flagged")


def test_a_version_7_file_keeps_its_runs_and_takes_the_ways_a_run_stops(tmp_path: Path, tokenizer) -> None:
    """Issue 36 item 6: a run a time budget, a pause or a move to the front ended reads ``budget``,
    ``paused`` or ``moved``; schema 7's CHECK refused those, so the runs table is rebuilt with every
    column, index and reference kept, and ``doctor`` finds the upgraded file healthy."""
    path = tmp_path / "v7.db"
    conn = _write_version(path, 7)
    conn.execute("INSERT INTO sessions (id, title, source, created_at, updated_at) "
                 "VALUES ('old', 'Old chat', 'jsonl', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')")
    row = ("r_old", "old", "full", "cancelled", "ollama", "m", "2025-01-02T00:00:00.000Z",
           "2025-01-02T00:01:00.000Z", 0, 0, 0, 0, 12.5, 60.0, "yielded to other; queued again", None, 42, "box",
           '{"loop": 2}', 5, 1)
    conn.execute(f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join('?' * len(row))})", row)
    with pytest.raises(sqlite3.IntegrityError):  # what schema 7 said to a run a budget stopped
        conn.execute("UPDATE runs SET status = 'budget' WHERE id = 'r_old'")
    conn.close()
    with Store.open(path, tokenizer=tokenizer) as store:
        db = store.db.conn
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert tuple(db.execute(f"SELECT {RUN_COLUMNS} FROM runs").fetchone()) == row
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'")}
        assert {"runs_session", "runs_status", "runs_started"} <= indexes
        for status in ("budget", "paused", "moved"):
            run = store.runs.start("old", "full", "ollama", "m")
            store.runs.finish(run.id, status, wall_seconds=1.0)
            assert store.runs.get(run.id).status == status
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    code, out, err = cli("doctor", "--db", str(path), "--full", "--json")
    assert code == 0 and json.loads(out)["ok"] is True, out + err
    code, out, _ = cli("stats", "--db", str(path), "--json")
    assert json.loads(out)["runs"]["by_status"] == {"done": 0, "running": 0, "cancelled": 1, "failed": 0,
                                                   "interrupted": 0, "budget": 1, "paused": 1, "moved": 1}
