"""A real HTTP server on loopback that speaks the parts of Ollama's API we use.

Why a real server and not a mock: the summariser talks to Ollama through the ``ollama``
client and httpx, and the failures users hit (refused connections, a runner crashing
mid-stream, a model that never answers, a cancelled request) only look right when they
travel over a socket. The server runs its own asyncio loop in a daemon thread, so both
sync (TUI/Pilot) and async tests can use it, and ``stop()`` is quick even while requests hang.

Scripting: ``script(*behaviours)`` queues one behaviour per ``/api/chat`` call; when the
queue is empty the ``responder(request_json) -> text`` answers. Every request is recorded
(method, path, JSON body, whether the client went away) so tests can assert what was sent.

Like Ollama it also:

* reuses the "KV cache" of the prompt prefix a call shares with the previous chat call:
  ``prompt_eval_count`` counts only the prompt words after that common prefix (the words of
  system + user, plus a template overhead the first time);
* thinks, for a :class:`FakeModel` with ``thinking=True``: ``/api/show`` lists the
  ``thinking`` capability (and, when given, the ``think`` values the model takes), and the
  answer streams ``message.thinking`` chunks first unless the request turned thinking off
  with a value the model accepts (a gpt-oss-like model, ``think_values=["low", "medium",
  "high"]``, ignores ``false``). Thinking counts against ``num_predict``;
* records a ``format`` (a JSON schema) like any other field; a scripted answer is sent as
  written, so tests script the JSON a grammar would have produced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Union

import pytest

Responder = Callable[[dict[str, Any]], str]


@dataclass
class Reply:
    """Answer with ``text`` (or ``text(request_json)``), streamed one word-piece per chunk."""

    text: str | Responder
    latency_s: float = 0.0  # before the first byte (model load / prompt eval)
    chunk_delay_s: float = 0.0  # between streamed chunks
    prompt_eval_count: int | None = None  # override the server's own count
    eval_count: int | None = None
    thinking: str | None = None  # what a thinking model thinks first (None: the model's default)
    prompt_tps: float | None = None
    """A model of constant speed: the prompt's fresh words (``prompt_eval_count``) take this many a
    second before the first byte, on top of ``latency_s`` (the time grows with the prompt)."""
    output_tps: float | None = None
    """…and the answer streams at this many pieces a second (its time grows with the answer). The final
    chunk reports the durations these speeds give (``prompt_eval_duration``, ``eval_duration``), as Ollama
    reports its runner's time, not what the pauses took on a busy machine."""
    load_s: float = 0.0
    """The model loads for this long before it reads the prompt (a cold model), reported as ``load_duration``
    unless ``report_load`` is False (a server that does not say: its first call is only slower)."""
    report_load: bool = True
    reported_s: float | None = None
    """The model's time the final chunk reports (a tenth as ``prompt_eval_duration``, the rest as
    ``eval_duration``) whatever the call took: a queued or remote host, whose runner's time is not the wait."""


@dataclass
class Fail:
    """An HTTP error with Ollama's ``{"error": ...}`` body (500 = runner crashed)."""

    status: int = 500
    error: str = "llama runner process has terminated: exit status 2"


@dataclass
class Drop:
    """Close the connection after ``after_chunks`` chunks (0: before any byte is sent)."""

    after_chunks: int = 0
    text: str = "This answer is cut off before it ends because the runner went away"


@dataclass
class Hang:
    """Send ``after_chunks`` chunks, then stall until ``release()``, the client leaves, or stop.

    After a release the request carries on with ``then`` (default: the responder).
    """

    after_chunks: int = 0
    text: str = "A slow answer that stalls part way through"
    then: Behaviour | None = None


@dataclass
class StreamError:
    """Stream some chunks, then an in-band ``{"error": ...}`` line, as Ollama does mid-answer."""

    after_chunks: int = 1
    error: str = "an error was encountered while running the model: unexpected EOF"
    text: str = "Partial text before the error"


Behaviour = Union[Reply, Fail, Drop, Hang, StreamError]


def empty() -> Reply:
    """The model answers with nothing at all."""
    return Reply("")


def longer_than_input(factor: float = 2.0) -> Reply:
    """Echo the last message ``factor`` times over: always longer than what was sent."""

    def text(body: dict[str, Any]) -> str:
        messages = body.get("messages") or [{"content": "nothing"}]
        words = str(messages[-1].get("content", "")).split() or ["nothing"]
        return " ".join(words * max(1, math.ceil(factor)))

    return Reply(text)


def continues_chat() -> Reply:
    """The classic failure of a small model: it answers the chat instead of summarising it."""
    return Reply("Sure! Here's the next step: run the tests again and tell me what you see.")


def default_responder(body: dict[str, Any]) -> str:
    """A short, fixed summary: shorter than any realistic input, so it is accepted."""
    return "The user and the assistant discussed the task; the assistant proposed a fix."


@dataclass
class FakeModel:
    """One installed model, with what /api/tags, /api/ps and /api/show report about it."""

    name: str
    context_length: int = 8192
    family: str = "llama"
    parameter_size: str = "3.2B"
    quantization_level: str = "Q4_K_M"
    size: int = 2_019_393_189
    thinking: bool = False  # has the "thinking" capability and thinks unless turned off
    think_values: list[Any] | None = None  # what /api/show lists under "thinking" (None: not listed)
    think_words: int = 40  # how long it thinks when not told what (Reply.thinking)
    ignores_think: bool = False  # an older server: thinks whatever ``think`` says

    def thinks(self, think: Any) -> bool:
        """Whether a request with this ``think`` value makes the model think."""
        if not self.thinking:
            return False
        if self.ignores_think:
            return True
        if think is False:
            # a model that cannot be turned off (gpt-oss) ignores false
            return self.think_values is not None and False not in self.think_values
        return True

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.name.encode()).hexdigest()

    def details(self) -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": self.family,
            "families": [self.family],
            "parameter_size": self.parameter_size,
            "quantization_level": self.quantization_level,
        }


@dataclass
class RecordedRequest:
    """What the server saw of one request, and what became of it."""

    method: str
    path: str
    body: Any
    behaviour: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    server_seconds: float = 0.0  # time spent handling it, for overhead benchmarks
    finished: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _pieces(text: str) -> list[str]:
    """Split into word-ish pieces whose concatenation is exactly ``text`` (≈ tokens)."""
    return re.findall(r"\S+\s*|\s+", text)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def free_port() -> int:
    """A port that was free a moment ago (bind to 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port_url() -> str:
    """URL of a port nothing listens on: what a stopped Ollama looks like."""
    return f"http://127.0.0.1:{free_port()}"


class FakeOllama:
    """The server. Use ``with FakeOllama() as fake:`` or the ``fake_ollama`` fixture."""

    def __init__(
        self,
        *,
        models: tuple[FakeModel | str, ...] | list[FakeModel | str] = ("llama3.2:latest",),
        loaded: tuple[str, ...] | list[str] = (),
        responder: Responder | None = None,
        port: int = 0,
        version: str = "0.9.6",
        honour_num_predict: bool = True,
        auto_load: bool = True,
    ) -> None:
        self.models = [m if isinstance(m, FakeModel) else FakeModel(_canonical(m)) for m in models]
        self.loaded = [_canonical(m) for m in loaded]
        self.responder: Responder = responder or default_responder
        self.version = version
        self.honour_num_predict = honour_num_predict
        self.auto_load = auto_load
        self._port = port
        self._queue: deque[Behaviour] = deque()
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._conn_tasks: set[asyncio.Task[None]] = set()
        self._release: asyncio.Event | None = None
        self._last_prompt: list[str] = []
        self.prefix_cache = True
        """Count only the prompt words after the prefix shared with the previous chat call."""
        self.chats_answered = 0
        """Chat calls answered whole (a clock of finished calls: one still being answered is not in it)."""

    # ----- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOllama:
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # handed to the caller below
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fake-ollama", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    async def _open(self) -> None:
        self._release = asyncio.Event()
        self._server = await asyncio.start_server(self._on_connection, "127.0.0.1", self._port)
        self._port = int(self._server.sockets[0].getsockname()[1])

    def stop(self) -> None:
        """Close the listener and abort every connection, hanging ones included."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or loop.is_closed():
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            tasks = list(self._conn_tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            self._loop = self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ----- scripting and inspection ----------------------------------------------------
    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next /api/chat calls, in order."""
        with self._cond:
            self._queue.extend(behaviours)

    @property
    def pending(self) -> int:
        """Scripted behaviours not used yet."""
        with self._cond:
            return len(self._queue)

    def release(self) -> None:
        """Let every currently hanging request carry on."""
        loop = self._loop
        if loop is None:
            return

        def swap() -> None:
            assert self._release is not None
            self._release.set()
            self._release = asyncio.Event()

        loop.call_soon_threadsafe(swap)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    def is_chat(self, rec: RecordedRequest) -> bool:
        """``rec`` is a model call (what ``script`` behaviours answer)."""
        return rec.path == "/api/chat"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if self.is_chat(r)]

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.chat_requests]

    def wait_for_chats(self, n: int = 1, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``n`` /api/chat requests arrived; raise on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                chats = [r for r in self._requests if self.is_chat(r)]
                if len(chats) >= n:
                    return chats
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {n} chat requests, got {len(chats)}")
                self._cond.wait(left)

    async def await_chats(self, n: int = 1, timeout: float = 5.0) -> list[RecordedRequest]:
        """``wait_for_chats`` without blocking the caller's event loop."""
        return await asyncio.to_thread(self.wait_for_chats, n, timeout)

    # ----- HTTP plumbing ---------------------------------------------------------------
    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conn_tasks.add(task)  # type: ignore[arg-type]
        # High-water mark 0: drain() waits for a full flush, so a gone client shows up at once.
        writer.transport.set_write_buffer_limits(high=0)
        keep = True
        try:
            while keep:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
                }
                length = int(headers.get("content-length", "0") or 0)
                raw = await reader.readexactly(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                rec = RecordedRequest(method=method, path=target.split("?", 1)[0], body=body, headers=headers)
                with self._cond:
                    self._requests.append(rec)
                    self._cond.notify_all()
                started = time.perf_counter()
                try:
                    keep = await self._dispatch(rec, reader, writer)
                except (ConnectionError, OSError):
                    rec.disconnected.set()
                    keep = False
                finally:
                    rec.server_seconds = time.perf_counter() - started
                    rec.finished.set()
                keep = keep and headers.get("connection", "").lower() != "close"
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # stop(): end quietly (asyncio's stream callback logs cancelled handlers on 3.11)
        finally:
            self._conn_tasks.discard(task)  # type: ignore[arg-type]
            writer.transport.abort()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    async def _json(self, writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        reason = {200: "OK", 404: "Not Found", 400: "Bad Request"}.get(status, "Error")
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(data)}\r\nDate: {_now()}\r\n\r\n"
        )
        await self._send(writer, head.encode() + data)

    async def _chunk(self, writer: asyncio.StreamWriter, obj: dict[str, Any]) -> None:
        line = json.dumps(obj).encode() + b"\n"
        await self._send(writer, f"{len(line):x}\r\n".encode() + line + b"\r\n")

    async def _stream_head(self, writer: asyncio.StreamWriter) -> None:
        await self._send(
            writer,
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n",
        )

    async def _pause(
        self, reader: asyncio.StreamReader, rec: RecordedRequest, seconds: float | None, until: asyncio.Event | None
    ) -> bool:
        """Wait for a delay or an event while watching for the client to hang up.

        Returns False (and marks the request) if the client closed the connection.
        """
        eof = asyncio.ensure_future(reader.read(1))
        waits: list[asyncio.Future[Any]] = [eof]
        if seconds is not None:
            waits.append(asyncio.ensure_future(asyncio.sleep(seconds)))
        if until is not None:
            waits.append(asyncio.ensure_future(until.wait()))
        try:
            done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for fut in waits:
                fut.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        if eof in done:
            rec.disconnected.set()
            return False
        return True

    async def _dispatch(self, rec: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        route = (rec.method, rec.path)
        if route == ("GET", "/api/version"):
            await self._json(writer, 200, {"version": self.version})
        elif route == ("GET", "/api/tags"):
            await self._json(writer, 200, {"models": [self._tag(m) for m in self.models]})
        elif route == ("GET", "/api/ps"):
            await self._json(writer, 200, {"models": [self._ps(m) for m in self._loaded_models()]})
        elif route == ("POST", "/api/show"):
            body = rec.body if isinstance(rec.body, dict) else {}
            name = str(body.get("model") or body.get("name") or "")
            model = self._find(name)
            if model is None:
                await self._json(writer, 404, {"error": f'model "{name}" not found, try pulling it first'})
            else:
                await self._json(writer, 200, self._show(model))
        elif route == ("POST", "/api/chat"):
            return await self._chat(rec, reader, writer)
        elif rec.method in ("GET", "HEAD") and rec.path == "/":
            data = b"Ollama is running"
            await self._send(writer, b"HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n" + data)
        else:
            await self._send(writer, b"HTTP/1.1 404 Not Found\r\nContent-Length: 18\r\n\r\n404 page not found")
        return True

    # ----- model catalogue -------------------------------------------------------------
    def _find(self, name: str) -> FakeModel | None:
        wanted = _canonical(name) if name else ""
        return next((m for m in self.models if _canonical(m.name) == wanted), None)

    def _loaded_models(self) -> list[FakeModel]:
        return [m for m in self.models if _canonical(m.name) in self.loaded]

    def _tag(self, m: FakeModel) -> dict[str, Any]:
        return {
            "name": m.name,
            "model": m.name,
            "modified_at": "2025-05-01T10:00:00.000000Z",
            "size": m.size,
            "digest": m.digest,
            "details": m.details(),
        }

    def _ps(self, m: FakeModel) -> dict[str, Any]:
        expires = (datetime.now(timezone.utc) + timedelta(minutes=5)).isoformat().replace("+00:00", "Z")
        return {
            "name": m.name,
            "model": m.name,
            "size": m.size,
            "digest": m.digest,
            "details": m.details(),
            "expires_at": expires,
            "size_vram": m.size,
            "context_length": 4096,
        }

    def _show(self, m: FakeModel) -> dict[str, Any]:
        return {
            "license": "",
            "modelfile": f"# Modelfile generated by \"ollama show\"\nFROM {m.name}\n",
            "parameters": 'stop                           "<|eot_id|>"',
            "template": "{{ if .System }}<|start_header_id|>system<|end_header_id|>\n\n{{ .System }}<|eot_id|>{{ end }}",
            "details": m.details(),
            "model_info": {
                "general.architecture": m.family,
                "general.parameter_count": 3_212_749_888,
                "general.quantization_version": 2,
                f"{m.family}.context_length": m.context_length,
                f"{m.family}.embedding_length": 3072,
                f"{m.family}.block_count": 28,
            },
            "capabilities": ["completion", "tools"] + (["thinking"] if m.thinking else []),
            "modified_at": "2025-05-01T10:00:00.000000Z",
        } | ({"thinking": {"values": m.think_values, "default": m.think_values[0]}} if m.think_values else {})

    # ----- /api/chat ---------------------------------------------------------------------
    async def _chat(self, rec: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        body: dict[str, Any] = rec.body if isinstance(rec.body, dict) else {}
        name = str(body.get("model") or "")
        model = self._find(name)
        if model is None:
            rec.behaviour = "missing-model"
            await self._json(writer, 404, {"error": f'model "{name}" not found, try pulling it first'})
            return True
        if self.auto_load and _canonical(model.name) not in self.loaded:
            self.loaded.append(_canonical(model.name))
        with self._cond:
            behaviour: Behaviour = self._queue.popleft() if self._queue else Reply(self.responder)
        return await self._run(behaviour, model, body, rec, reader, writer)

    def _chunk_obj(self, model: FakeModel, content: str, done: bool, thinking: str | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thinking is not None:
            message["thinking"] = thinking
        return {"model": model.name, "created_at": _now(), "message": message, "done": done}

    def _prompt_eval(self, body: dict[str, Any]) -> int:
        """Words of the prompt the model evaluates anew: after the prefix shared with the
        previous chat call (as Ollama reuses its KV cache), all of them the first time."""
        words = [w for m in body.get("messages") or [] for w in str(m.get("content", "")).split()]
        with self._cond:
            last, self._last_prompt = self._last_prompt, words
        if not self.prefix_cache or not last:
            return len(words) + 12
        same = 0
        for a, b in zip(words, last):
            if a != b:
                break
            same += 1
        return max(1, len(words) - same)

    async def _run(
        self,
        b: Behaviour,
        model: FakeModel,
        body: dict[str, Any],
        rec: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        rec.behaviour = type(b).__name__
        if isinstance(b, Fail):
            await self._json(writer, b.status, {"error": b.error})
            return True
        if isinstance(b, Drop):
            if b.after_chunks > 0:
                await self._stream_head(writer)
                for piece in _pieces(b.text)[: b.after_chunks]:
                    await self._chunk(writer, self._chunk_obj(model, piece, False))
            return False  # the connection is closed by the caller
        if isinstance(b, StreamError):
            await self._stream_head(writer)
            for piece in _pieces(b.text)[: b.after_chunks]:
                await self._chunk(writer, self._chunk_obj(model, piece, False))
            await self._chunk(writer, {"error": b.error})
            await self._send(writer, b"0\r\n\r\n")
            return True
        if isinstance(b, Hang):
            release = self._release  # taken before any await, so a release() racing us still counts
            if b.after_chunks > 0:
                await self._stream_head(writer)
                for piece in _pieces(b.text)[: b.after_chunks]:
                    await self._chunk(writer, self._chunk_obj(model, piece, False))
            assert release is not None
            if not await self._pause(reader, rec, None, release):
                return False
            if b.after_chunks > 0:
                await self._send(writer, b"0\r\n\r\n")  # end the half-sent stream cleanly
                return True
            return await self._run(b.then or Reply(self.responder), model, body, rec, reader, writer)
        return await self._reply(b, model, body, rec, reader, writer)

    def _answered(self) -> None:
        """A chat answer is about to be sent whole: counted first, so no client sees it uncounted."""
        with self._cond:
            self.chats_answered += 1

    async def _reply(
        self,
        b: Reply,
        model: FakeModel,
        body: dict[str, Any],
        rec: RecordedRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        started = time.perf_counter_ns()
        text = b.text(body) if callable(b.text) else b.text
        pieces = _pieces(text)
        thoughts: list[str] = []
        if model.thinks(body.get("think")):
            thought = b.thinking if b.thinking is not None else " ".join(
                f"hmm{i % 7}," for i in range(model.think_words))
            thoughts = _pieces(thought)
        done_reason = "stop"
        num_predict = (body.get("options") or {}).get("num_predict")
        if self.honour_num_predict and isinstance(num_predict, int) and 0 < num_predict < len(thoughts) + len(pieces):
            thoughts = thoughts[:num_predict]
            pieces, done_reason = pieces[: max(0, num_predict - len(thoughts))], "length"
        counted = self._prompt_eval(body)  # always: it keeps the prefix the next call shares
        prompt_eval = b.prompt_eval_count if b.prompt_eval_count is not None else counted
        reading = prompt_eval / b.prompt_tps if b.prompt_tps else 0.0
        wait = b.load_s + b.latency_s + reading
        if wait and not await self._pause(reader, rec, wait, None):
            return False
        piece_s = 1 / b.output_tps if b.output_tps else b.chunk_delay_s
        stats = {
            "done_reason": done_reason,
            "load_duration": (int(b.load_s * 1e9) + 1_000_000) if b.report_load else 0,
            "prompt_eval_count": prompt_eval,
            "prompt_eval_duration": int(reading * 1e9) if reading else 2_000_000,
            "eval_count": b.eval_count if b.eval_count is not None else len(thoughts) + len(pieces),
        }
        if b.reported_s is not None:
            stats["prompt_eval_duration"] = max(1, int(b.reported_s * 1e8))
        if body.get("stream", True) is False:
            final = self._chunk_obj(model, "".join(pieces), True, "".join(thoughts) if thoughts else None)
            elapsed = time.perf_counter_ns() - started
            reported = int(b.reported_s * 9e8) if b.reported_s is not None else elapsed - int(b.load_s * 1e9)
            final.update(stats, total_duration=elapsed, eval_duration=max(1, reported))
            self._answered()
            await self._json(writer, 200, final)
            return True
        await self._stream_head(writer)
        chunks = [("", t) for t in thoughts] + [(p, None) for p in pieces]
        for i, (piece, thinking) in enumerate(chunks):
            await self._chunk(writer, self._chunk_obj(model, piece, False, thinking))
            if piece_s and i + 1 < len(chunks) and not await self._pause(reader, rec, piece_s, None):
                return False
        final = self._chunk_obj(model, "", True)
        now = time.perf_counter_ns()
        # a model of constant speed reports the time its tokens take at that speed, as Ollama reports its
        # runner's own time: the pauses above also wait on this machine's scheduler, busy or not
        modelled = int(stats["eval_count"] / b.output_tps * 1e9) if b.output_tps else None
        if b.reported_s is not None:
            modelled = max(1, int(b.reported_s * 9e8))
        final.update(stats, total_duration=now - started,
                     eval_duration=modelled if modelled is not None else now - started - int(b.load_s * 1e9))
        self._answered()
        await self._chunk(writer, final)
        await self._send(writer, b"0\r\n\r\n")
        return True


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A started FakeOllama with one installed model (``llama3.2:latest``), stopped afterwards."""
    with FakeOllama() as fake:
        yield fake


@contextmanager
def not_ollama_server(folder: Path) -> Iterator[str]:
    """A real HTTP server on loopback that is not Ollama: the standard library's file server over
    ``folder`` (what ``python3 -m http.server`` answers: 404 with an HTML page on /api/…). Yields its URL."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # the base class names it so
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, name="not-ollama", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
