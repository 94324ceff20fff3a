"""The search box's language, translated into an FTS5 query that cannot be a syntax error.

Why our own small parser instead of passing the text to FTS5: people type ``foo-bar``,
``what?``, ``C++`` or ``don't``, which are FTS5 syntax errors or operators. Here every word
is quoted for FTS5 (it matches the same tokens FTS5 would find in the text), and only a few
things are operators:

- ``AND``, ``OR``, ``NOT`` in capitals (words side by side mean AND; NOT needs a left side),
- ``"a phrase"`` (the words next to each other, in order),
- ``word*`` / ``"a phr"*`` (prefix of the last word),
- ``( … )`` for grouping.

What is left to go wrong is structure (``foo OR``, an unclosed quote or bracket, nothing but
punctuation), reported as :class:`QueryError` in one line that says what to fix.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

OPERATORS = ("AND", "OR", "NOT")
SYNTAX_HELP = (
    ("retry backoff", "every word must appear, in any order"),
    ('"a phrase"', "the words next to each other, in order"),
    ("pars*", "words starting with it: parse, parser, parsing"),
    ("timeout OR deadline", "either word (OR, NOT, AND in capitals)"),
    ("flaky NOT windows", "the first without the second"),
    ("(timeout OR deadline) retry", "brackets group"),
)
"""Examples for --help and the search screen: (what to type, what it finds)."""
_WORD_CHARS = re.compile(r"[^\W_]+")
"""Runs of letters and digits: what FTS5's unicode61 tokenizer keeps as tokens (roughly)."""


class QueryError(ValueError):
    """The query cannot be searched; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Term:
    """A phrase to highlight: its folded words, the last one a prefix if ``prefix``."""

    words: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    """What the user typed."""
    fts: str
    """The FTS5 expression (for the ``text`` column), fully bracketed and quoted."""
    terms: tuple[Term, ...]
    """Phrases that count as hits (those under NOT are left out), for snippets."""


def fold(text: str) -> str:
    """Lower case without diacritics: how the index compares words (``remove_diacritics 2``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words_of(text: str) -> list[str]:
    """The folded words of ``text``, as the index would see them."""
    return _WORD_CHARS.findall(fold(text))


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "phrase", "op", "(" or ")"
    value: str = ""
    prefix: bool = False


def _lex(text: str) -> list[_Tok]:
    text = text.replace("\x00", " ")  # FTS5 reads its query as a C string: NUL would end it
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            toks.append(_Tok(ch))
            i += 1
        elif ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise QueryError('a quote is not closed: add the closing " (or remove the quote)')
            prefix = end + 1 < n and text[end + 1] == "*"
            toks.append(_Tok("phrase", text[i + 1:end], prefix))
            i = end + 1 + prefix
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()"':
                j += 1
            word = text[i:j]
            i = j
            if word in OPERATORS:
                toks.append(_Tok("op", word))
            else:
                toks.append(_Tok("phrase", word.rstrip("*"), word.endswith("*") and len(word) > 1))
    # A phrase with no letters or digits ("?", "--") matches nothing: drop it as if not typed.
    return [t for t in toks if t.kind != "phrase" or words_of(t.value)]


class _Parser:
    """or := and (OR and)* ; and := not (AND? not)* ; not := unary (NOT unary)* ;
    unary := ( or ) | phrase — FTS5's own precedence (NOT, then AND, then OR)."""

    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.i = 0
        self.terms: list[Term] = []

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> str:
        if not self.toks:
            raise QueryError("nothing to search for: type a word (letters or digits)")
        out = self.or_()
        tok = self.peek()
        if tok is not None:
            raise QueryError("a ')' has no matching '('" if tok.kind == ")" else f"unexpected {tok.value or tok.kind}")
        return out

    def or_(self) -> str:
        parts = [self.and_()]
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.value == "OR":
            self.take()
            parts.append(self.and_("OR"))
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def and_(self, after: str | None = None) -> str:
        parts = [self.not_(after)]
        while (tok := self.peek()) is not None and (tok.kind in ("phrase", "(") or tok.value == "AND"):
            op = None
            if tok.kind == "op":
                op = self.take().value
            parts.append(self.not_(op))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def not_(self, after: str | None = None) -> str:
        left = self.unary(after)
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.value == "NOT":
            self.take()
            saved = len(self.terms)
            right = self.unary("NOT")
            del self.terms[saved:]  # words after NOT are never in a hit: nothing to highlight
            left = f"({left} NOT {right})"
        return left

    def unary(self, after: str | None) -> str:
        tok = self.peek()
        if tok is None or tok.kind == ")" or tok.kind == "op":
            if after is None and tok is not None and tok.kind == "op":
                if tok.value == "NOT":
                    raise QueryError("NOT needs a word before it: 'foo NOT bar' finds foo without bar")
                raise QueryError(f"{tok.value} needs words on both sides: 'foo {tok.value} bar'")
            where = f"after {after}" if after else "here"
            raise QueryError(f"a word is missing {where}" + (" (or remove the brackets)" if tok and tok.kind == ")"
                                                               else ""))
        self.take()
        if tok.kind == "(":
            inner = self.or_()
            close = self.peek()
            if close is None or close.kind != ")":
                raise QueryError("a '(' is not closed: add the ')'")
            self.take()
            return inner
        words = tuple(words_of(tok.value))
        self.terms.append(Term(words, tok.prefix))
        quoted = '"' + tok.value.replace('"', '""') + '"'
        return quoted + ("*" if tok.prefix else "")


def parse_query(text: str) -> ParsedQuery:
    """Translate what the user typed; raises :class:`QueryError` when it cannot be searched."""
    parser = _Parser(_lex(text))
    fts = parser.parse()
    return ParsedQuery(text, fts, tuple(parser.terms))
