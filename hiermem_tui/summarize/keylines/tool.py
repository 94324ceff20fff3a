"""The tool extractor: the lines a tool's output offers.

What went wrong first (``TOOL_ERROR``: at most two error lines, "error:" lines first), then what came of the
call when that fits a line (``TOOL_RESULT``: a short output whole — "No matches found", a short file list —
or a long one's closing tally, "4 failed, 23 passed"), else what a long output is by its first line of words
(``TOOL_OPENING``); then what it says in words (``OUTPUT_SAID``: comments and prose lines) and the rest.
"""

from __future__ import annotations

import re

from hiermem_tui.summarize import steps
from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.text import ERRORISH, position, prose, wordy

SHORT_OUTPUT = 6
"""A tool output of at most this many lines is quoted whole, on one line (a grep's file list)."""
OUTPUT_LINES = 12
"""Comment and prose lines of each long tool output offered as ``OUTPUT_SAID``; the rest are ``REST``."""

BANNER = re.compile(r"^(?:Todos have been modified|\[no output\]|Success\.?$)", re.I)
"""A tool's stock acknowledgement, which says nothing of the work."""
CODE = re.compile(r"^(?:from |import |raise |def |class |#include|return |except |if |[\w.]+\s*=\s)")
"""A line of code (not an error line, not a description)."""
_TALLY = re.compile(r"\d+ (?:passed|failed|errors?|files?|matches|warnings?)\b|\bno matches\b|\bdone\b", re.I)
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
_GREP_PATH = re.compile(r"^/(?:[^\s/:]+/)+(?=[^\s/:]+[:-])")
"""A grep hit's directory ("/home/me/vsla/src/"): shown as "…/", the file name says which file."""
_HIT = re.compile(r"^…/[^\s/:]+?[:-](?:\d+[:-])?")
"""A grep hit's file (and line number), before the line it found."""
_COMMENT = re.compile(r"(?://|/\*|^\s*\*|#\s)\s*[A-Za-z]{2,}")


def line(raw: str) -> str:
    """An output line as quoted: no line number of a file read, spaces collapsed, a grep hit's directory as
    "…/"."""
    return _GREP_PATH.sub("…/", " ".join(_NUMBERED.sub("", raw).split()))


def error_lines(text: str) -> list[str]:
    """A text's error lines, "error:" lines first (at most two)."""
    return _errors_and_result(text)[0]


def _errors_and_result(text: str) -> tuple[list[str], str | None]:
    """An output's error lines (at most two) and its result line: the whole output when it is short, else its
    last line when that reads as a tally."""
    found = [ln for ln in map(line, text.splitlines()) if ln]
    errors = [ln for ln in found if 12 <= len(ln) <= 240 and ERRORISH.search(ln) and not BANNER.match(ln)
              and not CODE.match(ln) and wordy(ln)]
    errors.sort(key=lambda ln: "error:" not in ln.lower())
    result = None
    if found and not BANNER.match(found[0]):
        if len(found) <= SHORT_OUTPUT:
            result = ": ".join([found[0], ", ".join(found[1:])]) if len(found) > 1 else found[0]
        elif _TALLY.search(found[-1]):
            result = found[-1]
    return errors[:2], result


def _output_lines(text: str) -> tuple[list[str], list[str]]:
    """A long output's lines with words in them, in order: (its comments and prose, the other lines)."""
    said: list[str] = []
    other: list[str] = []
    for ln in map(line, text.splitlines()):
        words = _HIT.sub("", ln)
        if len(re.findall(r"[A-Za-z]{3,}", words)) >= 2 and not BANNER.match(ln):
            (said if _COMMENT.search(words) or prose(words) else other).append(ln)
    return said, other


def _opening(text: str) -> str | None:
    """A long output's first line of words ("@brief Core definitions and error codes for VSLA library")."""
    for ln in text.splitlines():
        ln = line(ln).lstrip("/*# ").strip()
        if len(ln.split()) >= 3 and wordy(ln) and not CODE.match(ln) and not BANNER.match(ln):
            return ln
    return None


def lines(text: str, source: int) -> list[Line]:
    """The lines of a tool output ``text`` (source ``source``), without an agent's system reminders."""
    text = steps.without_reminders(text)

    def at(words: str) -> Place:
        return source, position(text, words)

    errors, result = _errors_and_result(text)
    out = [Line(Kind.TOOL_ERROR, at(x), "tool", x) for x in errors]
    if result and result not in errors:
        out.append(Line(Kind.TOOL_RESULT, (source, 0), "tool", result))
    elif not errors and (opening := _opening(text)):
        out.append(Line(Kind.TOOL_OPENING, (source, 0), "tool", opening))
    if result is None:
        said, other = _output_lines(text)
        out += [Line(Kind.OUTPUT_SAID, at(x), "tool", x) for x in said[:OUTPUT_LINES]]
        out += [Line(Kind.REST, at(x), "tool", x) for x in said[OUTPUT_LINES:] + other]
    return out
