"""Several Ollama hosts sharing one backlog (issue 20, item 5): each host takes the next summary
when it is free, a host that goes away mid-call has its summary made on another (and the run
says so), a host not ready at the start is left out, and where the host list comes from.
Two real fake servers on loopback; the CLI runs in a thread while the test steers the servers."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from hiermem_tui.config import Settings, load_settings, save_settings
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, closed_port_url

from ._cli import run as cli
from ._engine_fixtures import SMALL, add_episodes
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from ._invariants import check_invariants

pytestmark = pytest.mark.usefixtures("config")
SESSIONS = ("s1", "s2", "s3", "s4")


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
        a.script(Hang())  # a's first call waits until b has taken the next summary
        pool, done = in_thread(lambda: compact_all(db, a.url, b.url))
        with pool:
            a.wait_for_chats(1, timeout=30)
            b.wait_for_chats(1, timeout=30)
            a.release()
            code, out, err = done.result(timeout=120)
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
        assert f"host {a.url} unreachable: leaf #" in err and f"moved to host {b.url}" in err
        assert err.count("unreachable") == 1
    made_once(db, tokenizer, due)


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
