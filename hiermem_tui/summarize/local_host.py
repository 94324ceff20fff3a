"""Whether a model server's host is this machine, and so what to advise when it does not answer.

``ollama serve`` (or starting an OpenAI-compatible server) only helps when the server is meant to run
here; a server on another machine is checked there. Standard library only: the engine's messages use it
without loading the Ollama client.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_local(host: str) -> bool:
    """``host`` (a URL, or a bare ``name[:port]``) is this machine: localhost, a loopback address,
    or 0.0.0.0 (which a client reaches as this machine)."""
    name = urlsplit(host if "://" in host else f"http://{host}").hostname or "127.0.0.1"
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def start_advice(host: str, kind: str = "ollama") -> str:
    """What to do about ``host`` not answering: start the server here (Ollama: ``ollama serve``; ``kind``
    ``openai``: the OpenAI-compatible server), or look at the machine it runs on."""
    if kind == "openai":
        if is_local(host):
            return "start the server"
        return "check that the server runs there and accepts connections from this machine"
    if is_local(host):
        return "start it with 'ollama serve'"
    return "check that Ollama runs there and accepts connections from this machine"
