"""What one kind of demo session is made of (:class:`Topic`), and the helpers that write its pools.

Why a module of its own: the topic data (:mod:`.topics`, :mod:`.snippets`) and the code that
composes messages from it (:mod:`.compose`) both need the type; keeping it apart lets the long
data files import it without importing the generator.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

_BLOCK_SEPARATOR = re.compile(r"^[ \t]*~~[ \t]*$", re.M)


def lines(text: str) -> tuple[str, ...]:
    """One entry per non-blank line: keeps the pools below readable and compact."""
    return tuple(line.strip() for line in text.strip().splitlines() if line.strip())


def bar(text: str) -> tuple[str, ...]:
    """Short entries separated by ``|`` (titles, slot fillers)."""
    return tuple(item.strip() for item in text.split("|") if item.strip())


def blocks(text: str) -> tuple[str, ...]:
    """Multi-line entries separated by a line holding only ``~~`` (for code blocks and tool output).

    The pools are written indented inside the topic definitions, so the separator may be
    indented too and each entry loses its common indentation (an indented ``~~`` used to go
    unnoticed: a topic's tool outputs became one block, every line 12 spaces in).
    """
    return tuple(textwrap.dedent(b).strip("\n") for b in _BLOCK_SEPARATOR.split(text) if b.strip())


GENERIC_SYSTEM = "You are a helpful assistant. Answer concisely and say when you are unsure."


@dataclass(frozen=True, slots=True)
class Topic:
    """Everything needed to invent sessions of one kind (coding help, planning, ...)."""

    name: str
    titles: tuple[str, ...]
    things: tuple[str, ...]
    places: tuple[str, ...]
    files: tuple[str, ...]
    asks: tuple[str, ...]
    openers: tuple[str, ...]
    explains: tuple[str, ...]
    snippets: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    paste_lines: tuple[str, ...] = ()
    tool_rate: float = 0.0
    system: str = GENERIC_SYSTEM
