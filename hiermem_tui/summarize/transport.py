"""What a failed HTTP exchange with a model server means for a run, whichever API the server speaks.

Both model backends talk over httpx (the ``ollama`` client is built on it), so a refused connection,
an unknown host, a dropped stream or a read that timed out look the same under either: this sorts
them into the errors a run acts on (``summarize/types.py``). Each backend words "not reachable" its own
way (what to start, which flag to pass) and hands that in as ``unreachable``.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from hiermem_tui.summarize.types import BackendUnavailable, ModelError

DNS_WORDS = ("name or service", "nodename", "getaddrinfo", "name resolution")


def connection_error(exc: BaseException, model: str | None,
                     unreachable: Callable[[str], BackendUnavailable]) -> BackendUnavailable | ModelError | None:
    """The error for a transport failure (None: ``exc`` is not one). ``unreachable(reason)`` makes the
    backend's BackendUnavailable for a server that cannot be reached or went away mid-answer."""
    if isinstance(exc, httpx.ConnectTimeout):
        return unreachable("connection timed out")
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(f"model '{model}' stopped answering (read timed out)")
    if isinstance(exc, (httpx.ConnectError, ConnectionError)):
        # the ollama client replaces httpx's error by a generic one; the cause stays in __context__
        text = f"{exc} {exc.__context__ or ''}".lower()
        return unreachable("host not found" if any(k in text for k in DNS_WORDS) else "connection refused")
    if isinstance(exc, httpx.RemoteProtocolError) and "without sending" in str(exc) and "body" not in str(exc):
        return unreachable("connection closed before an answer")
    if isinstance(exc, (httpx.TransportError, OSError)):
        return unreachable("connection lost mid-answer")
    return None


def timed_out(model: str | None, timeout: float) -> ModelError:
    """A call that took longer than its bound (``call_timeout``)."""
    shown = f"{timeout:.1f}" if timeout < 10 else f"{timeout:.0f}"
    return ModelError(f"model '{model}' timed out after {shown}s")
