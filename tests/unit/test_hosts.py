"""Several Ollama hosts sharing one backlog (issue 20, item 5): each host takes the next summary
when it is free, a host that goes away mid-call has its summary made on another (and the run
says so), a host not ready at the start is left out, and where the host list comes from.
Two real fake servers on loopback; the CLI runs in a thread while the test steers the servers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from hiermem_tui.compaction.executor import moved_text
from hiermem_tui.config import Settings, load_settings, save_settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import BackendUnavailable, RunAborted
from hiermem_tui.summarize.local_host import is_local, start_advice
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, closed_port_url

from ._cli import run as cli
from ._engine_fixtures import SMALL, add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from ._invariants import check_invariants

pytestmark = pytest.mark.usefixtures("config")
SESSIONS = tuple(f"claude-code:-home-ana-src-payments-service/6f1c2b9e-8d4a-4f3e-9b7a-2c5d1e0f3a4{i}" for i in range(4))
"""Session ids as long as Claude Code's (a notice naming one must still be whole)."""


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "hosts.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        for i, sid in enumerate(SESSIONS):
            add_episodes(store, sid, 0, 14 + 2 * i)
    return path


def in_thread(fn: Callable[[], tuple[int, str, str]]) -> tuple[ThreadPoolExecutor, Future[tuple[int, str, str]]]:
    pool = ThreadPoolExecutor(1)
    return pool, pool.submit(fn)


def shared(first: FakeOllama, second: FakeOllama, job: Callable[[], tuple[int, str, str]]) -> tuple[int, str, str]:
    """``job`` (a CLI run over both servers) in a thread, ``first``'s first call held until ``second`` has
    taken a call too: both make summaries, whichever is quicker to start."""
    first.script(Hang())
    pool, done = in_thread(job)
    with pool:
        first.wait_for_chats(1, timeout=30)
        second.wait_for_chats(1, timeout=30)
        first.release()
        return done.result(timeout=120)


def planned(db: Path) -> int:
    code, out, err = cli("backlog", "--db", str(db), "--json", "--backend", "extractive")
    assert code == 0, err
    return int(json.loads(out)["summaries"])


def made_once(db: Path, tokenizer: Tokenizer, expected: int) -> None:
    """Every planned summary exists exactly once: as many as planned, none due, the DAG whole."""
    with Store.open(db, tokenizer=tokenizer) as store:
        made = [s for sid in SESSIONS for s in store.dag.summaries(sid)]
        assert len(made) == expected
        leaves = sorted((s.session_id, s.first_seq, s.last_seq) for s in made if s.depth == 0)
        assert len(leaves) == len(set(leaves))
        for sid in SESSIONS:
            check_invariants(store, sid, fresh_tail=SMALL.fresh_tail, allow_running=False)
    assert planned(db) == 0
    code, out, err = cli("doctor", "--db", str(db))
    assert code == 0, out + err


def compact_all(db: Path, *hosts: str) -> tuple[int, str, str]:
    flags = [a for h in hosts for a in ("--ollama-host", h)]
    return cli("compact", "--all", "--db", str(db), "--model", "llama3.2", *flags)


def test_two_hosts_share_the_backlog_and_both_make_summaries(db: Path, tokenizer: Tokenizer) -> None:
    due = planned(db)
    with FakeOllama() as a, FakeOllama() as b:
        code, out, err = shared(a, b, lambda: compact_all(db, a.url, b.url))  # a waits until b has taken one
        assert code == 0, err
        assert a.chat_requests and b.chat_requests
        models = {r.body.get("model") for r in a.chat_requests + b.chat_requests}
        assert models == {"llama3.2:latest"}
    made_once(db, tokenizer, due)


def test_a_host_killed_mid_call_has_its_summary_made_on_the_other(db: Path, tokenizer: Tokenizer) -> None:
    due = planned(db)
    with FakeOllama() as a, FakeOllama() as b:
        a.script(Hang())  # in flight when a goes down
        pool, done = in_thread(lambda: compact_all(db, a.url, b.url))
        with pool:
            a.wait_for_chats(1, timeout=30)
            a.stop()  # connections reset, the port refuses from now on
            code, out, err = done.result(timeout=120)
        assert code == 0, err
        assert len(a.chat_requests) == 1  # the dead host took no more work
        # issue 36 item 10: the line was cut at 300 characters ("(gave u…"); it names both hosts, whole
        [line] = err.splitlines()
        sessions = "|".join(map(re.escape, SESSIONS))
        assert re.fullmatch(
            rf"hiermem-tui: host {re.escape(a.url)} went away mid-call \(connection (closed before an answer|lost "
            rf"mid-answer)\): leaf #\d+–\d+ of session ({sessions}) is being made again on host {re.escape(b.url)}, "
            rf"and {re.escape(a.url)} gets no more work in this job; start it with 'ollama serve'", line), line
    made_once(db, tokenizer, due)


def test_a_host_lost_mid_call_on_another_machine_is_not_told_to_run_ollama_serve() -> None:
    """``ollama serve`` helps only where the server is this machine (issue 36 item 10)."""
    lost = RunAborted("Ollama is not reachable … (gave up after 1 failed attempt)",
                      BackendUnavailable("…", host="http://gpu-box:11434", reason="connection lost mid-answer"))
    text = moved_text("http://gpu-box:11434", "http://127.0.0.1:11434", "leaf #12–40", "s", lost)
    assert text == ("host http://gpu-box:11434 went away mid-call (connection lost mid-answer): leaf #12–40 of "
                    "session s is being made again on host http://127.0.0.1:11434, and http://gpu-box:11434 gets no "
                    "more work in this job")
    assert [is_local(h) for h in ("http://127.0.0.1:11434", "http://localhost:11434", "http://[::1]:11434",
                                  "0.0.0.0:11434")] == [True] * 4
    assert [is_local(h) for h in ("http://gpu-box:11434", "http://10.0.0.5:11434",
                                  "https://ollama.example.com")] == [False] * 3
    assert "ollama serve" not in start_advice("http://gpu-box:11434")
    assert start_advice("http://127.0.0.1:11434") == "start it with 'ollama serve'"


def test_a_host_not_ready_at_the_start_is_left_out_with_a_warning(db: Path, tokenizer: Tokenizer) -> None:
    due = planned(db)
    dead = closed_port_url()
    with FakeOllama(models=("other:latest",)) as nomodel, FakeOllama() as b:
        code, out, err = compact_all(db, dead, nomodel.url, b.url)
        assert code == 0, err
        assert f"host {dead} left out: Ollama is not reachable at {dead}" in err
        assert f"host {nomodel.url} left out: model 'llama3.2'" in err
        assert nomodel.chat_requests == [] and b.chat_requests
        assert err.count("left out") == 2  # once each, however many sessions wait for the check
    made_once(db, tokenizer, due)


def test_with_no_host_ready_the_job_fails_as_one_host_does(db: Path) -> None:
    dead, other = closed_port_url(), closed_port_url()
    alone = compact_all(db, dead)
    both = compact_all(db, dead, other)
    assert alone[0] == both[0] != 0
    assert both[2] == alone[2] and "not reachable" in both[2] and "left out" not in both[2]


def test_where_the_host_list_comes_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('# my hosts\nollama_hosts = ["a", "http://b:11434/"]  # the GPU box is b\ntheme = "nord"\n',
                   encoding="utf-8")
    s = load_settings(cfg)
    assert s.hosts() == ("http://a:11434", "http://b:11434") and s.ollama_host == "http://a:11434"
    flags = load_settings(cfg, ollama_host=["c", "d:1234", "c"])
    assert flags.hosts() == ("http://c:11434", "http://d:1234")
    monkeypatch.setenv("OLLAMA_HOST", "e")
    assert load_settings(cfg).hosts() == ("http://e:11434",)  # the environment is for this run
    assert load_settings(cfg, ollama_host=["f"]).hosts() == ("http://f:11434",)  # a flag wins over it
    monkeypatch.delenv("OLLAMA_HOST")
    one = tmp_path / "one.toml"
    one.write_text('ollama_host = "g"\n', encoding="utf-8")
    assert load_settings(one).hosts() == ("http://g:11434",) and load_settings(one).ollama_hosts == ()
    assert Settings(ollama_host="http://h:11434").hosts() == ("http://h:11434",)
    save_settings(replace(s, theme="gruvbox"), s)
    text = cfg.read_text(encoding="utf-8")
    assert "# my hosts" in text and "# the GPU box is b" in text and 'theme = "gruvbox"' in text
    assert load_settings(cfg).hosts() == ("http://a:11434", "http://b:11434")
    bad = tmp_path / "bad.toml"
    bad.write_text('ollama_hosts = "a"\n', encoding="utf-8")
    with pytest.raises(Exception, match="ollama_hosts must be a list"):
        load_settings(bad)
    code, out, err = cli("compact", "--all", "--db", str(tmp_path / "none.db"), "--ollama-host", "a",
                         "--ollama-host", "b", "--dry-run")
    assert "unrecognized" not in err and "expected one argument" not in err
