"""Calibration: which way a model summarises, measured on a small built-in pack of chats, not guessed from its size.

The pack (``assets/calibrate/*.json``) is a few short chats, each with **keys** (strings a good summary of it
contains: what was asked, the cause, the fix, the decision and its reason, what was made, how it ended; each a
list of spellings, any of which counts) and **traps** (strings a false summary would contain: the option that was
turned down stated as taken, a tool the chat never used, a question left open stated as settled). Each chat is
summarised as one leaf both ways — ``titles`` (a title over the chat's key lines, ``notes.py``) and ``writes``
(the model writes the summary, ``writes.py``) — through the app's own summariser, checks and fallbacks, and each
way is scored on what it would store:

* its **score**: the share of the pack's probes it answers (keys present and traps absent, over keys and traps);
* **invented**: answers refused for naming what no source holds, and names in no source in the kept text.

A model keeps ``writes`` only when its written summaries score at least ``MARGIN`` more than its titles and
nothing it wrote was invented; every other model summarises by titles.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from typing import Any

from hiermem_tui.summarize.prompts import PromptSet
from hiermem_tui.summarize.summariser import Summariser
from hiermem_tui.summarize.types import Backend, SourceItem, SummaryRequest, SummaryResult
from hiermem_tui.summarize.writes import WAYS
from hiermem_tui.tokens import Tokenizer

PACK_VERSION = "calibrate-v1"
"""The version of the pack and its scoring, recorded with every measurement."""
MARGIN = 0.10
"""How much more of the probes (as a share: ten points) a model's written summaries must answer than its titles
for it to write. A title over key lines answers what the chat's own lines say; writing costs more model time and
risks a false statement, so a tie, or a point or two, keeps titles."""
LEAF_TARGET = 1200
"""The leaf target the pack's chats are summarised at (the default policy's): each chat is a leaf of its own, so
its target is a quarter of its tokens, as any leaf's."""
_T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Chat:
    """One chat of the pack, with its probes."""

    id: str
    title: str
    messages: tuple[tuple[str, str], ...]
    keys: tuple[tuple[str, ...], ...]
    traps: tuple[tuple[str, ...], ...]

    def sources(self, tokenizer: Tokenizer) -> list[SourceItem]:
        """The chat as a leaf's sources (no times: the pack's chats have none to show)."""
        return [SourceItem("episode", text, tokenizer.count(text), _T0 + timedelta(minutes=i),
                           _T0 + timedelta(minutes=i), role=role, label=f"#{i}", synthetic_time=True)
                for i, (role, text) in enumerate(self.messages)]

    def request(self, tokenizer: Tokenizer, target: int = LEAF_TARGET) -> SummaryRequest:
        return SummaryRequest(0, self.sources(tokenizer), target)


def load_pack(folder: Any = None) -> list[Chat]:
    """The built-in pack (or the ``*.json`` chats of ``folder``), in name order."""
    root = folder if folder is not None else resources.files("hiermem_tui") / "assets" / "calibrate"
    chats = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        chats.append(Chat(str(data["id"]), str(data.get("title", "")),
                          tuple((str(m["role"]), str(m["content"])) for m in data["messages"]),
                          tuple(_spellings(k) for k in data["keys"]), tuple(_spellings(t) for t in data["traps"])))
    return chats


def _spellings(probe: str | Sequence[str]) -> tuple[str, ...]:
    return (probe,) if isinstance(probe, str) else tuple(probe)


_MARKUP = re.compile(r"[`*_]+")


def _plain(text: str) -> str:
    """``text`` as probes read it: lower case, without Markdown's emphasis and code marks, spaces collapsed."""
    return " ".join(_MARKUP.sub("", text).lower().split())


def found(text: str, probes: Sequence[Sequence[str]]) -> int:
    """How many of ``probes`` (each any of its spellings) ``text`` contains."""
    plain = _plain(text)
    return sum(any(_plain(s) in plain for s in spellings) for spellings in probes)


def invented(result: SummaryResult) -> int:
    """What a way made up on a chat: its answers refused for naming what no source holds, and the names in no
    source that its kept text still carries (a title may carry a few)."""
    refused = sum(r.reason == "invented" for r in result.rejections)
    return refused + (len(result.fidelity.novel) if result.fidelity is not None else 0)


@dataclass(frozen=True, slots=True)
class WayResult:
    """One chat summarised one way: what would be stored, and what it answered."""

    text: str
    tier: str
    keys: int
    traps: int
    invented: int
    calls: int
    seconds: float
    rejections: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"keys": self.keys, "traps": self.traps, "invented": self.invented, "tier": self.tier,
                "calls": self.calls, "rejections": list(self.rejections), "text": self.text}


@dataclass(frozen=True, slots=True)
class ChatResult:
    chat: Chat
    ways: dict[str, WayResult]


@dataclass(frozen=True, slots=True)
class Score:
    """One way over the whole pack."""

    keys: int
    keys_of: int
    traps: int
    traps_of: int
    invented: int
    fallbacks: int

    @property
    def value(self) -> float:
        """The share of the probes answered: keys present and traps absent, over keys and traps."""
        total = self.keys_of + self.traps_of
        return (self.keys + self.traps_of - self.traps) / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A model measured both ways, and the way it keeps."""

    model: str
    backend: str
    way: str
    scores: dict[str, Score]
    chats: tuple[ChatResult, ...]
    calls: int
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "way": self.way,
            "scores": {w: round(s.value, 3) for w, s in self.scores.items()},
            "invented": {w: s.invented for w, s in self.scores.items()},
            "calls": self.calls,
            "seconds": round(self.seconds, 1),
            "margin": MARGIN,
            "pack": PACK_VERSION,
            "probes": {w: {"keys": s.keys, "keys_of": s.keys_of, "traps": s.traps, "traps_of": s.traps_of,
                           "fallbacks": s.fallbacks} for w, s in self.scores.items()},
            "chats": [{"id": c.chat.id, **{w: r.as_json() for w, r in c.ways.items()}} for c in self.chats],
        }


def verdict(titles: Score, writes: Score) -> str:
    """``writes`` when the written summaries answered at least ``MARGIN`` more of the probes with nothing
    invented, else ``titles``."""
    return "writes" if writes.invented == 0 and writes.value >= titles.value + MARGIN - 1e-9 else "titles"


def total(results: Sequence[ChatResult], way: str) -> Score:
    """One way's figures over the pack."""
    rs = [(c.chat, c.ways[way]) for c in results]
    return Score(sum(r.keys for _, r in rs), sum(len(c.keys) for c, _ in rs), sum(r.traps for _, r in rs),
                 sum(len(c.traps) for c, _ in rs), sum(r.invented for _, r in rs),
                 sum(r.tier == "fallback" for _, r in rs))


Progress = Callable[[Chat, str, WayResult], None]


async def calibrate(backend: Backend, tokenizer: Tokenizer, *, prompts: PromptSet | None = None,
                    pack: Sequence[Chat] | None = None, on_result: Progress | None = None) -> Calibration:
    """Measure ``backend``'s model (checked already) both ways on the pack; raises what the summariser raises
    when the server goes away (``RunAborted``) or loses the model (``ModelMissing``)."""
    started = time.monotonic()
    chats = list(pack) if pack is not None else load_pack()
    results = []
    for chat in chats:
        ways: dict[str, WayResult] = {}
        for way in WAYS:
            summariser = Summariser(backend, tokenizer, prompts=prompts, summary_format="notes", summary_way=way)
            result = await summariser.summarise(chat.request(tokenizer))
            ways[way] = WayResult(result.text, result.tier, found(result.text, chat.keys),
                                  found(result.text, chat.traps), invented(result), result.attempts,
                                  result.llm_seconds, tuple(f"{r.tier}: {r.reason}: {r.detail}" for r in result.rejections))
            if on_result is not None:
                on_result(chat, way, ways[way])
        results.append(ChatResult(chat, ways))
    scores = {w: total(results, w) for w in WAYS}
    return Calibration(backend.model or "", backend.name, verdict(scores["titles"], scores["writes"]), scores,
                       tuple(results), sum(r.calls for c in results for r in c.ways.values()),
                       time.monotonic() - started)
