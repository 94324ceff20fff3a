"""Notes: the default way a model is asked (``summary_format = "notes"``): a title, then the chat's words.

A summary is a **title** by the model — what it is about, in the chat's own words — followed by key lines
(``keylines``, added by the ``summariser``): the title lets a reader find the summary they want, the chat's
words carry the specifics. What is titled:

* a **leaf** as a whole, from its key lines: the model reads the lines the summary will show (which then
  fill what a short title left) and titles them (extract, then title);
* a **condensed** summary as a whole, from the outline of its sources (each with its own title and the lines
  that matter most of it: ``keylines/outline.py``).

Each title is one model call whose prompt is the material and then the ask (the system text and the
material are the prefix a retry shares, so the server's prompt cache serves it). Nothing in the material is
pointed out to the model, and no previous summary is shown. Why titles and not sentences, and what each
check below guards against: docs/SUMMARIES.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hiermem_tui.summarize import steps
from hiermem_tui.summarize.text import ATTACHED, NOT_SAID, first_sentence
from hiermem_tui.summarize.types import SourceItem

GIST_TOKENS = 40
"""What a part's title may take: every part's target and answer budget (a title runs 8–20 tokens)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One call's worth of a summary: sources ``items``, part ``index`` (1-based) of ``count``, who
    opened it, the tokens its title may take, and for a leaf the key lines the model reads of it."""

    index: int
    count: int
    items: tuple[SourceItem, ...]
    opened_by: str
    """``user``: a user speaks in the leaf; ``continued``: it carries on earlier work (an agent's steps);
    ``summary``: a condensed summary's source."""
    target: int
    lines: str = ""
    """A leaf's key lines (``keylines.key_lines``), the material its title is asked of; "" when it has none
    (then the model reads its sources as the log shows them)."""

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.items)


def parts_for(sources: Sequence[SourceItem], depth: int, lines: str = "") -> list[Part]:
    """The parts of a summary of ``sources``: one, titled from its key lines ``lines`` (a condensed summary's
    are the outline of its sources)."""
    if not sources:
        return []
    who = "summary" if depth > 0 else "user" if any(said(s) for s in sources) else "continued"
    return [Part(1, 1, tuple(sources), who, GIST_TOKENS, lines)]


LEAF_ASK = (
    "What is this log about? Answer with a title of at most twelve words, using the words it uses. "
    "Write only the title."
)
"""What a leaf is asked, of its key lines."""
RETRY_LEAF = (
    "Your previous title for this log was not usable{why}. Write a title of at most twelve words for it, "
    "using the words it uses, and nothing else."
)
TITLE_ASK = (
    "What is this outline of a chat about? Answer with a title of at most twelve words, using the words it "
    "uses. Write only the title."
)
"""What a condensed summary is asked, of the outline of its sources."""
RETRY_TITLE = (
    "Your previous title for this outline was not usable{why}. Write a title of at most twelve words for it, "
    "using the words it uses, and nothing else."
)
ASKS = (LEAF_ASK, RETRY_LEAF, TITLE_ASK, RETRY_TITLE)
"""Every ask's wording, which no title may write back (``summariser``)."""


def ask(part: Part, *, aggressive: bool = False, why: str = "") -> str:
    """What the model is asked about ``part`` (it follows the part's material in the prompt)."""
    if part.opened_by == "summary":
        text = RETRY_TITLE if aggressive else TITLE_ASK
    else:
        text = RETRY_LEAF if aggressive else LEAF_ASK
    for key, value in (("{index}", str(part.index)), ("{count}", str(part.count)), ("{why}", why)):
        text = text.replace(key, value)
    return text


def shown(part: Part) -> list[SourceItem]:
    """The part's sources as the model reads them (tool calls readable, long code by its head)."""
    if part.opened_by == "summary":
        return list(part.items)
    return [steps.shown(s) for s in part.items]


def said(source: SourceItem) -> str:
    """What a user message says in the user's own words: "" for an agent's slash-command markup or
    an interruption marker, attachments' placeholders left out."""
    if source.role != "user" or NOT_SAID.match(source.text):
        return ""
    text = ATTACHED.sub("", steps.prose(source.text) or source.text).strip()
    return text if len(text.split()) >= 2 else ""


def spoke(part: Part) -> bool:
    """Whether the user says something in the part's sources."""
    return any(said(s) for s in part.items)


_TITLE_MARK = re.compile(r"^\W*(?:title|part \d+(?: of \d+)?)\s*:\s*", re.I)


def gist(note: str) -> str:
    """What is kept of a part's answer: its title, the first sentence or line without a "Title:" mark or
    quotes. A model that writes on past the title is not asked again: the rest is simply not kept."""
    first = first_sentence(note)
    return _TITLE_MARK.sub("", first).strip().strip('"“”*').strip()


def note_text(answer: str) -> str:
    """A note as it is kept: one paragraph, the model's words, no list marker of its own."""
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", ln).strip() for ln in answer.splitlines()]
    return " ".join(" ".join(ln for ln in lines if ln).split())


def join(notes: Sequence[str]) -> str:
    """The summary: the parts' notes in order, one bullet each (a summary of one part is its note)."""
    kept = [n for n in notes if n.strip()]
    if len(kept) == 1:
        return kept[0]
    return "\n".join(f"- {n}" for n in kept)
