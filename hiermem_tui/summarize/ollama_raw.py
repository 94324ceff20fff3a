"""Typed doors into the parts of the official ``ollama`` client that it leaves untyped.

The client has no ``version()`` call and does not type ``close()`` or ``_request_raw``; the
backend and the status probe both need them. Keeping the untyped calls here means one place
to look when the client changes, and strict type checking everywhere else.
"""

from __future__ import annotations

from typing import Any

import httpx
import ollama


async def request_raw(client: ollama.AsyncClient, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request on the client's own connection, the JSON read by the caller (so fields the
    client's models would drop, such as newer servers' ``thinking`` values, survive)."""
    response: httpx.Response = await client._request_raw(method, path, **kwargs)  # type: ignore[no-untyped-call]
    return response


async def close(client: ollama.AsyncClient) -> None:
    """Close the client's connection pool."""
    await client.close()  # type: ignore[no-untyped-call]
