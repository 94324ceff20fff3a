"""A brief written by a model that writes (its way measured as ``writes``, ``calibrate.py``).

The model reads what the quoted brief is made of — the session's summaries at the level its steps come from
and the brief's own quoted lines (``brief.render``) — and writes the whole brief in one call: a title, the
one-line about, then a short paragraph in the third person on what was decided and why, what was made, the
main problem and its fix, and where the chat ended. It is judged as a written summary is (``writes.judge``:
nothing copied back, no first or second person, no quotation the sources do not hold; ``writes.invented``:
no name or number the sources do not hold). A brief refused is the quoted brief, at the ``fallback`` tier:
a brief never costs more than one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from hiermem_tui.summarize import acceptance, writes
from hiermem_tui.summarize import brief as brief_
from hiermem_tui.summarize.fidelity import measure
from hiermem_tui.summarize.prompts import (
    BRIEF_HEADING,
    TITLE_TEMPERATURE,
    Prompt,
    answer_budget,
    fit_sources,
    render_condensed,
)
from hiermem_tui.summarize.text import clip_sentence
from hiermem_tui.summarize.types import Generation, SourceItem
from hiermem_tui.tokens import Tokenizer

WRITTEN_WORDS = 150
"""What a written brief's paragraph may take, in words (the brief stays within ``brief.BRIEF_TOKENS``)."""
WRITTEN_VERSION = brief_.BRIEF_VERSION + writes.WRITES_SUFFIX
"""The version a written brief records."""
ASK = ("Write a brief of this whole chat. First line: 'Title: ' and a title of at most eight words. Second line: "
       "'About: ' and one sentence saying what the user set out to do and what came of it. Then one paragraph of at "
       f"most {WRITTEN_WORDS} words in the third person: what was decided and why, what was made (each thing by its "
       "name), the main problem and how it was fixed, and where the chat ended (its last request, and whether and "
       "how it was answered). Use only names and numbers that appear above. Write only the brief.")
"""What the model is asked, after the summaries and the brief's quoted lines."""
SUMMARIES_HEADING = "The chat's summaries, oldest first:"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def sources_of(material: brief_.Material, tokenizer: Tokenizer) -> list[SourceItem]:
    """What a written brief is made from: the session's summaries (``material.summaries``), then the quoted
    brief's lines as one more source; none carries a time (the prompt shows none)."""
    quoted = brief_.render(material, "", tokenizer)
    return [*(SourceItem("summary", text, tokenizer.count(text), _EPOCH, _EPOCH, depth=1, synthetic_time=True)
              for text in material.summaries),
            SourceItem("episode", quoted, tokenizer.count(quoted), _EPOCH, _EPOCH, role="user", synthetic_time=True)]


def build(system: str, sources: Sequence[SourceItem], max_prompt_tokens: int, tokenizer: Tokenizer) -> Prompt:
    """The prompt: the summaries fitted to ``max_prompt_tokens`` (the longest clipped, head and tail), then the
    quoted lines whole, then ``ASK``."""
    *summaries, quoted = sources
    room = max(64, max_prompt_tokens - tokenizer.count(system) - tokenizer.count(quoted.text) - tokenizer.count(ASK)
               - 64)
    fitted = fit_sources(list(summaries), room, tokenizer) if summaries else []
    shown = f"{SUMMARIES_HEADING}\n{render_condensed(fitted)}\n\n" if fitted else ""
    text = f"{shown}{BRIEF_HEADING}\n<chat>\n{quoted.text}\n</chat>\n\n{ASK}"
    return Prompt(system, text, WRITTEN_VERSION, TITLE_TEMPERATURE, answer_budget(brief_.BRIEF_TOKENS), ask=ASK)


@dataclass(frozen=True, slots=True)
class Written:
    """A written brief's fields, or why it was refused (``reason`` and ``detail``; the fields then empty)."""

    title: str = ""
    about: str = ""
    body: str = ""
    reason: str = ""
    detail: str = ""

    def text(self, tokenizer: Tokenizer) -> str:
        """The brief as kept: the about line, then the paragraph, within ``brief.BRIEF_TOKENS``."""
        head = f"About: {self.about}"
        room = brief_.BRIEF_TOKENS - tokenizer.count(head) - 1
        return f"{head}\n{clip_sentence(self.body, room, tokenizer)}" if self.body else head


def judge(gen: Generation, prompt: Prompt, sources: Sequence[SourceItem]) -> Written:
    """The answer's title, about line and paragraph when every check passes; else the first refusal."""
    answer = acceptance.strip_preamble(gen.text)
    title, about = brief_.answer_fields(answer)
    body = " ".join(ln.strip() for ln in answer.splitlines()
                    if ln.strip() and not brief_.FIELD.match(ln)).strip()
    about = brief_.about_sentence(about)
    if not about or not body:
        return Written(reason="thin", detail="brief: no about line or no paragraph")
    for part in (title, about, body):
        if brief_.laid_out(part):
            return Written(reason="echo", detail="brief: the quoted brief's layout written back")
        broken = writes.judge(part, gen, prompt, sources, 1) if part and part is not title else None
        if broken is not None:
            return Written(reason=broken[0], detail=f"brief: {broken[1]}")
        named = writes.invented(measure(part, tuple((s.text, False) for s in sources)), sources)
        if named:
            return Written(reason="invented", detail=f"brief: {named}")
    return Written(title, about, body)
