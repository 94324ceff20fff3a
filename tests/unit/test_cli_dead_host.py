"""Every command that talks to a model, against a host where nothing listens and against a web
server that is not Ollama (issue 36 item 1: ``repair`` and ``resummarize`` printed a 40-line
traceback there). Each says so in one line on stderr and leaves the file as it was: the jobs
(``compact``, ``repair``, ``resummarize``, ``watch``'s compaction) exit 1; the estimates
(``backlog``, ``compact --dry-run``) go on with a guess from the model's size and exit 0, as
documented, saying why it is a guess. Real servers on loopback; nothing of ours is mocked."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.store import Run, Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, closed_port_url, empty, not_ollama_server

from ._cli import run as cli
from ._cli import sha
from ._engine_fixtures import add_episodes, extractive_runner, ollama_runner
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from .test_cli_compact import one_error_line
from .test_cli_watch import chat_lines

pytestmark = pytest.mark.usefixtures("config")
MODEL = ["--model", "llama3.2"]


@pytest.fixture(params=["nothing listens", "not ollama"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(URL, what its one line must say) for each kind of wrong host."""
    if request.param == "nothing listens":
        url = closed_port_url()
        yield url, f"Ollama is not reachable at {url} (connection refused); start it with 'ollama serve'"
        return
    (tmp_path / "www").mkdir()
    with not_ollama_server(tmp_path / "www") as url:
        yield url, f"{url} is not an Ollama server (HTTP 404 on /api/tags)"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, tokenizer: Tokenizer) -> Path:
    """Session a summarised by the extractive backend, b by a model whose every answer was empty
    (fallbacks: ``repair --all`` has work), both with episodes left for a pass."""
    path = tmp_path_factory.mktemp("dead") / "template.db"
    with Store.open(path, tokenizer=tokenizer) as store, FakeOllama() as empty_answers:
        empty_answers.script(*[empty() for _ in range(200)])
        for sid in ("a", "b"):
            add_episodes(store, sid, 0, 20)
        asyncio.run(extractive_runner(store, tokenizer).compact("a", "leaf"))

        async def fallbacks() -> Run | None:
            runner, backend = ollama_runner(store, tokenizer, empty_answers.url)
            try:
                return await runner.compact("b", "leaf")
            finally:
                await backend.aclose()

        run = asyncio.run(fallbacks())
        assert run is not None and run.tiers["fallback"] > 0
        for sid in ("a", "b"):
            add_episodes(store, sid, 20, 12)  # due again: compact has work to ask the model for
    return path


@pytest.fixture
def db(tmp_path: Path, template: Path) -> Path:
    path = tmp_path / "dead.db"
    shutil.copy(template, path)
    return path


def first_summary(db: Path, tokenizer: Tokenizer) -> str:
    with Store.open(db, tokenizer=tokenizer) as store:
        return store.dag.summaries("a")[0].id


JOBS = {
    "compact --session": ["compact", "--session", "a"],
    "compact --all": ["compact", "--all"],
    "repair --session": ["repair", "--session", "a"],
    "repair --all": ["repair", "--all"],
    "resummarize --session": ["resummarize", "--session", "a"],
    "resummarize --summary": ["resummarize", "--session", "a", "--summary", "{summary}"],
}


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("job", JOBS)
def test_a_job_on_a_wrong_host_is_one_line_exit_1_and_writes_nothing(
        db: Path, tokenizer: Tokenizer, host: tuple[str, str], job: str, json_flag: list[str]) -> None:
    url, says = host
    argv = [a.format(summary=first_summary(db, tokenizer)) for a in JOBS[job]]
    before = sha(db)
    code, out, err = cli(*argv, "--db", str(db), "--ollama-host", url, *MODEL, *json_flag)
    assert code == 1 and out == ""
    assert one_error_line(err).startswith(f"hiermem-tui: {says}")
    assert sha(db) == before


def test_watch_keeps_its_imports_says_why_it_could_not_compact_and_exits_1(
        tmp_path: Path, tokenizer: Tokenizer, db: Path, host: tuple[str, str]) -> None:
    url, says = host
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "new.jsonl").write_text(chat_lines("new", 0, 30))
    with Store.open(db, tokenizer=tokenizer) as store:
        summaries = {sid: store.dag.summaries(sid, status=None) for sid in ("a", "b")}
        runs = {sid: store.runs.of_session(sid) for sid in ("a", "b")}
    code, out, err = cli("watch", "--once", str(folder), "--db", str(db), "--ollama-host", url, *MODEL,
                         "--min-new", "8")
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"hiermem-tui: {says}")
    assert f"compaction postponed: {line.removeprefix('hiermem-tui: ')}" in out  # the log says the same
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.sessions.get("new").episodes == 30  # type: ignore[union-attr]  # the import is kept
        assert store.runs.of_session("new") == [] and store.dag.summaries("new", status=None) == []
        assert {sid: store.dag.summaries(sid, status=None) for sid in ("a", "b")} == summaries
        assert {sid: store.runs.of_session(sid) for sid in ("a", "b")} == runs


@pytest.mark.parametrize("argv", [["backlog", "--json"], ["compact", "--all", "--dry-run", "--json"]],
                         ids=["backlog", "dry-run"])
def test_an_estimate_on_a_wrong_host_says_why_it_is_a_guess_in_one_line(
        db: Path, host: tuple[str, str], argv: list[str]) -> None:
    url, says = host
    before = sha(db)
    code, out, err = cli(*argv, "--db", str(db), "--ollama-host", url, *MODEL)
    assert code == 0
    line = one_error_line(err)
    assert line.startswith(f"hiermem-tui: {says}") and line.endswith("the times are a guess from the model's size")
    plan = json.loads(out)
    assert plan if argv[0] == "compact" else plan["speed"]["measured"] is False and plan["summaries"] > 0
    assert sha(db) == before

