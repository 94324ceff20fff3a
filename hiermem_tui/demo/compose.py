"""Composing whole demo messages from a topic's sentences, once per subject, ahead of the hot loop.

Why a module of its own: this is the slow, varied part (filling slots, sampling sentences,
building answers and pastes), done a few hundred times per subject; the generator
(:mod:`.generator`) then only picks from the pools it returns, which keeps a million-episode
demo fast.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from .topic import Topic

_T = TypeVar("_T")

_POOL = 256  # composed messages per role per topic; enough variety, built in a few ms


@dataclass(slots=True)
class Pools:
    """Messages about one subject (a topic and one of its ``things``), composed once per call.

    Keying pools by subject keeps a session on the subject its title names, while per-episode
    work stays a few index picks.
    """

    topic: Topic
    thing: str
    openings: list[str]
    users: list[str]
    openers: list[str]
    answers: list[str]
    tools: list[str]
    pastes: list[str]


def pick(rng: random.Random, seq: Sequence[_T]) -> _T:
    """One item of ``seq``, from a single ``random()`` call."""
    return seq[int(rng.random() * len(seq))]


_SLOT_RE = re.compile(r"\{(thing|place|n|file)\}")


def fill(rng: random.Random, topic: Topic, thing: str, text: str) -> str:
    """Fill the ``{thing}``/``{place}``/``{n}``/``{file}`` slots of a template.

    A regex, not ``str.format``, because code snippets are full of other braces.
    """
    if "{" not in text:
        return text

    def slot(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "thing":
            return thing
        if name == "n":
            return str(rng.randint(2, 480))
        return pick(rng, topic.places if name == "place" else topic.files)

    return _SLOT_RE.sub(slot, text)


def _sentences(rng: random.Random, topic: Topic, thing: str, pool: tuple[str, ...], count: int) -> list[str]:
    """``count`` distinct sentences of ``pool`` (no sentence twice in one message)."""
    return [fill(rng, topic, thing, s) for s in rng.sample(pool, min(count, len(pool)))]


def _answer(rng: random.Random, topic: Topic, thing: str) -> str:
    """An assistant body of 40-400 words: paragraphs, sometimes a list, sometimes a code block."""
    parts: list[str] = []
    for i in range(rng.randint(1, 5)):
        chunk = _sentences(rng, topic, thing, topic.explains, rng.randint(4 if i == 0 else 2, 5))
        if i and rng.random() < 0.2:
            parts.append("\n".join(f"- {s}" for s in chunk))
        else:
            parts.append(" ".join(chunk))
    if topic.snippets and rng.random() < 0.4:
        parts.insert(rng.randint(1, len(parts)), fill(rng, topic, thing, pick(rng, topic.snippets)))
    return "\n\n".join(parts)


def _paste(rng: random.Random, topic: Topic, thing: str) -> str:
    """A long paste (300-1500 words) of the topic's material: logs, drafts, notes."""
    target = rng.randint(300, 1500)
    source = topic.paste_lines or topic.explains
    lines: list[str] = []
    words = 0
    while words < target:
        line = fill(rng, topic, thing, pick(rng, source))
        lines.append(line)
        words += line.count(" ") + 1
    return "\n".join(lines)


def _opening(rng: random.Random, topic: Topic, thing: str) -> str:
    """A first user message: it names the session's subject, like people do when they start a chat."""
    naming = [s for s in topic.asks if "{thing}" in s]
    rest = _sentences(rng, topic, thing, topic.asks, rng.randint(0, 2))
    lead = fill(rng, topic, thing, pick(rng, naming))
    return " ".join([lead, *(s for s in rest if s != lead)])


def build_pools(rng: random.Random, topic: Topic, thing: str) -> Pools:
    """Every pool for one subject; the order of these calls is part of what a seed produces."""
    return Pools(
        topic=topic,
        thing=thing,
        openings=[_opening(rng, topic, thing) for _ in range(_POOL // 8)],
        users=[" ".join(_sentences(rng, topic, thing, topic.asks, rng.randint(1, 4))) for _ in range(_POOL)],
        openers=[o + " " for o in topic.openers],
        answers=[_answer(rng, topic, thing) for _ in range(_POOL)],
        tools=[fill(rng, topic, thing, pick(rng, topic.tools)) for _ in range(_POOL // 4)] if topic.tools else [],
        pastes=[_paste(rng, topic, thing) for _ in range(6)],
    )
