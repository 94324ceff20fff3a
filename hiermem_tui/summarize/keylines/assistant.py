"""The assistant extractor: the lines an assistant's message offers.

An answer's words are its prose before any tool call and what it wrote into a document through one
(``steps.written``: a ChatGPT canvas); fenced code is not what was said. Of those: the first and last
sentence that are not courtesy ("Nice project —", "Want me to …?"; ``ANSWER_ENDS``, kept for a step's last
answer only), sentences that decide (``DECIDING``), its lists and tables with their lead-ins and what its code
blocks define (``LIST``, ``CODE``: ``lists.py``), what a concluding section says and sentences with numbers
or names (``CONCLUDING``, ``SPECIFIC``: the first few; the others ``CONCLUDING_MORE``, ``SPECIFIC_MORE``) and
its first sentence; a long answer with headings is read as a document (``document.py``). Its tool calls say what an agent did
(``AGENT_ACTION``: a to-do list's items, a canvas edit in a line, a call as a person reads it).
"""

from __future__ import annotations

import json
import re

from hiermem_tui.summarize import steps
from hiermem_tui.summarize.keylines.document import Document, outline
from hiermem_tui.summarize.keylines.kinds import Kind, Line, Place
from hiermem_tui.summarize.keylines.lists import specifics
from hiermem_tui.summarize.text import DECIDES, SPECIFIC, courtesy, position

MIN_WORDS = 6
"""An answer's sentence shorter than this ("Here's the budget.") says too little to quote."""
SPECIFICS = 5
"""At most this many sentences with numbers or names (and of a concluding section) come first from one answer."""
CALLS = 3
"""Tool calls of one message read for what the agent did."""

_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.S | re.M)
"""Fenced code in an answer: its lines are code, not what was said."""


def _todos(call: str) -> str:
    """A TodoWrite call's items, as the plan they are ("Analyze test_gpu.c …; Check header …")."""
    try:
        items = json.loads(call.split("] ", 1)[1]).get("todos", [])
    except (IndexError, ValueError, AttributeError):
        return ""
    return "; ".join(str(t.get("content", "")) for t in items if isinstance(t, dict) and t.get("content"))


def code_and_said(text: str) -> str:
    """What an assistant message says, its code included: its prose and what it wrote into a document."""
    return "\n\n".join(x for x in (steps.prose(text), steps.written(text)) if x)


def said_text(text: str) -> str:
    """What an assistant message says: its prose and what it wrote into a document, fenced code left out."""
    return _CODE_BLOCK.sub("\n", code_and_said(text))


def answer_lines(text: str, source: int) -> list[Line]:
    """The lines of what an answer says (not its tool calls)."""
    whole = code_and_said(text)
    said = _CODE_BLOCK.sub("\n", whole)
    parsed = Document(said, MIN_WORDS)
    headings = set(parsed.headings)
    talk = [x for x in parsed.said if len(x.split()) >= MIN_WORDS and x not in headings]
    if not talk:
        return []
    doc = parsed if parsed.is_document else None

    def at(words: str) -> Place:
        return source, position(whole, words)

    content = [x for x in talk if not courtesy(x)] or talk
    out = [Line(Kind.ANSWER_ENDS, at(x), "assistant", x) for x in dict.fromkeys((content[0], content[-1]))]
    out += [Line(Kind.DECIDING, at(x), "assistant", x) for x in talk[1:-1] if DECIDES.search(x)]
    ends = {talk[0], talk[-1]}
    middle = [x for x in doc.firsts + doc.rest if x not in ends] if doc else talk[1:-1]
    specific = [x for x in middle if SPECIFIC.search(x)]
    ending = [] if doc else parsed.concluding
    out += [Line(Kind.CONCLUDING, at(x), "assistant", x) for x in ending[:SPECIFICS]]
    out += [Line(Kind.SPECIFIC, at(x), "assistant", x) for x in specific[:SPECIFICS]]
    out.append(Line(Kind.ANSWER_OPENING, at(talk[0]), "assistant", talk[0]))
    out += [Line(Kind.SPECIFIC_MORE, at(x), "assistant", x) for x in specific[SPECIFICS:]]
    out += [Line(Kind.CONCLUDING_MORE, at(x), "assistant", x) for x in ending[SPECIFICS:]]
    out += specifics(whole, "assistant", at, prose=said)
    if doc:
        out += outline(doc, "assistant", at)
    else:
        out += [Line(Kind.REST, at(x), "assistant", x) for x in parsed.said]
    return out


def action_lines(text: str, source: int) -> list[Line]:
    """What an agent did and planned, as the message's tool calls say it."""
    out = []
    for call in steps.calls(text)[:CALLS]:
        at = (source, max(0, text.find(call[:60])))
        if "TodoWrite" in call.split("]", 1)[0]:
            plan = _todos(call)
            if plan:
                out.append(Line(Kind.AGENT_ACTION, at, "assistant planned", plan))
        elif edit := steps.document_edit(call):
            out.append(Line(Kind.AGENT_ACTION, at, "assistant did", edit))
        else:
            shown = steps.readable_calls(call).strip()
            if shown.startswith("[") and "*** Begin Patch" not in shown:
                out.append(Line(Kind.AGENT_ACTION, at, "assistant did", shown.splitlines()[0]))
    return out


def lines(text: str, source: int) -> list[Line]:
    """The lines of an assistant message ``text`` (source ``source`` of the chunk)."""
    return answer_lines(text, source) + action_lines(text, source)
