"""How the summariser reads chat text: one sentence splitter, one list of abbreviations, and the shared
lexicons (what reads as an error, a decision, a specific, a conclusion).

Every module of ``summarize/`` that cuts text into sentences or asks "is this an error line?" asks here,
so a rule reads the same wherever it is applied.
"""

from __future__ import annotations

import bisect
import functools
import re

from hiermem_tui.tokens import Tokenizer

ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.", "Fig.", "Eq.", "Sec.", "approx.")
"""Words ending in a full stop that do not end a sentence ("Carry a task (e.g. a CNN filter) through §1")."""

_NOT_AFTER = "".join(rf"(?<!\b{re.escape(a)})" for a in ABBREVIATIONS)
SENTENCE_END = re.compile(rf"(?<=[.!?]){_NOT_AFTER}\s+|\n+")
"""Where a sentence ends: after ``.``, ``!`` or ``?`` and whitespace (not after an abbreviation), or at a line
break (code, lists and logs split by line)."""

CITATION = re.compile("[ \t]*\ue200[^\ue201\n]{0,80}\ue201|\\[cite_start\\]|[ \t]*\\[cite: [^\\]\n]{0,40}\\]")
"""A chat UI's citation markers (ChatGPT's private-use "\ue200cite\ue202turn0news37\ue201", a pasted
"[cite_start]" or "[cite: 7]"): markup, not words."""
HAS_WORD = re.compile(r"\w")
SPACES = re.compile(r"\s+")
LIST_MARKER = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)+")
"""List markers at the start of a sentence, any number of them ("- - 1. …")."""
HEADING_MARKS = re.compile(r"^#+\s*|\*\*")
"""A Markdown heading's ``#``s and bold marks."""


def split_sentences(text: str) -> list[str]:
    """``text`` cut at every sentence end (``SENTENCE_END``), pieces as they are (empty ones included)."""
    return SENTENCE_END.split(text)


def first_sentence(text: str) -> str:
    """The first non-empty sentence or line of ``text``."""
    return next((x for x in SENTENCE_END.split(text, maxsplit=1) if x.strip()), "")


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` with at least one word character, spaces collapsed, without list
    markers and citation markers (fragments with no word character — fences, rules — are left out)."""
    parts = (LIST_MARKER.sub("", SPACES.sub(" ", p).strip()) for p in split_sentences(CITATION.sub("", text)))
    return [p for p in parts if p and HAS_WORD.search(p)]


def boundaries(text: str) -> list[int]:
    """Where ``text`` may be cut after a whole sentence or line: each sentence end's first character."""
    return [m.start() for m in SENTENCE_END.finditer(text)]


def drop_unfinished(text: str) -> str:
    """A text the server cut off, without its last, unfinished sentence or line (kept whole when that would
    drop more than half of it, or when it already ends at a boundary)."""
    text = text.rstrip()
    if not text or text[-1] in ".!?)`\"" or text.endswith("…"):
        return text
    ends = boundaries(text)
    if ends and ends[-1] >= len(text) // 2:
        return text[: ends[-1] + 1].strip()
    return text


_PARTIAL_WORD = re.compile(r"[\w.@/+-]*\w$")


def word_boundary(original: str, clipped: str) -> str:
    """``clipped`` without a word it cut in half (kept when nothing else would be left): a number or name cut
    mid-way is a different identifier ("2998836" cut to "299883")."""
    if len(clipped) < len(original) and clipped and clipped[-1:].isalnum() and original[len(clipped)].isalnum():
        shorter = _PARTIAL_WORD.sub("", clipped).rstrip()
        if shorter:
            return shorter
    return clipped


def clip_sentence(sentence: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    """``sentence`` within ``max_tokens``, cut at a whole word and marked with "…" when cut."""
    clipped = tokenizer.clip(sentence, max_tokens)
    return sentence if clipped == sentence else word_boundary(sentence, clipped).rstrip() + "…"


# ---------------------------------------------------------------------------------------------- lexicons
ERRORISH = re.compile(r"error|exception|traceback|failed|failure|uncaught|cannot|can't|not found|denied|refused|"
                      r"invalid|exceeded|undeclared|undefined", re.I)
"""Words of a line that reports something going wrong."""
DECIDES = re.compile(r"\b(?:instead|decid|chose|choose|go with|keep|kept|drop|dropped|reject|won't|can't|cannot|"
                     r"not possible|infeasible|switch|replace|rather than|stay with|cut|remove|it is:)", re.I)
"""Words of a sentence that decides something, or says what cannot be done."""
SPECIFIC = re.compile(r"\d|`|\b[A-Z][a-z]+[A-Z]\w*|\b\w+[._/]\w+")
"""A number, code in backticks, a CamelCase name or a dotted, slashed or snake name: the specifics a reader
searches for."""
CONCLUDES = re.compile(r"\b(?:summary|conclusions?|concluding|next steps?|action items?|recommendations?|verdict|"
                       r"decisions?|take-?aways?|open questions?|further directions|future work|bottom line|tl;?dr)\b",
                       re.I)
"""A heading of a section that concludes ("Next steps", "Recommendation", "Open questions")."""
NOT_SAID = re.compile(r"^\s*(?:<command-|<local-command|\[Request interrupted)")
"""A user message that is an agent's markup, not the user's words (a slash command, an interruption)."""
ATTACHED = re.compile(r"\[(?:image|file)[^\]\n]*\]\s*|'?/\S+\.(?:png|jpe?g|gif)'?\s*")
"""An attachment's placeholder in a user message ("[image: …]", a pasted screenshot's path)."""
COURTESY = re.compile(
    r"^\W*(?:nice|great|good|sure|absolutely|certainly|of course|perfect|awesome|excellent|glad|happy to|thanks|"
    r"thank you|got it|no problem|fair enough|makes sense|yes|yep|ok(?:ay)?|alright|love (?:it|this|that))\b"
    r"|^\W*(?:let me|let's (?:take|go through|look|start|break)|here(?:'s| is| are)|below (?:is|are))\b"
    r"|let me know|feel free|hope (?:this|that) helps|would you like|do you want me to|want me to|shall i\b|"
    r"is there anything else|happy to help|if you(?:'d)? like,? i can|just say the word|tell me (?:if|when|which)",
    re.I)
"""Words of a sentence that greets, thanks or offers more ("Nice project —", "Want me to go on to the
topics?"): what an answer says around its content."""
_UNWORDY = re.compile(r"[^\w\s]|_")


def courtesy(sentence: str) -> bool:
    """A sentence that only greets, thanks or offers more: ``COURTESY`` words and no specifics."""
    return bool(COURTESY.search(sentence)) and not SPECIFIC.search(sentence)


CLOSING = re.compile(r"\b(?:thanks|thank you|thx|that'?s (?:it|all)|cheers|appreciate(?:d)?|all set|will do)\b", re.I)
"""Words of a message that closes a chat rather than asks ("lifecycle rule is set. thanks, that's it")."""


def closes(message: str) -> bool:
    """A user's message that closes the chat (thanks, that's it) rather than asks or decides something: short,
    no question, courtesy or closing words."""
    first = first_sentence(message)
    return ("?" not in message and len(message.split()) <= 25
            and (courtesy(first) or bool(CLOSING.search(message))) and not DECIDES_NOW.search(message))


DECIDES_NOW = re.compile(r"\b(?:it is|go with|let'?s|decided|i'?ll (?:go|take|use|keep|stick)|sounds good|yes go|"
                         r"switch(?:ing)? to|instead)\b", re.I)
"""Words of a user's message that decides something ("ok arduino it is"): not a closing, whatever its courtesy."""

_WORD_RUN = re.compile(r"\w+")
_NOT_WORD = re.compile(r"\W+")


@functools.lru_cache(maxsize=64)
def _word_runs(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` with every run of other characters between its words made one space, and where each word run
    begins in that form and in ``text`` (what :func:`position` searches a message's quotes in, once)."""
    spaced = _NOT_WORD.sub(" ", text)
    return spaced, [m.start() for m in _WORD_RUN.finditer(spaced)], [m.start() for m in _WORD_RUN.finditer(text)]


def position(text: str, words: str) -> int:
    """Where a quoted sentence ``words`` begins in ``text`` (its first words found across any markup and
    spaces between them: the first as the end of a word, the last as the start of one, those between whole);
    ``len(text)`` when it cannot be found. Found in ``text`` with its other characters made single spaces,
    a search with no pattern to build for each quote."""
    first = _WORD_RUN.findall(words)[:5]
    if not first:
        return len(text)
    if len(first) == 1:
        at = text.find(first[0])
        return at if at >= 0 else len(text)
    spaced, spaced_starts, starts = _word_runs(text)
    at = spaced.find(" ".join(first))
    if at < 0:
        return len(text)
    run = bisect.bisect_right(spaced_starts, at) - 1
    return starts[run] + at - spaced_starts[run]


def wordy(line: str) -> bool:
    """Mostly letters and digits, not a rule of ``====`` or a row of punctuation."""
    return len(_UNWORDY.findall(line)) <= 0.3 * len(line)


def prose(line: str) -> bool:
    """Mostly plain words ("Build failed because the header is missing"), not code."""
    words = line.split()
    plain = [w for w in words if re.fullmatch(r"[A-Za-z][a-z']*[,.;:]?", w)]
    return len(plain) >= 4 and len(plain) >= 0.6 * len(words)
