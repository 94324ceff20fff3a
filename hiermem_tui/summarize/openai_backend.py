"""An OpenAI-compatible server as a backend: llama.cpp's server, LM Studio, vLLM, LiteLLM, Ollama's ``/v1``.

It speaks two endpoints under the base URL (which ends in ``/v1``; a URL given without a path gets it):

- ``GET /models``: what the server serves. :meth:`OpenAIBackend.check` reads it first: an HTTP error
  other than 401/403, or an answer that is not a model list, means the URL is not an OpenAI-compatible
  server; the model asked for must be listed (``x`` and ``x:latest`` are the same model, as Ollama names
  them); with no model asked for, a server that serves exactly one model (llama.cpp's, vLLM's) uses it.
  Where the list says so (vLLM's ``max_model_len``, ``context_length``), or llama.cpp's ``/props`` beside
  ``/v1`` does (the ``n_ctx`` it was started with), the model's context bounds the prompts. Then one request without messages (``max_tokens`` 1) to ``POST /chat/completions``
  learns, before any summary is asked for, whether the key is refused where ``/models`` is public
  (llama.cpp's server) and whether the server has chat completions at all.
- ``POST /chat/completions`` with ``stream: true``: server-sent events, one JSON chunk per ``data:``
  line, ``data: [DONE]`` last. ``max_tokens`` is the answer's budget plus the thinking headroom, and
  reading stops past it whatever the server does (``stream.StreamState.over``), reported as ``length``.
  ``stream_options.include_usage`` asks for the token counts; a server that refuses the option
  (HTTP 400/422 naming it) gets the same call without it, and never again.

The key is ``$OPENAI_API_KEY``, sent as a bearer token; it is never written anywhere.

**Thinking.** ``reasoning_content`` (DeepSeek's name, vLLM's and llama.cpp's parsers) or ``reasoning``
(Ollama's ``/v1``, LM Studio, OpenRouter) in a chunk's delta, or a leading ``<think>`` block in the
content (a server that does not separate it), is counted as thinking and never part of the answer.
There is no standard way to ask such a server not to think, so a model seen thinking gets headroom
for it from then on, as the Ollama backend gives one that thinks although asked not to.

**Structured outputs** (the ``sections`` format): ``response_format`` with ``type: json_schema`` (the
OpenAI shape: vLLM, llama.cpp's server, LM Studio, LiteLLM, Ollama). A server that refuses it (HTTP
400/422 naming ``response_format``) is asked with ``type: json_object`` and the schema beside it (the
shape llama-cpp-python's server takes), and one that refuses that too gets no schema: :attr:`structured`
turns false and the summariser asks it as it asks a server without structured outputs.

**Speed.** llama.cpp's server reports ``timings`` (prompt and generation milliseconds); elsewhere the
time to the first streamed token counts as reading the prompt and the time from there to the last as
writing the answer (wall-clock time, queueing included), over the server's token counts
(``usage``) or, without them, the streamed chunks and our count of the prompt's fresh part.

Errors are sorted as the Ollama backend sorts them: BackendUnavailable (unreachable, connection lost,
the key refused, not an OpenAI-compatible server), ModelMissing (the model is not served), ServerError
(HTTP 5xx or 429: the same call once more), ModelError (this call failed: the next tier).

Why httpx and not the official ``openai`` client: the servers are OpenAI-*compatible*, and what tells
them apart is in fields the client's types do not name (``reasoning``/``reasoning_content``, llama.cpp's
``timings``, llama-cpp-python's ``json_object`` schema) and in the exact status and body of a refusal,
which decide whether the URL is wrong, the key is, or one option is. httpx is already here (the
``ollama`` client runs on it), the protocol is two endpoints and a line format, and the client would
add ~0.5 s of import and its own retries and timeouts to switch off.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from hiermem_tui.config import normalise_base_url
from hiermem_tui.summarize.local_host import start_advice
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.stream import InFlight, PromptPrefix, StreamState, prepare_prompt, thought_anyway_room
from hiermem_tui.summarize.transport import connection_error, timed_out
from hiermem_tui.summarize.types import (
    BackendUnavailable,
    ChunkCallback,
    Generation,
    ModelError,
    ModelMissing,
    ServerError,
    SummariserError,
)
from hiermem_tui.tokens import Tokenizer

KEY_ENV = "OPENAI_API_KEY"
"""The environment variable the key is read from (never a flag, never the settings file)."""
FORMAT_MODES = ("json_schema", "json_object", None)
"""How a JSON schema is sent, tried in this order until the server takes one (module docstring)."""
CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length")
"""Fields of a ``/models`` entry that give the model's context, where a server lists it."""


def api_key() -> str | None:
    """The key in ``$OPENAI_API_KEY`` (None when unset or blank)."""
    return os.environ.get(KEY_ENV, "").strip() or None


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def served_model(wanted: str, served: list[str]) -> str | None:
    """The served name for ``wanted``: the same id, else the same with ``x`` and ``x:latest`` taken as one."""
    if wanted in served:
        return wanted
    return next((name for name in served if _canonical(name) == _canonical(wanted)), None)


def error_detail(text: str) -> str:
    """The one line a server's error body says: ``{"error": {"message": …}}``, ``{"error": "…"}``,
    FastAPI's ``{"detail": …}``, ``{"message": …}``, else the body's first line."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    found: Any = None
    if isinstance(data, dict):
        err = data.get("error")
        found = err.get("message") if isinstance(err, dict) else err
        if not found:
            found = data.get("detail") or data.get("message")
    if found is not None and not isinstance(found, str):
        found = json.dumps(found, ensure_ascii=False)
    line = (found or text or "").strip().splitlines()
    return (line[0][:200] if line else "") or "no details"


def _unreachable(host: str, reason: str) -> BackendUnavailable:
    return BackendUnavailable(
        f"the OpenAI-compatible server at {host} is not reachable ({reason}); "
        f"{start_advice(host, 'openai')} or pass --base-url",
        host=host, reason=reason,
    )


def _not_compatible(host: str, reason: str) -> BackendUnavailable:
    return BackendUnavailable(f"{host} is not an OpenAI-compatible server ({reason}); pass the right --base-url",
                              host=host, reason=f"not an OpenAI-compatible server: {reason}")


def _key_refused(host: str, status: int, path: str, key: str | None) -> BackendUnavailable:
    if key:
        message = (f"{host} refused the key in ${KEY_ENV} (HTTP {status} on {path}); "
                   f"set {KEY_ENV} to a key it accepts")
    else:
        message = f"{host} wants a key (HTTP {status} on {path}); set {KEY_ENV} to one it accepts"
    return BackendUnavailable(message, host=host, reason=f"the key was refused (HTTP {status})")


def translate_error(exc: BaseException, host: str, model: str | None) -> SummariserError | None:
    """Our error for a failure of httpx or of reading an answer, or None if it is not one."""
    if isinstance(exc, SummariserError):
        return exc
    if (lost := connection_error(exc, model, lambda reason: _unreachable(host, reason))) is not None:
        return lost
    if isinstance(exc, (ValueError, httpx.DecodingError)):
        return ModelError(f"{host} sent a response that could not be read for model '{model}'")
    return None


@dataclass(slots=True)
class _End:
    """What the last chunks of a streamed answer said besides its text."""

    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None


class _Refused(Exception):
    """A chat call the server refused with an HTTP status (read before any chunk)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _number(data: dict[str, Any] | None, key: str) -> float | None:
    value = (data or {}).get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def client_for(base_url: str, key: str | None, timeout: httpx.Timeout, calls: InFlight | None = None) -> httpx.AsyncClient:
    """An HTTP client for the server at ``base_url`` (normalised), sending ``key`` as a bearer token; ``calls``:
    the backend's calls, told when each chat request is on the wire."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    hooks = calls.hooks() if calls is not None else {}
    return httpx.AsyncClient(base_url=normalise_base_url(base_url), headers=headers, timeout=timeout, event_hooks=hooks)


async def fetch_models(client: httpx.AsyncClient, host: str, key: str | None) -> tuple[list[str], dict[str, int | None]]:
    """The ids ``GET /models`` lists and the context of each where the list gives it. Raises
    BackendUnavailable for a server that refuses the key or is not OpenAI-compatible (an HTTP error, or
    an answer that is not a model list), and lets httpx's own errors through for the caller to sort."""
    path = f"{urlsplit(host).path}/models"
    resp = await client.get("/models")
    if resp.status_code in (401, 403):
        raise _key_refused(host, resp.status_code, path, key)
    if resp.status_code >= 500:
        raise BackendUnavailable(f"{host} failed on {path} (HTTP {resp.status_code}: {error_detail(resp.text)}); "
                                 "try again when it is up", host=host, reason=f"HTTP {resp.status_code} on {path}")
    if resp.status_code != 200:
        raise _not_compatible(host, f"HTTP {resp.status_code} on {path}")
    try:
        data = resp.json()
    except ValueError:
        data = None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                                for e in entries):
        raise _not_compatible(host, f"its answer on {path} is not a list of models")
    contexts: dict[str, int | None] = {}
    for entry in entries:
        found = [entry[k] for k in CONTEXT_FIELDS if isinstance(entry.get(k), int) and entry[k] > 0]
        contexts[entry["id"]] = found[0] if found else None
    return [str(e["id"]) for e in entries], contexts


class OpenAIBackend:
    """Summaries from an OpenAI-compatible server (see the module docstring)."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str | None,
        tokenizer: Tokenizer,
        *,
        timeout_s: float = 120,
        key: str | None = None,
        speed: ModelSpeed | None = None,
    ) -> None:
        self.host = normalise_base_url(base_url)
        self.model = model.strip() if model and model.strip() else None
        self.tokenizer = tokenizer
        self.timeout_s = timeout_s
        self._key = key if key is not None else api_key()
        # no read timeout of httpx's own: a slow CPU model may read a long prompt for minutes before
        # its first token; each call is bounded by call_timeout() instead
        self.calls = InFlight("/chat/completions")
        """This backend's calls: which overlapped, and when each request is on the wire."""
        self._client = client_for(self.host, self._key, httpx.Timeout(None, connect=min(10.0, timeout_s)), self.calls)
        self.speed = speed or ModelSpeed()
        """The model's measured speed (seeded from the store by the executor, updated per call)."""
        self.structured = False
        """Whether calls send a JSON schema (after :meth:`check`; false once the server refused every shape)."""
        self.served: list[str] = []
        """The model ids ``/models`` listed (after :meth:`check`)."""
        self._format_mode: str | None = FORMAT_MODES[0]
        self._usage_option = True
        self._context: dict[str, int | None] = {}
        self._think_extra: dict[str, int] = {}
        self._prefix = PromptPrefix(tokenizer)
        self._checked = False

    @property
    def _root(self) -> str:
        return urlsplit(self.host).path

    def _error(self, exc: Exception) -> Exception:
        err = translate_error(exc, self.host, self.model)
        if err is None:
            raise exc
        return err

    # ------------------------------------------------------------------ the server
    async def list_models(self) -> list[str]:
        """The ids ``GET /models`` lists (see :func:`fetch_models`); the contexts it gives are kept."""
        try:
            served, contexts = await fetch_models(self._client, self.host, self._key)
        except SummariserError:
            raise
        except Exception as exc:
            raise self._error(exc) from None
        self._context.update(contexts)
        self.served = served
        return list(served)

    async def check(self) -> None:
        """Fail fast, before a run: the server answers as an OpenAI-compatible one, serves the model,
        takes the key, and has chat completions."""
        served = await self.list_models()
        if self.model is None:
            if len(served) != 1:
                listed = ", ".join(served) if served else "none"
                raise ModelMissing(f"no model chosen and {self.host} serves {len(served)}: {listed} — pass --model")
            self.model = served[0]
        else:
            found = served_model(self.model, served)
            if found is None:
                listed = ", ".join(served) if served else "none"
                raise ModelMissing(f"model '{self.model}' is not served by {self.host}; it serves: {listed} — "
                                   "pass --model with one of them")
            self.model = found
        await self._probe_chat()
        if self._context.get(self.model) is None:
            self._context[self.model] = await self._server_context()
        self.structured = self._format_mode is not None
        self._checked = True

    async def _server_context(self) -> int | None:
        """The context llama.cpp's server was started with (``GET /props`` beside ``/v1``, its
        ``default_generation_settings.n_ctx``): a prompt longer than that is refused, and ``/models`` does not
        say it. None from a server without it."""
        root = self.host.removesuffix("/v1")
        if root == self.host:
            return None
        try:
            resp = await self._client.get(f"{root}/props")
            data = resp.json() if resp.status_code == 200 else None
        except Exception:  # a server without /props, or one that answers it otherwise: not known
            return None
        settings = data.get("default_generation_settings") if isinstance(data, dict) else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        return n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0 else None

    async def _probe_chat(self) -> None:
        """A chat request without messages (at most one token if a server answers it): a refused key or
        a missing endpoint shows now, not as a failed first summary."""
        path = f"{self._root}/chat/completions"
        try:
            resp = await self._client.post("/chat/completions", json={"model": self.model, "max_tokens": 1})
        except Exception as exc:
            raise self._error(exc) from None
        if resp.status_code in (401, 403):
            raise _key_refused(self.host, resp.status_code, path, self._key)
        if resp.status_code in (404, 405, 501) and "model" not in error_detail(resp.text).lower():
            raise _not_compatible(self.host, f"HTTP {resp.status_code} on {path}")

    @property
    def context_limit(self) -> int | None:
        """The model's context where the server says it (vLLM's ``max_model_len``, llama.cpp's ``n_ctx``), else None."""
        return self._context.get(self.model or "")

    def thinking_headroom(self, model: str | None = None) -> int:
        """Tokens added to ``max_tokens`` for thinking: what the model was seen to think."""
        return self._think_extra.get(model or self.model or "", 0)

    def call_timeout(self, prompt_tokens: int, num_predict: int) -> float:
        """Seconds one call may take: ``timeout_s`` plus twice what it should take at the measured speed."""
        return self.timeout_s + 2 * self.speed.expected_seconds(prompt_tokens, num_predict)

    def _response_format(self, schema: dict[str, object]) -> dict[str, object] | None:
        if self._format_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "summary", "schema": schema}}
        if self._format_mode == "json_object":
            return {"type": "json_object", "schema": schema}
        return None

    def _drop_refused_option(self, refused: _Refused, body: dict[str, Any], schema: dict[str, object] | None) -> bool:
        """The server refused an option the call does not need (HTTP 400/422 naming it): change the call
        to go without it (the next shape of schema, or no usage counts) and remember. False: it was not that."""
        if refused.status not in (400, 422):
            return False
        said = refused.detail.lower()
        if "response_format" in body and any(k in said for k in ("response_format", "json_schema", "json_object")):
            modes = list(FORMAT_MODES)
            self._format_mode = modes[modes.index(self._format_mode) + 1]
            self.structured = self._format_mode is not None
            shaped = self._response_format(schema) if schema is not None else None
            if shaped is None:
                body.pop("response_format")
            else:
                body["response_format"] = shaped
            return True
        if "stream_options" in body and "stream_options" in said:
            self._usage_option = False
            body.pop("stream_options")
            return True
        return False

    def _refusal_error(self, refused: _Refused, model: str) -> SummariserError:
        status, detail = refused.status, refused.detail
        path = f"{self._root}/chat/completions"
        if status in (401, 403):
            return _key_refused(self.host, status, path, self._key)
        lowered = detail.lower()
        gone = any(k in lowered for k in ("not found", "does not exist", "no such"))
        if status == 404 and "model" in lowered and gone:
            return ModelMissing(f"model '{model}' is not served by {self.host} ({detail}); "
                                "pass --model with one it serves")
        if status >= 500 or status == 429:
            return ServerError(f"{self.host} failed on model '{model}' (HTTP {status}): {detail}")
        return ModelError(f"{self.host} refused the call for model '{model}' (HTTP {status}): {detail}")

    # ------------------------------------------------------------------ a call
    def prepare(self, system: str, prompt: str) -> None:
        """Count and encode a prompt this backend is about to send (while it waits on another call)."""
        prepare_prompt(self.tokenizer, system, prompt)

    async def generate(
        self,
        system: str,
        prompt: str,
        *,
        temperature: float,
        num_predict: int,
        on_chunk: ChunkCallback | None = None,
        format: dict[str, object] | None = None,
    ) -> Generation:
        """Stream one chat answer. Cancelling the awaiting task aborts the HTTP request. Reading stops
        once the answer passes ``num_predict`` (or answer and thinking pass it plus the headroom)."""
        if not self._checked:
            await self.check()
        model = self.model or ""
        total_predict = num_predict + self.thinking_headroom(model)
        prompt_tokens = self.tokenizer.count(system) + self.tokenizer.count(prompt)
        fresh = self._prefix.fresh(system, prompt)
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "stream": True,
            "temperature": temperature,
            "max_tokens": total_predict,
        }
        if self._usage_option:
            body["stream_options"] = {"include_usage": True}
        shaped = self._response_format(format) if format is not None else None
        if shaped is not None:
            body["response_format"] = shaped
        timeout = self.call_timeout(prompt_tokens, total_predict)
        started = time.monotonic()
        out = StreamState(started, fresh)
        if on_chunk is not None:
            on_chunk(out.progress(started))
        me = self.calls.start()
        try:
            async with asyncio.timeout(timeout):
                while True:
                    try:
                        end, capped = await self._stream(body, out, on_chunk, num_predict, total_predict)
                        break
                    except _Refused as refused:
                        if not self._drop_refused_option(refused, body, format):
                            raise self._refusal_error(refused, model) from None
        except TimeoutError:
            raise timed_out(model, timeout) from None
        except SummariserError:
            raise
        except Exception as exc:
            raise self._error(exc) from None
        finally:
            overlapped = self.calls.end(me)
        return self._generation(out, end, capped, model, prompt_tokens, fresh, started, overlapped)

    async def _stream(self, body: dict[str, Any], out: StreamState, on_chunk: ChunkCallback | None,
                      num_predict: int, total_predict: int) -> tuple[_End, bool]:
        """One request: the chunks into ``out``; (what the end said, whether reading stopped at the cap)."""
        end = _End()
        async with self._client.stream("POST", "/chat/completions", json=body) as resp:
            if resp.status_code != 200:
                text = (await resp.aread()).decode("utf-8", "replace")
                raise _Refused(resp.status_code, error_detail(text))
            if "text/event-stream" not in resp.headers.get("content-type", ""):
                # a server that answered the whole completion at once, ignoring ``stream``
                self._take(json.loads(await resp.aread()), out, end, time.monotonic(), whole=True)
                return end, False
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue  # blank separators, comments, ``event:`` names
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                now = time.monotonic()
                if self._take(json.loads(payload), out, end, now) and on_chunk is not None:
                    on_chunk(out.progress(now))
                if end.finish_reason is None and out.over(num_predict, total_predict):
                    return end, True
        return end, False

    def _take(self, chunk: Any, out: StreamState, end: _End, now: float, *, whole: bool = False) -> bool:
        """One chunk (or, ``whole``, a complete answer) into ``out`` and ``end``; True if it carried text."""
        if not isinstance(chunk, dict):
            raise ModelError(f"{self.host} sent a chunk that is not a JSON object for model '{self.model}'")
        if chunk.get("error"):
            detail = error_detail(json.dumps(chunk))
            raise ModelError(f"{self.host} failed mid-answer on model '{self.model}': {detail}")
        if isinstance(chunk.get("usage"), dict):
            end.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            end.timings = chunk["timings"]
        got = False
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            part = choice.get("message" if whole else "delta") or {}
            if isinstance(part, dict):
                thinking = part.get("reasoning_content") or part.get("reasoning")
                content = part.get("content")
                got = out.add(content if isinstance(content, str) else None,
                              thinking if isinstance(thinking, str) else None, now) or got
            if choice.get("finish_reason"):
                end.finish_reason = str(choice["finish_reason"])
        return got

    def _generation(self, out: StreamState, end: _End, capped: bool, model: str, prompt_tokens: int,
                    fresh: int, started: float, overlapped: bool) -> Generation:
        text = out.text()
        if out.thinking:
            room = thought_anyway_room(out.thinking, cut=not text.strip())
            self._think_extra[model] = max(self._think_extra.get(model, 0), room)
        usage, timings = end.usage or {}, end.timings
        evaluated = _number(timings, "prompt_n")
        if evaluated is None and (prompt := _number(usage, "prompt_tokens")) is not None:
            details = usage.get("prompt_tokens_details")
            cached = _number(details if isinstance(details, dict) else None, "cached_tokens") or 0
            evaluated = max(0.0, prompt - cached)
        written = _number(usage, "completion_tokens")
        prompt_ms, predicted_ms = _number(timings, "prompt_ms"), _number(timings, "predicted_ms")
        prompt_s: float | None
        eval_s: float | None
        if predicted_ms:
            prompt_s, eval_s = (prompt_ms or 0) / 1000 or None, predicted_ms / 1000
        else:  # wall clock: to the first token reading the prompt, from there to the last one writing
            first, last = out.first_at, out.last_at
            prompt_s = first - started if first is not None and first > started else None
            eval_s = last - first if first is not None and last is not None and last > first else None
        gen = Generation(
            text=text,
            prompt_eval_count=int(evaluated) if evaluated is not None else None,
            eval_count=out.streamed if capped or written is None else int(written),
            seconds=time.monotonic() - started,
            done_reason="length" if capped or end.finish_reason == "length" else end.finish_reason,
            prompt_seconds=prompt_s,
            eval_seconds=eval_s,
            thinking_tokens=out.thinking,
            prompt_tokens=prompt_tokens,
            fresh_prompt_tokens=fresh,
            first_token_s=None if out.first_at is None else out.first_at - started,
            overlapped=overlapped,
        )
        self.speed.observe(gen, fresh)
        return gen

    async def aclose(self) -> None:
        await self._client.aclose()
