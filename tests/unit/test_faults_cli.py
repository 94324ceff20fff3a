"""Ollama faults end to end through ``hiermem-tui compact`` (ARCHITECTURE §4, §6).

test_runner.py shows each fault at the Runner; test_cli_compact.py shows the CLI contracts
with a closed port (``--session``), a missing model (its name in the message) and dropped
connections. This file covers what is left, through the command line: a server down for
``--all`` via ``$OLLAMA_HOST``, a server that dies mid-run, HTTP 500s, a hang past
``timeout_s``, empty answers, answers longer than the input, answers that continue the chat,
and a missing model whose message lists what is installed. Every test reads the tier counts
from ``compact --json`` *and* from the file, and checks every invariant.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.summarize.prompts import AGGRESSIVE_TEMPERATURE, TITLE_TEMPERATURE
from hiermem_tui.summarize.keylines import split
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.backend_status import probe_backend
from tests.fakeollama import (Fail, FakeOllama, Hang, Reply, closed_port_url, continues_chat, empty, longer_than_input,
                             not_ollama_server)

from ._engine_fixtures import SMALL, add_episodes, small_policy_env  # noqa: F401 (a fixture)
from ._invariants import check_invariants
from .test_cli_compact import RUN_KEYS, ROOT, cli, one_error_line
from .test_crash import count, wait_until

MODEL = ["--model", "llama3.2"]


def model(content: str) -> str:
    """What the model wrote of a stored summary (the chat's key lines follow it)."""
    return split(content)[0]


def leaf(name: str) -> str:
    """A scripted leaf text long enough that two of them outweigh the fake's default answer,
    so condensing them is a normal-tier summary and the tier counts below stay exact."""
    return f"LEAF {name}: the user described the failing build and the assistant proposed a concrete fix."


@pytest.fixture(autouse=True)
def config(small_policy_env: Path) -> Path:
    """SMALL policy for every CLI run in this module."""
    return small_policy_env


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    """Two sessions with work to do (about 16 summaries each under SMALL)."""
    path = tmp_path / "faults.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "a", 0, 30)
        add_episodes(store, "b", 0, 30)
    return path


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:0.5b")) as server:
        yield server


def compact(db: Path, url: str, *extra: str) -> tuple[int, dict, str]:
    """``compact --session a --json`` against ``url``: (exit code, the run object, stderr)."""
    code, out, err = cli(*extra, "compact", "--db", str(db), "--session", "a", "--ollama-host", url, *MODEL, "--json")
    obj = json.loads(out)
    assert isinstance(obj, dict) and set(obj) == RUN_KEYS, out
    return code, obj, err


def stored(db: Path, tokenizer: Tokenizer, obj: dict) -> list:
    """The run's leaves in order, after checking its counters in the file against the JSON."""
    with Store.open(db, tokenizer=tokenizer) as store:
        run = store.runs.get(obj["run_id"])
        assert run is not None and run.status == obj["status"] and run.tiers == obj["tiers"]
        mine = [s for s in store.dag.summaries(obj["session"], status=None) if s.run_id == run.id]
        assert len(mine) == run.summaries_created == obj["summaries_created"]
        assert {t: sum(s.tier == t for s in mine) for t in ("normal", "aggressive", "fallback")} == obj["tiers"]
        session = store.sessions.get(obj["session"])
        assert session is not None and session.fallbacks == obj["tiers"]["fallback"]
        for sid in ("a", "b"):
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail, allow_running=False)
        return [s for s in mine if s.depth == 0]


def sessions_json(db: Path) -> dict[str, dict]:
    code, out, err = cli("sessions", "--db", str(db), "--json")
    assert code == 0, err
    return {s["id"]: s for s in json.loads(out)}


# ---------------------------------------------------------------- server not there / going away
def test_down_at_start_via_ollama_host_env_records_nothing(
    db: Path, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = closed_port_url()
    monkeypatch.setenv("OLLAMA_HOST", url)  # no --ollama-host: the environment is honoured
    code, out, err = cli("compact", "--db", str(db), "--all", *MODEL, "--json")
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert "not reachable" in line and url.rsplit(":", 1)[1] in line
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.runs.of_session("a") == store.runs.of_session("b") == []
        assert store.db.conn.execute("SELECT count(*) FROM summaries").fetchone()[0] == 0
    assert all(s["summaries"] == 0 and s["fallbacks"] == 0 for s in sessions_json(db).values())


@pytest.mark.parametrize("command", ["compact"])
def test_a_web_server_that_is_not_ollama_is_one_line_and_exit_1(
    db: Path, tmp_path: Path, tokenizer: Tokenizer, command: str
) -> None:
    """Issue 21 item 3: `python3 -m http.server` on the host gave a traceback (ModelError, <!DOCTYPE HTML>)."""
    (tmp_path / "www").mkdir()
    with not_ollama_server(tmp_path / "www") as url:
        code, out, err = cli(command, "--db", str(db), "--all", "--ollama-host", url, *MODEL, "--json")
        status = asyncio.run(probe_backend(url))
    assert code == 1 and out == ""
    line = one_error_line(err)
    assert line.startswith(f"hiermem-tui: {url} is not an Ollama server (HTTP 404 on /api/tags)"), line
    assert "DOCTYPE" not in line
    assert not status.reachable and status.describe() == f"{url} is not an Ollama server (HTTP 404 on /api/version)"
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.runs.of_session("a") == []


def test_server_dying_mid_run_fails_the_run_keeps_its_work_and_stops_the_job(
    db: Path, config: Path, tokenizer: Tokenizer
) -> None:
    env = dict(os.environ, HIERMEM_CONFIG=str(config), PYTHONPATH=str(ROOT))
    with FakeOllama() as fake:
        fake.script(*[Reply("A short summary of this part.", latency_s=0.05) for _ in range(100)])
        proc = subprocess.Popen(
            [sys.executable, "-m", "hiermem_tui.cli", "compact", "--db", str(db), "--all",
             "--ollama-host", fake.url, *MODEL, "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            wait_until(lambda: count(db, "SELECT count(*) FROM summaries") >= 2)
            fake.stop()  # mid-call: the in-flight request is cut, then connections are refused
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 1, err
    runs = json.loads(out)
    first = runs[0]["session"]  # the backlog's order: newest activity first
    other = ({"a", "b"} - {first}).pop()
    assert [(r["session"], r["status"]) for r in runs] == [(first, "failed")]  # the other never started
    assert runs[0]["summaries_created"] >= 2 and runs[0]["tiers"]["fallback"] == 0
    line = one_error_line(err)
    assert line.startswith(f"hiermem-tui: session {first}:") and "not reachable" in line and "3 failed attempts" in line
    stored(db, tokenizer, runs[0])
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.runs.of_session(other) == []
        assert store.runs.get(runs[0]["run_id"]).error  # type: ignore[union-attr]
        assert store.db.conn.execute("SELECT count(*) FROM summaries WHERE tier = 'fallback'").fetchone()[0] == 0
    assert sessions_json(db)[first]["summaries"] >= 2


# ---------------------------------------------------------------- model misbehaving: the tiers
def test_http_500_retries_the_same_call_once_then_goes_to_the_next_tier(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    """Issue 21 item 10: a 500 (a crashed runner, often transient) went straight to the aggressive tier;
    the same call is now made once more first, with the same prompt (the server's cache serves it)."""
    fake.script(
        Fail(), Reply(leaf("ONE")),                      # leaf 1: 500, the same call again → normal
        Reply(leaf("TWO")),                                         # leaf 2: normal
        Fail(500, "CUDA error: out of memory"), Fail(),             # leaf 3: normal twice 500 →
        Fail(), Fail(),                                             #   aggressive twice 500 → fallback
        Fail(503, "server busy"), Reply(leaf("FOUR")),     # leaf 4: 503, again → normal
    )
    code, obj, err = compact(db, fake.url)
    assert code == 0 and err == "" and obj["status"] == "done"
    assert obj["tiers"]["aggressive"] == 0 and obj["tiers"]["fallback"] == 1
    assert obj["tiers"]["normal"] == obj["summaries_created"] - 1
    leaves = stored(db, tokenizer, obj)
    assert [s.tier for s in leaves[:4]] == ["normal", "normal", "fallback", "normal"]
    assert [model(leaves[0].content), model(leaves[3].content)] == [leaf("ONE"), leaf("FOUR")]
    assert leaves[2].backend == "extractive" and leaves[2].model is None
    bodies = fake.chat_bodies
    temps = [b["options"]["temperature"] for b in bodies[:9]]
    normal, aggressive = TITLE_TEMPERATURE, AGGRESSIVE_TEMPERATURE  # notes: a title per part, asked greedily
    assert temps == [normal] * 5 + [aggressive] * 2 + [normal] * 2
    for first, again in ((0, 1), (3, 4), (5, 6), (7, 8)):  # each retry is the very same request
        assert bodies[again]["messages"] == bodies[first]["messages"]
        assert bodies[again]["options"] == bodies[first]["options"]
    assert sessions_json(db)["a"]["fallbacks"] == 1


def test_a_hang_past_timeout_moves_that_summary_to_the_next_tier(
    db: Path, config: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    cfg = config.parent / "timeout.toml"
    cfg.write_text("timeout_s = 1.0\n" + config.read_text(), encoding="utf-8")
    with Store.open(db, tokenizer=tokenizer) as store:  # earlier runs measured this model as fast
        store.speeds.add("ollama", "llama3.2:latest", ModelSpeed(4, 4000, 0.01, 400, 0.01))
    fake.script(
        Hang(), Reply(leaf("ONE")),            # leaf 1: no byte for 1 s
        Reply(leaf("TWO")),
        Hang(after_chunks=2), Reply(leaf("THREE")),   # leaf 3: stalls mid-answer
    )
    code, obj, err = compact(db, fake.url, "--config", str(cfg))
    assert code == 0 and err == "" and obj["status"] == "done"
    assert obj["tiers"]["aggressive"] == 2 and obj["tiers"]["fallback"] == 0
    assert obj["llm_seconds"] >= 2.0 and obj["wall_seconds"] >= obj["llm_seconds"] * 0.9
    hung = [fake.chat_requests[0], fake.chat_requests[3]]
    assert all(r.disconnected.wait(5) for r in hung), "the timed-out requests were not abandoned"
    leaves = stored(db, tokenizer, obj)
    assert [(s.tier, model(s.content)) for s in leaves[:3]] == [
        ("aggressive", leaf("ONE")), ("normal", leaf("TWO")),
        ("aggressive", leaf("THREE")),
    ]
    assert leaves[0].llm_seconds >= 1.0


def test_empty_answers_go_to_the_aggressive_tier(db: Path, fake: FakeOllama, tokenizer: Tokenizer) -> None:
    fake.script(empty(), Reply(leaf("ONE")), Reply(" \n\t "), Reply(leaf("TWO")))
    code, obj, _ = compact(db, fake.url)
    assert code == 0 and obj["status"] == "done"
    assert obj["tiers"] == {"normal": obj["summaries_created"] - 2, "aggressive": 2, "fallback": 0}
    leaves = stored(db, tokenizer, obj)
    assert [(s.tier, model(s.content)) for s in leaves[:2]] == [("aggressive", leaf("ONE")), ("aggressive", leaf("TWO"))]


def test_answers_longer_than_the_input_go_to_the_aggressive_tier(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    """An answer longer than its input is the prompt echoed back (a server ignoring num_predict):
    rejected for what it says, not for its length."""
    fake.script(longer_than_input(), Reply(leaf("ONE")), longer_than_input(), longer_than_input())
    code, obj, _ = compact(db, fake.url)
    assert code == 0 and obj["status"] == "done"
    assert obj["tiers"] == {"normal": obj["summaries_created"] - 2, "aggressive": 1, "fallback": 1}
    assert obj["rejections"] == {"echo": 3}
    leaves = stored(db, tokenizer, obj)
    assert (leaves[0].tier, model(leaves[0].content)) == ("aggressive", leaf("ONE"))
    # leaf 2: both answers are the prompt echoed back (cut at the cap): not a summary
    assert leaves[1].tier == "fallback" and leaves[1].backend == "extractive"
    assert [r["reason"] for r in leaves[1].rejections] == ["echo", "echo"]
    assert leaves[1].tokens < leaves[1].source_tokens


def test_answers_that_continue_the_chat_are_rejected_and_odd_text_is_stored_literally(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    """A chat reply is not a summary (rejected, reason kept); a summary with markup, escapes
    and HTML in it is kept as text, byte for byte."""
    odd = 'Ran [b]x[/b] \x1b[31mr\x1b[0m <i>.'  # within the aggressive target
    fake.script(continues_chat(), Reply(odd))
    code, obj, _ = compact(db, fake.url)
    assert code == 0 and obj["status"] == "done" and obj["tiers"]["aggressive"] == 1
    assert obj["rejections"] == {"continues_chat": 1}
    leaves = stored(db, tokenizer, obj)
    assert (leaves[0].tier, model(leaves[0].content)) == ("aggressive", odd)
    assert leaves[0].rejections[0]["reason"] == "continues_chat" and "Sure" in leaves[0].rejections[0]["detail"]
    code, out, _ = cli("export", "--db", str(db), "--session", "a", "--format", "json")
    exported = {s["id"]: s["content"] for s in json.loads(out)["summaries"]}
    assert code == 0 and exported[leaves[0].id] == leaves[0].content and model(exported[leaves[0].id]) == odd


# ---------------------------------------------------------------- model not there
def test_missing_model_is_one_line_listing_installed_models(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    code, out, err = cli("compact", "--db", str(db), "--all", "--ollama-host", fake.url, "--model", "nope:1b", "--json")
    line = one_error_line(err)
    assert code == 1 and out == ""
    assert "nope:1b" in line and "llama3.2:latest" in line and "qwen2.5:0.5b" in line
    code, out, err = cli("compact", "--db", str(db), "--all", "--ollama-host", fake.url, "--json")  # none loaded
    line = one_error_line(err)
    assert code == 1 and out == ""
    assert "no model chosen" in line and "llama3.2:latest" in line and "qwen2.5:0.5b" in line
    assert fake.chat_requests == []
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.runs.of_session("a") == store.runs.of_session("b") == []
    fake.loaded.append("qwen2.5:0.5b")  # now Ollama has one loaded: it is the default
    code, out, err = cli("compact", "--db", str(db), "--session", "a", "--ollama-host", fake.url, "--json")
    obj = json.loads(out)
    assert code == 0 and obj["status"] == "done", err
    assert {b["model"] for b in fake.chat_bodies} == {"qwen2.5:0.5b"}
    assert all(s.model == "qwen2.5:0.5b" for s in stored(db, tokenizer, obj))


def test_compact_all_json_writes_each_run_as_it_finishes_and_stays_one_array(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    """Issue 21 item 13: `compact --all --json` printed nothing until every run was done (five minutes
    of silence on a big file). Each run's object now comes the moment its run finishes."""
    code, out, err = cli("compact", "--db", str(db), "--all", "--pass", "leaf", "--dry-run", "--json", *MODEL)
    assert code == 0, err
    first, second = json.loads(out)
    calls = len(first["planned"])
    fake.script(*[Reply(leaf(str(i))) for i in range(calls)], Hang())  # the second session's first call waits
    proc = subprocess.Popen(
        [sys.executable, "-m", "hiermem_tui.cli", "compact", "--db", str(db), "--all", "--pass", "leaf",
         "--ollama-host", fake.url, *MODEL, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=os.environ.copy())
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        fake.wait_for_chats(calls + 1, timeout=60)  # the second run is under way, held by the fake
        head = [lines.get(timeout=30), lines.get(timeout=30)]  # the first run's object, written already
        assert head[0] == "[\n"
        run = json.loads(head[1])
        assert set(run) == RUN_KEYS and run["session"] == first["session"] and run["status"] == "done"
        assert proc.poll() is None  # still going
        fake.release()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=30)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    whole = json.loads("".join(head + rest))
    assert [r["session"] for r in whole] == [first["session"], second["session"]]
    assert all(r["status"] == "done" for r in whole)
