"""``--backend openai --base-url URL`` in every command that summarises, against the fake OpenAI-compatible
server over real HTTP: summaries made through the same tiers as with Ollama (the same answers give the same
summaries), JSON schemas for the ``sections`` format, several servers of either kind sharing one backlog,
and a wrong key, a dead server or a server that is not OpenAI-compatible said in one line, exit 1, the file
unchanged."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply, closed_port_url, empty, not_ollama_server
from tests.fakeopenai import FakeOpenAI

from ._cli import run as cli
from ._cli import sha
from ._engine_fixtures import SMALL, add_episodes, write_policy_config
from ._engine_fixtures import small_policy_env as config  # noqa: F401
from .test_cli_compact import one_error_line
from .test_cli_dead_host import JOBS, db, first_summary, template  # noqa: F401  (fixtures)
from .test_cli_watch import chat_lines
from .test_hosts import SESSIONS, made_once, planned, shared

pytestmark = pytest.mark.usefixtures("config")
MODEL = "qwen2.5-coder-1.5b-instruct"


@pytest.fixture(params=["nothing listens", "not openai", "wrong key", "wrong key, models public"])
def server(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[tuple[str, str]]:
    """(URL, what its one line must say) for each kind of wrong server."""
    if request.param == "nothing listens":
        url = closed_port_url()
        yield url, (f"the OpenAI-compatible server at {url}/v1 is not reachable (connection refused); "
                    "start the server or pass --base-url")
        return
    if request.param == "not openai":
        (tmp_path / "www").mkdir()
        with not_ollama_server(tmp_path / "www") as url:
            yield url, f"{url}/v1 is not an OpenAI-compatible server (HTTP 404 on /v1/models); pass the right --base-url"
        return
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    public = request.param.endswith("public")
    with FakeOpenAI(models=[MODEL], key="sk-right", models_public=public) as fake:
        path = "/v1/chat/completions" if public else "/v1/models"
        yield fake.url, (f"{fake.url}/v1 refused the key in $OPENAI_API_KEY (HTTP 401 on {path}); "
                         "set OPENAI_API_KEY to a key it accepts")
        assert fake.chat_requests == []  # the model was never asked


def openai_flags(url: str) -> list[str]:
    return ["--backend", "openai", "--base-url", url, "--model", MODEL]


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("job", JOBS)
def test_a_job_on_a_wrong_openai_server_is_one_line_exit_1_and_writes_nothing(
        db: Path, tokenizer: Tokenizer, server: tuple[str, str], job: str, json_flag: list[str]) -> None:
    url, says = server
    argv = [a.format(summary=first_summary(db, tokenizer)) for a in JOBS[job]]
    before = sha(db)
    code, out, err = cli(*argv, "--db", str(db), *openai_flags(url), *json_flag)
    assert code == 1 and out == ""
    assert one_error_line(err) == f"hiermem-tui: {says}"
    assert sha(db) == before


def test_watch_on_a_wrong_openai_server_keeps_its_imports_and_exits_1(
        tmp_path: Path, tokenizer: Tokenizer, db: Path, server: tuple[str, str]) -> None:
    url, says = server
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "new.jsonl").write_text(chat_lines("new", 0, 30))
    code, out, err = cli("watch", "--once", str(folder), "--db", str(db), *openai_flags(url), "--min-new", "8")
    assert code == 1
    assert one_error_line(err) == f"hiermem-tui: {says}"
    with Store.open(db, tokenizer=tokenizer) as store:
        assert store.sessions.get("new") is not None and store.runs.of_session("new") == []


@pytest.mark.parametrize("argv", [["backlog", "--json"], ["compact", "--all", "--dry-run", "--json"]],
                         ids=["backlog", "dry-run"])
def test_an_estimate_on_a_wrong_openai_server_is_a_guess_that_says_why(
        db: Path, server: tuple[str, str], argv: list[str]) -> None:
    url, says = server
    before = sha(db)
    code, out, err = cli(*argv, "--db", str(db), *openai_flags(url))
    assert code == 0
    line = one_error_line(err)
    assert line.startswith(f"hiermem-tui: {says}") and line.endswith("the times are a guess from the model's size")
    assert json.loads(out)
    assert sha(db) == before


def test_the_openai_backend_without_a_server_url_is_a_usage_error(db: Path) -> None:
    code, out, err = cli("compact", "--session", "a", "--db", str(db), "--backend", "openai")
    assert code == 2 and out == ""
    assert one_error_line(err) == ("hiermem-tui: the openai backend needs its server's URL: pass --base-url URL "
                                   "(or set $OPENAI_BASE_URL, or openai_base_url in the settings file)")


# ---------------------------------------------------------------- summaries made
@pytest.fixture
def fresh(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "fresh.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "garden", 0, 30)
    return path


TIERED = (Reply("Planning the raised garden beds."),  # the first leaf: normal
          empty(), Reply("Choosing the soil mix."),  # the second: normal empty, aggressive kept
          empty(), empty())  # the third: both model tiers empty, the extractive fallback


def summaries_of(db: Path, tokenizer: Tokenizer) -> list[tuple[int, int, str, str, str]]:
    with Store.open(db, tokenizer=tokenizer) as store:
        return [(s.first_seq, s.depth, s.tier, s.backend, s.content) for s in store.dag.summaries("garden")]


def test_compact_through_an_openai_server_makes_the_summaries_ollama_makes_from_the_same_answers(
        fresh: Path, tmp_path: Path, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch) -> None:
    twin = tmp_path / "twin.db"
    shutil.copy(fresh, twin)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a flag wins over it
    with FakeOpenAI(models=[MODEL]) as openai, FakeOllama(models=[f"{MODEL}:latest"]) as ollama:
        openai.script(*TIERED)
        ollama.script(*TIERED)
        code, out, err = cli("compact", "--session", "garden", "--db", str(fresh), "--json", *openai_flags(openai.url))
        assert code == 0, err
        run = json.loads(out)
        assert run["status"] == "done" and run["tiers"]["aggressive"] == 1 and run["tiers"]["fallback"] == 1
        assert run["tiers"]["normal"] == run["summaries_created"] - 2
        code, out, err = cli("compact", "--session", "garden", "--db", str(twin), "--json", "--ollama-host",
                             ollama.url, "--model", MODEL)
        assert code == 0, err
        assert json.loads(out)["tiers"] == run["tiers"]
        assert all(b["stream"] is True for b in openai.chat_bodies)
        # the same prompts went to both servers
        assert [b["messages"] for b in openai.chat_bodies] == [b["messages"] for b in ollama.chat_bodies]
    made = summaries_of(fresh, tokenizer)
    assert [(f, d, t, c) for f, d, t, _, c in made] == [(f, d, t, c) for f, d, t, _, c in summaries_of(twin, tokenizer)]
    assert {b for _, _, t, b, _ in made if t != "fallback"} == {"openai"}
    with Store.open(fresh, tokenizer=tokenizer) as store:
        [row] = store.runs.of_session("garden")
        assert (row.backend, row.model) == ("openai", MODEL)


@pytest.mark.parametrize("shapes", [("json_schema",), ("json_object",)], ids=["json_schema", "llama-cpp-python"])
def test_sections_are_asked_with_a_json_schema_in_the_shape_the_server_takes(
        fresh: Path, tmp_path: Path, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch,
        shapes: tuple[str, ...]) -> None:
    cfg = tmp_path / "sections.toml"
    cfg.write_text('summary_format = "sections"\n' + write_policy_config(tmp_path / "p.toml", SMALL).read_text())
    monkeypatch.setenv("HIERMEM_CONFIG", str(cfg))
    answer = json.dumps({"doing": "Planning the raised garden beds", "decisions": ["Use cedar boards"],
                         "names": ["w12"], "errors": [], "open_questions": []})
    with FakeOpenAI(models=[MODEL], schema_shapes=shapes) as fake:
        fake.responder = lambda body: answer
        code, out, err = cli("compact", "--session", "garden", "--db", str(fresh), "--json", *openai_flags(fake.url))
        assert code == 0, err
        assert json.loads(out)["tiers"]["fallback"] == 0
        sent = [b["response_format"]["type"] for b in fake.chat_bodies if "response_format" in b]
        assert sent[0] == "json_schema" and len(sent) > 2 and set(sent[1:]) == {shapes[0]}  # a refusal is remembered
    texts = [c for _, _, _, _, c in summaries_of(fresh, tokenizer)]
    assert texts and all("Planning the raised garden beds" in t and "{" not in t for t in texts)


def sessions_db(path: Path, tokenizer: Tokenizer) -> Path:
    """test_hosts' four sessions, for a backlog several servers share."""
    with Store.open(path, tokenizer=tokenizer) as store:
        for i, sid in enumerate(SESSIONS):
            add_episodes(store, sid, 0, 14 + 2 * i)
    return path


def test_an_ollama_server_and_an_openai_server_share_one_backlog(tmp_path: Path, tokenizer: Tokenizer) -> None:
    path = sessions_db(tmp_path / "mixed.db", tokenizer)
    due = planned(path)
    with FakeOllama(models=[f"{MODEL}:latest"]) as ollama, FakeOpenAI(models=[MODEL]) as openai:
        code, out, err = shared(ollama, openai, lambda: cli("compact", "--all", "--db", str(path), "--model", MODEL,
                                                            "--ollama-host", ollama.url, "--base-url", openai.url))
        assert code == 0, err
        assert ollama.chat_requests and openai.chat_requests
    made_once(path, tokenizer, due)
    with Store.open(path, tokenizer=tokenizer) as store:
        made_by = {s.backend for sid in SESSIONS for s in store.dag.summaries(sid) if s.tier != "fallback"}
    assert made_by == {"ollama", "openai"}


def test_several_openai_servers_share_a_backlog_and_a_dead_one_is_left_out(tmp_path: Path, tokenizer: Tokenizer
                                                                           ) -> None:
    """vLLM replicas: one ``--base-url`` each."""
    path = sessions_db(tmp_path / "replicas.db", tokenizer)
    due = planned(path)
    dead = closed_port_url()
    with FakeOpenAI(models=[MODEL]) as a, FakeOpenAI(models=[MODEL]) as b:
        code, out, err = shared(a, b, lambda: cli("compact", "--all", "--db", str(path), *openai_flags(a.url),
                                                  "--base-url", b.url, "--base-url", dead))
        assert code == 0, err
        assert one_error_line(err).startswith(f"hiermem-tui: host {dead}/v1 left out: the OpenAI-compatible server")
    made_once(path, tokenizer, due)


def test_backlog_measures_a_never_used_model_on_the_openai_server(fresh: Path) -> None:
    with FakeOpenAI(models=[MODEL], timings=True) as fake:
        said = Reply("The user asked why the nightly build failed.", prompt_tps=500, output_tps=50)
        fake.script(said, said)  # the call that lets the model load, then the measuring one
        code, out, err = cli("backlog", "--db", str(fresh), "--json", *openai_flags(fake.url))
        assert code == 0 and err == "", err
        plan = json.loads(out)
        assert plan["speed"]["measured"] is True and plan["speed"]["output_tps"] == pytest.approx(50, rel=0.01)
        assert plan["model"] == MODEL and [b["max_tokens"] for b in fake.chat_bodies][1] <= 64


@pytest.mark.parametrize("props", [True, False], ids=["llama.cpp", "no-props"])
def test_leaves_fit_the_context_llama_cpps_server_was_started_with(tmp_path: Path, tokenizer: Tokenizer,
                                                                   monkeypatch: pytest.MonkeyPatch, props: bool) -> None:
    """A prompt longer than the server's ``n_ctx`` is refused (HTTP 400): where ``/props`` says the context, the
    leaves are cut to fit it; where nothing says it, the refused calls end in fallbacks."""
    cfg = tmp_path / "big.toml"
    cfg.write_text('summary_format = "plain"\n[policy]\nfresh_tail = 0\nidle_after = 1\n', encoding="utf-8")
    monkeypatch.setenv("HIERMEM_CONFIG", str(cfg))
    path = tmp_path / "long.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "long", 0, 40, words=120)
    with FakeOpenAI(models=[MODEL], n_ctx=1500, props=props) as fake:
        fake.responder = lambda body: "Planning the raised garden beds."
        code, out, err = cli("compact", "--session", "long", "--pass", "leaf", "--db", str(path), "--json",
                             *openai_flags(fake.url))
        assert code == 0, err
        run = json.loads(out)
        refused = [r for r in fake.chat_requests if r.behaviour == "refused"]
        if props:
            assert run["tiers"]["fallback"] == 0 and refused == []
        else:
            assert run["tiers"]["fallback"] > 0 and refused
