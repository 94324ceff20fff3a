"""Key lines over summaries: a condensed summary carries up the lines its sources quote.

Each source's quoted lines are ranked, most telling first — its first line, lines that decide, what the user
said in words, errors, the assistant's lines with numbers or names, then the rest — and each line is a level
of its own, so every source's k-th line comes before any source's (k+1)-th: each source gets its share.
"""

from __future__ import annotations

import re

from hiermem_tui.summarize.keylines.kinds import Kind, Line
from hiermem_tui.summarize.keylines.select import Levels
from hiermem_tui.summarize.text import DECIDES, ERRORISH, SPECIFIC, prose
from hiermem_tui.summarize.types import SourceItem

HEAD = "In the chat's words:"
"""The line that opens a summary's quoted lines (after a model's title)."""
_QUOTE_LINE = re.compile(r"^- (user|assistant|assistant did|assistant planned|tool|system): (.+)$")


def split(text: str) -> tuple[str, str]:
    """(what the model wrote, the key lines that follow it) of a summary's text; a summary with no quoted
    block is all the first."""
    head, found, rest = text.partition(f"\n{HEAD}\n")
    return (head, rest) if found else (text, "")


def quoted(text: str) -> list[tuple[str, str]]:
    """The (who, words) lines a summary quotes: those after ``HEAD``, or, in a summary without one (an
    extractive digest), its ``- user: …`` lines."""
    lines = text.splitlines()
    if HEAD in lines:
        lines = lines[lines.index(HEAD) + 1:]
    return [(m.group(1), m.group(2)) for m in map(_QUOTE_LINE.match, lines) if m]


def _rank(n: int, who: str, words: str) -> int:
    """How telling a source's ``n``-th quoted line is (0 most)."""
    if n == 0:
        return 0
    if DECIDES.search(words):
        return 1
    if who == "user" and prose(words):
        return 2
    if ERRORISH.search(words):
        return 3
    if who.startswith("assistant") and SPECIFIC.search(words):
        return 4
    return 5


def levels(source: SourceItem, first: int) -> Levels:
    """A summary's quoted lines as levels of one line each, most telling first. A line's place is ``first``
    + its place in ``source``: picked lines are shown in the order the sources said them."""
    ranked = sorted((_rank(n, who, words), n, who, words) for n, (who, words) in enumerate(quoted(source.text)))
    return [[Line(Kind.REST, (first + n, 0), who, words)] for _, n, who, words in ranked]
