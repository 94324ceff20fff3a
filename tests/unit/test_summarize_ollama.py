"""OllamaBackend against the fake server with the real ollama client: model choice, request
settings, error sorting, timeouts and cancellation."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from datetime import datetime, timezone

import pytest

from hiermem_tui.summarize import (
    BackendUnavailable,
    ModelError,
    ModelMissing,
    OllamaBackend,
    Summariser,
    normalize_host,
    resolve_model,
)
from hiermem_tui.summarize.prompts import answer_budget
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import targets_for
from hiermem_tui.summarize.types import SourceItem, StreamProgress, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import Drop, Fail, FakeModel, FakeOllama, Hang, Reply, StreamError, closed_port_url

T0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> AsyncIterator[FakeOllama]:
    with FakeOllama(models=["llama3.2", FakeModel("tiny:1b", context_length=4096)]) as server:
        yield server  # type: ignore[misc]


def request(tok: Tokenizer, words: int = 400, target: int = 100) -> SummaryRequest:
    text = " ".join(f"token{i}" for i in range(words))
    return SummaryRequest(0, [SourceItem("episode", text, tok.count(text), T0, T0, role="user")], target)


async def test_loaded_model_is_used_when_none_configured(tok: Tokenizer) -> None:
    with FakeOllama(models=["llama3.2", "qwen2.5:7b"], loaded=["qwen2.5:7b"]) as fake:
        assert await resolve_model(fake.url, None) == "qwen2.5:7b"
        assert await resolve_model(fake.url, "mistral") == "mistral"  # configured wins, unchecked
        backend = OllamaBackend(fake.url, None, tok)
        await backend.check()
        assert backend.model == "qwen2.5:7b"
        await backend.generate("sys", "hello", temperature=0.2, num_predict=50)
        assert fake.chat_bodies[0]["model"] == "qwen2.5:7b"
        await backend.aclose()


async def test_no_model_loaded_lists_installed(tok: Tokenizer) -> None:
    with FakeOllama(models=["llama3.2", "qwen2.5:7b"], auto_load=False) as fake:
        with pytest.raises(ModelMissing) as err:
            await resolve_model(fake.url, None)
        assert str(err.value) == "no model chosen; installed: llama3.2:latest, qwen2.5:7b — pass --model"
        backend = OllamaBackend(fake.url, None, tok)
        with pytest.raises(ModelMissing, match="installed: llama3.2:latest, qwen2.5:7b"):
            await backend.check()
        await backend.aclose()


async def test_check_missing_model_and_latest_matching(fake: FakeOllama, tok: Tokenizer) -> None:
    missing = OllamaBackend(fake.url, "mistral", tok)
    with pytest.raises(ModelMissing) as err:
        await missing.check()
    msg = str(err.value)
    assert "'mistral' is not installed" in msg and "llama3.2:latest, tiny:1b" in msg and "\n" not in msg
    ok = OllamaBackend(fake.url, "llama3.2", tok)
    await ok.check()
    assert ok.model == "llama3.2:latest"
    assert any(r.path == "/api/show" for r in fake.requests)
    await missing.aclose()
    await ok.aclose()


async def test_down_server_is_one_clear_line(tok: Tokenizer) -> None:
    url = closed_port_url()
    backend = OllamaBackend(url, "llama3.2", tok)
    with pytest.raises(BackendUnavailable) as err:
        await backend.check()
    assert str(err.value) == (
        f"Ollama is not reachable at {url} (connection refused); start it with 'ollama serve' or pass --ollama-host"
    )
    with pytest.raises(BackendUnavailable, match="connection refused"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    with pytest.raises(BackendUnavailable):
        await resolve_model(url, None)
    await backend.aclose()


async def test_request_settings(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok, keep_alive="10m")
    req = request(tok, words=600, target=150)
    t = targets_for(req)
    s = Summariser(backend, tok)
    fake.script(Fail(400, "invalid option"), Reply("Short summary."))  # a 4xx is not retried: the next tier
    res = await s.summarise(req)
    assert res.tier == "aggressive"
    normal, aggressive = fake.chat_bodies
    for body in (normal, aggressive):
        opts = body["options"]
        prompt_tokens = sum(tok.count(m["content"]) for m in body["messages"])
        assert opts["num_ctx"] % 1024 == 0 and opts["num_ctx"] >= 2048
        assert opts["num_ctx"] >= prompt_tokens + opts["num_predict"]
        assert opts["num_ctx"] <= 8192
        assert body["keep_alive"] == "10m" and body["stream"] is True and body["model"] == "llama3.2"
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert (normal["options"]["temperature"], aggressive["options"]["temperature"]) == (0.2, 0.1)
    assert t.normal == 150 and t.aggressive == 75
    assert (normal["options"]["num_predict"], aggressive["options"]["num_predict"]) == (
        answer_budget(t.normal), answer_budget(t.aggressive))
    assert answer_budget(t.normal) <= t.normal * 1.1 + 16  # the target and a small margin, no more
    await backend.aclose()


async def test_num_ctx_capped_by_model_and_setting(fake: FakeOllama, tok: Tokenizer) -> None:
    tiny = OllamaBackend(fake.url, "tiny:1b", tok)
    big_prompt = "word " * 6000
    await tiny.generate("s", big_prompt, temperature=0.2, num_predict=500)
    assert fake.chat_bodies[-1]["options"]["num_ctx"] == 4096  # the model's trained context
    capped = OllamaBackend(fake.url, "llama3.2", tok, num_ctx_cap=3000)
    await capped.generate("s", big_prompt, temperature=0.2, num_predict=500)
    assert fake.chat_bodies[-1]["options"]["num_ctx"] == 2048  # cap 3000, floored to a multiple of 1024
    await tiny.aclose()
    await capped.aclose()


async def test_num_ctx_does_not_shrink_between_calls(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok)
    await backend.generate("s", "word " * 3000, temperature=0.2, num_predict=256)
    first = fake.chat_bodies[-1]["options"]["num_ctx"]
    prompt_tokens = tok.count("s") + tok.count("word " * 3000)
    assert first == math.ceil((math.ceil(prompt_tokens * 1.1) + 256 + 64) / 1024) * 1024
    await backend.generate("s", "short", temperature=0.2, num_predict=256)
    assert fake.chat_bodies[-1]["options"]["num_ctx"] == first  # avoids a model reload in Ollama
    await backend.aclose()


async def test_generation_counts_and_think_stripping(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok)
    fake.script(Reply("<think>\nhmm, let me see\n</think>\n\nThe user fixed CI.", prompt_eval_count=321))
    gen = await backend.generate("s", "p", temperature=0.2, num_predict=99)
    assert gen.text == "The user fixed CI."
    assert gen.prompt_eval_count == 321 and gen.eval_count == 10 and gen.done_reason == "stop"
    await backend.aclose()


async def test_error_sorting(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=0.3)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)  # known fast: the timeout is ~timeout_s
    fake.script(Fail(500, "out of memory"), StreamError(), Drop(after_chunks=2), Drop(), Hang())
    with pytest.raises(ModelError, match=r"HTTP 500\): out of memory"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    with pytest.raises(ModelError, match="mid-answer"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    with pytest.raises(BackendUnavailable, match="connection lost mid-answer"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    with pytest.raises(BackendUnavailable, match="connection closed before an answer"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    with pytest.raises(ModelError, match=r"timed out after 0.3s"):
        await backend.generate("s", "p", temperature=0.2, num_predict=10)
    assert await asyncio.to_thread(fake.chat_requests[-1].disconnected.wait, 5)
    gone = OllamaBackend(fake.url, "deleted:latest", tok)
    with pytest.raises(ModelMissing, match="ollama pull deleted:latest"):
        await gone.generate("s", "p", temperature=0.2, num_predict=10)
    await backend.aclose()
    await gone.aclose()


async def test_cancelling_aborts_the_http_request(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok)
    fake.script(Hang(after_chunks=2))
    two_chunks = asyncio.Event()

    def on_chunk(p: StreamProgress) -> None:
        if p.tokens == 2:
            two_chunks.set()

    task = asyncio.create_task(backend.generate("s", "p", temperature=0.2, num_predict=10, on_chunk=on_chunk))
    await asyncio.wait_for(two_chunks.wait(), 5)  # mid-stream, the server is now stalling
    (rec,) = fake.chat_requests
    assert not rec.disconnected.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(rec.disconnected.wait, 5)
    await backend.aclose()


def test_normalize_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert normalize_host(None) == "http://127.0.0.1:11434"
    assert normalize_host("10.0.0.5") == "http://10.0.0.5:11434"
    assert normalize_host(":9999") == "http://127.0.0.1:9999"
    assert normalize_host("https://box.lan") == "https://box.lan:443"
    assert normalize_host("http://[::1]:8080/ollama/") == "http://[::1]:8080/ollama"
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:5000")
    assert normalize_host(None) == "http://0.0.0.0:5000"
    assert normalize_host("box:1") == "http://box:1"  # an explicit host beats the environment
