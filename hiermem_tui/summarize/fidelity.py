"""Fidelity: which salient identifiers of its sources a summary kept, lost, or made up.

Users of summary DAGs complain most about summaries that silently drop the things they
will search for later: numbers, paths, commands, code names, error names. This module
finds those *salient identifiers* in text, and measures a summary against its sources:

* ``identifiers`` — distinct salient identifiers in the sources;
* ``kept`` / ``lost`` — which of them the summary still names (lost ones ordered by
  importance, so a guard can put the most important back first);
* ``novel`` — identifiers in the summary that appear in none of the sources (a small model
  inventing formulas, or carrying forward what a previous summary made up).

What counts as salient (documented because it decides what a summary is blamed for):

* in prose: URLs, paths, backticked spans, numbers of two or more digits (and dotted
  versions such as ``1.4.2``), commit-like hex hashes, CamelCase / camelCase names,
  snake_case names, dotted names (``os.path.join``, ``setup.cfg``) and acronyms (``CI``);
* inside fenced code blocks and in tool output, only what a reader names when talking
  about the code: URLs, paths mentioned in prose too, and the names a block *defines*
  (``def``, ``class``, ``function``, ``struct``, …). Every local variable of a pasted file
  is not something a summary should carry, and counting them would make every code-heavy
  chat look lossy.

Matching is literal and case-sensitive (identifiers are names), with two allowances: a
backticked span counts as kept when its inner text appears, and a path counts as kept
when its file name (with extension) appears.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hiermem_tui.tokens import Tokenizer

MAX_STORED = 40
"""How many lost / novel identifiers a summary row keeps (most important first)."""

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_URL = re.compile(r"\bhttps?://[^\s<>()\[\]{}\"'`]+")
_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_PATH = re.compile(
    r"(?<![\w/.])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?"  # /usr/lib/x, ./a/b, ~/x/y
    r"|(?<![\w/.])(?:[\w.\-@+]+/)+[\w\-@+]+\.[A-Za-z0-9]{1,8}\b"  # src/foo.py
    r"|\b[A-Za-z]:\\(?:[\w.\-]+\\)*[\w.\-]+"  # C:\dir\file
)
_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
_DOTTED = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(\))?")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b_[A-Za-z][A-Za-z0-9_]*\b")
_CAMEL = re.compile(r"(?<!\\)\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")
_NUMBER = re.compile(r"(?<![\w.])(?:\d+(?:\.\d+){1,3}|\d{2,}(?:,\d{3})*)(?![\w])")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,9}s?\b")
_DEFINES = re.compile(
    r"\b(?:def|fn|func|function)\s+([A-Za-z_]\w*)\s*[(<]"
    r"|\b(?:class|struct|enum|interface|trait|impl|union)\s+([A-Za-z_]\w*)\s*(?=[:{(<]|$)"
    r"|#define\s+([A-Za-z_]\w*)",
    re.M,
)
_EMAIL = re.compile(r"\b[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+\b")
_ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")
# "[tool_use Bash] {"command": "…"}": the call's JSON keys are the export's scaffolding,
# the values (commands, paths) are what the user did
_TOOL_CALL = re.compile(r"^\[tool_use [^\]\n]*\]", re.M)
_JSON_KEY = re.compile(r'"[A-Za-z_]\w*"\s*:')
_NOT_ACRONYMS = frozenset({"OK", "AM", "PM", "ID", "TODO", "NOTE", "II", "III", "IV", "VS", "EG", "IE"})
_WEIGHT = {"url": 5.0, "email": 5.0, "path": 4.0, "backtick": 4.0, "defined": 4.0, "hash": 3.0, "dotted": 3.0,
           "snake": 3.0, "camel": 3.0, "number": 2.0, "acronym": 1.0}
# the order in which kinds claim text: a URL's path and a backticked span's dots are not
# counted again as separate identifiers
_PROSE_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", _URL), ("email", _EMAIL), ("backtick", _BACKTICK), ("path", _PATH), ("hash", _HASH), ("dotted", _DOTTED),
    ("snake", _SNAKE), ("camel", _CAMEL), ("number", _NUMBER), ("acronym", _ACRONYM),
)
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class Identifier:
    """One distinct identifier: its text, kind, how often and where it first appeared."""

    text: str
    kind: str
    count: int
    first: int

    @property
    def importance(self) -> float:
        return _WEIGHT.get(self.kind, 1.0) * (1.0 + math.log(self.count))


@dataclass(frozen=True, slots=True)
class Fidelity:
    """A summary measured against its sources (see module docstring)."""

    identifiers: int
    kept: int
    lost: tuple[str, ...]
    novel: tuple[str, ...]

    @property
    def retention(self) -> float:
        """Kept / identifiers; 1.0 when the sources had none (nothing could be lost)."""
        return self.kept / self.identifiers if self.identifiers else 1.0


def _clean(text: str, kind: str) -> str:
    if kind in ("url", "path", "dotted"):
        text = text.rstrip(_TRAILING)
        if kind == "dotted" and text.endswith("()"):
            text = text[:-2]
    return text.strip()


def _keep_dotted(text: str) -> bool:
    parts = text.split(".")
    # "e.g", "i.e", "a.m": abbreviations, not names
    return any(len(p) > 1 for p in parts) and not text[-1].isdigit()


def _prose(text: str, offset: int, found: dict[str, list[int | str]]) -> None:
    claimed = bytearray(len(text))
    for kind, pattern in _PROSE_KINDS:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(claimed[start:end]):
                continue
            value = _clean(m.group(1) if kind == "backtick" else m.group(0), kind)
            if not value:
                continue
            if kind == "dotted" and not _keep_dotted(value):
                continue
            if kind == "acronym" and value.rstrip("s") in _NOT_ACRONYMS:
                continue
            if kind == "backtick" and len(value) < 2:
                continue
            claimed[start:end] = b"\x01" * (end - start)
            _add(found, value, kind, offset + start)


def _add(found: dict[str, list[int | str]], value: str, kind: str, where: int) -> None:
    entry = found.get(value)
    if entry is None:
        found[value] = [kind, 1, where]
    else:
        entry[1] = int(entry[1]) + 1


def _code(text: str, offset: int, found: dict[str, list[int | str]]) -> None:
    """A code block: only the names it defines (see module docstring)."""
    for m in _DEFINES.finditer(text):
        name = next(g for g in m.groups() if g)
        _add(found, name, "defined", offset + m.start())


def _tool_output(text: str, offset: int, found: dict[str, list[int | str]]) -> None:
    """Tool output (listings, logs, API dumps): only the errors it names. What in it matters
    is what the user and the assistant then talk about, and that is counted there."""
    for m in _ERROR_NAME.finditer(text):
        _add(found, m.group(0), "camel", offset + m.start())


def _scrub_tool_calls(text: str) -> str:
    """Blank the ``[tool_use X]`` markers and JSON keys of rendered tool calls (same length,
    so offsets stay true)."""
    if "[tool_use " not in text:
        return text
    text = _TOOL_CALL.sub(lambda m: " " * len(m.group(0)), text)
    return _JSON_KEY.sub(lambda m: " " * len(m.group(0)), text)


def extract(texts: Iterable[tuple[str, bool]]) -> list[Identifier]:
    """Distinct salient identifiers of ``(text, is_tool_output)`` pairs, most important first."""
    found: dict[str, list[int | str]] = {}
    offset = 0
    for text, tool in texts:
        if tool:
            _tool_output(text, offset, found)
        else:
            text = _scrub_tool_calls(text)
            pos = 0
            for fence in _FENCE.finditer(text):
                _prose(text[pos : fence.start()], offset + pos, found)
                _code(fence.group(0), offset + fence.start(), found)
                pos = fence.end()
            _prose(text[pos:], offset + pos, found)
        offset += len(text) + 1
    ids = [Identifier(v, str(k), int(c), int(f)) for v, (k, c, f) in found.items()]
    ids.sort(key=lambda i: (-i.importance, i.first))
    return ids


def _basename(path: str) -> str | None:
    name = re.split(r"[/\\]", path.rstrip("/\\"))[-1]
    return name if "." in name.strip(".") and len(name) >= 4 else None


def _number_in(number: str, text: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


def present(ident: Identifier | str, text: str, kind: str | None = None) -> bool:
    """Does ``text`` name this identifier (with the allowances of the module docstring)?"""
    value = ident.text if isinstance(ident, Identifier) else ident
    kind = ident.kind if isinstance(ident, Identifier) else kind
    if kind == "number":
        return _number_in(value, text) or _number_in(value.replace(",", ""), text)
    if value in text:
        return True
    if kind == "path":
        base = _basename(value)
        return base is not None and base in text
    return False


def measure(summary: str, sources: Sequence[tuple[str, bool]], *, known: str = "") -> Fidelity:
    """``summary`` against ``sources`` (``(text, is_tool_output)``); ``known`` is other text
    the summary may legitimately quote without it being novel (the sources' rendered times)."""
    salient = extract(sources)
    lost = [i for i in salient if not present(i, summary)]
    source_text = "\n".join(t for t, _ in sources) + "\n" + known
    novel = [i.text for i in extract([(summary, False)]) if not present(i, source_text)]
    return Fidelity(
        identifiers=len(salient),
        kept=len(salient) - len(lost),
        lost=tuple(i.text for i in lost),
        novel=tuple(novel),
    )


ALSO_MENTIONED = "Also mentioned: "


def also_mentioned(lost: Sequence[str], budget_tokens: int, tokenizer: Tokenizer) -> str:
    """One line naming as many of ``lost`` (most important first) as fit in ``budget_tokens``.

    Empty when not even one fits. Identifiers are listed literally, comma-separated.
    """
    if budget_tokens <= 0 or not lost:
        return ""
    line = ""
    used = tokenizer.count(ALSO_MENTIONED)
    for ident in lost:
        piece = ident if not line else ", " + ident
        cost = tokenizer.count(piece)
        if used + cost > budget_tokens:
            continue
        line += piece
        used += cost
    if not line:
        return ""
    text = ALSO_MENTIONED + line + "."
    return text if tokenizer.count(text) <= budget_tokens else text[:-1]
