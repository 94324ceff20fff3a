"""``hiermem-tui watch`` end to end: in-process ``--once`` runs for the contracts (log lines,
JSON lines, exit codes, one-line errors), and a real ``hiermem-tui watch`` process that a test
feeds, whose Ollama is down then up, and which gets Ctrl-C in the middle of a run or an import.
Synchronisation is on the process's log lines and on the file, each with a deadline.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, closed_port_url, free_port

from ._engine_fixtures import SMALL, episode_text, small_policy_env  # noqa: F401 (a fixture)
from ._invariants import check_invariants
from .test_cli_compact import RUN_KEYS, ROOT, cli, one_error_line

LINE = re.compile(r"^\d\d:\d\d:\d\d ")


@pytest.fixture(autouse=True)
def config(small_policy_env: Path) -> Path:
    """SMALL policy (fresh tail 4, so the default trigger is 12 new episodes)."""
    return small_policy_env


def chat_lines(session: str, start: int, count: int, title: str = "") -> str:
    out = []
    for i in range(start, start + count):
        rec = {"session": session, "role": "user" if i % 2 == 0 else "assistant", "content": episode_text(session, i)}
        if title and i == start:
            rec["title"] = title
        out.append(json.dumps(rec) + "\n")
    return "".join(out)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "big.jsonl").write_text(chat_lines("big", 0, 30, "Big one"))
    (folder / "tiny.jsonl").write_text(chat_lines("tiny", 0, 3))
    return folder


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- --once, in process
def test_once_imports_then_compacts_what_is_due(tmp_path: Path, logs: Path, tokenizer: Tokenizer) -> None:
    db = tmp_path / "w.db"
    code, out, err = cli("watch", "--db", str(db), str(logs), "--once", "--backend", "extractive")
    assert code == 0, err
    lines = out.splitlines()
    assert all(LINE.match(line) for line in lines), out
    text = [line[9:] for line in lines]
    assert text[0] == ("watching 2 files in 1 folder (once); "
                       "compacting sessions with 12+ new episodes (full pass, extractive)")
    assert f"imported 30 episodes into session big (new session) from {logs / 'big.jsonl'} [jsonl]" in text
    assert f"imported 3 episodes into session tiny (new session) from {logs / 'tiny.jsonl'} [jsonl]" in text
    done = [t for t in text if t.startswith("compacted ")]
    assert len(done) == 1 and done[0].startswith("compacted big: done — ")  # tiny is under the trigger
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.sessions.get("big").summaries > 0 and store.sessions.get("tiny").summaries == 0
        assert store.sessions.get("big").title == "Big one"
        check_invariants(store, "big", fresh_tail=SMALL.fresh_tail, allow_running=False)
    code, out, _ = cli("watch", "--db", str(db), str(logs), "--once", "--backend", "extractive")
    assert code == 0 and [line[9:] for line in out.splitlines()][1:] == []  # nothing new, nothing due


def test_once_json_lines(tmp_path: Path, logs: Path) -> None:
    (logs / "tiny.jsonl").open("a").write('{"broken\n')
    code, out, err = cli("watch", "--db", str(tmp_path / "w.db"), str(logs), "--once", "--backend", "extractive",
                         "--min-new", "2", "--json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0] == {"event": "watching", "files": 2, "folders": 1}
    imported = {e["session"]: e for e in events if e["event"] == "imported"}
    assert imported["big"]["episodes"] == 30 and imported["big"]["new_session"] is True
    assert imported["tiny"]["format"] == "jsonl" and imported["tiny"]["file"] == str(logs / "tiny.jsonl")
    assert [e for e in events if e["event"] == "skipped"] == [
        {"event": "skipped", "file": str(logs / "tiny.jsonl"), "records": 1, "reasons": {"not valid JSON": 1}}]
    runs = [e for e in events if e["event"] == "compacted"]
    assert {r["session"] for r in runs} == {"big", "tiny"}  # tiny: 3 episodes, all fresh tail: its brief only
    assert set(runs[0]) == RUN_KEYS | {"event"} and runs[0]["status"] == "done"


def test_no_compact_only_imports(tmp_path: Path, logs: Path) -> None:
    db = tmp_path / "w.db"
    code, out, _ = cli("watch", "--db", str(db), str(logs), "--once", "--no-compact")
    assert code == 0 and "importing only (--no-compact)" in out and "compacted" not in out
    code, out, _ = cli("sessions", "--db", str(db), "--json")
    assert {s["id"]: (s["episodes"], s["summaries"]) for s in json.loads(out)} == {"big": (30, 0), "tiny": (3, 0)}


@pytest.mark.parametrize("argv, needle", [
    (["watch", "{tmp}/nowhere"], "does not exist"),
    (["watch", "{tmp}/notes.txt"], "cannot tell what format"),
    (["watch", "{tmp}", "--no-compact", "--min-new", "3"], "--no-compact cannot be combined"),
    (["watch", "{tmp}", "--interval", "0"], "--interval"),
    (["watch", "{tmp}", "--settle", "soon"], "--settle"),
])
def test_bad_usage_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], needle: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes, no chat here\n")
    os.utime(notes, (time.time() - 3600, time.time() - 3600))  # quiet: judged now, not waited for
    code, _, err = cli(*[a.format(tmp=tmp_path) for a in argv], "--db", str(tmp_path / "w.db"))
    assert code == 2 and needle in one_error_line(err)


def test_ollama_down_keeps_the_imports_and_says_so_once(tmp_path: Path, logs: Path, tokenizer: Tokenizer) -> None:
    db = tmp_path / "w.db"
    url = closed_port_url()
    code, out, err = cli("watch", "--db", str(db), str(logs), "--once", "--ollama-host", url, "--model", "llama3.2")
    assert code == 1 and "Traceback" not in err
    postponed = [line[9:] for line in out.splitlines() if "postponed" in line]
    assert len(postponed) == 1 and "not reachable" in postponed[0] and postponed[0].endswith("trying again in 5s")
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.sessions.get("big").episodes == 30 and store.runs.of_session("big") == []


# ---------------------------------------------------------------- a real process
class Proc:
    """A ``hiermem-tui watch`` child whose stdout lines are collected by a thread."""

    def __init__(self, argv: list[str], config: Path) -> None:
        env = dict(os.environ, HIERMEM_CONFIG=str(config), PYTHONPATH=str(ROOT))
        self.p = subprocess.Popen([sys.executable, "-m", "hiermem_tui.cli", "watch", *argv], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_line(self, pattern: str, timeout: float = 60.0) -> str:
        """The next log line matching ``pattern`` (a regex, searched), within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} within {timeout}s; saw {self.seen}") from None
            self.seen.append(line)
            if re.search(pattern, line):
                return line

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C; then the exit code and stderr, with every stdout line collected in ``seen``."""
        self.p.send_signal(signal.SIGINT)
        assert self.p.stderr is not None
        code = self.p.wait(timeout=60)  # stderr holds a few lines at most: it cannot fill its pipe
        err = self.p.stderr.read()
        self.reader.join(timeout=60)  # stdout is read by the thread alone, to its end
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code, err

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


@pytest.fixture
def proc_factory(config: Path) -> Iterator[list[Proc]]:
    made: list[Proc] = []
    yield made
    for p in made:
        p.kill()


def test_a_live_watcher_waits_out_a_dead_ollama_then_stops_cleanly_mid_run(
    tmp_path: Path, config: Path, tokenizer: Tokenizer, proc_factory: list[Proc]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    db = tmp_path / "w.db"
    port = free_port()  # nothing listens yet: Ollama is down when the watcher starts
    proc = Proc(["--db", str(db), str(folder), "--interval", "0.1", "--ollama-host", f"http://127.0.0.1:{port}",
                 "--model", "llama3.2"], config)
    proc_factory.append(proc)
    proc.wait_line(r"watching 0 files in 1 folder")
    chat = folder / "chat.jsonl"
    chat.write_text(chat_lines("live", 0, 20))
    proc.wait_line(r"imported 20 episodes into session live \(new session\)")
    proc.wait_line(r"compaction postponed: .*not reachable.*trying again in 5s")
    with FakeOllama(port=port) as fake:
        first = proc.wait_line(r"^\S+ compacted live: done")  # retried after the back-off, while still watching
        made = int(re.search(r"done — (\d+) summaries", first).group(1))  # type: ignore[union-attr]
        asked = len(fake.chat_requests)
        fake.script(Hang())
        with chat.open("a") as fh:
            fh.write(chat_lines("live", 20, 20))
        proc.wait_line(r"imported 20 episodes into session live from")
        hung = fake.wait_for_chats(asked + 1, timeout=60)[-1]
        code, err = proc.interrupt()
        assert hung.disconnected.wait(10)  # the model call in flight was aborted
    assert code == 130, err
    assert "Traceback" not in err
    assert any(re.search(r"compacted live: cancelled", line) for line in proc.seen), proc.seen
    assert proc.seen[-1].endswith(f"stopped: 40 episodes imported, {made} summaries written")
    assert integrity(db) == "ok"
    with Store.open(db, tokenizer=tokenizer) as store:
        assert [r.status for r in store.runs.of_session("live")] == ["done", "cancelled"]
        assert store.sessions.get("live").episodes == 40
        check_invariants(store, "live", fresh_tail=SMALL.fresh_tail, allow_running=False)


def test_ctrl_c_during_an_import_leaves_each_file_whole(
    tmp_path: Path, config: Path, tokenizer: Tokenizer, proc_factory: list[Proc]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    files = 120
    for i in range(files):
        (folder / f"c{i:03d}.jsonl").write_text(chat_lines(f"c{i:03d}", 0, 150))
    db = tmp_path / "w.db"
    proc = Proc(["--db", str(db), str(folder), "--no-compact"], config)
    proc_factory.append(proc)
    deadline = time.monotonic() + 60
    while not _count(db, "SELECT count(*) FROM sessions"):  # the first file has landed: the tick goes on
        assert time.monotonic() < deadline and proc.p.poll() is None, "no import within 60 s"
        time.sleep(0.005)
    code, err = proc.interrupt()
    assert code == 130, err
    assert integrity(db) == "ok"
    with Store.open(db, tokenizer=tokenizer) as store:
        counts = [s.episodes for s in store.sessions.each()]
    assert counts and set(counts) == {150}  # every imported file whole, none half
    assert len(counts) < files  # it stopped between files instead of finishing the tick
    assert proc.seen[-1].endswith(f"stopped: {150 * len(counts)} episodes imported, 0 summaries written")


def _count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()
