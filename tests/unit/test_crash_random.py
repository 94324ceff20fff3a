"""Invariant 6 under fire: SIGKILL a real ``compact --all`` 20 times at seeded random moments.

test_crash.py kills a run at a few hand-picked points; this test spreads kills over the whole
life of a full pass on one database — while a model call is in flight, between the model's
answer and the commit of its summary, right after a commit, right after a run was recorded —
and lets every kill resume from whatever the previous one left. After each kill the file must
be healthy (integrity check, every §3 invariant, episodes byte-identical), the killed run must
read ``interrupted`` once the file is opened again, and at the end one more run must finish.

Every kill point is reached by waiting for something observable — a request reaching the fake
server, the server finishing its answer, a row appearing in the file — never by sleeping. A
small random extra delay after that point only moves the kill around inside the window; no
assertion depends on where exactly it lands. The seed makes the whole sequence reproducible:
a failure message names the kill, its phase and its target.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hiermem_tui.compaction.planner import plan_condense
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

from ._engine_fixtures import SMALL, add_episodes, extractive_runner
from ._invariants import check_invariants
from .test_crash import count, env  # noqa: F401  (env is a fixture: SMALL policy in a private config)

SEED = 20250301
KILLS = 20
SESSIONS = ("alpha", "beta", "gamma")
EPISODES = 150  # with SMALL: 49 leaves + 46 condensed = 95 summaries per session, 285 in all
LATENCY_S = 0.01  # every model answer takes this long: a kill aimed at a call lands inside it
WAIT_S = 30.0
PHASES = ("start", "call", "reply", "commit")
WEIGHTS = (1, 3, 3, 3)


@dataclass
class Kill:
    """One planned kill: which event to wait for, its count, and the extra delay after it."""

    index: int
    phase: str
    target: int
    delay_s: float

    def __str__(self) -> str:
        return f"kill {self.index} ({self.phase} #{self.target} +{self.delay_s * 1000:.1f} ms, seed {SEED})"


def plan_kills(rng: random.Random) -> list[Kill]:
    """The 20 kills, drawn up front so the sequence depends on the seed alone."""
    kills = []
    for i in range(KILLS):
        phase = rng.choices(PHASES, WEIGHTS)[0]
        target = 1 if phase == "start" else rng.randint(1, 16)
        delay = rng.uniform(0, LATENCY_S) if phase == "call" else rng.uniform(0, 0.004)
        kills.append(Kill(i, phase, target, delay))
    return kills


def compact_all_cmd(db: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "hiermem_tui.cli", "compact", "--db", str(db), "--all", "--backend", "ollama",
            "--ollama-host", url, "--model", "llama3.2", "--json"]


def episode_digest(db: Path) -> str:
    """A hash of every episode row, every column: invariant 1 across all kills."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        h = hashlib.sha256()
        for row in conn.execute(
            "SELECT id, session_id, seq, role, content, created_at, tokens, synthetic_time, metadata "
            "FROM episodes ORDER BY session_id, seq"
        ):
            h.update(json.dumps(row).encode())
        return h.hexdigest()
    finally:
        conn.close()


def wait_alive(proc: subprocess.Popen[bytes], kill: Kill, ready: Callable[[], bool]) -> None:
    """Wait for ``ready`` (which itself blocks briefly on an event, or reads the file) while the
    child is alive; the child finishing first means the workload is too small for 20 kills."""
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"{kill}: the compaction exited ({proc.returncode}) before the kill point")
        if time.monotonic() > deadline:
            raise AssertionError(f"{kill}: kill point not reached in {WAIT_S:.0f}s")


def chat_arrived(fake: FakeOllama, n: int) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            fake.wait_for_chats(n, timeout=0.05)
            return True
        except TimeoutError:
            return False

    return ready


def chat_answered(fake: FakeOllama, n: int) -> Callable[[], bool]:
    """The server has sent the whole answer of chat ``n``: the client is now counting, writing."""

    def ready() -> bool:
        return chat_arrived(fake, n)() and fake.chat_requests[n - 1].finished.wait(0.05)

    return ready


def rows_reach(db: Path, sql: str, n: int) -> Callable[[], bool]:
    def ready() -> bool:
        if count(db, sql) >= n:
            return True
        time.sleep(0.002)  # a poll interval: another process's commit cannot be awaited
        return False

    return ready


def state_after_kill(db: Path) -> tuple[list[str], int]:
    """Before anything reopens the file: it is intact, and which runs were left ``running``."""
    conn = sqlite3.connect(str(db))
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        stale = [r[0] for r in conn.execute("SELECT id FROM runs WHERE status = 'running'")]
        made = conn.execute("SELECT count(*) FROM summaries").fetchone()[0]
        return stale, made
    finally:
        conn.close()


def assert_done_runs_really_finished(store: Store, tokenizer: Tokenizer, sid: str) -> None:
    """A ``done`` full pass leaves nothing eligible (nothing else writes these sessions)."""
    if any(r.status == "done" for r in store.runs.of_session(sid)):
        assert extractive_runner(store, tokenizer).plan_leaf(sid) == []
        assert plan_condense(store.dag.spans(sid), SMALL.condense_fanout) == []


def test_twenty_random_sigkills_over_one_full_pass(
    tmp_path: Path, tokenizer: Tokenizer, env: dict[str, str]
) -> None:
    # one model call per summary, so the floors below (calls made ⇒ summaries committed) hold; a
    # summary in notes makes a call per part and is written once after its last, like any other
    cfg = Path(env["HIERMEM_CONFIG"])
    cfg.write_text('summary_format = "plain"\n' + cfg.read_text(encoding="utf-8"), encoding="utf-8")
    db = tmp_path / "kills.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        for sid in SESSIONS:
            add_episodes(store, sid, 0, EPISODES)
        episodes = {sid: {e.seq: (e.role, e.content, e.created_at) for e in store.episodes.each(sid)}
                    for sid in SESSIONS}
    digest = episode_digest(db)
    kills = plan_kills(random.Random(SEED))
    known: dict[str, set[str]] = {sid: set() for sid in SESSIONS}
    interrupted: set[str] = set()
    log: list[str] = []

    with FakeOllama() as fake:
        fake.script(*[Reply("Date parsing fix for the logslice importer.", latency_s=LATENCY_S) for _ in range(600)])
        for kill in kills:
            chats0 = len(fake.chat_requests)
            _, made0 = state_after_kill(db)
            runs0 = count(db, "SELECT count(*) FROM runs")
            briefs0 = count(db, "SELECT count(*) FROM briefs")
            proc = subprocess.Popen(compact_all_cmd(db, fake.url), env=env, cwd=tmp_path,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                if kill.phase == "start":
                    wait_alive(proc, kill, rows_reach(db, "SELECT count(*) FROM runs", runs0 + 1))
                elif kill.phase == "call":
                    wait_alive(proc, kill, chat_arrived(fake, chats0 + kill.target))
                elif kill.phase == "reply":
                    wait_alive(proc, kill, chat_answered(fake, chats0 + kill.target))
                else:
                    wait_alive(proc, kill, rows_reach(db, "SELECT count(*) FROM summaries", made0 + kill.target))
                end = time.monotonic() + kill.delay_s
                while time.monotonic() < end:  # busy-wait: sub-millisecond placement inside the window
                    pass
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL, f"{kill}: exited by itself with {proc.returncode}"

            stale, made1 = state_after_kill(db)
            made, chats = made1 - made0, len(fake.chat_requests) - chats0
            made += count(db, "SELECT count(*) FROM briefs") - briefs0  # a session's brief is a call too
            assert len(stale) <= 1, f"{kill}: several runs left running {stale}"
            assert made <= chats, f"{kill}: {made} summaries from {chats} model calls"
            floor = {"start": 0, "call": kill.target - 1, "reply": kill.target - 1, "commit": kill.target}
            assert made >= floor[kill.phase], f"{kill}: only {made} summaries committed"
            assert episode_digest(db) == digest, f"{kill}: an episode changed"

            with Store.open(db, tokenizer=tokenizer) as store:  # the next open marks the stale run
                for rid in stale:
                    run = store.runs.get(rid)
                    assert run is not None and run.status == "interrupted" and run.error, f"{kill}: {run}"
                    assert run.finished_at is not None
                interrupted.update(stale)
                where = [f"{r.session_id}/{r.summaries_created}" for r in map(store.runs.get, stale) if r]
                for sid in SESSIONS:
                    check_invariants(store, sid, fresh_tail=SMALL.fresh_tail, episodes=episodes[sid],
                                     known_summaries=known[sid], allow_running=False)
                    assert_done_runs_really_finished(store, tokenizer, sid)
                    known[sid] = {s.id for s in store.dag.summaries(sid, status=None)}
            log.append(f"{kill}: {chats} calls, {made} summaries, interrupted run (session/made): {where}")

        assert sum(map(len, known.values())) < 3 * 95, "the pass finished before the last kill"
        assert len(interrupted) >= KILLS // 2, "most kills should catch a run in progress:\n" + "\n".join(log)
        rerun = subprocess.run(compact_all_cmd(db, fake.url), env=env, cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stderr == ""
    results = json.loads(rerun.stdout)
    assert results and all(r["status"] == "done" and r["tiers"]["fallback"] == 0 for r in results)
    assert episode_digest(db) == digest
    with Store.open(db, tokenizer=tokenizer) as store:
        statuses: dict[str, str] = {}
        for sid in SESSIONS:
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail, episodes=episodes[sid],
                             known_summaries=known[sid], allow_running=False)
            assert extractive_runner(store, tokenizer).plan_leaf(sid) == []  # resumed and finished
            assert plan_condense(store.dag.spans(sid), SMALL.condense_fanout) == []
            assert {s.id for s in store.dag.summaries(sid, status=None)} >= known[sid]
            statuses.update((r.id, r.status) for r in store.runs.of_session(sid))
            assert any(r.status == "done" for r in store.runs.of_session(sid))
    assert {rid for rid, st in statuses.items() if st == "interrupted"} == interrupted
    assert set(statuses.values()) <= {"interrupted", "done"}
    print("\n".join(log))  # shown with -s / -rP: where the 20 kills landed
