"""Selection under a budget: the lines of every step, a level at a time across steps, none repeating another.

``select`` walks the levels of ``PRIORITY``: at each level every step's lines of that level in the step's
order, then the next level. A line is clipped to ``LINE_TOKENS`` and taken if it fits what is left of the
budget and says something new (``Chosen``). Lines read for a title (``keep``) are taken first, as read, then
the lines that say how a stretch ends (``first``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.text import SPACES, clip_sentence
from hiermem_tui.tokens import Tokenizer

LINE_TOKENS = 90
"""No quoted sentence runs longer than this (it is clipped with "…")."""
LIST_TOKENS = 130
"""No list (its lead-in and items) or code block's definitions run longer than this."""
_LONG = {Kind.LIST, Kind.LIST_MORE, Kind.CODE, Kind.CODE_MORE}

Levels = list[list[Line]]
"""A step's lines by level (``PRIORITY``'s order), each level in the step's order."""


def bullet(who: str, words: str) -> str:
    """A quoted line as a summary shows it."""
    return f"- {who}: {words}"


def answer_bullet(who: str, words: str) -> str:
    """A quoted line under the request it answers: indented, the assistant's words without their speaker."""
    return f"  - {words}" if who == "assistant" else f"  - {who}: {words}"


def line_tokens(line: Line) -> int:
    """The most one line may take: a list or a code block's definitions more than a sentence."""
    return LIST_TOKENS if line.kind in _LONG else LINE_TOKENS


def select(per_step: Sequence[Levels], budget: int, tokenizer: Tokenizer, *, keep: Iterable[tuple[str, str]] = (),
           first: Sequence[Line] = ()) -> list[tuple[Place, str, str]]:
    """The lines taken within ``budget`` tokens, as (place, who, words) in the order they are shown: ``keep``'s
    (who, words) as an earlier, smaller pick quoted them (read for a title), then ``first`` (a stretch's ending),
    then the levels. A line's cost is its bullet as shown, a level deeper than a request's (``indent``)."""
    chosen = Chosen(budget)
    seen: set[str] = set()
    kept = set(keep)
    depth = max((len(c) for c in per_step), default=0)

    def offer(ln: Line, *, only_kept: bool = False) -> None:
        key = ln.words.casefold()
        if key in seen:
            return
        words = clip_sentence(ln.words, line_tokens(ln), tokenizer)
        if only_kept and (ln.who, words) not in kept:
            return
        cost = tokenizer.count(bullet(ln.who, words) if ln.who == "user" else answer_bullet(ln.who, words)) + 1
        if chosen.take(ln.place, ln.who, words, cost, read=only_kept):
            seen.add(key)

    by_level = [[ln for levels in per_step if level < len(levels) for ln in levels[level]] for level in range(depth)]
    passes: list[tuple[bool, Sequence[Sequence[Line]]]] = []
    if kept:
        passes.append((True, by_level))
    passes += [(False, [list(first)]), (False, by_level)]
    for only_kept, rounds in passes:
        for lines in rounds:
            for ln in lines:
                offer(ln, only_kept=only_kept)
    return chosen.shown()


class Chosen:
    """The lines picked so far within a budget, none of them a repeat of another (``said``): a line whose
    words a picked one holds is not taken; one that fits and holds a picked line's words and more takes its
    place, unless that line was read for a title, which stays as it was read."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.lines: dict[tuple[Place, int], tuple[str, str, int]] = {}  # (place, order): who, words, cost
        self.words: dict[tuple[Place, int], str] = {}
        self.read: set[tuple[Place, int]] = set()
        self.order = 0

    def take(self, place: Place, who: str, line: str, cost: int, *, read: bool) -> bool:
        """Take ``line`` (at ``place``, costing ``cost`` tokens with its newline) if it fits and says something
        new; whether it was taken."""
        if self.used + cost > self.budget:
            return False
        words = said(who, line)
        if words and any(holds(other, words) for other in self.words.values()):
            return False
        held = [at for at, other in self.words.items() if words and holds(words, other)]
        if any(at in self.read for at in held):
            return False
        for at in held:
            self.used -= self.lines.pop(at)[2]
            del self.words[at]
        self.order += 1
        at = (place, self.order)
        self.lines[at] = (who, line, cost)
        self.used += cost
        if words:
            self.words[at] = words
        if read:
            self.read.add(at)
        return True

    def shown(self) -> list[tuple[Place, str, str]]:
        """The lines taken, in the order they are shown (by place, then as taken)."""
        return [(at[0], who, line) for at, (who, line, _cost) in sorted(self.lines.items())]


def holds(longer: str, words: str) -> bool:
    """``words`` occur in ``longer`` as whole words ("section 1" is not in "section 10")."""
    at = longer.find(words)
    while at >= 0:
        end = at + len(words)
        if (at == 0 or not longer[at - 1].isalnum()) and (end == len(longer) or not longer[end].isalnum()):
            return True
        at = longer.find(words, at + 1)
    return False


_LEADING_MARKS = re.compile(r"^[#>*\s-]+")
SAID_LEAST = 20
"""A line shorter than this (in characters, once compared) is never taken for a repeat: "ok", "yes"."""


def said(who: str, line: str) -> str:
    """A line's words as a repeat is found: without a heading's or list's marks, a clip's "…", case or runs of
    spaces; "" for a line never taken for a repeat (a command the agent ran — "uv run pytest -q" and "uv run
    pytest -q --tb=short" are two runs — or a short one)."""
    if who == "assistant did":
        return ""
    words = SPACES.sub(" ", _LEADING_MARKS.sub("", line.removesuffix("…"))).strip().casefold()
    return words if len(words) >= SAID_LEAST else ""
