"""Notes: the default way a model is asked (``summary_format = "notes"``): a title, then the chat's words.

Measured on the probe set (issue 19, bench/README.md): Qwen2.5-Coder-1.5B given a whole 3,000-token
chunk and asked for a report — in sections or in bullets — answered fewer of a reader's questions
than the app's extractive digest, copied the previous summary, and stated things the chat never
said. Asked about one step of the chat at a time it answered more, but about one sentence in four
of its notes was false. The chat's own key lines (``quotes.py``) answered as much with nothing
false. So a summary is a **title** by the model — a short one, what it is about in the chat's own
words — followed by key lines (``summariser``): the title lets a reader find the summary they want,
the chat's words carry the specifics. What is titled:

* a **leaf** as a whole, from its key lines (extract, then title; stop 31): the model reads the lines
  the summary will show (which then fill what a short title left) and titles them. Titles of each
  step of the chunk (stops 27–30) were false in 4–8 of 98 steps, and a leaf of 3–7 steps carried one
  false title in 4–5 of 27 leaves; one title of the key lines was false in 1–2 of 27, and costs one
  call on ~700 tokens instead of one per step on the whole chunk;
* in a **condensed** summary, each of its sources, oldest first: every source gets its title, in
  order, so nothing is left out and nothing is merged into the first one.

Each title is one model call whose prompt is the material and then the ask (the system text and the
material are the prefix a retry shares, so the server's prompt cache serves it). What the title
says is the model's; nothing in the material is pointed out to it (names pointed out were tied
together wrongly, see ``TITLE_ASK``). No previous summary is shown: given one, a 1.5B model wrote it
back as the new summary (issue 19).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hiermem_tui.summarize import quotes, steps
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
    """A leaf's key lines (``quotes.key_lines``), the material its title is asked of; "" when it has none
    (then the model reads its sources as the log shows them)."""

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.items)


def parts_for(sources: Sequence[SourceItem], depth: int, lines: str = "") -> list[Part]:
    """The parts of a summary of ``sources``: a leaf is one, titled from its key lines ``lines``; a
    condensed summary has one per source."""
    if not sources:
        return []
    if depth == 0:
        who = "user" if any(said(s) for s in sources) else "continued"
        return [Part(1, 1, tuple(sources), who, GIST_TOKENS, lines)]
    return [Part(i, len(sources), (s,), "summary", GIST_TOKENS) for i, s in enumerate(sources, 1)]


LEAF_ASK = (
    "What is this log about? Answer with a title of at most twelve words, using the words it uses. "
    "Write only the title."
)
"""What a leaf is asked, of its key lines (stop 31, bench/README.md). Judged title by title beside the whole
chunk by six blind readers, its titles were false in 1 of 27 leaves, the step titles' (``TITLE_ASK`` per
step) in 5 of 27; asked of the whole chunk instead of its key lines, the same (1 of 27) at 4× the seconds."""
RETRY_LEAF = (
    "Your previous title for this log was not usable{why}. Write a title of at most twelve words for it, "
    "using the words it uses, and nothing else."
)
TITLE_ASK = (
    "This is part {index} of {count}. What is this part of the report about? Answer with a short title of at "
    "most eight words, using the words it uses. Write only the title."
)
"""What a condensed summary's source is asked (stop 30). A title, not sentences: one sentence per part
answered 59–61% of a reader's probes with 28–29 false statements in 27 leaves, titles 63% with 5 (stop 27).
And a short one, with nothing pointed out: an ask that listed a part's errors, deciding lines and names and
wanted them "exact" in a title of twelve words had the model tie them together wrongly ("… with 940 nm PIR
Trigger", 940 nm being the LEDs); judged title by title, that ask's step titles were false in 17 of 98, this
one's in 8 (5 asked greedily)."""
RETRY_TITLE = (
    "This is part {index} of {count}. Your previous title for it was not usable{why}. Write a title of at most "
    "eight words for this part of the report, using the words it uses, and nothing else."
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


_FRAME = re.compile(r"\bthis is part \d+\b|\bis part \d+ of \d+\b", re.I)
"""The ask's opening, whatever the subject: SmolLM2 wrote "The report is part 1 of 4." (stop 29)."""
_LOG_LINE = re.compile(r"^\s*(?:[-*•]\s*)?(?:user|assistant|tool|system):\s|^\s*\(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)",
                       re.I | re.M)


_ASK_OPENING = re.compile(r"\b(?:this part continues earlier work|say what the user asked|say what happened in this part|"
                          r"give this part of the (?:log|report) a title|write only the title|"
                          r"what is this (?:part of the (?:log|report)|log) about|using the words it uses|"
                          r"previous (?:title|summary|answer)\b[^.]{0,20}\bnot usable)\b", re.I)
"""The asks' own words (this one's, the retry's "Your previous title … was not usable", and the sentence asks'
before it, which SmolLM2 wrote back as notes)."""
_CALL_LINE = re.compile(r"\[[A-Z]\w*\] \w+:")


def copies_frame(answer: str) -> str | None:
    """What in a note is the prompt's frame rather than a note: the ask's opening ("This is part 2
    of 3.", "This part continues earlier work"), a line of the log as the prompt renders it
    ("user: …", a "(2025-07-18 19:34 UTC)" stamp) or a tool call as it shows one ("[TodoWrite]
    todos: …"). SmolLM2-135M's notes began so and were kept at a model tier (issue 19)."""
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
"""The prompt's own names for its material in a title: "Report on Chat Log Part 3" (Qwen, stop 30)."""
_CODE_TITLE = re.compile(r"#\s*(?:include|define|ifn?def|endif|import)\b|```|[\w\])]\s*=\s*[^=\s][^;]{0,40};"
                         r"|\w\([^()]{0,80}\)\s*;")


def title_frame(title: str) -> str | None:
    """What in a kept title is not a title of the chat: a statement about the prompt's material ("The
    report is part of a longer conversation, and the summary was not applicable.", "The report is: …")
    or a line of the log's code ("#define VSLA_ENABLE_CUDA #include …"). SmolLM2-135M's condensed and
    leaf titles were kept so at a model tier (stop 29), and when asked of key lines (stop 31) "This log
    contains a report about …" and "Your summary is too long …", and with key lines v7 (stop 32) a statement of
    code, 'document.write("Your summary is not available in any browser.");', and on the held-out chats (stop
    33) "Your previous summary was not only unnecessary but also unclear.". Also a title that names the
    material as the prompt does, "chat log" or "part 3" (Qwen, 1 of 98 titles in stop 30)."""
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
are the line's, in order, and at most this many are not. Looser, true titles were caught: "VSLA C Backend
Implementation Guide" for "VSLA: Mathematical & C Implementation Guide (PhD Review)"."""
QUOTED_TITLE_WORDS = 20
"""A line a misquoting title is replaced by is at most this many words long (a heading, a paper's title)."""


def requoted(title: str, part: Part) -> str | None:
    """The chat's own line for a ``title`` that writes back a line of the part's key lines with a word
    changed or added ("…" after it when the title ran on past the line's end); None when the title is no
    such near-copy, is the line's own words, or only leaves some out. Why: the held-out chats' only false
    titles (stop 33, 2 of 14) were a pasted paper's title with its first word changed ("Tensorial Dynamics:
    A Novel Framework …" for "N-Tensor Dynamics: …") and a title cut by a PDF's line break completed with a
    word the paper does not use ("… Foundations and Applications"). Asked again, the model wrote each back
    wrong a second time ("A Comprehensive Framework", the same "Applications"): the two calls were 27% of
    the held-out run's model seconds, discarded. The line itself is a true title, and costs no call."""
    words = [w.casefold() for w in _TITLE_WORD.findall(title)]
    if len(words) < 4:
        return None
    flat = " ".join(words)
    for _who, line in quotes.quoted(part.lines):
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
            continue  # the line's own words with some left out ("… Two Semiring Constructions" without "Two")
        own = line.removesuffix("…").strip()
        ran_on = ops[-1][0] in ("delete", "replace") and ops[-1][2] == len(words) and ops[-1][4] >= len(found)
        return own + "…" if ran_on or line.endswith("…") else own
    return None


_NEGATION = {"not", "no", "never", "without", "cannot", "t", "non", "nor", "none"}
"""Words a title may not leave out of a line it shortens: without them it says the opposite."""


_FRAME_NOUN = re.compile(r"^\W*(?:(?:an?|the) )?(?:factual )?(?:report|summary) (?:on|of|about) (?:the )?"
                         r"|^\W*(?:reports?|summary)\s*[:—-]\s*"
                         r"|^\W*merged? (?:of )?(?:the )?(?:reports? )?(?:on |of )?"
                         r"|\s*[-—:]?\s*\b(?:reports?|summary)\W*$", re.I)
_SAYS_FRAME_NOUN = re.compile(r"\breport|\bsummar|\bmerg", re.I)
_ONLY_FRAME = re.compile(r"^(?:(?:the|of|and|chats?|logs?|reports?|summar(?:y|ies)|conversations?)\b\W*)*$", re.I)
"""What is left of "Merge of Logs" (a condensed title of the demo, stop 31) says nothing of the chat either."""


def unframed(title: str, part: Part) -> str:
    """``title`` without the prompt's own nouns for what it asks, where the part's material never uses
    them: "BOM v2 Report" → "BOM v2", "Report on the import failure …" → "import failure …", "Reports:
    Import Failed …" → "Import Failed …", "Merge of Reports" → "". The prompt asks for a report on a chat
    log (a condensed one merges reports), and the model named what it titled so: 4 of 98 leaf titles and
    1 of 16 condensed ones in a run of stop 30 (bench/README.md). In a chat that speaks of reports or
    summaries the word may be the chat's, and stays."""
    if not _FRAME_NOUN.search(title) or _SAYS_FRAME_NOUN.search(" ".join(s.text for s in part.items)):
        return title
    bare = " ".join(_FRAME_NOUN.sub(" ", title).split()).strip(" -—:")
    return "" if _ONLY_FRAME.match(bare) else bare


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SAYS_USER = re.compile(r"^\W*(?:the\s+)?user(?:'s)?\b", re.I)
_NOT_SAID = re.compile(r"^\s*(?:<command-|<local-command|\[Request interrupted)")
_ATTACHED = re.compile(r"\[(?:image|file)[^\]\n]*\]\s*")


def said(source: SourceItem) -> str:
    """What a user message says in the user's own words: "" for an agent's slash-command markup or
    an interruption marker, attachments' placeholders left out."""
    if source.role != "user" or _NOT_SAID.match(source.text):
        return ""
    text = _ATTACHED.sub("", steps.prose(source.text) or source.text).strip()
    return text if len(text.split()) >= 2 else ""


def spoke(part: Part) -> bool:
    """Whether the user says something in the part's sources."""
    return any(said(s) for s in part.items)


def unheard(part: Part, note: str) -> str:
    """``note`` without the sentences whose subject is the user, in a leaf's part where no user says
    anything: such a sentence is false by construction. It was the 1.5B model's commonest false
    statement — the user made to ask what a tool printed ("The user asked about the
    select_best_backend function" for a grep result) or an exchange made up whole ("The user asked
    if this change could be made for 3.12 as well"): 9 sentences in 8 of notes v1's 27 leaves, every
    one false (issue 19, bench/README.md). Where a user does speak, the note is left as written."""
    if part.opened_by == "summary" or spoke(part):
        return note
    return " ".join(x for x in _SENTENCE.split(note) if x.strip() and not _SAYS_USER.match(x))


_FIRST_BREAK = re.compile(r"(?<=[.!?])(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)\s+|\n+")
"""Where a gist ends: a sentence's end, but not "vs." or "e.g." ("LiFePO4 vs." was a title cut short)."""
_TITLE_MARK = re.compile(r"^\W*(?:title|part \d+(?: of \d+)?)\s*:\s*", re.I)


def gist(note: str) -> str:
    """What is kept of a part's answer: its title, the first sentence or line without a "Title:" mark or
    quotes. A model that writes on past the title is not asked again: the rest is simply not kept."""
    first = next((x for x in _FIRST_BREAK.split(note, maxsplit=1) if x.strip()), "")
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
