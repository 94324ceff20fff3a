"""A long text with headings — a pasted paper, a canvas — read by its outline (the document extractor).

``Document`` reads a text's sentences by section once; a text with enough headings and sentences is a
document, and its lines are offered as ``OUTLINE`` (headings, what its concluding sections say, each
section's first sentence) and ``REST`` (the other sentences a section at a time in turn, so every section's
second sentence comes before any third).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.text import CONCLUDES, HEADING_MARKS, SPACES, sentences, wordy

DOCUMENT_SECTIONS = 3
DOCUMENT_SENTENCES = 20
"""A text with at least this many section headings and sentences is read as a document."""

_SECTION = re.compile(r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*\n]{2,100}[^*\n.:]\*\*|\d+(?:\.\d+)*\.?\s+[A-Z][^\n.!?]{2,80})\s*$")
"""A line that opens a section: a Markdown heading, a line in bold, a numbered title ("1.1 Base Set and
Equivalence Relation", as a paper pasted from a PDF has them)."""


def words(text: str, least: int = 3) -> list[str]:
    """The sentences of ``text`` with at least ``least`` words, without heading marks, not table rows."""
    out = [HEADING_MARKS.sub("", s).strip() for s in sentences(text)]
    return [s for s in out if len(s.split()) >= least and not s.startswith("|")]


class Document:
    """A text's sentences by section: its ``headings``, each section's first sentence (``firsts``), the
    ``rest`` a section at a time in turn, and what its concluding sections say (``concluding``).
    ``said``: every sentence of at least three words, in order (headings included). A text with enough
    headings and sentences ``is_document``."""

    def __init__(self, text: str, least: int) -> None:
        self.said: list[str] = []
        self.headings: list[str] = []
        self.sections: list[list[str]] = [[]]
        self.ends: list[bool] = [False]
        """Whether each section's heading concludes (``CONCLUDES``)."""
        self.where: dict[str, int] = {}
        """Each heading's and sentence's order in the document (from 1)."""
        for ln in text.splitlines():
            found = words(ln)
            self.said += found
            if _SECTION.match(ln):
                heading = SPACES.sub(" ", HEADING_MARKS.sub("", ln)).strip().rstrip(":")
                if len(re.findall(r"[^\W\d_]{2,}", heading)) >= 2:
                    self.headings.append(heading)
                    self.where.setdefault(heading, len(self.where) + 1)
                self.sections.append([])
                self.ends.append(bool(CONCLUDES.search(heading)))
            else:
                for x in found:
                    if len(x.split()) >= least:
                        self.sections[-1].append(x)
                        self.where.setdefault(x, len(self.where) + 1)
        self.is_document = (len(self.headings) >= DOCUMENT_SECTIONS
                            and len(self.where) - len(self.headings) >= DOCUMENT_SENTENCES)

    @functools.cached_property
    def concluding(self) -> list[str]:
        """The sentences of its concluding sections (in words)."""
        return [x for sec, end in zip(self.sections, self.ends) if end for x in sec if wordy(x)]

    @functools.cached_property
    def _in_words(self) -> list[list[str]]:
        return [[x for x in sec if wordy(x)] for sec in self.sections]

    @functools.cached_property
    def firsts(self) -> list[str]:
        """Each section's first sentence in words (not a formula)."""
        return [sec[0] for sec in self._in_words if sec]

    @functools.cached_property
    def rest(self) -> list[str]:
        """The other sentences, a section at a time in turn; formulas and code last."""
        rest = [sec[1:] for sec in self._in_words]
        turns = [sec[k] for k in range(max(map(len, rest), default=0)) for sec in rest if k < len(sec)]
        return turns + [x for sec in self.sections for x in sec if not wordy(x)]


def outline(doc: Document, who: str, at: Callable[[str], Place]) -> list[Line]:
    """A document's outline, then the rest of it, as lines (the document extractor)."""
    return ([Line(Kind.OUTLINE, at(x), who, x) for x in doc.headings + doc.concluding + doc.firsts]
            + [Line(Kind.REST, at(x), who, x) for x in doc.rest])
