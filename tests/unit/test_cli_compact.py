"""``compact`` / ``resummarize`` CLI contracts (ARCHITECTURE §6): JSON shapes, exit codes, one-line errors."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import Drop, FakeOllama, Hang, Reply, closed_port_url

from ._engine_fixtures import SMALL, add_episodes, small_policy_env  # noqa: F401 (a fixture)
from ._invariants import check_invariants

RUN_KEYS = {"run_id", "session", "status", "summaries_created", "tiers", "flagged", "llm_seconds", "wall_seconds",
            "rejections"}
ROOT = Path(__file__).resolve().parents[2]


class TtyIO(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def config(small_policy_env: Path) -> Path:
    """SMALL policy for every CLI run in this module."""
    return small_policy_env


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "c.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "big", 0, 40)
        add_episodes(store, "mid", 0, 16)
        add_episodes(store, "tiny", 0, 3)  # all fresh tail: nothing to do
    return path


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def cli(*argv: str, stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def ext(db: Path, *argv: str) -> tuple[int, str, str]:
    return cli(argv[0], "--db", str(db), "--backend", "extractive", *argv[1:])


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------- JSON shapes
def test_one_session_gives_one_object(db: Path) -> None:
    code, out, err = ext(db, "compact", "--session", "big", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert isinstance(obj, dict) and set(obj) == RUN_KEYS
    assert obj["session"] == "big" and obj["status"] == "done" and obj["summaries_created"] > 0
    assert set(obj["tiers"]) == {"normal", "aggressive", "fallback"} and sum(obj["tiers"].values()) == obj["summaries_created"]
    assert isinstance(obj["llm_seconds"], float) and obj["wall_seconds"] >= 0


def test_several_sessions_all_and_triggers_give_arrays(db: Path) -> None:
    code, out, _ = ext(db, "compact", "--session", "big", "mid", "--pass", "leaf", "--json")
    arr = json.loads(out)
    assert code == 0 and [r["session"] for r in arr] == ["big", "mid"] and all(set(r) == RUN_KEYS for r in arr)
    code, out, _ = ext(db, "compact", "--all", "--json")  # only sessions with work get a run
    arr = json.loads(out)
    assert code == 0 and isinstance(arr, list) and "tiny" in {r["session"] for r in arr}  # tiny: its brief
    code, out, _ = ext(db, "compact", "--all", "--json")
    assert code == 0 and json.loads(out) == []  # nothing left: every session summarised and briefed
    code, out, _ = ext(db, "compact", "--session", "big", "--if-over", "999999", "--json")
    assert code == 0 and json.loads(out) == []


def test_named_idle_session_still_reports_a_run(db: Path) -> None:
    code, out, _ = ext(db, "compact", "--session", "tiny", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["status"] == "done" and obj["summaries_created"] == 0


def test_triggers_select_from_aggregates(db: Path, tokenizer: Tokenizer) -> None:
    with Store.open(db, tokenizer=tokenizer) as store:
        big, mid = store.sessions.get("big"), store.sessions.get("mid")
    assert big and mid and big.uncompacted_tokens > mid.uncompacted_tokens
    code, out, _ = ext(db, "compact", "--all", "--if-over", str(mid.uncompacted_tokens), "--json")
    assert code == 0 and [r["session"] for r in json.loads(out)] == ["big"]
    code, out, _ = ext(db, "compact", "--all", "--min-new", "17", "--json")  # big has 40 new, mid 16
    assert code == 0 and [r["session"] for r in json.loads(out)] == []  # big was just compacted
    code, out, _ = ext(db, "compact", "--all", "--min-new", "16", "--pass", "leaf", "--json")
    assert code == 0 and [r["session"] for r in json.loads(out)] == ["mid"]


def test_human_output_and_live_progress_on_a_terminal(db: Path) -> None:
    err = TtyIO()
    code, out, _ = cli("compact", "--db", str(db), "--backend", "extractive", "--session", "big", stderr=err)
    assert code == 0
    assert out.startswith("big: done — ") and "normal" in out and out.count("\n") == 1
    progress = err.getvalue()
    assert "\r[" in progress and "n:" in progress and "leaf #0–" in progress
    assert progress.endswith("\r")  # the bar is wiped before the result line


def test_no_progress_bar_when_not_a_terminal(db: Path) -> None:
    code, _, err = ext(db, "compact", "--session", "big")
    assert code == 0 and err == ""


# ---------------------------------------------------------------- exit codes and errors
def test_unknown_session_is_usage_error(db: Path) -> None:
    code, out, err = ext(db, "compact", "--session", "big", "nope", "--json")
    assert code == 2 and out == "" and "nope" in one_error_line(err)
    code, _, err = ext(db, "resummarize", "--session", "nope")
    assert code == 2 and "nope" in one_error_line(err)


def test_bad_flags_are_usage_errors(db: Path) -> None:
    for argv in (["--session", "big", "--all"], ["--session", "big", "--pass", "x"], ["--session", "big", "--parallel", "0"],
                 [], ["--all", "--if-over", "-3"]):
        code, _, err = ext(db, "compact", *argv)
        assert code == 2, argv
        one_error_line(err)


def test_ollama_down_is_one_line_exit_1_and_records_nothing(db: Path, tokenizer: Tokenizer) -> None:
    code, out, err = cli("compact", "--db", str(db), "--session", "big", "--ollama-host", closed_port_url(),
                         "--model", "llama3.2", "--json")
    assert code == 1 and out == ""
    assert "not reachable" in one_error_line(err)
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.runs.of_session("big") == []


def test_missing_model_is_one_line_exit_1(db: Path, fake: FakeOllama) -> None:
    code, _, err = cli("compact", "--db", str(db), "--session", "big", "--ollama-host", fake.url, "--model", "nope:1b")
    assert code == 1 and "nope:1b" in one_error_line(err)


def test_ollama_run_and_failure_mid_run(db: Path, fake: FakeOllama, tokenizer: Tokenizer) -> None:
    code, out, err = cli("compact", "--db", str(db), "--session", "mid", "--ollama-host", fake.url,
                         "--model", "llama3.2", "--pass", "leaf", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["status"] == "done" and obj["tiers"]["normal"] == obj["summaries_created"] > 0
    fake.script(Reply("The first leaf."), Drop(), Drop(), Drop())
    code, out, err = cli("compact", "--db", str(db), "--session", "big", "--ollama-host", fake.url,
                         "--model", "llama3.2", "--json")
    obj = json.loads(out)
    assert code == 1 and obj["status"] == "failed" and obj["summaries_created"] == 1 and obj["tiers"]["fallback"] == 0
    assert "big" in one_error_line(err)
    with Store.open(db, tokenizer=tokenizer) as store:
        check_invariants(store, "big", fresh_tail=SMALL.fresh_tail, allow_running=False)


def test_parallel_flag(db: Path, fake: FakeOllama) -> None:
    code, out, err = cli("compact", "--db", str(db), "--all", "--parallel", "3", "--ollama-host", fake.url,
                         "--model", "llama3.2", "--json")
    assert code == 0, err
    assert {r["session"] for r in json.loads(out)} == {"big", "mid", "tiny"}  # tiny: its brief


# ---------------------------------------------------------------- resummarize
def test_resummarize_summary_and_session(db: Path, tokenizer: Tokenizer) -> None:
    assert ext(db, "compact", "--session", "big")[0] == 0
    with Store.open(db, tokenizer=tokenizer) as store:
        leaf = store.dag.summaries("big")[0]
    code, out, err = ext(db, "resummarize", "--session", "big", "--summary", leaf.id, "--json")
    obj = json.loads(out)
    assert code == 0 and set(obj) == RUN_KEYS and obj["status"] == "done" and obj["summaries_created"] >= 2
    code, _, err = ext(db, "resummarize", "--session", "big", "--summary", leaf.id)  # now superseded
    assert code == 2 and "superseded" in one_error_line(err)
    code, _, err = ext(db, "resummarize", "--session", "mid", "--summary", leaf.id)  # another session's
    assert code == 2 and "no summary" in one_error_line(err)
    code, out, _ = ext(db, "resummarize", "--session", "big", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["status"] == "done"
    with Store.open(db, tokenizer=tokenizer) as store:
        assert {s.run_id for s in store.dag.summaries("big")} == {obj["run_id"]}
        check_invariants(store, "big", fresh_tail=SMALL.fresh_tail, allow_running=False)


def test_ctrl_c_cancels_the_run_and_exits_130(db: Path, config: Path, tokenizer: Tokenizer) -> None:
    with FakeOllama() as fake:
        fake.script(Reply("First leaf."), Hang())
        env = dict(os.environ, HIERMEM_CONFIG=str(config), PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(
            [sys.executable, "-m", "hiermem_tui.cli", "compact", "--db", str(db), "--session", "big",
             "--ollama-host", fake.url, "--model", "llama3.2", "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            hung = fake.wait_for_chats(2, timeout=60)[1]
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert hung.disconnected.wait(5)
    assert proc.returncode == 130, err
    obj = json.loads(out)
    assert obj["status"] == "cancelled" and obj["summaries_created"] == 1
    assert "Traceback" not in err
    with Store.open(db, tokenizer=tokenizer) as store:
        assert [r.status for r in store.runs.of_session("big")] == ["cancelled"]
        check_invariants(store, "big", fresh_tail=SMALL.fresh_tail, allow_running=False)
