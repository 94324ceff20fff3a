"""The Ollama backend: a streaming chat call with the settings Ollama users get bitten by.

Why each setting (ARCHITECTURE §4, "Ollama specifics"):
- ``num_ctx`` is sent on every call, because Ollama silently cuts prompts longer than its
  default context. It is sized from our own token count of the prompt (+10 % for the
  model's tokenizer being different) plus ``num_predict`` plus slack, rounded up to a
  multiple of 1024, at least 2048, never above the model's trained context
  (``/api/show``, ``<arch>.context_length``) nor ``num_ctx_cap``. It only ever grows for
  a given model within one backend: Ollama reloads the model whenever ``num_ctx``
  changes, which costs seconds per call, so a stable value is much faster.
- ``num_predict`` bounds a model that loops; ``keep_alive`` keeps the model loaded between
  summaries of one run.
- Thinking models (qwen3, deepseek-r1, gpt-oss): ``/api/show`` says whether the model thinks
  (``capabilities`` has ``"thinking"``) and, on newer servers, which ``think`` values it takes.
  We send ``think: false`` where the model allows it, else its lowest level (gpt-oss takes only
  low / medium / high), and give ``num_predict`` headroom for the thinking it will do then, or
  that it did despite being asked not to. ``message.thinking`` (and an inline ``<think>`` block
  from servers that do not separate it) is counted and never returned as the answer. ``think``
  is sent only to models that think: Ollama refuses it for the others.
- Structured outputs (``format`` = a JSON schema) need Ollama 0.5 or newer (``/api/version``):
  ``structured`` says whether this server has them, after :meth:`check`.
- The server reuses the KV cache of the prompt prefix a call shares with its previous call;
  :attr:`Generation.fresh_prompt_tokens` is our count of what differs from our previous prompt,
  for estimates (the server's ``prompt_eval_count`` is the real figure).
- Errors are sorted by what the caller must do: BackendUnavailable (server unreachable or
  connection lost: retry, then abort the run), ModelMissing (stop and tell the user),
  ModelError (this call failed: try the next tier). ``timeout_s`` bounds a whole call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx
import ollama
import pydantic

from hiermem_tui.summarize import ollama_raw
from hiermem_tui.summarize.local_host import start_advice
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.stream import (
    THINK_HEADROOM,
    InFlight,
    PromptPrefix,
    StreamState,
    prepare_prompt,
    thought_anyway_room,
)
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

DEFAULT_HOST = "http://127.0.0.1:11434"
MIN_NUM_CTX = 2048
NUM_CTX_STEP = 1024
NUM_CTX_SLACK = 64  # chat template tokens around the two messages
PROMPT_MARGIN = 1.10  # the model's tokenizer may need more tokens than cl100k
THINK_LEVELS = ("low", "medium", "high")
MIN_STRUCTURED_VERSION = (0, 5, 0)
"""Ollama's first release with JSON-schema structured outputs."""
ThinkValue = bool | str


def _ns(value: Any) -> float | None:
    return value / 1e9 if isinstance(value, (int, float)) and value > 0 else None


def _version(text: str) -> tuple[int, ...]:
    """``0.12.3`` → (0, 12, 3); anything unreadable → (0,)."""
    parts = []
    for piece in text.strip().lstrip("v").split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group(0)))
    return tuple(parts) or (0,)


def think_value(capabilities: list[str], values: list[Any] | None, model: str) -> ThinkValue | None:
    """What to send as ``think`` (None: send nothing) for a model with these capabilities.

    Off where the model allows it, else its lowest level. ``values`` is what newer servers
    list under ``/api/show``'s ``thinking``; older ones list only the capability, and then a
    gpt-oss model (which ignores ``false``) gets ``low``."""
    if "thinking" not in capabilities:
        return None
    if values:
        if False in values:
            return False
        levels = [v for v in THINK_LEVELS if v in values]
        if levels:
            return levels[0]
        return True if True in values else None
    return "low" if model.split("/")[-1].startswith("gpt-oss") else False


def normalize_host(host: str | None) -> str:
    """The base URL for ``host`` (else ``$OLLAMA_HOST``, else the default), as Ollama reads it.

    Bare hosts get ``http://`` and port 11434; an explicit scheme without a port gets 80/443.
    """
    raw = (host or os.environ.get("OLLAMA_HOST") or "").strip() or DEFAULT_HOST
    scheme, sep, rest = raw.partition("://")
    if sep:
        default_port = "443" if scheme == "https" else "80"
    else:
        scheme, rest, default_port = "http", raw, "11434"
    hostport, _, path = rest.partition("/")
    if hostport.startswith("[") and "]" in hostport:
        end = hostport.index("]")
        name, port = hostport[: end + 1], hostport[end + 2 :]
    else:
        name, _, port = hostport.partition(":")
    path = path.strip("/")
    return f"{scheme}://{name or '127.0.0.1'}:{port or default_port}" + (f"/{path}" if path else "")


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def match_model(wanted: str, installed: list[str]) -> str | None:
    """The installed name for ``wanted``, treating ``x`` and ``x:latest`` as the same model."""
    return next((name for name in installed if _canonical(name) == _canonical(wanted)), None)


def round_num_ctx(needed: int, ceiling: int | None) -> int:
    """``needed`` rounded up to a multiple of 1024 (at least 2048), capped at ``ceiling``."""
    value = max(MIN_NUM_CTX, math.ceil(needed / NUM_CTX_STEP) * NUM_CTX_STEP)
    if ceiling:
        cap = ceiling // NUM_CTX_STEP * NUM_CTX_STEP if ceiling >= NUM_CTX_STEP else ceiling
        value = min(value, cap)
    return value


def _unreachable(host: str, reason: str) -> BackendUnavailable:
    return BackendUnavailable(
        f"Ollama is not reachable at {host} ({reason}); {start_advice(host)} or pass --ollama-host",
        host=host, reason=reason,
    )


def not_ollama(host: str, exc: BaseException, path: str) -> BackendUnavailable | None:
    """The error for a server that answers HTTP on ``path`` but not as Ollama does (a web server,
    another API on the port), or None when ``exc`` is not that. Asked only of the endpoints every
    Ollama serves (``/api/version``, ``/api/tags``), where an HTTP error or a body that is not
    Ollama's JSON means the wrong server, never a model's trouble."""
    if isinstance(exc, ollama.ResponseError) and exc.status_code >= 400:
        reason = f"HTTP {exc.status_code} on {path}"
        return BackendUnavailable(f"{host} is not an Ollama server ({reason}); pass the right --ollama-host",
                                  host=host, reason=f"not an Ollama server: {reason}")
    if isinstance(exc, (json.JSONDecodeError, pydantic.ValidationError, httpx.DecodingError, AttributeError)):
        reason = f"its answer on {path} is not Ollama's"
        return BackendUnavailable(f"{host} is not an Ollama server ({reason}); pass the right --ollama-host",
                                  host=host, reason=f"not an Ollama server: {reason}")
    return None


def translate_error(exc: BaseException, host: str, model: str | None) -> SummariserError | None:
    """Our error for a failure of the ollama client / httpx, or None if it is not one."""
    if isinstance(exc, SummariserError):
        return exc
    if isinstance(exc, ollama.ResponseError):
        detail = str(exc.error).strip().splitlines()[0] if str(exc.error).strip() else "no details"
        if exc.status_code == 404 and "not found" in detail.lower():
            return ModelMissing(
                f"model '{model}' is not available in Ollama at {host} ({detail}); "
                f"pull it with 'ollama pull {model}' or pass --model"
            )
        where = "mid-answer" if exc.status_code == -1 else f"HTTP {exc.status_code}"
        error = ServerError if exc.status_code >= 500 else ModelError
        return error(f"Ollama failed on model '{model}' ({where}): {detail}")
    if (lost := connection_error(exc, model, lambda reason: _unreachable(host, reason))) is not None:
        return lost
    if isinstance(exc, (json.JSONDecodeError, pydantic.ValidationError, httpx.DecodingError)):
        return ModelError(f"Ollama sent a response that could not be read for model '{model}'")
    return None


def _closable(stream: AsyncIterator[ollama.ChatResponse]) -> AsyncGenerator[ollama.ChatResponse, None]:
    """The client types its stream as an iterator; it is an async generator, which can be
    closed (so a stream cut off early releases its connection at once)."""
    if not isinstance(stream, AsyncGenerator):
        raise TypeError(f"the ollama client returned {type(stream).__name__}, not a stream")
    return stream


def _host_of(client: ollama.AsyncClient) -> str:
    inner = getattr(client, "_client", None)
    return str(getattr(inner, "base_url", "Ollama")).rstrip("/")


async def resolve_model(client: ollama.AsyncClient | str | None, configured: str | None) -> str:
    """The model to use: ``configured``, else the one Ollama has loaded (``/api/ps``).

    With neither, raises ModelMissing listing what is installed, because guessing among
    installed models could pick a 70B model on a laptop. ``client`` may be a host URL.
    """
    if configured and configured.strip():
        return configured.strip()
    own = not isinstance(client, ollama.AsyncClient)
    c = client if isinstance(client, ollama.AsyncClient) else ollama.AsyncClient(host=normalize_host(client))
    host = _host_of(c)
    try:
        try:
            loaded = [m.model or m.name for m in (await c.ps()).models]
        except Exception as exc:
            err = translate_error(exc, host, None)
            if err is None or isinstance(err, BackendUnavailable):
                raise err or exc from None
            loaded = []  # an old Ollama without /api/ps: nothing known to be loaded
        names = [m for m in loaded if m]
        if names:
            return names[0]
        try:
            installed = [m.model for m in (await c.list()).models if m.model]
        except Exception as exc:
            raise (translate_error(exc, host, None) or exc) from None
        if not installed:
            raise ModelMissing(
                f"no model chosen and none installed in Ollama at {host}; "
                "pull one (for example 'ollama pull llama3.2') and pass --model"
            )
        raise ModelMissing(f"no model chosen; installed: {', '.join(installed)} — pass --model")
    finally:
        if own:
            await ollama_raw.close(c)


class OllamaBackend:
    """Summaries from a local Ollama server through the official async client."""

    name = "ollama"

    def __init__(
        self,
        host: str | None,
        model: str | None,
        tokenizer: Tokenizer,
        *,
        timeout_s: float = 120,
        keep_alive: str | float = "10m",
        num_ctx_cap: int | None = None,
        speed: ModelSpeed | None = None,
    ) -> None:
        self.host = normalize_host(host)
        self.model = model.strip() if model and model.strip() else None
        self.tokenizer = tokenizer
        self.timeout_s = timeout_s
        self.keep_alive = keep_alive
        self.num_ctx_cap = num_ctx_cap
        # no read timeout of httpx's own: a slow CPU model may think for minutes before the
        # first token; each call is bounded by call_timeout() instead
        timeout = httpx.Timeout(None, connect=min(10.0, timeout_s))
        self.calls = InFlight()
        """This backend's calls: which overlapped, and when each request is on the wire."""
        self._client = ollama.AsyncClient(host=self.host, timeout=timeout, event_hooks=self.calls.hooks())
        self.speed = speed or ModelSpeed()
        """The model's measured speed (seeded from the store by the runner, updated per call)."""
        self.structured = False
        """Whether the server takes a JSON schema as ``format`` (known after :meth:`check`)."""
        self.server_version: str | None = None
        self._context: dict[str, int | None] = {}
        self._num_ctx: dict[str, int] = {}
        self._think: dict[str, ThinkValue | None] = {}
        self._think_extra: dict[str, int] = {}
        self._prefix = PromptPrefix(tokenizer)

    def _error(self, exc: Exception) -> Exception:
        """Our error for ``exc``; re-raise ``exc`` itself when it is none of ours (a bug)."""
        err = translate_error(exc, self.host, self.model)
        if err is None:
            raise exc
        return err

    async def check(self) -> None:
        """Fail fast, before a run: the server answers and the model is installed."""
        try:
            installed = [m.model for m in (await self._client.list()).models if m.model]
        except Exception as exc:
            raise (not_ollama(self.host, exc, "/api/tags") or self._error(exc)) from None
        if self.model is None:
            self.model = await resolve_model(self._client, None)
        found = match_model(self.model, installed)
        if found is None:
            listed = ", ".join(installed) if installed else "none"
            raise ModelMissing(
                f"model '{self.model}' is not installed in Ollama at {self.host}; installed: {listed} — "
                f"pull it with 'ollama pull {self.model}' or pass --model"
            )
        self.model = found
        await self._read_version()
        await self.context_length(found)

    async def _read_version(self) -> None:
        try:
            raw = await ollama_raw.request_raw(self._client, "GET", "/api/version")  # the client has no version()
            self.server_version = str(raw.json().get("version", ""))
        except Exception as exc:
            err = self._error(exc)
            if not isinstance(err, ModelError):
                raise err from None
            self.server_version = None
        self.structured = self.server_version is not None and _version(self.server_version) >= MIN_STRUCTURED_VERSION

    async def _ensure_model(self) -> str:
        if self.model is None:
            self.model = await resolve_model(self._client, None)
        return self.model

    async def _show(self, model: str) -> dict[str, Any]:
        """``/api/show`` as the server sent it: the client's model drops fields it does not know
        (newer servers' ``thinking`` values), so the raw JSON is read."""
        try:
            raw = await ollama_raw.request_raw(self._client, "POST", "/api/show", json={"model": model})
            data = raw.json()
        except Exception as exc:
            err = self._error(exc)
            if not isinstance(err, ModelError):
                raise err from None
            return {}  # a model-level oddity: go on without what /api/show would have told
        return data if isinstance(data, dict) else {}

    async def context_length(self, model: str) -> int | None:
        """The model's trained context (``/api/show``), asked once per model; None if unknown.
        The same answer says whether, and how, the model thinks (:meth:`think_for`)."""
        if model not in self._context:
            data = await self._show(model)
            info = data.get("model_info") or {}
            found = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
            self._context[model] = found[0] if found else None
            caps = [str(c) for c in data.get("capabilities") or []]
            thinking = data.get("thinking")
            listed = thinking.get("values") if isinstance(thinking, dict) else None
            values = listed if isinstance(listed, list) else None
            self._think[model] = think_value(caps, values, model)
        return self._context[model]

    def think_for(self, model: str | None = None) -> ThinkValue | None:
        """The ``think`` value sent to ``model`` (None: not a thinking model, or not known yet)."""
        return self._think.get(model or self.model or "")

    def thinking_headroom(self, model: str | None = None) -> int:
        """Tokens added to ``num_predict`` for thinking: by level for a model that cannot stop,
        plus what the model was seen to think although asked not to."""
        name = model or self.model or ""
        think = self._think.get(name)
        base = THINK_HEADROOM.get(think, 0) if think is not None and think is not False else 0
        return base + self._think_extra.get(name, 0)

    def num_ctx_for(self, model: str, prompt_tokens: int, num_predict: int, limit: int | None) -> int:
        """The context to ask for (see module docstring); never shrinks for one model."""
        needed = math.ceil(prompt_tokens * PROMPT_MARGIN) + num_predict + NUM_CTX_SLACK
        ceilings = [c for c in (limit, self.num_ctx_cap) if c]
        ceiling = min(ceilings) if ceilings else None
        value = max(round_num_ctx(needed, ceiling), self._num_ctx.get(model, 0))
        if ceiling:
            value = min(value, round_num_ctx(ceiling, ceiling))
        self._num_ctx[model] = value
        return value

    @property
    def context_limit(self) -> int | None:
        """The most context we will ask for (trained context and ``num_ctx_cap``), once known."""
        if self.model is None:
            return self.num_ctx_cap
        ceilings = [c for c in (self._context.get(self.model), self.num_ctx_cap) if c]
        return min(ceilings) if ceilings else None

    def call_timeout(self, prompt_tokens: int, num_predict: int) -> float:
        """Seconds one call may take: ``timeout_s`` plus twice what this prompt and answer
        should take at the model's measured speed (a cautious CPU guess before any
        measurement), so a big prompt on a slow model is not cut off, and a hung server is
        still given up on."""
        return self.timeout_s + 2 * self.speed.expected_seconds(prompt_tokens, num_predict)

    def prepare(self, system: str, prompt: str) -> None:
        """Count and encode a prompt this backend is about to send (while it waits on another call), so sending
        it finds both done (the tokenizer keeps them)."""
        prepare_prompt(self.tokenizer, system, prompt)

    def fresh_tokens(self, system: str, prompt: str) -> int:
        """Our count of the part of this prompt that differs from the previous one (what a
        server reusing its prefix cache evaluates anew); the whole prompt the first time."""
        return self._prefix.fresh(system, prompt)

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
        """Stream one chat answer. Cancelling the awaiting task aborts the HTTP request.

        Reading stops once the answer passes ``num_predict`` (counted generously, see
        ``stream.over_cap``), or answer and thinking together pass it plus the thinking headroom,
        even if the server goes on: the answer is then reported as cut off
        (``done_reason == "length"``).
        """
        model = await self._ensure_model()
        limit = await self.context_length(model)
        think = self.think_for(model)
        headroom = self.thinking_headroom(model)
        total_predict = num_predict + headroom
        prompt_tokens = self.tokenizer.count(system) + self.tokenizer.count(prompt)
        fresh = self.fresh_tokens(system, prompt)
        options: dict[str, Any] = {
            "temperature": temperature,
            "num_predict": total_predict,
            "num_ctx": self.num_ctx_for(model, prompt_tokens, total_predict, limit),
        }
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        extra: dict[str, Any] = {}
        if think is not None:
            extra["think"] = think
        if format is not None and self.structured:
            extra["format"] = format
        # the whole prompt, not only its fresh part: the server's cache may have been evicted
        timeout = self.call_timeout(prompt_tokens, total_predict)
        started = time.monotonic()
        out = StreamState(started, fresh)
        final: Any = None
        capped = False
        if on_chunk is not None:
            on_chunk(out.progress(started))
        me = self.calls.start()
        try:
            async with asyncio.timeout(timeout):
                stream = await self._client.chat(
                    model=model, messages=messages, stream=True, options=options, keep_alive=self.keep_alive,
                    **extra,
                )
                parts = _closable(stream)
                async with contextlib.aclosing(parts):
                    async for part in parts:
                        msg = part.message
                        now = time.monotonic()
                        if msg is not None and out.add(msg.content, msg.thinking, now) and on_chunk is not None:
                            on_chunk(out.progress(now))
                        if part.done:
                            final = part
                        elif out.over(num_predict, total_predict):
                            capped = True
                            break
        except TimeoutError:
            raise timed_out(model, timeout) from None
        except Exception as exc:
            if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
                raise ModelError(f"model '{model}' stopped answering (read timed out)") from None
            raise self._error(exc) from None
        finally:
            overlapped = self.calls.end(me)
        text = out.text()
        if out.thinking and think is False:
            # asked not to think and thought anyway: leave room for it from now on (when the
            # budget ran out mid-thought its real length is unknown: at least the low level's)
            room = thought_anyway_room(out.thinking, cut=not text.strip())
            self._think_extra[model] = max(self._think_extra.get(model, 0), room)
        gen = Generation(
            text=text,
            prompt_eval_count=getattr(final, "prompt_eval_count", None),
            eval_count=getattr(final, "eval_count", None) if not capped else out.streamed,
            seconds=time.monotonic() - started,
            done_reason="length" if capped else getattr(final, "done_reason", None),
            prompt_seconds=_ns(getattr(final, "prompt_eval_duration", None)),
            eval_seconds=_ns(getattr(final, "eval_duration", None)),
            thinking_tokens=out.thinking,
            prompt_tokens=prompt_tokens,
            fresh_prompt_tokens=fresh,
            load_seconds=_ns(getattr(final, "load_duration", None)),
            first_token_s=None if out.first_at is None else out.first_at - started,
            overlapped=overlapped,
        )
        self.speed.observe(gen, prompt_tokens)
        return gen

    async def aclose(self) -> None:
        await ollama_raw.close(self._client)
