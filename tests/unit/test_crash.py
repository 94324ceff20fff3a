"""Invariant 6 and 7 with real processes: SIGKILL a compaction mid-run, append from a second
process while one runs. The kill point is chosen by waiting for something observable (a
request reaching the fake server, a summary committed), never by sleeping."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.compaction.planner import plan_condense
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

from ._engine_fixtures import SMALL, add_episodes, episode_text, extractive_runner
from ._invariants import check_invariants

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The child's environment: our small policy in a private config file."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[policy]\n" + "".join(f"{k} = {getattr(SMALL, k)}\n" for k in SMALL.__dataclass_fields__), encoding="utf-8"
    )
    e = dict(os.environ, HIERMEM_CONFIG=str(cfg), PYTHONPATH=str(ROOT))
    e.pop("OLLAMA_HOST", None)
    return e


@pytest.fixture
def slow_fake() -> Iterator[FakeOllama]:
    with FakeOllama() as fake:
        fake.script(*[Reply("Date parsing fix for the logslice importer.", latency_s=0.1) for _ in range(400)])
        yield fake


def compact_cmd(db: Path, url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "hiermem_tui.cli", "compact", "--db", str(db), "--session", "s",
            "--ollama-host", url, "--model", "llama3.2", "--json", *extra]


def wait_until(predicate: object, timeout: float = 30.0) -> None:
    """Poll a condition on the file (a reader cannot block on another process's commit)."""
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.005)


def count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.parametrize("kill_at", ["chat:1", "chat:4", "chat:9", "db:condensed"])
def test_sigkill_mid_run_leaves_a_consistent_resumable_file(
    tmp_path: Path, tokenizer: Tokenizer, env: dict[str, str], slow_fake: FakeOllama, kill_at: str
) -> None:
    db = tmp_path / "crash.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "s", 0, 60)
        episodes = {e.seq: (e.role, e.content, e.created_at) for e in store.episodes.each("s")}
    proc = subprocess.Popen(compact_cmd(db, slow_fake.url), env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        kind, _, arg = kill_at.partition(":")
        if kind == "chat":
            slow_fake.wait_for_chats(int(arg), timeout=60)
        else:
            wait_until(lambda: count(db, "SELECT count(*) FROM summaries WHERE depth = 1") >= 1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    chats = len(slow_fake.chat_requests)
    with Store.open(db, tokenizer=tokenizer) as store:  # reopening marks the stale run
        runs = store.runs.of_session("s")
        assert [r.status for r in runs] == ["interrupted"] and runs[0].error
        made = runs[0].summaries_created
        # request k is sent only after summary k-2 was committed: summary k-1 is finished and committed once
        # request k is on the wire (Executor.make_in_turn), so the kill at request k falls before or after it
        assert made >= (int(arg) - 2 if kind == "chat" else 1) and made <= chats
        check_invariants(store, "s", fresh_tail=SMALL.fresh_tail, episodes=episodes, allow_running=False)
        known = {s.id for s in store.dag.summaries("s")}

    with FakeOllama() as fast:  # Ollama back up, answering at once
        rerun = subprocess.run(compact_cmd(db, fast.url), env=env, cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert '"status": "done"' in rerun.stdout
    with Store.open(db, tokenizer=tokenizer) as store:
        check_invariants(store, "s", fresh_tail=SMALL.fresh_tail, episodes=episodes, known_summaries=known,
                         allow_running=False)
        assert extractive_runner(store, tokenizer).plan_leaf("s") == []  # the rerun resumed and finished
        assert plan_condense(store.dag.spans("s"), SMALL.condense_fanout) == []
        assert {s.id for s in store.dag.summaries("s")} >= known  # kept what the killed run wrote
        assert [r.status for r in store.runs.of_session("s")] == ["interrupted", "done"]


def test_appending_from_another_process_during_a_run_loses_nothing(
    tmp_path: Path, tokenizer: Tokenizer, env: dict[str, str], slow_fake: FakeOllama
) -> None:
    db = tmp_path / "busy.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "s", 0, 60)
    proc = subprocess.Popen(compact_cmd(db, slow_fake.url), env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with Store.open(db, tokenizer=tokenizer) as store:
            for batch in range(6):
                slow_fake.wait_for_chats(batch + 1, timeout=60)  # the run is mid-flight
                add_episodes(store, "s", 60 + batch * 5, 5)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.sessions.get("s").episodes == 90  # type: ignore[union-attr]
        episodes = {e.seq: (e.role, e.content, e.created_at) for e in store.episodes.each("s")}
        assert [episodes[i][1] for i in range(90)] == [episode_text("s", i) for i in range(90)]
        check_invariants(store, "s", fresh_tail=SMALL.fresh_tail, episodes=episodes, allow_running=False)
