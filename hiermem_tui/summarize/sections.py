"""Sectioned summaries: a JSON schema the model's answer must follow, and its Markdown.

Why a schema: a small model asked for "at most 480 words" writes 700, and the cap then cuts
off whatever came last (the open questions, the errors). With Ollama's structured outputs
(``format`` = a JSON schema, enforced by a grammar while it samples) every section has its
own bound: ``maxItems`` per list and ``maxLength`` per string, sized so the whole answer fits
the tier's target. The answer cannot run long, so nothing is cut and nothing regenerated.

The sections are fixed: what the user was doing, decisions and changes, the exact names
(files, commands, identifiers, numbers), errors and how they were resolved, open questions.
:func:`render` turns an answer into the summary text (Markdown; empty sections left out),
which is what is stored, measured and shown, never the JSON.

Entries of the names list that are plain words ("file paths", "commands") are dropped: a small
model fills the list with the prompt's own description of it when the log has few names.

The grammar bounds strings by characters, so an item may end mid-word at its ``maxLength``;
such an item is cut back to its last whole word and marked ``…`` (a name cut in half would
otherwise read as a name no source has). An answer cut off by the server mid-JSON (a server
that ignores the grammar or ``num_predict``) is read up to its last complete item.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hiermem_tui.tokens import Tokenizer

CHARS_PER_TOKEN = 3.6
"""Characters of English prose per (cl100k) token, a little under the usual 4 to stay safe."""
JSON_OVERHEAD_TOKENS = 48
"""Tokens of keys, quotes and brackets a full answer adds around its strings."""


@dataclass(frozen=True, slots=True)
class Section:
    """One field: its JSON key, the heading it renders under, its share of the target, and
    the length of one item (None: a single string, not a list)."""

    key: str
    heading: str
    share: float
    item_chars: int
    is_list: bool = True
    min_items: int = 1
    inline: bool = False  # rendered as one comma-separated line of `names`
    at_least: int = 0
    """``minItems`` of the schema (at most its ``maxItems``). None of the shipped sections sets one:
    forced to list five names, a 1.5B model listed the prompt's own words ("file paths",
    "commands") when the log had fewer."""


SECTIONS: tuple[Section, ...] = (
    Section("doing", "", 0.12, 0, is_list=False),
    Section("decisions", "Decisions and changes:", 0.34, 170),
    Section("names", "Names:", 0.22, 56, min_items=3, inline=True),
    Section("errors", "Errors and fixes:", 0.18, 190),
    Section("open_questions", "Open questions:", 0.14, 160),
)
MIN_STRING_CHARS = 80


@dataclass(frozen=True, slots=True)
class Layout:
    """The bounds of one sectioned answer: per-section item counts and lengths."""

    target_tokens: int
    items: dict[str, int]
    lengths: dict[str, int]

    @property
    def max_text_tokens(self) -> int:
        """The most the rendered text can be, by the schema's own bounds."""
        chars = sum(self.items[s.key] * (self.lengths[s.key] + 6) for s in SECTIONS)
        return int(chars / CHARS_PER_TOKEN) + 24

    @property
    def num_predict(self) -> int:
        """Answer tokens to allow: every field full, in JSON, plus its punctuation."""
        chars = sum(self.items[s.key] * (self.lengths[s.key] + 8) for s in SECTIONS)
        return int(chars / CHARS_PER_TOKEN * 1.15) + JSON_OVERHEAD_TOKENS

    def schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for s in SECTIONS:
            string: dict[str, Any] = {"type": "string", "maxLength": self.lengths[s.key]}
            array: dict[str, Any] = {"type": "array", "items": string, "maxItems": self.items[s.key]}
            if s.at_least:
                array["minItems"] = min(s.at_least, self.items[s.key])
            props[s.key] = string if not s.is_list else array
        return {"type": "object", "properties": props, "required": [s.key for s in SECTIONS]}


def layout_for(target_tokens: int) -> Layout:
    """Bounds that keep a full answer within ``target_tokens``: each section gets its share of
    the characters, as whole items of its item length (at least one; ``names`` at least three)."""
    chars = max(1, target_tokens) * CHARS_PER_TOKEN
    items: dict[str, int] = {}
    lengths: dict[str, int] = {}
    for s in SECTIONS:
        budget = chars * s.share
        if not s.is_list:
            items[s.key], lengths[s.key] = 1, max(MIN_STRING_CHARS, int(budget))
            continue
        length = s.item_chars
        count = int(budget // (length + 6))
        if count < s.min_items:
            count = s.min_items
            length = max(24, int(budget // count) - 6)
        items[s.key], lengths[s.key] = count, length
    return Layout(target_tokens, items, lengths)


def _closed(text: str) -> str | None:
    """``text`` (a JSON object cut off part way) closed after its last complete value."""
    stack: list[str] = []
    in_string = escaped = False
    last_ok: tuple[int, list[str]] | None = None
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if stack and stack[-1] == "[":
                    last_ok = (i + 1, list(stack))
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}":
            if not stack:
                return None
            stack.pop()
            last_ok = (i + 1, list(stack))
        elif ch == "," and stack and stack[-1] == "{":
            last_ok = (i, list(stack))
    if last_ok is None:
        return None
    end, open_ = last_ok
    closers = "".join("]" if c == "[" else "}" for c in reversed(open_))
    return text[:end].rstrip().rstrip(",") + closers


def parse(answer: str) -> dict[str, Any] | None:
    """The answer as a JSON object (read up to its last complete item if cut off), else None."""
    text = answer.strip()
    start = text.find("{")
    if start < 0:
        return None
    text = text[start:]
    for candidate in (text, _closed(text)):
        if candidate is None:
            continue
        try:
            value = json.loads(candidate, strict=False)  # a raw newline inside a string is common
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


CUT_SLACK = 12
"""An item that stops within this many characters of its ``maxLength`` without ending a sentence
was cut by the grammar: the last token that would have fitted is often a few characters short of
the limit, so "as well as a basic enviro" ends 3 characters before it."""


def _whole(item: str, limit: int) -> str:
    """An item the grammar stopped at (or just short of) ``limit`` characters, cut back to a
    whole word and marked with …"""
    item = " ".join(item.split())
    if limit and len(item) >= limit - CUT_SLACK and not item.endswith((".", "!", "?", ")", "`", "…")):
        space = item.rfind(" ")
        if space > len(item) // 2:
            return item[:space].rstrip(" ,;:") + "…"
    return item


_FIELD_WORDS = frozenset(
    "names name paths path files file commands command identifiers identifier versions version numbers number "
    "errors error dates date urls url decisions decision functions function types type values value constants "
    "constant code messages message and or open questions doing the of".split())
"""The words the sections ask uses for its fields: a names entry made only of them is the ask copied."""
_NAME_MARKS = set("/._-:()[]{}<>@#=$%*+\\`'\"~|0123456789")
_CODE_MARKS = set("/=()[]{}<>$`\\|")
"""Marks that make even a long entry code or a call (``f(a, b)``, ``a | b``, ``x = 1``)."""
MAX_NAME_WORDS = 6
"""A names entry of more words than this, without code marks, is a sentence, not a name."""
MIN_PROSE_WORDS = 5
"""A sectioned answer with fewer words than this outside its names says nothing about the chat
("Decisions and changes: - changed"), as a very small model writes."""


def looks_like_name(item: str) -> bool:
    """An entry of the names list that names something: one token, or one with the marks of a
    path, a command, a call or a number. Plain words ("file paths", "code identifiers") are a
    small model listing the prompt's own description of the field: they are dropped."""
    item = item.strip()
    if not item:
        return False
    if set(re.split(r"[\s_\-/]+", item.lower())) <= _FIELD_WORDS | {""}:
        return False  # "file_paths", "dates and URLs": the ask's words, not the log's
    words = item.split()
    if (len(words) > MAX_NAME_WORDS and not any(c in _CODE_MARKS for c in item)
            and not any(w.startswith("-") for w in words)):  # a command's options
        return False  # a sentence ("I've made some decisions that …"), even with an apostrophe
    if any(c in _NAME_MARKS for c in item):
        return True
    if len(words) == 1:
        return True
    return any(w[1:] != w[1:].lower() for w in words)  # camelCase or ACRONYMS inside


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _plain_words(text: str) -> str:
    return " ".join(re.sub(r"\{[^}]*\}|[^\w\s]", " ", text.lower()).split())


def without_copies(answer: dict[str, Any], ask: str) -> dict[str, Any]:
    """``answer`` without the items that copy the ask's own description of a field back
    ("open_questions": ["what is still open or left to do"])."""
    said = f" {_plain_words(ask)} "

    def copied(item: str) -> bool:
        words = _plain_words(item)
        return words.count(" ") >= 2 and f" {words} " in said

    out: dict[str, Any] = {}
    for key, value in answer.items():
        if isinstance(value, list):
            out[key] = [v for v in value if not (isinstance(v, str) and copied(v))]
        elif isinstance(value, str) and copied(value):
            out[key] = ""
        else:
            out[key] = value
    return out


def prose_words(answer: dict[str, Any]) -> int:
    """Words of a sectioned answer outside its names list: what it says in sentences."""
    return sum(len(v.split()) for s in SECTIONS if not s.inline for v in _strings(answer.get(s.key)))


def render(answer: dict[str, Any], layout: Layout | None = None) -> str:
    """The Markdown of a sectioned answer: the ``doing`` paragraph, then each non-empty section
    under its heading (names on one line, the rest as bullets). Unknown keys are ignored."""
    blocks: list[str] = []
    for s in SECTIONS:
        limit = layout.lengths[s.key] if layout is not None else 0
        items = [_whole(v, limit) for v in _strings(answer.get(s.key))]
        if s.inline:
            items = [i for i in items if looks_like_name(i)]
        items = list(dict.fromkeys(i for i in items if i))
        if not items:
            continue
        if not s.is_list:
            blocks.append(items[0])
        elif s.inline:
            blocks.append(s.heading + " " + ", ".join(_code(i) for i in items))
        else:
            blocks.append(s.heading + "\n" + "\n".join(f"- {i}" for i in items))
    return "\n\n".join(blocks)


def _code(name: str) -> str:
    """A name as inline code, unless it already is or holds a backtick itself."""
    name = name.strip()
    if "`" in name:
        return name
    return f"`{name}`"


def fits(text: str, layout: Layout, tokenizer: Tokenizer) -> bool:
    return tokenizer.count(text) <= layout.target_tokens
