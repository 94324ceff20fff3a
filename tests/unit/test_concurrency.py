"""Invariant 7 with three real processes on one file: a compaction run writing, an importer
appending episodes (``hiermem-tui import`` of a growing native JSONL file, several times) and
a reader listing and exporting in a loop. No process may see an error (``database is
locked`` or any other), nothing appended may be lost, a live run must not be taken for a
dead one, and the next pass must pick up everything that arrived.

Synchronisation is by observable events only: import rounds start when the fake server has
seen a given number of model calls, and the run is held open by a hanging model call until
the imports are done, so every import provably overlaps the run.

The last test documents a bug found here: an export taken while a run commits can contradict
itself (``export_json`` reads in one read transaction).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, Reply

from ._engine_fixtures import SMALL, T0, add_episodes, episode_text, extractive_runner
from ._invariants import check_invariants

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "hiermem_tui.cli"]
# leaf_min_episodes = 1: a pass leaves exactly the fresh tail raw, so "nothing left behind" is exact
POLICY = {**{k: getattr(SMALL, k) for k in SMALL.__dataclass_fields__}, "leaf_min_episodes": 1}
FIRST = {f"chat-{i}": 60 for i in range(4)}  # the sessions in the file at the start
ROUNDS = 5
GROW = 12  # episodes appended to every first session per round
NEW = 10  # episodes of the new session each round adds
GATE = 120  # the model call that hangs until the imports are done (the first pass makes ~270)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[policy]\n" + "".join(f"{k} = {v}\n" for k, v in POLICY.items()), encoding="utf-8")
    e = dict(os.environ, HIERMEM_CONFIG=str(cfg), PYTHONPATH=str(ROOT))
    e.pop("OLLAMA_HOST", None)
    return e


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        server.script(*[Reply("Date parsing fix for the logslice importer.", latency_s=0.05) for _ in range(GATE)], Hang())
        yield server


class JsonlSource:
    """The growing native JSONL file another tool keeps writing, and what it holds per session."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sessions: dict[str, list[str]] = {}

    def append(self, session_id: str, count: int) -> None:
        have = self.sessions.setdefault(session_id, [])
        with self.path.open("a", encoding="utf-8") as fh:
            for i in range(len(have), len(have) + count):
                text = episode_text(session_id, i)
                when = (T0 + timedelta(minutes=2 * i)).isoformat().replace("+00:00", "Z")
                fh.write(json.dumps({"session": session_id, "title": f"Chat {session_id}", "role":
                                     ("user", "assistant")[i % 2], "content": text, "created_at": when}) + "\n")
                have.append(text)


def run_cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


@dataclass
class Reader:
    """Lists and exports in a loop until told to stop; keeps every problem it saw."""

    db: Path
    env: dict[str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    reads: int = 0
    problems: list[str] = field(default_factory=list)
    progress: threading.Condition = field(default_factory=threading.Condition)

    def run(self) -> None:
        turn = 0
        while not self.stop.is_set():
            listing = run_cli(self.env, "sessions", "--db", str(self.db), "--json")
            if self._bad("sessions", listing):
                continue
            ids = [s["id"] for s in json.loads(listing.stdout)]
            sid = ids[turn % len(ids)]
            turn += 1
            exported = run_cli(self.env, "export", "--db", str(self.db), "--session", sid, "--format", "json")
            if self._bad(f"export {sid}", exported):
                continue
            with self.progress:
                self.reads += 1
                self.progress.notify_all()

    def _bad(self, what: str, proc: subprocess.CompletedProcess[str]) -> bool:
        if proc.returncode != 0 or proc.stderr:
            self.problems.append(f"{what}: exit {proc.returncode}: {proc.stderr.strip()}")
            return True
        try:
            json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            self.problems.append(f"{what}: not JSON ({exc})")
            return True
        return False

    def wait_reads(self, n: int, timeout: float = 60) -> None:
        with self.progress:
            if not self.progress.wait_for(lambda: self.reads >= n or bool(self.problems), timeout):
                raise TimeoutError(f"the reader managed {self.reads} reads")


def test_import_and_reads_during_a_run_lose_nothing(
    tmp_path: Path, tokenizer: Tokenizer, env: dict[str, str], fake: FakeOllama
) -> None:
    db = tmp_path / "shared.db"
    source = JsonlSource(tmp_path / "history.jsonl")
    for sid, n in FIRST.items():
        source.append(sid, n)
    first = run_cli(env, "import", "--db", str(db), str(source.path))
    assert first.returncode == 0 and first.stderr == "", first.stderr

    compaction = subprocess.Popen([*CLI, "compact", "--db", str(db), "--all", "--ollama-host", fake.url,
                                   "--model", "llama3.2", "--json"],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader = Reader(db, env)
    thread = threading.Thread(target=reader.run, name="reader")
    try:
        thread.start()
        during: list[int] = []  # model calls (each then a commit) made while each import ran
        for r in range(ROUNDS):
            fake.wait_for_chats(2 + 10 * r, timeout=60)  # the run is writing summaries
            assert compaction.poll() is None, "the run ended before the imports"
            before = sum(map(len, source.sessions.values()))
            for sid in FIRST:
                source.append(sid, GROW)
            source.append(f"new-{r}", NEW)
            added = sum(map(len, source.sessions.values())) - before
            calls = len(fake.chat_requests)
            imp = run_cli(env, "import", "--db", str(db), str(source.path))
            during.append(len(fake.chat_requests) - calls)
            assert imp.returncode == 0 and imp.stderr == "", imp.stderr
            assert f"{added} episode(s) added" in imp.stdout, imp.stdout
        reader.wait_reads(reader.reads + 2)  # reads overlapping the run, after the last import
        assert compaction.poll() is None, "the run ended before the reads"
        fake.wait_for_chats(GATE + 1, timeout=60)  # the run is held by the hanging call …
        fake.release()  # … until now
        out, err = compaction.communicate(timeout=120)
    finally:
        reader.stop.set()
        thread.join(timeout=120)
        if compaction.poll() is None:
            compaction.kill()
            compaction.wait()
    assert compaction.returncode == 0 and err == "", err
    runs = json.loads(out)
    assert runs and all(r["status"] == "done" for r in runs)
    assert reader.problems == [] and reader.reads >= 3
    assert any(during), f"no import overlapped a summary being made: {during}"

    with Store.open(db, tokenizer=tokenizer) as store:
        assert {s.id: s.episodes for s in store.sessions.each()} == {k: len(v) for k, v in source.sessions.items()}
        for sid, texts in source.sessions.items():
            assert [e.content for e in store.episodes.each(sid)] == texts  # in order, none lost
        statuses = {r.status for sid in source.sessions for r in store.runs.of_session(sid)}
        assert statuses == {"done"}  # the concurrent opens did not take the live run for a dead one
        limit = {sid: len(texts) - SMALL.fresh_tail for sid, texts in source.sessions.items()}
        pending = {sid for sid in source.sessions if any(a < limit[sid] for a, _ in store.dag.unsummarised_ranges(sid))}
    # the backlog's first run was planned before the first import: its new episodes wait
    assert runs[0]["session"] in pending

    again = run_cli(env, "compact", "--db", str(db), "--all", "--ollama-host", fake.url, "--model", "llama3.2",
                    "--json")
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert {r["session"] for r in json.loads(again.stdout)} == pending
    listing = {s["id"]: s for s in json.loads(run_cli(env, "sessions", "--db", str(db), "--json").stdout)}
    with Store.open(db, tokenizer=tokenizer) as store:
        for sid, texts in source.sessions.items():
            n = len(texts)
            assert store.dag.unsummarised_ranges(sid) == [(n - SMALL.fresh_tail, n - 1)], sid  # only the fresh tail
            assert listing[sid]["covered_episodes"] == n - SMALL.fresh_tail
            episodes = {e.seq: (e.role, e.content, e.created_at) for e in store.episodes.each(sid)}
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail, episodes=episodes, allow_running=False)
    print(f"{reader.reads} list+export reads during the run; model calls during each import: {during}")


def torn(doc: dict) -> list[str]:
    """How an export fails to describe one state of its session (empty: it is one snapshot)."""
    eps = {e["id"] for e in doc["episodes"]}
    summaries = {s["id"]: s for s in doc["summaries"]}
    out = []
    if doc["session"]["episodes"] != len(eps):
        out.append(f"head says {doc['session']['episodes']} episodes, {len(eps)} listed")
    for s in summaries.values():
        if not set(s["sources"]) <= (eps if s["kind"] == "leaf" else set(summaries)):
            out.append(f"summary {s['id']} has sources missing from the export")
    for run in doc["runs"]:
        listed = sum(s["run_id"] == run["id"] for s in summaries.values())
        if listed != run["summaries_created"]:
            out.append(f"run {run['id']} says {run['summaries_created']} summaries, {listed} listed")
    return out


def test_an_export_taken_while_a_run_writes_is_one_snapshot(db_path: Path, tokenizer: Tokenizer) -> None:
    """Not lost data, but an export that contradicts itself (a run claiming summaries the export
    does not list) misleads whoever reads it. The writer is a thread with its own connection:
    for SQLite that is the same as another process."""
    with Store.open(db_path, tokenizer=tokenizer) as setup:
        add_episodes(setup, "s", 0, 40)
    stop = threading.Event()
    failure: list[BaseException] = []

    def writer() -> None:
        with Store.open(db_path, tokenizer=tokenizer) as store:
            n = 40
            try:
                while not stop.is_set() and n < 4000:
                    add_episodes(store, "s", n, 4)
                    n += 4
                    asyncio.run(extractive_runner(store, tokenizer).compact("s", "full"))
            except BaseException as exc:  # reported by the test below
                failure.append(exc)

    thread = threading.Thread(target=writer, name="writer")
    thread.start()
    problems: list[str] = []
    try:
        deadline = time.monotonic() + 8
        while not problems and time.monotonic() < deadline:
            out, err = io.StringIO(), io.StringIO()
            assert main(["export", "--db", str(db_path), "--session", "s"], stdout=out, stderr=err) == 0, err.getvalue()
            problems = torn(json.loads(out.getvalue()))
    finally:
        stop.set()
        thread.join(timeout=60)
    assert failure == []
    assert problems == []
