"""What every model backend does with a streamed answer, whatever the server's wire format.

A backend reads its server's chunks (Ollama's NDJSON, an OpenAI-compatible server's SSE) and hands
each one's answer text and thinking text to a :class:`StreamState`, which keeps the two apart, counts
them, reports :class:`StreamProgress` and says when to stop reading (:meth:`StreamState.over`). Thinking
arrives in a field of its own (Ollama's ``message.thinking``, ``reasoning_content`` / ``reasoning``) or
inline as a leading ``<think>`` block; either way it is counted and never part of the answer.

:class:`PromptPrefix` is our count of how much of a prompt differs from the previous one: what a server
that reuses the KV cache of a shared prefix evaluates anew (for estimates and the live clock).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import httpx

from hiermem_tui.summarize.types import StreamProgress
from hiermem_tui.tokens import Tokenizer

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
LEADING_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.S)
THINK_HEADROOM: dict[bool | str, int] = {"low": 1024, "medium": 2048, "high": 4096, True: 2048}
"""Answer tokens added to ``num_predict`` for a model that cannot stop thinking, by level."""


def over_cap(chunks: int, chars: int, num_predict: int) -> bool:
    """More than ``num_predict`` tokens have arrived. Servers send about one token per chunk;
    a server sending big chunks is caught by characters (3 per token is generous)."""
    limit = num_predict + 8
    return chunks > limit or chars > limit * 6


def thought_anyway_room(thinking: int, cut: bool) -> int:
    """Headroom to give a model that thought ``thinking`` tokens although it was not meant to (or the
    server has no way to turn it off): twice that when the budget ran out mid-thought (``cut``: its real
    length unknown, at least the low level's), else half as much again."""
    return max(THINK_HEADROOM["low"], 2 * thinking) if cut else int(thinking * 1.5) + 64


@dataclass(slots=True)
class StreamState:
    """What one streamed answer has produced so far: answer and thinking apart."""

    started: float
    fresh: int | None = None
    answer: list[str] = field(default_factory=list)
    chars: int = 0
    thinking: int = 0
    first_at: float | None = None
    last_at: float | None = None
    inline_thinking: bool = False  # inside a ``<think>`` block sent as content

    def progress(self, now: float) -> StreamProgress:
        phase = "writing" if self.answer else "thinking" if self.thinking else "prompt"
        first = None if self.first_at is None else self.first_at - self.started
        return StreamProgress(phase, len(self.answer), self.thinking, now - self.started, first, self.fresh)  # type: ignore[arg-type]

    def add(self, content: str | None, thinking: str | None, now: float) -> bool:
        """Take one chunk; True if it carried anything."""
        got = self._add(content, thinking, now)
        if got:
            self.last_at = now
        return got

    def _add(self, content: str | None, thinking: str | None, now: float) -> bool:
        got = False
        if thinking:
            self.thinking += 1
            got = True
        if content:
            got = True
            if not self.answer and (self.inline_thinking or content.lstrip().startswith(THINK_OPEN)):
                # a server that does not separate thinking sends it inline, first
                self.inline_thinking = THINK_CLOSE not in content
                if self.inline_thinking or content.rstrip().endswith(THINK_CLOSE):
                    self.thinking += 1
                    if self.first_at is None:
                        self.first_at = now
                    return got
                content = content.split(THINK_CLOSE, 1)[1]
                if not content:
                    return got
            self.answer.append(content)
            self.chars += len(content)
        if got and self.first_at is None:
            self.first_at = now
        return got

    def over(self, num_predict: int, total_predict: int) -> bool:
        """Past the answer's budget, or answer and thinking together past the whole one: stop reading."""
        return (over_cap(len(self.answer), self.chars, num_predict)
                or len(self.answer) + self.thinking > total_predict + 8)

    def text(self) -> str:
        """The answer: nothing while still inside an unclosed ``<think>``, a leading block dropped."""
        return "" if self.inline_thinking else LEADING_THINK.sub("", "".join(self.answer), count=1)

    @property
    def streamed(self) -> int:
        """Chunks of answer and thinking (≈ tokens)."""
        return len(self.answer) + self.thinking


class PromptPrefix:
    """Our count of the part of each prompt that differs from the previous one sent to a server that
    reuses the KV cache of the prefix two calls share; the whole prompt the first time."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._last: Sequence[int] | None = None

    def fresh(self, system: str, prompt: str) -> int:
        ids = self.tokenizer.encoded(system + "\n" + prompt)
        last, self._last = self._last, ids
        if last is None:
            return len(ids)
        same = 0
        for a, b in zip(ids, last):
            if a != b:
                break
            same += 1
        return len(ids) - same


class InFlight:
    """A backend's calls by number, to tell which ones shared their wall time with another call of the same
    backend (their time beyond the server's durations is then no wait of theirs); and when a call's request has
    been written to the server (:meth:`hooks`, :meth:`when_written`)."""

    def __init__(self, path_suffix: str = "/chat") -> None:
        self._count = 0
        self._running: set[int] = set()
        self._overlapped: set[int] = set()
        self._path_suffix = path_suffix
        self._listeners: list[Callable[[], None]] = []

    def start(self) -> int:
        """A call begins: its number."""
        self._count += 1
        self._running.add(self._count)
        if len(self._running) > 1:
            self._overlapped.update(self._running)
        return self._count

    def end(self, call: int) -> bool:
        """The call ended: whether another call was in flight at some time during it."""
        self._running.discard(call)
        overlapped = call in self._overlapped
        self._overlapped.discard(call)
        return overlapped

    def hooks(self) -> dict[str, list[Callable[[httpx.Request], Awaitable[None]]]]:
        """httpx event hooks for the backend's client: each request to a path ending in ``path_suffix`` (a chat
        call) says when its body has been sent (httpcore's ``trace`` extension)."""
        return {"request": [self._on_request]}

    async def _on_request(self, request: httpx.Request) -> None:
        if request.url.path.endswith(self._path_suffix):
            request.extensions["trace"] = self._trace

    async def _trace(self, event: str, info: dict[str, object]) -> None:
        if event.endswith("send_request_body.complete"):
            listeners, self._listeners = self._listeners, []
            for listener in listeners:
                listener()

    def when_written(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` once, as soon as the next call's request is on the wire."""
        self._listeners.append(listener)


def prepare_prompt(tokenizer: Tokenizer, system: str, prompt: str) -> None:
    """Count and encode a prompt about to be sent (while another call runs), so sending it finds both done
    (the tokenizer keeps them)."""
    tokenizer.count(system)
    tokenizer.count(prompt)
    tokenizer.encoded(system + "\n" + prompt)
