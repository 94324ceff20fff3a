"""Is the model server there, and which model would a run use? One quick probe, never an exception.

Why a separate probe (and not the summariser's first call): the UI shows the backend state
the moment the app opens, and a user who forgot ``ollama serve`` should read "Ollama not
reachable at …" in the header, not discover it through a run full of fallback summaries.
The probe asks three cheap endpoints (``/api/version``, ``/api/tags``, ``/api/ps``) with a
short timeout and folds every failure into a :class:`BackendStatus`, so callers (a TUI
worker, the CLI) can show it without try/except. An OpenAI-compatible server is asked its
``/v1/models`` (:func:`probe_openai`); :func:`probe_server` asks either kind. No Textual here:
this is core code.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import httpx
import ollama

from hiermem_tui.config import Server
from hiermem_tui.summarize import ollama_raw
from hiermem_tui.summarize.ollama_backend import match_model, normalize_host, not_ollama

DEFAULT_PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class BackendStatus:
    """What one probe of a server found (``kind``: ``ollama`` or ``openai``).

    ``reachable`` is False when the server could not be asked at all; ``error`` then says
    why, in words a user can act on. ``installed`` comes from ``/api/tags`` and ``loaded``
    from ``/api/ps`` (models in memory right now); for an OpenAI-compatible server,
    ``installed`` is what ``/v1/models`` lists and ``loaded`` that model when it lists one
    (the model it serves), else nothing.
    """

    host: str
    reachable: bool
    version: str | None = None
    installed: tuple[str, ...] = ()
    loaded: tuple[str, ...] = ()
    configured_model: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    kind: str = "ollama"

    @property
    def name(self) -> str:
        """The server as a status line names it."""
        return "Ollama" if self.kind == "ollama" else "OpenAI-compatible server"

    @property
    def model(self) -> str | None:
        """The model a run would use: the configured one, else the first loaded one (ARCHITECTURE §4)."""
        if self.configured_model:
            return self.configured_model
        return self.loaded[0] if self.loaded else None

    @property
    def model_source(self) -> str | None:
        """``configured``, ``loaded`` or None (no model known)."""
        if self.configured_model:
            return "configured"
        return "loaded" if self.loaded else None

    @property
    def model_missing(self) -> bool:
        """A model is configured but the (reachable) server does not have it installed."""
        if not self.reachable or not self.configured_model:
            return False
        return match_model(self.configured_model, list(self.installed)) is None

    @property
    def model_loaded(self) -> bool:
        """The model a run would use is in memory already (its first call will be fast)."""
        model = self.model
        return model is not None and match_model(model, list(self.loaded)) is not None

    @property
    def ok(self) -> bool:
        """Reachable and a usable model is known: a run can start."""
        return self.reachable and self.model is not None and not self.model_missing

    def describe(self) -> str:
        """One line for a status bar or a CLI message."""
        if self.kind == "openai":
            return self._describe_openai()
        if not self.reachable:
            return self.error or f"Ollama not reachable at {self.host}"
        head = f"Ollama {self.version}" if self.version else "Ollama"
        if self.model_missing:
            return f"{head}: model '{self.configured_model}' is not installed (ollama pull {self.configured_model})"
        if self.model is None:
            if not self.installed:
                return f"{head}: no models installed (ollama pull llama3.2)"
            return f"{head}: no model loaded or configured ({len(self.installed)} installed)"
        return f"{head} · {self.model} ({'loaded' if self.model_loaded else self.model_source})"


    def _describe_openai(self) -> str:
        if not self.reachable:
            return self.error or f"OpenAI-compatible server not reachable at {self.host}"
        head = f"OpenAI-compatible {self.host}"
        if self.model_missing:
            return f"{head}: model '{self.configured_model}' is not served ({len(self.installed)} served)"
        if self.model is None:
            if not self.installed:
                return f"{head}: serves no model"
            return f"{head}: no model chosen ({len(self.installed)} served)"
        return f"{head} · {self.model} ({'served' if self.model_loaded else self.model_source})"


def _reason(exc: BaseException) -> str:
    """A short human reason for a failed request."""
    if isinstance(exc, httpx.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(exc, (httpx.ConnectError, ConnectionError)):
        # The ollama client re-raises httpx's error as a generic ConnectionError; the
        # original (which knows "host not found" from "refused") is its __context__.
        text = f"{exc} {exc.__context__ or ''}".lower()
        if any(k in text for k in ("name or service", "nodename", "getaddrinfo", "name resolution")):
            return "host not found"
        return "connection refused"
    if isinstance(exc, ollama.ResponseError):
        detail = str(exc.error).strip().splitlines()[0] if str(exc.error).strip() else "no details"
        return f"HTTP {exc.status_code}: {detail}"
    if isinstance(exc, httpx.HTTPError):
        return type(exc).__name__
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


async def probe_backend(
    host: str | None,
    model: str | None = None,
    *,
    timeout_s: float = DEFAULT_PROBE_TIMEOUT_S,
) -> BackendStatus:
    """Probe the Ollama server at ``host`` (``$OLLAMA_HOST`` / default when None).

    Never raises (except for cancellation, which must reach the caller's worker): every
    failure becomes ``reachable=False`` with a one-line ``error``.
    """
    base = normalize_host(host)
    started = time.perf_counter()

    def done(**kwargs: object) -> BackendStatus:
        return BackendStatus(
            host=base,
            configured_model=model or None,
            elapsed_s=time.perf_counter() - started,
            **kwargs,  # type: ignore[arg-type]
        )

    try:
        client = ollama.AsyncClient(host=base, timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 2.0)))
    except Exception as exc:  # a malformed host string
        return done(reachable=False, error=f"Ollama host {host!r} is not usable: {_reason(exc)}")
    try:
        # The ollama client has no version() call; /api/version is part of the same API.
        raw = await ollama_raw.request_raw(client, "GET", "/api/version")
        version = str(raw.json().get("version") or "") or None
    except Exception as exc:
        await _close(client)
        if foreign := not_ollama(base, exc, "/api/version"):  # something else answers on that port
            return done(reachable=False, error=str(foreign).split(";")[0])
        return done(reachable=False, error=f"Ollama not reachable at {base} ({_reason(exc)})")
    installed: tuple[str, ...] = ()
    loaded: tuple[str, ...] = ()
    problems: list[str] = []
    try:
        tags, ps = await asyncio.gather(client.list(), client.ps(), return_exceptions=True)
        if isinstance(tags, BaseException):
            problems.append(f"model list failed ({_reason(tags)})")
        else:
            installed = tuple(m.model for m in tags.models if m.model)
        if isinstance(ps, BaseException):
            problems.append(f"loaded models unknown ({_reason(ps)})")
        else:
            loaded = tuple(m.model or m.name or "" for m in ps.models if (m.model or m.name))
    finally:
        await _close(client)
    return done(
        reachable=True, version=version, installed=installed, loaded=loaded, error="; ".join(problems) or None
    )


async def probe_openai(url: str, model: str | None = None, *, timeout_s: float = DEFAULT_PROBE_TIMEOUT_S
                       ) -> BackendStatus:
    """Ask the OpenAI-compatible server at ``url`` for its models (``/v1/models``, the key from
    ``$OPENAI_API_KEY``). Never raises (except for cancellation): a server that cannot be asked, refuses
    the key or is not OpenAI-compatible is ``reachable=False`` with the backend's own one line."""
    from hiermem_tui.config import normalise_base_url
    from hiermem_tui.summarize.openai_backend import api_key, client_for, fetch_models, translate_error

    base = normalise_base_url(url)
    started = time.perf_counter()

    def done(**kwargs: object) -> BackendStatus:
        return BackendStatus(host=base, configured_model=model or None, elapsed_s=time.perf_counter() - started,
                             kind="openai", **kwargs)  # type: ignore[arg-type]

    key = api_key()
    client = client_for(base, key, httpx.Timeout(timeout_s, connect=min(timeout_s, 2.0)))
    try:
        served = tuple((await fetch_models(client, base, key))[0])
    except Exception as exc:
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            said = f"OpenAI-compatible server at {base} did not answer within {timeout_s:g} s"
            return done(reachable=False, error=said)
        err = translate_error(exc, base, model)
        return done(reachable=False, error=(str(err) if err is not None else _reason(exc)).split("; ")[0])
    finally:
        await client.aclose()
    return done(reachable=True, installed=served, loaded=served if len(served) == 1 else ())


async def probe_server(server: Server, model: str | None = None, *, timeout_s: float = DEFAULT_PROBE_TIMEOUT_S
                       ) -> BackendStatus:
    """:func:`probe_backend` or :func:`probe_openai`, by the server's kind."""
    if server.backend == "openai":
        return await probe_openai(server.url, model, timeout_s=timeout_s)
    return await probe_backend(server.url, model, timeout_s=timeout_s)


async def _close(client: ollama.AsyncClient) -> None:
    try:
        await ollama_raw.close(client)
    except Exception:  # closing a broken connection must not turn into an error
        pass
