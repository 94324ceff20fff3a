"""Fidelity: which salient identifiers of its sources a summary kept, lost, or made up.

Users of summary DAGs complain most about summaries that silently drop the things they
will search for later: numbers, paths, commands, code names, error names. This module
finds those *salient identifiers* in text, and measures a summary against its sources:

* ``identifiers`` — distinct salient identifiers in the sources;
* ``kept`` / ``lost`` — which of them the summary still names (lost ones ordered by
  importance, so the most important are the ones stored and shown first);
* ``novel`` — identifiers in the summary that appear in none of the sources (a small model
  inventing formulas, or carrying forward what a previous summary made up);
* ``key`` / ``key_kept`` — the sources' most important identifiers, as many as a summary of
  its length can be expected to carry (:func:`key_count`), and how many of those it kept:
  the low-fidelity flag is judged on these, so a 10× compression is not blamed for leaving
  out the fortieth variable name, and a summary that drops the file everyone talked about is.

What counts as salient (documented because it decides what a summary is blamed for):

* in prose: URLs, paths, backticked spans that are names (at most four words and 48
  characters, not a fragment, not a common word), dates (``2026-05-11``), numbers of two or
  more digits (and dotted versions such as ``1.4.2``; not traceback line numbers, not the
  pieces of a time or a date), commit-like hex hashes,
  CamelCase / camelCase names, snake_case names, dotted names (``os.path.join``,
  ``setup.cfg``) and acronyms (``CI``);
* inside fenced code blocks and in tool output, only what a reader names when talking
  about the code: URLs, paths mentioned in prose too, and the names a block *defines*
  (``def``, ``class``, ``function``, ``struct``, …). Every local variable of a pasted file
  is not something a summary should carry, and counting them would make every code-heavy
  chat look lossy.

The measurement is one value, :class:`~hiermem_tui.fidelity_value.Fidelity`, which the store
keeps and ``check`` reports as it is (ARCHITECTURE §4).

Text is read the way a person reads it: Markdown backslash escapes (``climabench\\_data``,
which ChatGPT exports write) and JSON escapes shown literally (``\\n``, ``\\"``) are undone
first, on both sides, so an escaped name is the name and never half of it.

Matching is literal and case-sensitive (identifiers are names), with two allowances: a
backticked span counts as kept when its inner text appears, and a path counts as kept
when its file name (with extension) appears.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hiermem_tui.fidelity_value import Fidelity

MAX_KEYWORDS = 24
"""How many lost names at most go into a summary's keywords field."""
KEY_MIN, KEY_MAX, KEY_TOKENS = 3, 15, 40
"""A summary is expected to carry one key name per ``KEY_TOKENS`` tokens of its length, at
least ``KEY_MIN`` and at most ``KEY_MAX`` (see :func:`key_count`)."""

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_URL = re.compile(r"\b(?:https?|[a-z][a-z0-9+.-]{1,15})://[^\s<>()\[\]{}\"'`]+")
_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_PATH = re.compile(
    r"(?<![\w/.])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?"  # /usr/lib/x, ./a/b, ~/x/y
    r"|(?<![\w/.])(?:[\w.\-@+]+/)+[\w\-@+]+\.[A-Za-z0-9]{1,8}\b"  # src/foo.py
    r"|\b[A-Za-z]:\\(?:[\w.\-]+\\)*[\w.\-]+"  # C:\dir\file
)
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?:[\w.\-]+\\)*[\w.\-]+")
_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
_DOTTED = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(\))?")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b_[A-Za-z][A-Za-z0-9_]*\b")
_CAMEL = re.compile(r"(?<!\\)\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")
_NUMBER = re.compile(r"(?<![\w.:])(?:\d+(?:\.\d+){1,3}|\d{2,}(?:,\d{3})*)(?![\w]|:\d)")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?Z?)?\b")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,9}s?\b")
_DEFINES = re.compile(
    r"\b(?:def|fn|func|function)\s+([A-Za-z_]\w*)\s*[(<]"
    r"|\b(?:class|struct|enum|interface|trait|impl|union)\s+([A-Za-z_]\w*)\s*(?=[:{(<]|$)"
    r"|#define\s+([A-Za-z_]\w*)",
    re.M,
)
_EMAIL = re.compile(r"(?<![:/\w.+\-])[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+\b")
"""An address, not a URL's credentials ("admin:pw@db.internal" is part of a URL, and of a secret)."""
_ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")
# "[tool_use Bash] {"command": "…"}": the call's JSON keys are the export's scaffolding,
# the values (commands, paths) are what the user did
_TOOL_CALL = re.compile(r"^\[(?:tool_use|call) [^\]\n]*\]", re.M)
_JSON_KEY = re.compile(r'"[A-Za-z_]\w*"\s*:')
_NOT_ACRONYMS = frozenset({"OK", "AM", "PM", "ID", "TODO", "NOTE", "II", "III", "IV", "VS", "EG", "IE",
                           "KB", "MB", "GB", "TB", "PB", "UTC", "GMT"})  # units and time zones are not names
_WEIGHT = {"url": 5.0, "email": 5.0, "path": 4.0, "backtick": 4.0, "defined": 4.0, "hash": 3.0, "dotted": 3.0,
           "snake": 3.0, "camel": 3.0, "date": 2.0, "number": 2.0, "acronym": 1.0}
# the order in which kinds claim text: a URL's path and a backticked span's dots are not
# counted again as separate identifiers
_PROSE_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", _URL), ("email", _EMAIL), ("backtick", _BACKTICK), ("path", _PATH), ("hash", _HASH), ("dotted", _DOTTED),
    ("snake", _SNAKE), ("camel", _CAMEL), ("date", _DATE), ("number", _NUMBER), ("acronym", _ACRONYM),
)
_TRAILING = ".,;:!?)]}'\""

# Markdown escapes (``\_``, ``\*``) and JSON escapes shown literally (``\n``, ``\"``) in the
# text of an export: undone before reading names (Windows paths are left alone).
_MD_ESCAPE = re.compile(r"\\([_*#`\[\](){}<>|~!+.\-\\])")
_JSON_ESCAPE = re.compile(r"\\[nrt](?![0-9a-f]{3})")
_JSON_QUOTE = re.compile(r'\\"')
# a copy-button label glued to the word before it in a pasted ChatGPT page ("codeShare", "thisCopy")
_UI_GLUE = re.compile(r"[a-z]+(?:Share|Copy|Edit|Regenerate)")
# the standard C and C++ types (uint64_t, size_t): a language's vocabulary, not a name of the chat's
_C_TYPES = re.compile(r"u?int(?:8|16|32|64|ptr|max)_t|s?size_t|ptrdiff_t|off_t|wchar_t|char(?:8|16|32)_t")
# a traceback's "line 2586": a position in someone's file, not a name to keep
_LINE_NO = re.compile(r"\blines?\s*$", re.I)
_CUT = ("…", "...")
_OPERATOR = re.compile(r"[=<>!+\-*/%&|^~:?]{1,3}")
# a backticked span that starts or ends like the text *between* two spans (mis-paired
# backticks in a log) rather than like a name
_FRAGMENT_START = ")]},.;:!?"
_FRAGMENT_END = "([{,;:"
COMMON_WORDS = frozenset("""
a an the and or not no yes is are was be to of in on at by as it its for from with into out up down if then else
elif while do done for each all any some none null nil true false this that these those there here new old get set
add put run make build test tests init main start stop end begin return yield break continue pass try catch except
finally raise throw error errors warning warnings info debug log logs value values data item items list lists dict map
key keys name names id ids type types user users file files path paths dir code text string str int float bool char
number numbers count size length len index input output result results response request args kwargs self cls obj
object class function method var let const def fn func default config settings option options model models view views
state status mode flag flags api app apps page pages link links version update delete create read write open close
load save call send fix bug bugs issue issues note notes step steps line lines word words one two three first last
next prev current total max min sum avg time date day days now today
cite_start cite_end
""".split())
"""Single words that are not names of anything in particular (``true``, ``users``, ``error``),
and the citation markers text pasted from a chatbot carries (``[cite_start]``): backticked or
not, they are not identifiers a summary must keep."""


def readable(text: str) -> str:
    """``text`` with the Markdown and literal JSON escapes of an export undone (see the module
    docstring); Windows paths, whose backslashes are separators, are kept as they are."""
    if "\\" not in text:
        return text
    out, pos = [], 0
    for m in _WINDOWS_PATH.finditer(text):
        out.append(_unescape(text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_unescape(text[pos:]))
    return "".join(out)


def _unescape(text: str) -> str:
    text = _JSON_ESCAPE.sub(" ", text)
    text = _JSON_QUOTE.sub('"', text)
    return _MD_ESCAPE.sub(r"\1", text)


@dataclass(frozen=True, slots=True)
class Identifier:
    """One distinct identifier: its text, kind, how often and where it first appeared."""

    text: str
    kind: str
    count: int
    first: int

    @property
    def importance(self) -> float:
        weight = _WEIGHT.get(self.kind, 1.0)
        parts = [p for p in self.text.split("_") if p]
        if self.kind == "snake" and any(len(p) == 1 for p in (parts[:-1] if parts[-1] == "t" else parts)):
            weight = 1.0  # ``a_i``, ``val_b``, ``s_k``: an index or a local of a formula, not a name to keep
        return weight * (1.0 + math.log(self.count))


def key_count(summary_tokens: int) -> int:
    """How many of its sources' most important names a summary this long should carry.

    One per ``KEY_TOKENS`` tokens, between ``KEY_MIN`` and ``KEY_MAX``: a 750-token leaf of a
    3,000-token chunk is asked for its 15 most important names, a 100-token one for 3. The
    harder the compression, the fewer names a summary is blamed for."""
    return max(KEY_MIN, min(KEY_MAX, summary_tokens // KEY_TOKENS))


def _clean(text: str, kind: str) -> str:
    if kind == "dotted" and text.endswith("()"):
        text = text[:-2]  # a call names the function: ``os.getcwd()`` is ``os.getcwd``
    if kind in ("url", "path", "dotted"):
        text = text.rstrip(_TRAILING)
    return text.strip()


def _keep_dotted(text: str) -> bool:
    parts = text.split(".")
    # "e.g", "i.e", "a.m": abbreviations, not names
    return any(len(p) > 1 for p in parts) and not text[-1].isdigit()


def _is_name_span(raw: str) -> bool:
    """A backticked span that names something: short, whole, not a sentence nor a common word."""
    value = raw.strip()
    if len(value) < 2 or len(value) > 48 or len(value.split()) > 4 or raw != raw.strip():
        return False
    if value[0] in _FRAGMENT_START or value[-1] in _FRAGMENT_END or value.endswith(_CUT):
        return False
    if not any(c.isalnum() for c in value) or not _balanced(value):
        return False
    if any(_OPERATOR.fullmatch(word) for word in value.split()):
        return False  # an expression (``capacity[i] >= shape[i]``), not a name
    return value.lower() not in COMMON_WORDS


def _balanced(value: str) -> bool:
    """Brackets that close as they open: ``(e.g.`` is a piece of a sentence, ``f(x)`` a name."""
    depth = 0
    for c in value:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _zero(number: str) -> bool:
    return not number.strip("0.,")


def _accept(kind: str, value: str, text: str, start: int, end: int) -> bool:
    """Whether a match of ``kind`` is an identifier (the rules of the module docstring)."""
    if text.startswith(_CUT, end):
        return False  # cut off mid-name by whoever clipped the text: not a name anyone wrote
    if kind == "dotted":
        return _keep_dotted(value)
    if kind == "acronym":
        return value.rstrip("s") not in _NOT_ACRONYMS
    if kind == "number":
        if _zero(value) or (value[0] == "0" and len(value) <= 3 and value.isdigit()):
            return False  # 0.0, and the "05" of a date or a time: pieces, not names
        return not _LINE_NO.search(text[max(0, start - 8) : start])
    if kind == "camel":
        return len(value) >= 4 and not _UI_GLUE.fullmatch(value)
    if kind in ("snake", "defined", "backtick") and (value.lower() in COMMON_WORDS or _C_TYPES.fullmatch(value)):
        return False
    return True


_DIGIT = re.compile(r"\d")
_UPPER = re.compile(r"[A-Z]")
_NEEDS: dict[str, tuple[str, ...] | re.Pattern[str]] = {
    "url": ("://",), "email": ("@",), "backtick": ("`",), "path": ("/", ":\\"), "hash": _DIGIT, "dotted": (".",),
    "snake": ("_",), "camel": _UPPER, "date": ("-",), "number": _DIGIT, "acronym": _UPPER,
}
"""What a text must hold for each kind's pattern to match in it (a literal every match has, or a character
class): a text without it is not searched for that kind at all, the costliest part of reading names."""


def _may_hold(kind: str, text: str) -> bool:
    need = _NEEDS.get(kind)
    if need is None:
        return True
    if isinstance(need, re.Pattern):
        return need.search(text) is not None
    return any(n in text for n in need)


def _prose(text: str, offset: int, found: dict[str, list[int | str]]) -> None:
    claimed = bytearray(len(text))
    for kind, pattern in _PROSE_KINDS:
        if not _may_hold(kind, text):
            continue
        for m in pattern.finditer(text):
            start, end = m.span()
            if claimed.find(1, start, end) >= 0:
                continue
            if kind == "backtick" and not _is_name_span(m.group(1)):
                continue  # not claimed: the names inside a long span are read by the other kinds
            value = _clean(m.group(1) if kind == "backtick" else m.group(0), kind)
            if not value or not _accept(kind, value, text, start, end):
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
        if name.lower() not in COMMON_WORDS:
            _add(found, name, "defined", offset + m.start())


def _tool_output(text: str, offset: int, found: dict[str, list[int | str]]) -> None:
    """Tool output (listings, logs, API dumps): only the errors it names. What in it matters
    is what the user and the assistant then talk about, and that is counted there."""
    for m in _ERROR_NAME.finditer(text):
        _add(found, m.group(0), "camel", offset + m.start())


def _scrub_tool_calls(text: str) -> str:
    """Blank the ``[tool_use X]`` (Claude Code) and ``[call X]`` (ChatGPT) markers and the JSON
    keys of rendered tool calls (same length, so offsets stay true)."""
    if "[tool_use " not in text and "[call " not in text:
        return text
    text = _TOOL_CALL.sub(lambda m: " " * len(m.group(0)), text)
    return _JSON_KEY.sub(lambda m: " " * len(m.group(0)), text)


def extract(texts: Iterable[tuple[str, bool]]) -> list[Identifier]:
    """Distinct salient identifiers of ``(text, is_tool_output)`` pairs, most important first."""
    found: dict[str, list[int | str]] = {}
    offset = 0
    for text, tool in texts:
        text = readable(text)
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
    """``number`` in ``text`` as a whole number (not the tail of a longer one, nor its head).
    A scan with ``str.find``: a regex per number missed the pattern cache on every new number."""
    if not number:
        return False
    start = text.find(number)
    while start >= 0:
        end = start + len(number)
        before = text[start - 1] if start else ""
        if not (before.isdecimal() or before == ".") and not (end < len(text) and text[end].isdecimal()):
            return True
        start = text.find(number, start + 1)
    return False


def present(ident: Identifier | str, text: str, kind: str | None = None) -> bool:
    """Does ``text`` (already :func:`readable`) name this identifier (with the allowances of
    the module docstring)?"""
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


@functools.lru_cache(maxsize=8)
def read_sources(sources: tuple[tuple[str, bool], ...]) -> tuple[tuple[Identifier, ...], str]:
    """The sources' identifiers and their readable text, kept for the next few calls: one
    summary is measured against the same sources after every attempt and once more when it is
    stored, and reading 3,000 tokens of chat for names is most of the summariser's own time."""
    return tuple(extract(sources)), readable("\n".join(t for t, _ in sources))


def measure(summary: str, sources: Sequence[tuple[str, bool]], *, known: str = "", key: int | None = None) -> Fidelity:
    """``summary`` against ``sources`` (``(text, is_tool_output)``); ``known`` is other text
    the summary may legitimately quote without it being novel (the sources' rendered times);
    ``key`` is how many of the most important names it is judged on (default: by its length,
    see :func:`key_count`, counted in words × 4/3 here to stay free of a tokenizer)."""
    salient, source_text = read_sources(tuple(sources))
    text = readable(summary)
    lost = [i for i in salient if not present(i, text)]
    lost_ids = {i.text for i in lost}
    known_text = readable(known)
    novel = [i.text for i in extract([(summary, False)])
             if not present(i, source_text) and not present(i, known_text)]
    wanted = key if key is not None else key_count(len(summary.split()) * 4 // 3)
    top = salient[: max(0, wanted)]
    return Fidelity(
        identifiers=len(salient),
        kept=len(salient) - len(lost),
        lost=tuple(i.text for i in lost),
        novel=tuple(novel),
        key=len(top),
        key_kept=sum(1 for i in top if i.text not in lost_ids),
    )


def keywords_for(fid: Fidelity, limit: int = MAX_KEYWORDS) -> tuple[str, ...]:
    """The names a summary's keywords field holds: the most important ones it lost."""
    return fid.lost[:limit]
