"""The fake Ollama server answers in Ollama's shapes and fails the ways Ollama fails.

Checked through the real ``ollama`` client (sync) and raw httpx, so the summariser
tests built on it exercise what a real server would make the client do.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import httpx
import ollama
import pytest

from tests.fakeollama import (
    Drop,
    Fail,
    FakeModel,
    FakeOllama,
    Hang,
    Reply,
    StreamError,
    closed_port_url,
    continues_chat,
    empty,
    fake_ollama,  # noqa: F401 - fixture
    longer_than_input,
)

MSG = [{"role": "user", "content": "please summarise this short text for me"}]
closing: list[ollama.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close every client a test opened (unclosed sockets would warn in a later test)."""
    yield
    while closing:
        closing.pop().close()


def client_for(url: str) -> ollama.Client:
    client = ollama.Client(host=url)
    closing.append(client)
    return client


def stream_text(client: ollama.Client, **kw: object) -> tuple[str, list[ollama.ChatResponse]]:
    parts = list(client.chat(model="llama3.2", messages=MSG, stream=True, **kw))  # type: ignore[call-overload]
    return "".join(p.message.content or "" for p in parts), parts


def test_catalogue_endpoints_have_ollama_shapes() -> None:
    with FakeOllama(models=["llama3.2", FakeModel("qwen2.5:7b", context_length=32768, family="qwen2")],
                    loaded=["qwen2.5:7b"]) as fake:
        client = client_for(fake.url)
        tags = client.list()
        assert [m.model for m in tags.models] == ["llama3.2:latest", "qwen2.5:7b"]
        assert tags.models[1].details is not None and tags.models[1].details.family == "qwen2"
        assert [m.model for m in client.ps().models] == ["qwen2.5:7b"]
        show = client.show("qwen2.5:7b")
        assert show.modelinfo is not None and show.modelinfo["qwen2.context_length"] == 32768
        assert show.template and show.parameters
        raw = httpx.get(f"{fake.url}/api/version").json()
        assert raw == {"version": fake.version}
        tag_raw = httpx.get(f"{fake.url}/api/tags").json()["models"][0]
        assert set(tag_raw) == {"name", "model", "modified_at", "size", "digest", "details"}


def test_streamed_chat_chunks_and_final_stats(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Reply("Alpha beta gamma.", prompt_eval_count=77))
    text, parts = stream_text(client_for(fake_ollama.url), options={"num_ctx": 4096}, keep_alive="10m")
    assert text == "Alpha beta gamma."
    assert [p.done for p in parts] == [False, False, False, True]
    final = parts[-1]
    assert final.done_reason == "stop" and final.prompt_eval_count == 77 and final.eval_count == 3
    for name in ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration"):
        assert isinstance(getattr(final, name), int)
    body = fake_ollama.chat_bodies[-1]
    assert body["model"] == "llama3.2" and body["stream"] is True
    assert body["options"] == {"num_ctx": 4096} and body["keep_alive"] == "10m"


def test_a_model_of_constant_speed_takes_time_in_proportion_to_its_tokens(fake_ollama: FakeOllama) -> None:
    """``prompt_tps`` / ``output_tps``: the prompt's fresh words before the first byte, the answer's
    pieces streamed at their pace, and the durations the final chunk reports are those times."""
    client = client_for(fake_ollama.url)
    fake_ollama.prefix_cache = False
    fake_ollama.script(Reply("one two three four", prompt_tps=2000, output_tps=100),
                       Reply("one two three four", prompt_tps=2000, output_tps=100))
    small = [{"role": "user", "content": " ".join(f"w{i}" for i in range(40))}]
    large = [{"role": "user", "content": " ".join(f"w{i}" for i in range(400))}]
    finals = []
    for messages in (small, large):
        finals.append(list(client.chat(model="llama3.2", messages=messages, stream=True))[-1])
    (short, long_), (rs, rl) = finals, fake_ollama.chat_requests
    assert (short.prompt_eval_count, long_.prompt_eval_count) == (52, 412)  # the words, and the template's 12
    assert short.prompt_eval_duration == pytest.approx(52 / 2000 * 1e9, rel=0.01)
    assert long_.prompt_eval_duration == pytest.approx(412 / 2000 * 1e9, rel=0.01)
    assert short.eval_duration == pytest.approx(4 / 100 * 1e9, rel=0.01)  # four pieces at 100 a second
    # the client has the last chunk before the server's handler has finished: wait for it to say so
    assert rl.finished.wait(10) and rs.finished.wait(10)
    assert rl.server_seconds >= 412 / 2000 + 3 / 100 and rs.server_seconds >= 52 / 2000 + 3 / 100


def test_non_streamed_chat_is_one_object(fake_ollama: FakeOllama) -> None:
    resp = httpx.post(f"{fake_ollama.url}/api/chat", json={"model": "llama3.2", "messages": MSG, "stream": False})
    data = resp.json()
    assert data["done"] is True and data["message"]["role"] == "assistant"
    assert data["message"]["content"] == fake_ollama.responder({})


def test_num_predict_cuts_the_answer(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Reply("one two three four five six"))
    text, parts = stream_text(client_for(fake_ollama.url), options={"num_predict": 2})
    assert text == "one two " and parts[-1].done_reason == "length"


def test_unknown_model_is_404_like_ollama(fake_ollama: FakeOllama) -> None:
    for path in ("/api/chat", "/api/show"):
        resp = httpx.post(f"{fake_ollama.url}{path}", json={"model": "nope", "messages": MSG})
        assert resp.status_code == 404
        assert resp.json() == {"error": 'model "nope" not found, try pulling it first'}
    fake_ollama.script(Reply("unused"))
    with pytest.raises(ollama.ResponseError):
        client_for(fake_ollama.url).chat(model="nope", messages=MSG)
    assert fake_ollama.pending == 1  # a 404 does not eat a scripted behaviour


def test_scripted_failures_in_order(fake_ollama: FakeOllama) -> None:
    client = client_for(fake_ollama.url)
    fake_ollama.script(Fail(), Drop(after_chunks=2), StreamError(), Drop(), empty(), continues_chat(),
                       longer_than_input(3))
    with pytest.raises(ollama.ResponseError) as err:
        stream_text(client)
    assert err.value.status_code == 500 and "terminated" in err.value.error
    with pytest.raises(httpx.RemoteProtocolError):
        stream_text(client)
    with pytest.raises(ollama.ResponseError, match="unexpected EOF"):
        stream_text(client)
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        stream_text(client)
    assert stream_text(client)[0] == ""
    assert stream_text(client)[0].startswith("Sure! Here's")
    assert len(stream_text(client)[0].split()) == 3 * len(MSG[0]["content"].split())
    assert [r.behaviour for r in fake_ollama.chat_requests] == [
        "Fail", "Drop", "StreamError", "Drop", "Reply", "Reply", "Reply"]


def test_latency_is_honoured(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Reply("late", latency_s=0.2))
    began = time.monotonic()
    assert stream_text(client_for(fake_ollama.url))[0] == "late"
    assert time.monotonic() - began >= 0.2


def test_hanging_requests_are_concurrent_and_released(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Hang(then=Reply("first")), Hang(then=Reply("second")))
    results: list[str] = []

    def call() -> None:
        results.append(stream_text(client_for(fake_ollama.url))[0])

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    fake_ollama.wait_for_chats(2)  # both are in flight at once: the server is concurrent
    assert results == []
    fake_ollama.release()
    for t in threads:
        t.join(5)
    assert sorted(results) == ["first", "second"]


def test_client_hanging_up_is_observed(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Hang())
    client = httpx.Client(base_url=fake_ollama.url, timeout=httpx.Timeout(5, read=0.2))
    with pytest.raises(httpx.ReadTimeout):
        client.post("/api/chat", json={"model": "llama3.2", "messages": MSG})
    client.close()
    assert fake_ollama.chat_requests[0].disconnected.wait(5)


def test_stop_is_quick_with_a_hanging_request() -> None:
    fake = FakeOllama().start()
    fake.script(Hang())
    errors: list[BaseException] = []

    def call() -> None:
        try:
            stream_text(client_for(fake.url))
        except BaseException as exc:  # recorded for the assertion
            errors.append(exc)

    t = threading.Thread(target=call)
    t.start()
    fake.wait_for_chats(1)
    began = time.monotonic()
    fake.stop()
    assert time.monotonic() - began < 2
    t.join(5)
    assert not t.is_alive() and isinstance(errors[0], httpx.RemoteProtocolError)


def test_chat_loads_the_model_and_records_bodies(fake_ollama: FakeOllama) -> None:
    client = client_for(fake_ollama.url)
    assert client.ps().models == []
    client.chat(model="llama3.2", messages=MSG, options={"temperature": 0.1, "num_predict": 9})
    assert [m.model for m in client.ps().models] == ["llama3.2:latest"]
    body = fake_ollama.chat_bodies[0]
    assert body["options"] == {"temperature": 0.1, "num_predict": 9} and body["stream"] is False
    assert json.loads(json.dumps(body))["messages"][0]["content"] == MSG[0]["content"]


def test_closed_port_refuses() -> None:
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{closed_port_url()}/api/tags")
