"""A real HTTP server on loopback that speaks the parts of the OpenAI API that compatible servers share.

What llama.cpp's server, LM Studio, vLLM, LiteLLM and Ollama's ``/v1`` answer: ``GET /v1/models`` and
``POST /v1/chat/completions``, streamed as server-sent events (``data: {chunk}`` lines, ``data: [DONE]``
last) or, with ``stream: false``, one JSON completion. It is :class:`~tests.fakeollama.FakeOllama`'s
server (the same loop thread, recording, ``script`` queue and behaviours: :class:`Reply`, :class:`Fail`,
:class:`Drop`, :class:`Hang`, :class:`StreamError`) answering in the OpenAI shapes, so a test scripts
it the same way. Like the servers it stands for, it can be told to:

* want a key (``key=``): a request without ``Authorization: Bearer <key>`` gets HTTP 401 with OpenAI's
  error body; ``models_public=True`` leaves ``/v1/models`` open, as llama.cpp's server does;
* take JSON schemas in some shapes only (``schema_shapes``): ``("json_schema",)`` as vLLM and llama.cpp's
  server, ``("json_object",)`` as llama-cpp-python's server (``{"type": "json_object", "schema": …}``; a
  ``json_schema`` is refused with FastAPI's 422 naming ``response_format``), ``()`` none at all;
* refuse ``stream_options`` (``usage_option=False``: HTTP 400 naming it, as a strict server does);
* think, for a :class:`FakeModel` with ``thinking=True``, in the delta field ``reasoning`` names
  (``reasoning_content``, ``reasoning``) or ``"inline"``: a ``<think>`` block at the head of the content;
* report llama.cpp's ``timings`` (``timings=True``) and its context on ``GET /props`` (``n_ctx=``: a request
  whose prompt words and ``max_tokens`` pass it is refused with HTTP 400, as llama.cpp refuses it;
  ``props=False``: refused without ``/props`` to say so, as llama-cpp-python's server), and list
  a model's context as vLLM does (``list_context=True``: ``max_model_len``);
* answer a streamed request with one JSON completion (``streams=False``: a server that ignores ``stream``).

``max_tokens`` bounds answer and thinking together (``finish_reason: "length"``), and the prompt words the
"KV cache" shares with the previous call are not read again (``timings.prompt_n``), as with the Ollama fake.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakeollama import (
    Behaviour,
    Drop,
    Fail,
    FakeModel,
    FakeOllama,
    Hang,
    RecordedRequest,
    Reply,
    Responder,
    StreamError,
    _pieces,
    closed_port_url,
    not_ollama_server,
)

__all__ = ["Drop", "Fail", "FakeModel", "FakeOpenAI", "Hang", "Reply", "StreamError", "closed_port_url",
           "not_ollama_server"]

CHAT = "/v1/chat/completions"


class FakeOpenAI(FakeOllama):
    """The server (see the module docstring). ``base_url`` is what ``--base-url`` takes."""

    def __init__(
        self,
        *,
        models: tuple[FakeModel | str, ...] | list[FakeModel | str] = ("qwen2.5-coder-1.5b-instruct",),
        responder: Responder | None = None,
        key: str | None = None,
        models_public: bool = False,
        schema_shapes: tuple[str, ...] = ("json_schema",),
        usage_option: bool = True,
        reasoning: str = "reasoning_content",
        timings: bool = False,
        list_context: bool = False,
        streams: bool = True,
        n_ctx: int | None = None,
        props: bool = True,
        honour_max_tokens: bool = True,
        port: int = 0,
    ) -> None:
        super().__init__(models=(), responder=responder, port=port, honour_num_predict=honour_max_tokens)
        self.models = [m if isinstance(m, FakeModel) else FakeModel(m) for m in models]
        self.key = key
        self.models_public = models_public
        self.schema_shapes = schema_shapes
        self.usage_option = usage_option
        self.reasoning = reasoning
        self.timings = timings
        self.list_context = list_context
        self.streams = streams
        self.n_ctx = n_ctx
        self.props = props

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def is_chat(self, rec: RecordedRequest) -> bool:
        """A chat completion with messages (not the backend's check, which sends none)."""
        return rec.path == CHAT and isinstance(rec.body, dict) and "messages" in rec.body

    @property
    def probes(self) -> list[RecordedRequest]:
        """Chat requests without messages: the backend's check of the key and the endpoint."""
        return [r for r in self.requests if r.path == CHAT and not self.is_chat(r)]

    # ----- HTTP ------------------------------------------------------------------------
    async def _stream_head(self, writer: asyncio.StreamWriter) -> None:
        await self._send(writer, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")

    async def _chunk(self, writer: asyncio.StreamWriter, obj: dict[str, Any]) -> None:
        event = b"data: " + json.dumps(obj).encode() + b"\n\n"
        await self._send(writer, f"{len(event):x}\r\n".encode() + event + b"\r\n")

    def _authorised(self, rec: RecordedRequest) -> bool:
        if self.key is None:
            return True
        return rec.headers.get("authorization", "") == f"Bearer {self.key}"

    @staticmethod
    def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    async def _dispatch(self, rec: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        route = (rec.method, rec.path)
        if route == ("GET", "/v1/models"):
            if not self.models_public and not self._authorised(rec):
                await self._json(writer, 401, self._error("Incorrect API key provided", code="invalid_api_key"))
                return True
            await self._json(writer, 200, {"object": "list", "data": [self._entry(m) for m in self.models]})
            return True
        if route == ("POST", CHAT):
            return await self._completions(rec, reader, writer)
        if route == ("GET", "/props") and self.n_ctx is not None and self.props:
            await self._json(writer, 200, {"default_generation_settings": {"n_ctx": self.n_ctx}, "total_slots": 1})
            return True
        await self._send(writer, b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nNot Found")
        return True

    def _entry(self, m: FakeModel) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": m.name, "object": "model", "created": 1735689600, "owned_by": "fake"}
        if self.list_context:
            entry["max_model_len"] = m.context_length
        return entry

    def _find(self, name: str) -> FakeModel | None:
        return next((m for m in self.models if m.name == name), None)

    # ----- /v1/chat/completions ----------------------------------------------------------
    async def _completions(self, rec: RecordedRequest, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> bool:
        if not self._authorised(rec):
            rec.behaviour = "unauthorised"
            await self._json(writer, 401, self._error("Incorrect API key provided", code="invalid_api_key"))
            return True
        body: dict[str, Any] = rec.body if isinstance(rec.body, dict) else {}
        refused = self._refusal(body)
        if refused is not None:
            rec.behaviour = "refused"
            await self._json(writer, refused[0], refused[1])
            return True
        model = self._find(str(body.get("model") or ""))
        if model is None:
            rec.behaviour = "missing-model"
            await self._json(writer, 404, self._error(f"The model `{body.get('model')}` does not exist",
                                                      code="model_not_found"))
            return True
        with self._cond:
            behaviour: Behaviour = self._queue.popleft() if self._queue else Reply(self.responder)
        return await self._run(behaviour, model, body, rec, reader, writer)

    def _refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """What a validating server answers a request it does not take (None: it takes it)."""
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return 400, self._error("'messages' is required and must be a non-empty array")
        shape = body.get("response_format")
        if isinstance(shape, dict) and shape.get("type") not in self.schema_shapes:
            if "json_object" in self.schema_shapes:  # llama-cpp-python: FastAPI's validation error
                return 422, {"detail": [{"type": "literal_error", "loc": ["body", "response_format", "type"],
                                         "msg": "Input should be 'text' or 'json_object'"}]}
            return 400, self._error(f"response_format type {shape.get('type')!r} is not supported")
        if self.n_ctx is not None:
            words = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
            if words + int(body.get("max_tokens") or 0) > self.n_ctx:
                return 400, self._error(f"the request exceeds the available context size ({self.n_ctx} tokens)")
        if "stream_options" in body and not self.usage_option:
            return 400, self._error("Unrecognized request argument supplied: stream_options")
        return None

    async def _run(self, b: Behaviour, model: FakeModel, body: dict[str, Any], rec: RecordedRequest,
                   reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        if isinstance(b, Fail):
            rec.behaviour = "Fail"
            await self._json(writer, b.status, self._error(b.error, kind="server_error"))
            return True
        if isinstance(b, Hang) and b.then is None:
            b = Hang(b.after_chunks, b.text, Reply(self.responder))
        return await super()._run(b, model, body, rec, reader, writer)

    def _chunk_obj(self, model: FakeModel, content: str, done: bool, thinking: str | None = None) -> dict[str, Any]:
        delta: dict[str, Any] = {}
        if thinking is not None:
            delta[self.reasoning] = thinking
        if content or thinking is None:
            delta["content"] = content
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model.name, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}

    async def _reply(self, b: Reply, model: FakeModel, body: dict[str, Any], rec: RecordedRequest,
                     reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        started = time.perf_counter_ns()
        text = b.text(body) if callable(b.text) else b.text
        pieces = _pieces(text)
        thoughts: list[str] = []
        if model.thinking:
            thought = b.thinking if b.thinking is not None else " ".join(
                f"hmm{i % 7}," for i in range(model.think_words))
            thoughts = _pieces(thought)
        finish = "stop"
        cap = body.get("max_tokens")
        if self.honour_num_predict and isinstance(cap, int) and 0 < cap < len(thoughts) + len(pieces):
            thoughts = thoughts[:cap]
            pieces, finish = pieces[: max(0, cap - len(thoughts))], "length"
        fresh = self._prompt_eval(body)
        evaluated = b.prompt_eval_count if b.prompt_eval_count is not None else fresh
        reading = evaluated / b.prompt_tps if b.prompt_tps else 0.0
        if (b.latency_s or reading) and not await self._pause(reader, rec, b.latency_s + reading, None):
            return False
        whole = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or []) + 12
        written = b.eval_count if b.eval_count is not None else len(thoughts) + len(pieces)
        usage = {"prompt_tokens": whole, "completion_tokens": written, "total_tokens": whole + written}
        if self.reasoning == "inline" and thoughts:
            pieces, thoughts = ["<think>", *thoughts, "</think>\n\n", *pieces], []
        if not body.get("stream") or not self.streams:
            message: dict[str, Any] = {"role": "assistant", "content": "".join(pieces)}
            if thoughts:
                message[self.reasoning] = "".join(thoughts)
            await self._json(writer, 200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model.name,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
            return True
        piece_s = 1 / b.output_tps if b.output_tps else b.chunk_delay_s
        await self._stream_head(writer)
        first = self._chunk_obj(model, "", False)
        first["choices"][0]["delta"] = {"role": "assistant", "content": ""}
        await self._chunk(writer, first)
        chunks = [("", t) for t in thoughts] + [(p, None) for p in pieces]
        for i, (piece, thinking) in enumerate(chunks):
            await self._chunk(writer, self._chunk_obj(model, piece, False, thinking))
            if piece_s and i + 1 < len(chunks) and not await self._pause(reader, rec, piece_s, None):
                return False
        last = self._chunk_obj(model, "", True)
        last["choices"][0].update(delta={}, finish_reason=finish)
        if self.timings:
            elapsed_ms = (time.perf_counter_ns() - started) / 1e6
            last["timings"] = {"prompt_n": evaluated, "prompt_ms": reading * 1000 if reading else 2.0,
                               "predicted_n": written,
                               "predicted_ms": written / b.output_tps * 1000 if b.output_tps else elapsed_ms}
        await self._chunk(writer, last)
        if isinstance(body.get("stream_options"), dict) and body["stream_options"].get("include_usage"):
            tail = self._chunk_obj(model, "", True)
            tail.update(choices=[], usage=usage)
            await self._chunk(writer, tail)
        await self._chunk_raw(writer, b"data: [DONE]\n\n")
        await self._send(writer, b"0\r\n\r\n")
        return True

    async def _chunk_raw(self, writer: asyncio.StreamWriter, event: bytes) -> None:
        await self._send(writer, f"{len(event):x}\r\n".encode() + event + b"\r\n")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI serving one model (``qwen2.5-coder-1.5b-instruct``), stopped afterwards."""
    with FakeOpenAI() as fake:
        yield fake
