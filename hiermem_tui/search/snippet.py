"""Snippets: the few words around a hit, with the matching words marked by offsets.

Why offsets and not markers in the text: the text is untrusted chat content. Markers
(``<b>``, ``[bold]``, control bytes) could be forged by the content itself, and a UI that
parsed them would be interpreting chat text. A :class:`Snippet` is plain text plus
``(start, end)`` ranges; the TUI styles those ranges on a ``rich.text.Text`` and the CLI
bolds them with its own escape codes after making the text visible.

Why computed here rather than with FTS5's ``snippet()``: the index is contentless (see
store/schema.py, version 3), so FTS5 has no text to cut snippets from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .query import Term, fold

WIDTH = 160
"""Characters of text in a snippet (plus the ellipses)."""
LEAD = 40
"""Characters kept before the first marked word, so a hit reads in its sentence."""
REACH = LEAD + 20
"""How far past a snippet's cut (:func:`cut_snippet`'s ``end``) the window it was chosen by can reach:
text from the cut's line to this past its end holds every window that could beat it, so a snippet cut
again from those lines alone is the same one (search.engine, masking only them)."""
ELLIPSIS = "…"
_TOKEN = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Snippet:
    """Plain text with the matching words at ``marks`` (``text[start:end]``)."""

    text: str
    marks: tuple[tuple[int, int], ...] = ()

    def parts(self) -> Iterable[tuple[str, bool]]:
        """``(piece, marked)`` in order: what a renderer styles."""
        pos = 0
        for start, end in self.marks:
            if start > pos:
                yield self.text[pos:start], False
            yield self.text[start:end], True
            pos = end
        if pos < len(self.text):
            yield self.text[pos:], False


def _folded_token(token: str) -> str:
    return fold(token) if not token.isascii() else token.lower()


def _matches(token: str, terms: Sequence[Term]) -> bool:
    """A word of the text is marked when it is a word of a query phrase (or starts a prefix)."""
    for term in terms:
        for i, word in enumerate(term.words):
            last = i == len(term.words) - 1
            if token == word or (last and term.prefix and token.startswith(word)):
                return True
    return False


def _hits(text: str, terms: Sequence[Term]) -> list[tuple[int, int, str]]:
    out = []
    for m in _TOKEN.finditer(text):
        token = _folded_token(m.group())
        if _matches(token, terms):
            out.append((m.start(), m.end(), token))
    return out


def _best_window(hits: list[tuple[int, int, str]], width: int) -> int:
    """Start offset of the window showing the most distinct matched words (earliest wins)."""
    best, best_score = hits[0][0], 0
    j = 0
    for i, (start, _, _) in enumerate(hits):
        j = max(j, i)
        while j + 1 < len(hits) and hits[j + 1][1] - start <= width:
            j += 1
        score = len({w for _, _, w in hits[i:j + 1]})
        if score > best_score:
            best, best_score = start, score
    return best


def cut_snippet(text: str, terms: Sequence[Term], width: int = WIDTH) -> tuple[Snippet, int, int]:
    """:func:`make_snippet`'s snippet and where it was cut from ``text``: ``(snippet, start, end)``,
    ``text[start:end]`` the snippet's text before its whitespace is folded."""
    hits = _hits(text, terms) if terms else []
    start, end = _span(text, hits, width)
    return _render(text, hits, start, end, False, False), start, end


def _span(text: str, hits: list[tuple[int, int, str]], width: int) -> tuple[int, int]:
    start = 0
    if hits:
        anchor = _best_window(hits, width)
        start = max(0, anchor - LEAD)
        while 0 < start < anchor and not text[start - 1].isspace():
            start += 1  # begin on a word, not mid-word
    end = min(len(text), start + width)
    while start < end < len(text) and not text[end].isspace() and end - start > width - 20:
        end -= 1  # stop after a word when a space is near
    return start, end


def make_snippet(text: str, terms: Sequence[Term], width: int = WIDTH, *, more_before: bool = False,
                 more_after: bool = False) -> Snippet:
    """The part of ``text`` that shows most of the query's words, whitespace folded, marked.

    ``more_before`` / ``more_after``: ``text`` is a piece of a longer text (the lines around a hit,
    masked: search.engine), which goes on before / after it: the snippet says so with its ellipses."""
    hits = _hits(text, terms) if terms else []
    start, end = _span(text, hits, width)
    return _render(text, hits, start, end, more_before, more_after)


def _render(text: str, hits: list[tuple[int, int, str]], start: int, end: int, more_before: bool,
            more_after: bool) -> Snippet:
    pieces: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    pos = start
    for hs, he, _ in hits:
        if hs < start or he > end:
            continue
        length += _append_plain(pieces, text[pos:hs], first=length == 0)
        marks.append((length, length + he - hs))
        pieces.append(text[hs:he])
        length += he - hs
        pos = he
    _append_plain(pieces, text[pos:end], first=length == 0)
    body = "".join(pieces).rstrip()
    marks = [(a, b) for a, b in marks if b <= len(body)]
    if start > 0 or more_before:
        body = ELLIPSIS + " " + body
        marks = [(a + 2, b + 2) for a, b in marks]
    if (end < len(text) or more_after) and body:
        body += " " + ELLIPSIS
    return Snippet(body, tuple(marks))


def _append_plain(out: list[str], piece: str, *, first: bool) -> int:
    """Append ``piece`` with every run of whitespace (newlines too) folded to one space."""
    folded = _SPACE.sub(" ", piece)
    if first:
        folded = folded.lstrip()
    elif out and out[-1].endswith(" ") and folded.startswith(" "):
        folded = folded[1:]
    out.append(folded)
    return len(folded)
