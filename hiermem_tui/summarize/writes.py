"""Writes: the second way a model summarises — the model writes the summary itself.

For a model measured to do it faithfully (``calibrate.py``; the way of each model is stored, and a setting or a
flag can override it), a summary is what the model writes, not a title over the chat's key lines (``notes.py``):

* a **leaf** is written from its key lines (``keylines.key_lines``: extract, then write) and the stretch itself
  as far as it fits the model's context (long messages head and tail, tool output by its head and tail), and is
  asked for at most the leaf's target in the third person: what was asked, found, decided and why, made (by
  name), the problems and fixes, how the stretch ends;
* a **condensed** summary is written from its sources' texts, oldest first.

It is judged as strictly as a title and more (``judge``, then ``invented``): an answer that is empty, loops,
copies the ask or the log back, carries on the chat, speaks in the first or second person, makes a silent user
speak, quotes words no source holds, or names a single name or number that no source holds is refused. A refused answer is asked again once
at the aggressive tier on the same prefix (system text, key lines and stretch: the prompt cache serves them),
and a summary refused twice is its extractive digest, the key lines, at the ``fallback`` tier. The version a
written summary records ends in ``WRITES_SUFFIX``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.summarize import acceptance, notes, titles
from hiermem_tui.summarize.prompts import (
    AGGRESSIVE_TEMPERATURE,
    ASK_SLACK,
    KEY_LINES_HEADING,
    NORMAL_TEMPERATURE,
    RETRY_HINTS,
    TOOL_MAX_TOKENS,
    Prompt,
    PromptSet,
    _clip_middle,
    _fill,
    answer_budget,
    bullets_for,
    fit_sources,
    render_condensed,
    render_transcript,
    template_key,
    words_for,
)
from hiermem_tui.summarize.text import split_sentences
from hiermem_tui.summarize.types import Generation, SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer

WAYS = ("titles", "writes")
"""How a model summarises: ``titles`` (a title over the chat's key lines, ``notes.py``; every model until it is
measured) or ``writes`` (this module)."""
WRITES_SUFFIX = "+writes"
"""The end of the version a written summary records (``leaf-v4+writes``, ``leaf-v4+aggressive+writes``)."""

LEAF_ASK = (
    "Write a summary of this part of the chat in at most {words} words, in the third person (\"The user "
    "asked…\", \"The assistant found…\"): what the user asked, what was found, what was decided and why, what was "
    "made (each thing by its name), the problems met and how they were fixed, and how this part ends. Use only "
    "names and numbers that appear above. Write only the summary."
)
"""What a leaf is asked, after its key lines and its stretch."""
RETRY_LEAF = (
    "Your previous summary was not usable{why}. Write a shorter one now, at most {words} words, in the third "
    "person and in your own words, with only names and numbers that appear above. Write only the summary."
)
MERGE_ASK = (
    "Write one summary of these consecutive summaries of a chat in at most {words} words, oldest first, in the "
    "third person: what was asked, found, decided and why, what was made (each thing by its name), the problems "
    "and their fixes, and how the chat ends. Use only names and numbers that appear above. Write only the summary."
)
"""What a condensed summary is asked, after its sources."""
RETRY_MERGE = (
    "Your previous summary was not usable{why}. Write a shorter one now, at most {words} words, oldest first, in "
    "the third person and in your own words, with only names and numbers that appear above. Write only the summary."
)
ASKS = (LEAF_ASK, RETRY_LEAF, MERGE_ASK, RETRY_MERGE)
"""Every ask's wording."""


def way_of(ways: dict[str, str], model: str | None) -> str:
    """The way ``model`` summarises as measured (``ways``: model → way, as the store keeps them; ``x`` and
    ``x:latest`` are one model); ``titles`` for a model never measured."""
    if not model:
        return "titles"
    if model in ways:
        return ways[model]
    canonical = _canonical(model)
    return next((way for name, way in ways.items() if _canonical(name) == canonical), "titles")


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def ask(depth: int, target: int, *, aggressive: bool = False, why: str = "") -> str:
    """What the model is asked (it follows the material), for a summary of ``target`` tokens."""
    if depth > 0:
        text = RETRY_MERGE if aggressive else MERGE_ASK
    else:
        text = RETRY_LEAF if aggressive else LEAF_ASK
    return text.replace("{why}", why).replace("{words}", str(words_for(target)))


def key_lines_block(lines: str) -> str:
    """The key lines as the prompt shows them, before the stretch (the template's ``{context}``)."""
    return f"{KEY_LINES_HEADING}\n<key_lines>\n{lines}\n</key_lines>\n\n" if lines.strip() else ""


def _values(request: SummaryRequest, lines: str, target: int, ask_text: str, material: str) -> dict[str, str]:
    return {"context": key_lines_block(lines) if request.depth == 0 else "", "target": str(target),
            "words": str(words_for(target)), "bullets": str(bullets_for(target)), "ask": ask_text,
            "material": material}


def shown(request: SummaryRequest, lines: str, target: int, *, prompts: PromptSet, tokenizer: Tokenizer,
          max_prompt_tokens: int) -> list[SourceItem]:
    """The sources as both tiers' prompts show them: a leaf's tool outputs by their head and tail, then the
    longest messages clipped (head and tail) until the prompt — system text, key lines, the longest ask — fits
    ``max_prompt_tokens``. Fitted once, so a retry sends the same prefix."""
    sources = list(request.sources)
    if request.depth == 0:
        sources = [replace(s, text=_clip_middle(s.text, TOOL_MAX_TOKENS, tokenizer)) if s.role == "tool" else s
                   for s in sources]
    longest = max(RETRY_HINTS.values(), key=len)
    overhead = ASK_SLACK + max(
        tokenizer.count(t.system) + tokenizer.count(_fill(t.instruction, _values(request, lines, target, a, "")))
        for t in (prompts.get(request.depth, False), prompts.get(request.depth, True))
        for a in (ask(request.depth, target), ask(request.depth, target, aggressive=True, why=longest))
    )
    return fit_sources(sources, max(16, max_prompt_tokens - overhead), tokenizer)


def build(request: SummaryRequest, sources: Sequence[SourceItem], lines: str, target: int, *, aggressive: bool = False,
          why: str = "", prompts: PromptSet | None = None) -> Prompt:
    """The prompt for one tier of a written summary: the depth's template with the key lines (a leaf's) in its
    ``{context}``, the fitted ``sources`` as its material and this module's ask."""
    prompts = prompts or PromptSet()
    key = template_key(request.depth, aggressive)
    template = prompts.templates[key]
    text = ask(request.depth, target, aggressive=aggressive, why=why)
    material = render_transcript(sources) if request.depth == 0 else render_condensed(sources)
    return Prompt(template.system, _fill(template.instruction, _values(request, lines, target, text, material)),
                  prompts.version(key) + WRITES_SUFFIX, AGGRESSIVE_TEMPERATURE if aggressive else NORMAL_TEMPERATURE,
                  answer_budget(target), ask=text)


_VOICE = re.compile(r"(?<![\w'’/.-])(?:I|I'm|I’m|I've|I’ve|I'll|I’ll|I'd|I’d|me|my|mine|we|We|we're|We're|"
                    r"our|Our|us|you|You|your|Your|you're|You're)(?![\w'’/-])")
"""The writer speaking as itself or to its reader: a summary is in the third person."""


def voice(text: str) -> str | None:
    """Where ``text`` (outside quotes and code) speaks in the first or second person; None when it does not."""
    found = [m.group(0) for m in _VOICE.finditer(acceptance.unquoted(text))]
    if not found:
        return None
    return f"writes in the first or second person ({found[0]!r}{f', {len(found)} times' if len(found) > 1 else ''})"


def judge(text: str, gen: Generation, prompt: Prompt, sources: Sequence[SourceItem], depth: int) -> tuple[str, str] | None:
    """The first rule a written answer breaks, as (reason, detail), or None: acceptance's content rules (empty,
    the ask or the log copied back, loops, carrying on the chat), a line of the log or the ask's frame written
    back, the first or second person, a user made to speak in a leaf where no user says anything, and words in
    quotation marks that no source holds."""
    broken = acceptance.judge_answer(text, thinking_tokens=gen.thinking_tokens, prior=None,
                                     sources=[s.text for s in sources], leaf=depth == 0, ask=prompt.ask)
    if broken is not None:
        return broken
    framed = titles.copies_frame(text)
    if framed:
        return "echo", framed
    spoken = voice(text)
    if spoken:
        return "continues_chat", spoken
    if depth == 0 and _speaks_for_silent_user(text, sources):
        return "misattributed", "makes the user speak, who says nothing in this part"
    quoted = misquotes(text, sources)
    if quoted:
        return "invented", quoted
    return None


def _speaks_for_silent_user(text: str, sources: Sequence[SourceItem]) -> bool:
    """A sentence of ``text`` whose subject is the user, where no user says anything in ``sources`` (an agent's
    steps): false by construction (``titles.unheard``)."""
    if any(notes.said(s) for s in sources):
        return False
    every = " ".join(x for x in split_sentences(text) if x.strip())
    return titles.unheard(notes.Part(1, 1, tuple(sources), "continued", 0), text) != every


_QUOTE = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
_WORDS = re.compile(r"\w+")
QUOTE_WORDS = 4
"""A span in quotation marks this many words long or more claims to be the chat's words: it must be."""


def misquotes(text: str, sources: Sequence[SourceItem]) -> str | None:
    """The first span of ``text`` in quotation marks (``QUOTE_WORDS`` words or more) whose words no source holds in
    that order (a question the user never asked, put in their mouth), or None."""
    said = " " + " ".join(_WORDS.findall(" ".join(s.text for s in sources).lower())) + " "
    for m in _QUOTE.finditer(text):
        words = _WORDS.findall((m.group(1) or m.group(2)).lower())
        if len(words) >= QUOTE_WORDS and f" {' '.join(words)} " not in said:
            return f"quotes words no source holds ({acceptance.one_line(m.group(0))!r})"
    return None


def invented(fid: Fidelity, sources: Sequence[SourceItem] = ()) -> str | None:
    """What a written answer names that is in no source — any name or number (``fidelity``'s ``novel``) — or
    None. A title may name a thing or two the chat did not (``acceptance.find_invented``); a summary that reads
    as the chat's record may not name one. A name ``sources`` hold in another case ("MicroServer" for the
    chat's "microserver") or in the singular ("WhatsApps") is theirs."""
    said = " ".join(s.text for s in sources).casefold()
    novel = [n for n in fid.novel if not _said_as(n, said)]
    if not novel:
        return None
    names = ", ".join(repr(n[:40]) for n in novel[:3])
    more = f" and {len(novel) - 3} more" if len(novel) > 3 else ""
    return f"names {names}{more}, in no source"


def _said_as(name: str, said: str) -> bool:
    """``name`` is in ``said`` (case-folded) ignoring case, or without a plural ending."""
    low = name.casefold()
    if not said or not re.search(r"[a-z]", low):
        return False
    forms = {low} | ({low[:-1]} if low.endswith("s") and len(low) > 3 else set()) | (
        {low[:-2]} if low.endswith("es") and len(low) > 4 else set())
    return any(re.search(rf"(?<![\w.-]){re.escape(f)}(?![\w-])", said) for f in forms)
