"""OpenAIBackend against the fake OpenAI-compatible server over real HTTP: the model it picks, what it
sends, the streamed answer and its progress, thinking in every shape servers send it, JSON schemas in the
shapes servers take, speeds, and every failure sorted into the error a run acts on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.config import load_settings, normalise_base_url, save_settings
from hiermem_tui.summarize import BackendUnavailable, ModelError, ModelMissing, Summariser
from hiermem_tui.summarize.openai_backend import OpenAIBackend, error_detail
from hiermem_tui.summarize.types import ServerError, SourceItem, StreamProgress, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeopenai import Drop, Fail, FakeModel, FakeOpenAI, Hang, Reply, StreamError, closed_port_url
from tests.fakeollama import not_ollama_server

T0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)
SCHEMA: dict[str, object] = {"type": "object", "properties": {"doing": {"type": "string"}}, "required": ["doing"]}


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["qwen2.5-coder-1.5b-instruct", FakeModel("deep-r1", thinking=True)]) as server:
        yield server


async def ready(url: str, model: str | None, tok: Tokenizer, **kw: object) -> OpenAIBackend:
    backend = OpenAIBackend(url, model, tok, **kw)  # type: ignore[arg-type]
    await backend.check()
    return backend


def test_a_base_url_without_a_path_gets_v1() -> None:
    assert normalise_base_url("localhost:1234") == "http://localhost:1234/v1"
    assert normalise_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1"
    assert normalise_base_url("https://proxy.example/openai/v1/") == "https://proxy.example/openai/v1"
    assert normalise_base_url("HTTP://h:11434/v1") == "http://h:11434/v1"


async def test_the_model_is_the_one_served_or_the_one_asked_for(tok: Tokenizer) -> None:
    with FakeOpenAI(models=["only-one"]) as one:
        backend = await ready(one.url, None, tok)
        assert backend.model == "only-one" and backend.host == f"{one.url}/v1"
        await backend.aclose()
    with FakeOpenAI(models=["a", "b:7b"]) as two:
        with pytest.raises(ModelMissing) as err:
            await ready(two.url, None, tok)
        assert str(err.value) == f"no model chosen and {two.url}/v1 serves 2: a, b:7b — pass --model"
        with pytest.raises(ModelMissing) as err:
            await ready(two.url, "c", tok)
        assert str(err.value) == (f"model 'c' is not served by {two.url}/v1; it serves: a, b:7b — "
                                  "pass --model with one of them")
        latest = await ready(two.url, "a:latest", tok)  # Ollama's /v1 names: x and x:latest are one model
        assert latest.model == "a"
        await latest.aclose()


async def test_a_call_streams_with_the_settings_asked_and_progress_for_every_chunk(
        fake: FakeOpenAI, tok: Tokenizer) -> None:
    backend = await ready(fake.url, "qwen2.5-coder-1.5b-instruct", tok)
    seen: list[StreamProgress] = []
    gen = await backend.generate("You summarise.", "A log.", temperature=0.2, num_predict=80, on_chunk=seen.append)
    assert gen.text == "The user and the assistant discussed the task; the assistant proposed a fix."
    [body] = fake.chat_bodies
    assert body["model"] == "qwen2.5-coder-1.5b-instruct" and body["stream"] is True
    assert body["max_tokens"] == 80 and body["temperature"] == 0.2
    assert body["messages"] == [{"role": "system", "content": "You summarise."}, {"role": "user", "content": "A log."}]
    assert body["stream_options"] == {"include_usage": True} and "response_format" not in body
    assert seen[0].phase == "prompt" and seen[-1].phase == "writing" and seen[-1].tokens == 13
    assert [p.tokens for p in seen[1:]] == list(range(1, 14))  # one progress per streamed piece
    assert gen.eval_count == 13 and gen.done_reason == "stop" and gen.thinking_tokens == 0
    assert gen.prompt_tokens == tok.count("You summarise.") + tok.count("A log.")
    # a server that reports no load: its first call is held until the next says whether it paid one
    assert backend.speed.calls == 0 and backend.speed.settled().calls == 1
    await backend.aclose()


async def test_the_key_comes_from_the_environment_and_goes_as_a_bearer_token(
        tok: Tokenizer, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(key="sk-right") as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-right")
        backend = await ready(fake.url, None, tok)
        await backend.generate("s", "p", temperature=0, num_predict=20)
        assert {r.headers.get("authorization") for r in fake.requests} == {"Bearer sk-right"}
        await backend.aclose()
    with FakeOpenAI() as open_server:
        monkeypatch.delenv("OPENAI_API_KEY")
        backend = await ready(open_server.url, None, tok)
        assert all("authorization" not in r.headers for r in open_server.requests)
        await backend.aclose()


@pytest.mark.parametrize("public", [False, True], ids=["models-need-the-key", "models-public"])
async def test_a_wrong_key_is_refused_at_the_check(tok: Tokenizer, public: bool) -> None:
    """llama.cpp's server leaves /v1/models open: the check's chat request finds the refused key there."""
    with FakeOpenAI(key="sk-right", models_public=public) as fake:
        backend = OpenAIBackend(fake.url, None, tok, key="sk-wrong")
        with pytest.raises(BackendUnavailable) as err:
            await backend.check()
        path = "/v1/chat/completions" if public else "/v1/models"
        assert str(err.value) == (f"{fake.url}/v1 refused the key in $OPENAI_API_KEY (HTTP 401 on {path}); "
                                  "set OPENAI_API_KEY to a key it accepts")
        assert fake.chat_requests == []  # nothing was asked of the model
        nokey = OpenAIBackend(fake.url, None, tok, key="")
        with pytest.raises(BackendUnavailable, match=r"wants a key \(HTTP 401 on /v1/"):
            await nokey.check()
        await backend.aclose()
        await nokey.aclose()


async def test_a_dead_server_and_a_server_that_is_not_openai_compatible(tok: Tokenizer, tmp_path: Path) -> None:
    dead = closed_port_url()
    backend = OpenAIBackend(dead, "m", tok)
    with pytest.raises(BackendUnavailable) as err:
        await backend.check()
    assert str(err.value) == (f"the OpenAI-compatible server at {dead}/v1 is not reachable (connection refused); "
                              "start the server or pass --base-url")
    await backend.aclose()
    with not_ollama_server(tmp_path) as web:
        backend = OpenAIBackend(web, "m", tok)
        with pytest.raises(BackendUnavailable) as err:
            await backend.check()
        assert str(err.value) == (f"{web}/v1 is not an OpenAI-compatible server (HTTP 404 on /v1/models); "
                                  "pass the right --base-url")
        await backend.aclose()


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "inline"])
async def test_thinking_is_counted_never_the_answer_and_gets_room_from_then_on(tok: Tokenizer, field: str) -> None:
    with FakeOpenAI(models=[FakeModel("r1", thinking=True, think_words=30)], reasoning=field) as fake:
        backend = await ready(fake.url, "r1", tok)
        seen: list[StreamProgress] = []
        first = await backend.generate("s", "p", temperature=0, num_predict=200, on_chunk=seen.append)
        assert first.text == "The user and the assistant discussed the task; the assistant proposed a fix."
        assert "hmm" not in first.text and first.thinking_tokens >= 30
        assert "thinking" in {p.phase for p in seen}
        assert backend.thinking_headroom() > 0
        await backend.generate("s", "p", temperature=0, num_predict=200)
        assert fake.chat_bodies[1]["max_tokens"] == 200 + backend.thinking_headroom()
        await backend.aclose()


async def test_an_answer_that_is_only_thinking_is_rejected_as_such(tok: Tokenizer) -> None:
    with FakeOpenAI(models=[FakeModel("r1", thinking=True)]) as fake:
        fake.script(Reply(""), Reply(""))
        backend = await ready(fake.url, "r1", tok)
        text = " ".join(f"word{i}" for i in range(300))
        req = SummaryRequest(0, [SourceItem("episode", text, tok.count(text), T0, T0, role="user")], 60)
        result = await Summariser(backend, tok, summary_format="plain").summarise(req)
        assert result.tier == "fallback" and {r.reason for r in result.rejections} == {"thinking_only"}
        assert "hmm" not in result.text
        await backend.aclose()


async def test_reading_stops_at_the_budget_when_the_server_does_not(tok: Tokenizer) -> None:
    with FakeOpenAI(honour_max_tokens=False) as fake:
        fake.script(Reply(" ".join(["loop"] * 400)))
        backend = await ready(fake.url, None, tok)
        gen = await backend.generate("s", "p", temperature=0, num_predict=30)
        assert gen.done_reason == "length" and gen.eval_count is not None and gen.eval_count <= 40
        await backend.aclose()
    with FakeOpenAI() as honest:
        honest.script(Reply(" ".join(["word"] * 100)))
        backend = await ready(honest.url, None, tok)
        gen = await backend.generate("s", "p", temperature=0, num_predict=30)
        assert gen.done_reason == "length" and gen.eval_count == 30
        await backend.aclose()


async def test_a_json_schema_goes_in_the_shape_the_server_takes(tok: Tokenizer) -> None:
    answer = json.dumps({"doing": "fixing the build"})
    with FakeOpenAI() as vllm:
        vllm.script(Reply(answer))
        backend = await ready(vllm.url, None, tok)
        assert backend.structured
        gen = await backend.generate("s", "p", temperature=0, num_predict=60, format=SCHEMA)
        assert gen.text == answer
        assert vllm.chat_bodies[0]["response_format"] == {"type": "json_schema",
                                                          "json_schema": {"name": "summary", "schema": SCHEMA}}
        await backend.aclose()
    with FakeOpenAI(schema_shapes=("json_object",)) as llama_cpp_python:
        backend = await ready(llama_cpp_python.url, None, tok)
        for _ in range(2):
            await backend.generate("s", "p", temperature=0, num_predict=60, format=SCHEMA)
        shapes = [r.body["response_format"]["type"] for r in llama_cpp_python.requests
                  if r.path == "/v1/chat/completions" and "messages" in r.body]
        assert shapes == ["json_schema", "json_object", "json_object"]  # refused once, then remembered
        assert llama_cpp_python.chat_bodies[-1]["response_format"]["schema"] == SCHEMA and backend.structured
        await backend.aclose()
    with FakeOpenAI(schema_shapes=()) as plain:
        backend = await ready(plain.url, None, tok)
        gen = await backend.generate("s", "p", temperature=0, num_predict=60, format=SCHEMA)
        assert gen.text and not backend.structured
        assert "response_format" not in plain.chat_bodies[-1]
        await backend.aclose()


async def test_a_server_that_refuses_stream_options_is_asked_without_them(tok: Tokenizer) -> None:
    with FakeOpenAI(usage_option=False) as strict:
        backend = await ready(strict.url, None, tok)
        await backend.generate("s", "p", temperature=0, num_predict=40)
        await backend.generate("s", "q", temperature=0, num_predict=40)
        with_option = ["stream_options" in r.body for r in strict.requests if r.path == "/v1/chat/completions"
                       and "messages" in r.body]
        assert with_option == [True, False, False]
        await backend.aclose()


async def test_speeds_from_llama_cpp_timings_else_from_the_clock(tok: Tokenizer) -> None:
    with FakeOpenAI(timings=True) as llama_cpp:
        llama_cpp.script(Reply("one two three four five six seven eight", prompt_tps=2000, output_tps=400))
        backend = await ready(llama_cpp.url, None, tok)
        gen = await backend.generate("s", "a prompt of a few words", temperature=0, num_predict=40)
        assert gen.eval_count == 8 and gen.eval_seconds == pytest.approx(8 / 400)
        assert gen.prompt_eval_count is not None and gen.prompt_seconds == pytest.approx(gen.prompt_eval_count / 2000)
        await backend.aclose()
    with FakeOpenAI() as vllm:
        vllm.script(Reply("one two three four five six", chunk_delay_s=0.01))
        backend = await ready(vllm.url, None, tok)
        gen = await backend.generate("s", "p", temperature=0, num_predict=40)
        assert gen.eval_count == 6 and gen.eval_seconds is not None and gen.eval_seconds >= 0.05
        assert gen.prompt_eval_count == len("s p".split()) + 12  # usage.prompt_tokens, as the server counts
        assert backend.speed.settled().measured
        await backend.aclose()


async def test_a_server_that_ignores_stream_is_read_whole(tok: Tokenizer) -> None:
    with FakeOpenAI(streams=False) as whole:
        backend = await ready(whole.url, None, tok)
        gen = await backend.generate("s", "p", temperature=0, num_predict=40)
        assert gen.text.startswith("The user and the assistant") and gen.eval_count == 13
        await backend.aclose()


@pytest.mark.parametrize(("behaviour", "error", "says"), [
    (Fail(500, "runner crashed"), ServerError, "failed on model 'qwen2.5-coder-1.5b-instruct' (HTTP 500): runner crashed"),
    (Fail(429, "slow down"), ServerError, "(HTTP 429): slow down"),
    (Fail(400, "the request exceeds the available context size"), ModelError,
     "refused the call for model 'qwen2.5-coder-1.5b-instruct' (HTTP 400): the request exceeds"),
    (StreamError(), ModelError, "failed mid-answer"),
    (Drop(after_chunks=2), BackendUnavailable, "connection lost mid-answer"),
    (Drop(after_chunks=0), BackendUnavailable, "connection closed before an answer"),
])
async def test_failures_are_sorted_into_what_a_run_does_next(
        fake: FakeOpenAI, tok: Tokenizer, behaviour: object, error: type[Exception], says: str) -> None:
    backend = await ready(fake.url, "qwen2.5-coder-1.5b-instruct", tok)
    fake.script(behaviour)  # type: ignore[arg-type]
    with pytest.raises(error) as err:
        await backend.generate("s", "p", temperature=0, num_predict=40)
    assert says in str(err.value) and "\n" not in str(err.value)
    await backend.aclose()


async def test_a_model_gone_mid_run_is_missing(fake: FakeOpenAI, tok: Tokenizer) -> None:
    backend = await ready(fake.url, "qwen2.5-coder-1.5b-instruct", tok)
    fake.models = [m for m in fake.models if m.name != "qwen2.5-coder-1.5b-instruct"]
    with pytest.raises(ModelMissing, match="is not served by"):
        await backend.generate("s", "p", temperature=0, num_predict=40)
    await backend.aclose()


async def test_a_hung_call_times_out_and_a_cancelled_one_hangs_up(fake: FakeOpenAI, tok: Tokenizer) -> None:
    backend = await ready(fake.url, "qwen2.5-coder-1.5b-instruct", tok, timeout_s=0.3)
    backend.speed.output_seconds, backend.speed.output_tokens, backend.speed.calls = 1e-6, 1000, 1  # fast: a short bound
    fake.script(Hang(after_chunks=2))
    with pytest.raises(ModelError, match="timed out after"):
        await backend.generate("s", "p", temperature=0, num_predict=10)
    fake.script(Hang())
    task = asyncio.ensure_future(backend.generate("s", "p", temperature=0, num_predict=10))
    [_, rec] = await fake.await_chats(2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(rec.disconnected.wait, 10)
    await backend.aclose()


def test_error_bodies_are_read_as_each_server_writes_them() -> None:
    assert error_detail('{"error": {"message": "Incorrect API key", "type": "x"}}') == "Incorrect API key"
    assert error_detail('{"error": "model not loaded"}') == "model not loaded"
    assert error_detail('{"detail": [{"loc": ["body"], "msg": "bad"}]}').startswith('[{"loc"')
    assert error_detail("<html>\n<h1>404</h1>") == "<html>"
    assert error_detail("") == "no details"


def test_the_key_is_never_written_to_the_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    cfg = tmp_path / "config.toml"
    before = load_settings(cfg, base_url="http://gpu:8000/v1", backend="openai")
    assert before.servers()[0].url == "http://gpu:8000/v1"
    from dataclasses import replace

    after = replace(before, backend="openai", openai_base_url="http://gpu2:8000/v1", model="qwen")
    save_settings(after, replace(before, backend="ollama"))
    text = cfg.read_text(encoding="utf-8")
    assert 'openai_base_url = "http://gpu2:8000/v1"' in text and 'backend = "openai"' in text
    assert "sk-secret" not in text and "key" not in text.lower()


async def test_the_context_comes_from_vllms_model_list_or_llama_cpps_props(tok: Tokenizer) -> None:
    with FakeOpenAI(models=[FakeModel("m", context_length=32768)], list_context=True) as vllm:
        backend = await ready(vllm.url, None, tok)
        assert backend.context_limit == 32768
        await backend.aclose()
    with FakeOpenAI(models=["m"], n_ctx=2048) as llama_cpp:
        backend = await ready(llama_cpp.url, None, tok)
        assert backend.context_limit == 2048
        assert [r.path for r in llama_cpp.requests if r.method == "GET"] == ["/v1/models", "/props"]
        await backend.aclose()
    with FakeOpenAI(models=["m"]) as unknown:
        backend = await ready(unknown.url, None, tok)
        assert backend.context_limit is None
        await backend.aclose()


def test_remembering_the_openai_backend_keeps_it_usable_without_its_flag(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    flagged = load_settings(cfg, base_url="http://gpu:8000")  # the Ollama backend, the server named for this run
    from dataclasses import replace

    save_settings(replace(flagged, backend="openai", model="qwen"), flagged)  # the run dialog's "remember"
    again = load_settings(cfg)
    assert (again.backend, again.openai_base_url, again.model) == ("openai", "http://gpu:8000/v1", "qwen")
