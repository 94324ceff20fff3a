"""What a summary quotes, read back: its title, its quoted lines, and those lines ranked to be carried up.

A condensed summary's outline (``outline.py``) carries up the lines its sources quote. Each source's quoted
lines are ranked, most telling first — its first line, lines that decide, what the user
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
_QUOTE_LINE = re.compile(r"^\s*- (user|assistant|assistant did|assistant planned|tool|system): (.+)$")
_ANSWER_LINE = re.compile(r"^\s+- (.+)$")
"""A line under a request with no speaker: the assistant's words (``select.answer_bullet``)."""


def split(text: str) -> tuple[str, str]:
    """(what the model wrote, the key lines that follow it) of a summary's text; a summary with no quoted
    block is all the first."""
    head, found, rest = text.partition(f"\n{HEAD}\n")
    return (head, rest) if found else (text, "")


def quoted(text: str) -> list[tuple[str, str]]:
    """The (who, words) lines a summary quotes: those after ``HEAD``, or, in a summary without one (an
    extractive digest), its ``- user: …`` lines; an indented line with no speaker is the assistant's."""
    return [(who, words) for who, words in quoted_lines(text) if who]


UNANSWERED = "(not answered in this stretch)"


def quoted_lines(text: str) -> list[tuple[str, str]]:
    """Like ``quoted``, with a stretch's ``UNANSWERED`` mark kept in its place as ("", the mark)."""
    lines = text.splitlines()
    if HEAD in lines:
        lines = lines[lines.index(HEAD) + 1:]
    out = []
    for ln in lines:
        m = _QUOTE_LINE.match(ln)
        if m:
            out.append((m.group(1), m.group(2)))
        elif ln.strip() == f"- {UNANSWERED}":
            out.append(("", UNANSWERED))
        elif (m := _ANSWER_LINE.match(ln)) and out:
            out.append(("assistant", m.group(1)))
    return out


def title(text: str) -> str:
    """What a model titled a summary: the lines before ``HEAD`` (several joined by " / "); "" for a summary
    with no quoted block or no title."""
    head, rest = split(text)
    if not rest:
        return ""
    return " / ".join(ln.strip().lstrip("-•* ").strip() for ln in head.splitlines() if ln.strip())


def rank(n: int, who: str, words: str) -> int:
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


def levels(source: SourceItem, index: int) -> Levels:
    """A summary's quoted lines as levels of one line each, most telling first. A line's place is (``index``,
    its place in ``source``): picked lines are shown in the order the sources said them."""
    lines = [(n, who, words) for n, (who, words) in enumerate(quoted_lines(source.text)) if who]
    ranked = sorted((rank(k, who, words), n, who, words) for k, (n, who, words) in enumerate(lines))
    return [[Line(Kind.REST, (index, n), who, words)] for _, n, who, words in ranked]
