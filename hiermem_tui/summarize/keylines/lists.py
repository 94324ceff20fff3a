"""The specifics where they live: a list or a table with the sentence that introduces it, and what a block of
code, config or commands defines.

A chat's answers keep their specifics in lists, tables and code ("Use these pins:" and a table of pins; "Save
this as docker-compose.yml:" and the file). Quoting the lead-in without its items tells a reader nothing, and
quoting a whole block costs a summary's budget. So a list is one line — its lead-in (the sentence ending in a
colon before it, or the heading above it) with its items, each cut to its first words — and a code block is
one line of the lines that define something a reader asks about (names and values, keys, topics, volumes,
ports, signatures, commands), not its other lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collections.abc import Callable

from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.text import HEADING_MARKS, SPACES

FIRST = 2
"""A message's first lists (and first code blocks) are ``LIST`` (``CODE``); the others ``LIST_MORE`` (``CODE_MORE``)."""
ITEM_WORDS = 12
"""An item of a list is cut to this many words ("…" when cut)."""
CELL_WORDS = 6
"""A table's cell is cut to this many words."""
CELLS = 3
"""A table row keeps its first three cells (a comparison's item, before and after)."""
DEFINITIONS = 8
"""At most this many defining lines are quoted of one code block."""
DEFINITION_CHARS = 80
"""A defining line is cut to this many characters."""

_ITEM = re.compile(r"^\s{0,6}(?:[-*•+]|\d{1,2}[.)])\s+(\S.*)$")
_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_FENCE = re.compile(r"^([ \t]*)(```|~~~)\s*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\2[ \t]*$", re.S | re.M)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+(\S.*)|\*\*([^*\n]{2,80})\*\*:?\s*)$")
_BOLD_LEAD = re.compile(r"^\*\*([^*]{2,80})\*\*[:.]?\s*")


@dataclass(frozen=True, slots=True)
class Listed:
    """A list or table: the sentence or heading that introduces it, and its items as they are quoted."""

    lead: str
    items: tuple[str, ...]

    @property
    def words(self) -> str:
        items = "; ".join(self.items)
        return f"{self.lead} {items}" if self.lead else items


def _cut(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + "…"


def _item(text: str) -> str:
    """A list item as quoted: a bold lead ("**All analog inputs on ADC1.** The ESP32 has …") with the first
    sentence after it, else its first sentence; cut to ``ITEM_WORDS``."""
    text = text.strip()
    m = _BOLD_LEAD.match(text)
    if m:
        rest = re.split(r"(?<=[.!?])\s", text[m.end():].lstrip(" —–-:"), maxsplit=1)[0]
        lead = m.group(1).strip().rstrip(".:")
        return _cut(f"{lead}: {rest}" if rest else lead, ITEM_WORDS)
    first = re.split(r"(?<=[.!?])\s", HEADING_MARKS.sub("", text), maxsplit=1)[0]
    return _cut(first.replace("**", "").replace("`", ""), ITEM_WORDS)


def _row(line: str) -> list[str]:
    cells = [HEADING_MARKS.sub("", c).replace("`", "").strip() for c in _ROW.match(line).group(1).split("|")]  # type: ignore[union-attr]
    return [c for c in cells if c]


def _table(rows: list[list[str]]) -> tuple[str, ...]:
    """A table's rows as quoted: each row's first ``CELLS`` cells, each cut to ``CELL_WORDS``."""
    return tuple(" | ".join(_cut(c, CELL_WORDS) for c in cells[:CELLS]) for cells in rows if cells)


def _lead(lines: list[str], at: int) -> str:
    """The sentence or heading that introduces the list starting at ``lines[at]``: the last sentence of the
    paragraph just before it when that ends in a colon, else the heading just above it; "" when neither."""
    k = at - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0:
        return ""
    above = lines[k].strip()
    heading = _HEADING.match(above)
    if heading:
        return SPACES.sub(" ", (heading.group(1) or heading.group(2) or "").replace("**", "")).strip().rstrip(":") + ":"
    if above.endswith(":") and not _ITEM.match(above) and not _ROW.match(above):
        sentence = re.split(r"(?<=[.!?])\s+", above)[-1]
        return SPACES.sub(" ", sentence.replace("**", "")).strip()
    return ""


def _listed(lead: str, items: tuple[str, ...]) -> Listed:
    """A list with its lead-in, unless its first item already says the lead-in (a heading repeated)."""
    if lead and items[0].casefold().startswith(lead.rstrip(":").casefold()):
        lead = ""
    return Listed(lead, items)


def lists(text: str, least: int = 2) -> list[Listed]:
    """The lists and tables of ``text`` (prose: code blocks taken out) with at least ``least`` items, in order."""
    lines = text.splitlines()
    out: list[Listed] = []
    k = 0
    while k < len(lines):
        if _ROW.match(lines[k]):
            start = k
            rows = []
            while k < len(lines) and _ROW.match(lines[k]):
                if not _RULE.match(lines[k]):
                    rows.append(_row(lines[k]))
                k += 1
            items = _table([r for r in rows if r])
            if len(items) >= least:
                out.append(_listed(_lead(lines, start), items))
            continue
        if _ITEM.match(lines[k]):
            start = k
            items_: list[str] = []
            while k < len(lines) and (_ITEM.match(lines[k]) or (lines[k].startswith((" ", "\t")) and lines[k].strip())):
                m = _ITEM.match(lines[k])
                if m and not lines[k].startswith(("    ", "\t")):
                    items_.append(_item(m.group(1)))
                k += 1
            items_ = [i for i in items_ if re.search(r"\w", i)]
            if len(items_) >= least:
                out.append(_listed(_lead(lines, start), tuple(items_)))
            continue
        k += 1
    return out


# ---------------------------------------------------------------------------------------------------- code
_DEFINES = re.compile(
    r"^\s*#\s*define\s+\w+\s+\S"                                        # #define PIN 34
    r"|^\s*(?:export\s+)?[A-Z][A-Z0-9_]{2,}\s*=\s*\S"                    # ENV_VAR=value
    r"|^\s*(?:(?:static|const|constexpr|final|let|var|val|readonly)\s+)+[\w:<>*&\[\] ]*?\b\w+\s*=\s*[^=\s]"  # const x = …
    r"|^\s*[A-Za-z_][\w.]*\s*(?::\s*[\w\[\], |]+)?\s*=\s*(?:[\"'`\d\[{(-]|True|False|None|true|false)"  # name = literal
    r"|^\s*-?\s*\"?[A-Za-z_][\w.-]*\"?\s*:\s+(?![|>]\s*$)\S"              # key: value (YAML, JSON)
    r"|^\s*-\s+[\"']?[\w./~${}@-]+:[\w./${}@-]+"                           # - host:container, - "8080:80"
    r"|^\s*(?:async\s+)?(?:def|class|function|fn|func|interface|struct|enum)\s+\w+"  # signatures
    r"|^\s*@[\w.]+\(\s*[\"']"                                             # @app.get("/items")
    r"|\b\w+(?:\.\w+)*\(\s*[\"'][^\"']{3,}[\"']"                          # client.publish("greenhouse/…")
    r"|^\s*(?:CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|GRANT)\s+\w+"
    r"|^\s*\$\s+\S"                                                       # $ command
    r"|^\s*(?:sudo\s+)?(?:docker|docker-compose|git|pip3?|uv|npm|npx|pnpm|yarn|apt|apt-get|brew|curl|wget|systemctl|"
    r"journalctl|chmod|chown|mkdir|ln|cp|mv|rsync|restic|ssh|scp|kubectl|helm|make|cargo|go|python3?|pytest|alembic|"
    r"psql|pg_dump|mosquitto_\w+|esphome|pio|platformio|arduino-cli|ufw|crontab|tailscale|caddy)\b\s+\S",
    re.I)
_COMMENT_ONLY = re.compile(r"^\s*(?://|#(?!\s*define)|--|;|/\*|\*)")
_TRAILING_COMMENT = re.compile(r"\s+(?://|#)\s.*$")


@dataclass(frozen=True, slots=True)
class Code:
    """A fenced block: the sentence that introduces it, its language tag and the lines that define something."""

    lead: str
    lang: str
    defines: tuple[str, ...]

    @property
    def words(self) -> str:
        tag = f"[{self.lang}] " if self.lang else ""
        body = tag + "; ".join(self.defines)
        return f"{self.lead} {body}" if self.lead else body


def _defining(line: str) -> str | None:
    if not line.strip() or _COMMENT_ONLY.match(line) or not _DEFINES.search(line):
        return None
    shown = _TRAILING_COMMENT.sub("", line).strip().rstrip("{\\").strip().rstrip(",;").strip()
    if len(re.findall(r"[A-Za-z0-9]", shown)) < 3:
        return None
    return shown if len(shown) <= DEFINITION_CHARS else shown[: DEFINITION_CHARS - 1].rstrip() + "…"


def code_blocks(text: str) -> list[Code]:
    """The fenced blocks of ``text`` that define something, in order, each with its lead-in."""
    out = []
    for m in _FENCE.finditer(text):
        found = [d for d in map(_defining, m.group(4).splitlines()) if d]
        defines = tuple(dict.fromkeys(found))[:DEFINITIONS]
        if not defines:
            continue
        before = text[: m.start()].splitlines()
        out.append(Code(_lead(before, len(before)), m.group(3).lower(), defines))
    return out


def specifics(text: str, who: str, at: Callable[[str], Place], prose: str | None = None) -> list[Line]:
    """A message's lists and tables (read in ``prose``, its text without code, when given) and its code blocks
    as lines: its first ``FIRST`` lists and the ``FIRST`` blocks that define the most are ``LIST`` and ``CODE``,
    the rest ``LIST_MORE`` and ``CODE_MORE``. A line's place is where its lead-in (else its first item) is in
    ``text``."""
    out = []
    for n, found in enumerate(lists(text if prose is None else prose)):
        kind = Kind.LIST if n < FIRST else Kind.LIST_MORE
        out.append(Line(kind, at(found.lead or found.items[0]), who, found.words))
    blocks = code_blocks(text)
    first = sorted(range(len(blocks)), key=lambda n: -len(blocks[n].defines))[:FIRST]
    for n, block in enumerate(blocks):
        kind = Kind.CODE if n in first else Kind.CODE_MORE
        out.append(Line(kind, at(block.lead or block.defines[0]), who, block.words))
    return out
