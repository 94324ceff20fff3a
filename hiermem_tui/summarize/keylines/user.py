"""The user extractor: the lines a user's message offers.

What the user asks opens each step of a chat, so their first two sentences (and their first question, when it
comes later) are the most telling lines of all (``USER_OPENING``), with the first error line they pasted (``USER_PASTED_ERROR``: in a chat the user's
message often *is* the error). A sentence of theirs that decides something is ``DECIDING``; their next
sentences ``USER_MORE``; a list, table or code block they pasted comes with what introduces it (``lists.py``);
a long text they pasted with headings is read as a document (``document.py``).
"""

from __future__ import annotations

from hiermem_tui.summarize.keylines.document import Document, outline
from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.keylines.lists import specifics
from hiermem_tui.summarize.keylines.tool import error_lines
from hiermem_tui.summarize.text import ATTACHED, DECIDES, NOT_SAID, position

MIN_WORDS = 6
"""A sentence shorter than this is not quoted from a longer text ("Here's the budget.")."""
OPENING = 2
"""The user's first sentences of a message quoted as its opening."""
MORE = 8
"""The user's sentences up to this one are ``USER_MORE``; later ones ``REST``."""


def lines(text: str, source: int) -> list[Line]:
    """The lines of a user message ``text`` (source ``source`` of the chunk); none for an agent's markup."""
    if NOT_SAID.match(text):
        return []
    parsed = Document(ATTACHED.sub("", text), MIN_WORDS)
    said = parsed.said
    doc = parsed if parsed.is_document else None

    def at(words: str) -> Place:
        return source, position(text, words)

    asked = next((x for x in said[OPENING:] if x.rstrip().endswith("?")), None)
    out = [Line(Kind.USER_OPENING, at(x), "user", x) for x in said[:OPENING] + ([asked] if asked else [])]
    out += [Line(Kind.USER_PASTED_ERROR, at(x), "user", x) for x in error_lines(text)[:1]]
    out += [Line(Kind.DECIDING, at(x), "user", x) for x in said[OPENING:] if DECIDES.search(x)]
    out += [Line(Kind.USER_MORE, at(x), "user", x) for x in said[OPENING:MORE] if x != asked]
    out += specifics(text, "user", at)
    if doc:
        out += outline(doc, "user", at)
    else:
        out += [Line(Kind.USER_CONCLUDING, at(x), "user", x) for x in parsed.concluding]
        out += [Line(Kind.REST, at(x), "user", x) for x in said[MORE:]]
    return out
