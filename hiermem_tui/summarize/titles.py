"""The checks a part's title passes before it is kept: a list of named checks, run in order.

Each check reads the title as it stands (``Draft``: the answer as the model wrote it and the text kept so
far) with what it needs to know of the call (``TitleContext``), and either passes it on — the same text, or
a text it cleaned (the user's made-up words left out, the prompt's own nouns dropped, a cut-off sentence
dropped, a misquoted line replaced by the line) — or refuses it (``Refusal``: a reason counted on the run,
and a detail). The summariser runs ``TITLE_CHECKS`` on every answer, then measures it for invented names.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from hiermem_tui.summarize import acceptance, keylines, notes
from hiermem_tui.summarize.prompts import Prompt
from hiermem_tui.summarize.text import drop_unfinished, split_sentences
from hiermem_tui.summarize.types import Generation, SourceItem

@dataclass(frozen=True, slots=True)
class Draft:
    """A title being judged: ``raw``, the answer without a preamble; ``text``, what is kept of it so far."""

    raw: str
    text: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a title is refused: a reason of ``acceptance.REASONS`` and a one-line detail."""

    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class TitleContext:
    """What a check may know of the call: the part asked about, the answer, the prompt sent, the prompt's
    wording (system text, template and every ask, which a title may not write back) and the sources shown."""

    part: notes.Part
    gen: Generation
    prompt: Prompt
    frame: str
    shown: tuple[SourceItem, ...]
    leaf: bool


Verdict = Draft | Refusal


@dataclass(frozen=True, slots=True)
class TitleCheck:
    """One named check: ``judge`` passes a draft on (perhaps cleaned) or refuses it."""

    name: str
    judge: Callable[[Draft, TitleContext], Verdict]


# ------------------------------------------------------------------------------------ what the checks read
_FRAME = re.compile(r"\bthis is part \d+\b|\bis part \d+ of \d+\b", re.I)
"""The ask's opening, whatever the subject ("The report is part 1 of 4.")."""
_LOG_LINE = re.compile(r"^\s*(?:[-*•]\s*)?(?:user|assistant|tool|system):\s|^\s*\(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)",
                       re.I | re.M)
_ASK_OPENING = re.compile(r"\b(?:this part continues earlier work|say what the user asked|say what happened in this part|"
                          r"give this part of the (?:log|report) a title|write only the title|"
                          r"what is this (?:part of the (?:log|report)|log) about|using the words it uses|"
                          r"previous (?:title|summary|answer)\b[^.]{0,20}\bnot usable)\b", re.I)
"""The asks' own words, this version's and earlier ones'."""
_CALL_LINE = re.compile(r"\[[A-Z]\w*\] \w+:")


def copies_frame(answer: str) -> str | None:
    """What in an answer is the prompt's frame rather than a title: the ask's opening ("This is part 2 of
    3."), the ask's words, a line of the log as the prompt renders it ("user: …", a "(2025-07-18 19:34 UTC)"
    stamp) or a tool call as it shows one ("[TodoWrite] todos: …"); None when there is none."""
    for pattern, what in ((_FRAME, "the ask's opening"), (_ASK_OPENING, "the ask"), (_LOG_LINE, "a line of the log"),
                          (_CALL_LINE, "a tool call of the log")):
        m = pattern.search(answer)
        if m:
            return f"copies {what} ({m.group(0).strip()!r})"
    return None


_OF_THE_FRAME = re.compile(r"^\W*(?:the|this) (?:report|log|summary|conversation|chat log|part)(?:'s)? "
                           r"(?:is|was|contains|shows|describes|discusses|covers)\b|\byour (?:\w+ )?(?:summary|title|answer|report)\b",
                           re.I)
_NAMES_THE_FRAME = re.compile(r"\bchat logs?\b|\bpart \d+\b", re.I)
"""The prompt's own names for its material ("Report on Chat Log Part 3")."""
_CODE_TITLE = re.compile(r"#\s*(?:include|define|ifn?def|endif|import)\b|```|[\w\])]\s*=\s*[^=\s][^;]{0,40};"
                         r"|\w\([^()]{0,80}\)\s*;")


def title_frame(title: str) -> str | None:
    """What in a title is not a title of the chat: a statement about the prompt's material ("The report is
    part of a longer conversation", "Your previous summary was …"), the prompt's names for it ("chat log",
    "part 3"), or a line of the log's code ("#define VSLA_ENABLE_CUDA"); None when there is none."""
    for pattern, what in ((_OF_THE_FRAME, "speaks of the prompt's material"),
                          (_NAMES_THE_FRAME, "speaks of the prompt's material"),
                          (_CODE_TITLE, "copies code of the log")):
        m = pattern.search(title)
        if m:
            return f"{what} ({m.group(0).strip()!r})"
    return None


_TITLE_WORD = re.compile(r"\w+")
MISQUOTE_SIMILARITY = 0.75
MISQUOTE_SHARE = 0.8
MISQUOTE_WORDS = 2
"""A title is a line it read written back with a word changed or added (``requoted``) when the two are this
alike (``difflib``'s ratio of the title's words to the line's first ones), at least this share of its words
are the line's, in order, and at most this many are not."""
QUOTED_TITLE_WORDS = 20
"""A line a misquoting title is replaced by is at most this many words long (a heading, a paper's title)."""
_NEGATION = {"not", "no", "never", "without", "cannot", "t", "non", "nor", "none"}
"""Words a title may not leave out of a line it shortens: without them it says the opposite."""


def requoted(title: str, part: notes.Part) -> str | None:
    """The chat's own line for a ``title`` that writes back a line of the part's key lines with a word changed
    or added ("…" after it when the title ran on past the line's end); None when the title is no such
    near-copy, is the line's own words, or only leaves some out (a negation may not be left out)."""
    words = [w.casefold() for w in _TITLE_WORD.findall(title)]
    if len(words) < 4:
        return None
    flat = " ".join(words)
    for _who, line in keylines.quoted(part.lines):
        found = [w.casefold() for w in _TITLE_WORD.findall(line)]
        if not found or flat in " ".join(found):
            continue
        match = difflib.SequenceMatcher(None, words, found[: len(words) + 2], autojunk=False)
        same = sum(size for *_, size in match.get_matching_blocks())
        if (match.ratio() < MISQUOTE_SIMILARITY or same < MISQUOTE_SHARE * len(words)
                or len(words) - same > MISQUOTE_WORDS or len(found) > QUOTED_TITLE_WORDS):
            continue
        ops = match.get_opcodes()
        left_out = [w for op, _a, _b, c, d in ops if op == "insert" for w in found[c:d]]
        if all(op in ("equal", "insert") for op, *_ in ops) and not _NEGATION & set(left_out):
            continue  # the line's own words with some left out
        own = line.removesuffix("…").strip()
        ran_on = ops[-1][0] in ("delete", "replace") and ops[-1][2] == len(words) and ops[-1][4] >= len(found)
        return own + "…" if ran_on or line.endswith("…") else own
    return None


_FRAME_NOUN = re.compile(r"^\W*(?:(?:an?|the) )?(?:factual )?(?:report|summary) (?:on|of|about) (?:the )?"
                         r"|^\W*(?:reports?|summary)\s*[:—-]\s*"
                         r"|^\W*merged? (?:of )?(?:the )?(?:reports? )?(?:on |of )?"
                         r"|\s*[-—:]?\s*\b(?:reports?|summary)\W*$", re.I)
_SAYS_FRAME_NOUN = re.compile(r"\breport|\bsummar|\bmerg", re.I)
_ONLY_FRAME = re.compile(r"^(?:(?:the|of|and|chats?|logs?|reports?|summar(?:y|ies)|conversations?)\b\W*)*$", re.I)
"""A title that says nothing of the chat once the prompt's nouns are gone ("Merge of Logs")."""


def unframed(title: str, part: notes.Part) -> str:
    """``title`` without the prompt's own nouns for what it asks ("report", "summary", "merge"), where the
    part's material never uses them: "BOM v2 Report" → "BOM v2", "Merge of Reports" → "". In a chat that
    speaks of reports or summaries the word may be the chat's, and stays."""
    if not _FRAME_NOUN.search(title) or _SAYS_FRAME_NOUN.search(" ".join(s.text for s in part.items)):
        return title
    bare = " ".join(_FRAME_NOUN.sub(" ", title).split()).strip(" -—:")
    return "" if _ONLY_FRAME.match(bare) else bare


_SAYS_USER = re.compile(r"^\W*(?:the\s+)?user(?:'s)?\b", re.I)


def unheard(part: notes.Part, note: str) -> str:
    """``note`` without the sentences whose subject is the user, in a leaf's part where no user says anything
    (such a sentence is false by construction: the user made to ask what a tool printed); where a user does
    speak, or over summaries, the note as written."""
    if part.opened_by == "summary" or notes.spoke(part):
        return note
    return " ".join(x for x in split_sentences(note) if x.strip() and not _SAYS_USER.match(x))


# ---------------------------------------------------------------------------------------------- the checks
def _copies_frame(d: Draft, ctx: TitleContext) -> Verdict:
    framed = copies_frame(d.raw) if d.text else None
    return Refusal("echo", framed) if framed else d


def _unheard(d: Draft, ctx: TitleContext) -> Verdict:
    heard = unheard(ctx.part, d.text)
    if d.text and not heard:
        return Refusal("misattributed", "only makes the user speak, who says nothing in this part")
    return Draft(d.raw, heard)


def _unframed(d: Draft, ctx: TitleContext) -> Verdict:
    title = notes.gist(d.text)
    if not title or (bare := unframed(title, ctx.part)) == title:
        return d
    if not bare:
        return Refusal("echo", f"only names the prompt's material ({title!r})")
    return Draft(d.raw, bare)  # only the title is kept (``notes.gist``): what followed it goes either way


def _title_frame(d: Draft, ctx: TitleContext) -> Verdict:
    if not d.text:
        return d
    framed = title_frame(d.text)
    if framed is None and (run := acceptance.frame_copy(d.text, ctx.frame)):
        framed = f"copies the prompt's wording ({run!r})"
    return Refusal("echo", framed) if framed else d


def _content(d: Draft, ctx: TitleContext) -> Verdict:
    broken = acceptance.judge_answer(d.text, thinking_tokens=ctx.gen.thinking_tokens, prior=None,
                                     sources=[s.text for s in ctx.shown], leaf=ctx.leaf, ask=ctx.prompt.ask)
    return Refusal(*broken) if broken else d


def _unfinished(d: Draft, ctx: TitleContext) -> Verdict:
    return Draft(d.raw, drop_unfinished(d.text)) if ctx.gen.done_reason == "length" else d


def _requoted(d: Draft, ctx: TitleContext) -> Verdict:
    return Draft(d.raw, requoted(d.text, ctx.part) or d.text)


TITLE_CHECKS: tuple[TitleCheck, ...] = (
    TitleCheck("copies the frame", _copies_frame),
    TitleCheck("makes a silent user speak", _unheard),
    TitleCheck("names the prompt's material", _unframed),
    TitleCheck("is about the prompt, or its code", _title_frame),
    TitleCheck("breaks a content rule", _content),
    TitleCheck("ends unfinished", _unfinished),
    TitleCheck("misquotes a line it read", _requoted),
)
"""The checks, in the order they run: what the model wrote is judged first, and only then is a cut-off end
dropped or a misquote replaced by the chat's own line."""


def judge(draft: Draft, ctx: TitleContext, checks: tuple[TitleCheck, ...] = TITLE_CHECKS) -> Verdict:
    """``draft`` through ``checks`` in order: the first refusal, else the title as the last check left it."""
    for check in checks:
        verdict = check.judge(draft, ctx)
        if isinstance(verdict, Refusal):
            return verdict
        draft = verdict
    return draft
