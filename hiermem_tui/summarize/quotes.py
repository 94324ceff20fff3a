"""The chat's own words that matter most in a chunk, picked without a model ("key lines").

Why (issue 19, bench/README.md): the first-and-last-sentence digest spends an agent session's budget
on tool-call JSON cut after a few words (``[tool_use Bash] {"command": "git rebase…``) and tool
banners ("Todos have been modified successfully"), and a reader learns little from them. What a
reader asks of a stretch of chat — what was wanted, what was found or went wrong, what was decided,
what was done and what came of it — is mostly said in a few of its own sentences:

1. the user's own words opening each step (not slash-command markup or interruption markers), and
   the first error line the user pasted in it: in a chat, the user's message *is* the error ("calling
   saveRule in a loop and now:" + "QUOTA_BYTES_PER_ITEM quota exceeded"; before v6 the error came
   fourth, and a chunk of long answers spent its budget on 2 and 3 first);
2. the assistant's conclusion: the opening and closing prose sentences of its last answer in the step;
3. sentences that decide something ("instead", "dropped", "go with", "can't") in either voice;
4. error lines printed by a tool;
5. what an agent did and planned, as its tool calls say it (``[Bash] command: git filter-branch …``,
   a to-do list's items);
6. what a tool answered, when that fits a line ("No matches found", a short file list, "4 failed, 23
   passed");
7. what a section of an answer headed as a conclusion says ("Next steps", "Summary", "Recommendation"), and the
   assistant's sentences that carry numbers or names (the specifics a reader searches for);
8. what a long tool output is, by its first line of words ("@brief Backend selection for …");

and, when the budget is not used up by these (a chunk that is mostly one long file read or grep), more
of the same, in this order:

9. the rest of the user's sentences, the assistant's other sentences with numbers or names, the
   opening sentence of each of its answers, and the rows of its tables (a bill of materials' lines);
10. a document's outline (a pasted paper, a canvas; ``_Document``): its headings, what its concluding
    sections say, then each section's first sentence;
11. the first lines of each long tool output (what a file says, what a grep found);
12. every other sentence and output line, in order (a document's a section at a time in turn).

Lines are taken a level at a time across all steps (every step's user words before any step's
tools' errors), so one long step cannot crowd out the rest, until ``budget`` tokens are used; they are
shown in chat order, each with who said it. No line repeats another's words (``_Chosen``: a sentence
inside a longer line is quoted once, in the longer line). Every line is a quote of the chat (clipped
with "…"): nothing here can be a statement the chat did not make.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from hiermem_tui.summarize import steps
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

_BOUNDARY = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\betc\.)(?<!\bcf\.)(?<!\bFig\.)"
                       r"(?<!\bEq\.)(?<!\bSec\.)(?<!\bapprox\.)\s+|\n+")
"""Where a sentence ends: not after "e.g.", "vs." or "Fig." ("Carry a single motivating task (e.g." and
"dynamically resizing CNN filters) through §1–§6." were quoted as two lines, each unreadable alone)."""
_CITATION = re.compile("[ \t]*\ue200[^\ue201\n]{0,80}\ue201|\\[cite_start\\]|[ \t]*\\[cite: [^\\]\n]{0,40}\\]")
"""A chat UI's citation markers (ChatGPT's private-use "\ue200cite\ue202turn0news37\ue201", a pasted
"[cite_start]" or "[cite: 7]"): markup, not words, left out of a quoted line like a heading's "#"."""
_HAS_WORD = re.compile(r"\w")
_SPACES = re.compile(r"\s+")
# list markers at the start of a sentence: a condensed source is itself a bulleted digest,
# and re-bulleting it would stack markers ("- - - user: …") level after level
_MARKER = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)+")


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` that contain at least one word character.

    Lines count as boundaries so code, lists and logs split sensibly; fragments with no
    word character (code fences, rules) are not worth a bullet.
    """
    parts = (_MARKER.sub("", _SPACES.sub(" ", p).strip()) for p in _BOUNDARY.split(_CITATION.sub("", text)))
    return [p for p in parts if p and _HAS_WORD.search(p)]


_PARTIAL_WORD = re.compile(r"[\w.@/+-]*\w$")


def word_boundary(original: str, clipped: str) -> str:
    """``clipped`` without a word it cut in half (kept when nothing else would be left).

    A number or name cut mid-way is a different identifier ("…id":299883" from 2998836):
    it would be counted as invented by the fidelity check and mislead a reader.
    """
    if len(clipped) < len(original) and clipped and clipped[-1:].isalnum() and original[len(clipped)].isalnum():
        shorter = _PARTIAL_WORD.sub("", clipped).rstrip()
        if shorter:
            return shorter
    return clipped


def clip_sentence(sentence: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    clipped = tokenizer.clip(sentence, max_tokens)
    return sentence if clipped == sentence else word_boundary(sentence, clipped).rstrip() + "…"


LINE_TOKENS = 90
"""No one quoted line runs longer than this (it is clipped with "…"). Readers' commonest miss was an
answer cut off by "…": 90 (with key lines v4's other changes) read 67% where 60 read 65% (bench/README.md)."""
ERRORISH = re.compile(r"error|exception|traceback|failed|failure|uncaught|cannot|can't|not found|denied|refused|"
                       r"invalid|exceeded|undeclared|undefined", re.I)
DECIDES = re.compile(r"\b(?:instead|decid|chose|choose|go with|keep|kept|drop|dropped|reject|won't|can't|cannot|"
                      r"not possible|infeasible|switch|replace|rather than|stay with|cut|remove|it is:)", re.I)
_NOT_SAID = re.compile(r"^\s*(?:<command-|<local-command|\[Request interrupted)")
_ATTACHED = re.compile(r"\[(?:image|file)[^\]\n]*\]\s*|'?/\S+\.(?:png|jpe?g|gif)'?\s*")
_BANNER = re.compile(r"^(?:Todos have been modified|\[no output\]|Success\.?$)", re.I)
_HEADING = re.compile(r"^#+\s*|\*\*")
_SPECIFIC = re.compile(r"\d|`|\b[A-Z][a-z]+[A-Z]\w*|\b\w+[._/]\w+")
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.S | re.M)
"""Fenced code in an assistant's answer: its lines are code, not what was said ("/// Start of the window")."""
_CODE = re.compile(r"^(?:from |import |raise |def |class |#include|return |except |if |[\w.]+\s*=\s)")
_TALLY = re.compile(r"\d+ (?:passed|failed|errors?|files?|matches|warnings?)\b|\bno matches\b|\bdone\b", re.I)
LEVELS = 12
SHORT_OUTPUT = 6
"""A tool output of at most this many lines is quoted whole, on one line (a grep's file list)."""
SPECIFICS = 5
"""At most this many sentences with numbers or names are offered from one answer (a list of parts and prices)."""
MIN_WORDS = 6
"""An assistant's sentence shorter than this ("Here's the budget.") says too little to quote."""
OUTPUT_LINES = 12
"""Comment and prose lines of each long tool output offered before any output's further lines (level 11)."""
_ROW = re.compile(r"^\s*\|(.+)\|\s*$")


def _words(text: str, least: int = 3) -> list[str]:
    out = [_HEADING.sub("", s).strip() for s in sentences(text)]
    return [s for s in out if len(s.split()) >= least and not s.startswith("|")]


_SECTION = re.compile(r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*\n]{2,100}[^*\n.:]\*\*|\d+(?:\.\d+)*\.?\s+[A-Z][^\n.!?]{2,80})\s*$")
"""A line that opens a section of a document: a Markdown heading, a line in bold, a numbered title
("1.1 Base Set and Equivalence Relation", as a paper pasted from a PDF has them)."""
_CONCLUDES = re.compile(r"\b(?:summary|conclusions?|concluding|next steps?|action items?|recommendations?|verdict|"
                        r"decisions?|take-?aways?|open questions?|further directions|future work|bottom line|tl;?dr)\b",
                        re.I)
"""A heading of a section that concludes (``_Document.concluding``)."""
DOCUMENT_SECTIONS = 3
DOCUMENT_SENTENCES = 20
"""A text with at least this many section headings and sentences is read as a document (``_document``)."""


class _Document:
    """A text's sentences by section: its ``headings``, each section's first sentence (``firsts``), the
    ``rest`` a section at a time in turn (every section's second sentence before any third), and what its
    concluding sections say (``concluding``). A text with enough headings and sentences ``is_document``.
    Why: taken in order, a pasted paper or a canvas filled a summary with its first sections ("stops at
    section 2.2"), and what its later sections decide went unanswered (stop 33's held-out probes)."""

    def __init__(self, text: str, least: int) -> None:
        self.said: list[str] = []
        """Every sentence of at least three words, in order, headings' included: what ``_words(text)`` gives
        (read here once, line by line, for both)."""
        self.headings: list[str] = []
        self.sections: list[list[str]] = [[]]
        self.ends: list[bool] = [False]
        """Whether each section's heading concludes (``_CONCLUDES``)."""
        self.where: dict[str, int] = {}
        """Each heading's and sentence's place in the document (from 1): picked lines are shown in its order."""
        for ln in text.splitlines():
            found = _words(ln)
            self.said += found
            if _SECTION.match(ln):
                heading = _SPACES.sub(" ", _HEADING.sub("", ln)).strip().rstrip(":")
                if len(re.findall(r"[^\W\d_]{2,}", heading)) >= 2:
                    self.headings.append(heading)
                    self.where.setdefault(heading, len(self.where) + 1)
                self.sections.append([])
                self.ends.append(bool(_CONCLUDES.search(heading)))
            else:
                for x in found:
                    if len(x.split()) >= least:
                        self.sections[-1].append(x)
                        self.where.setdefault(x, len(self.where) + 1)
        self.is_document = (len(self.headings) >= DOCUMENT_SECTIONS
                            and len(self.where) - len(self.headings) >= DOCUMENT_SENTENCES)

    @functools.cached_property
    def concluding(self) -> list[str]:
        """The sentences of its sections that conclude ("Summary", "Next steps", "Recommendation", "Open
        questions"): where a review gives its verdict and a plan its next steps, which readers asked of the
        held-out chats and a section's first sentence did not answer ("Addressing those four will …")."""
        return [x for sec, end in zip(self.sections, self.ends) if end for x in sec if _wordy(x)]

    @functools.cached_property
    def _in_words(self) -> list[list[str]]:
        return [[x for x in sec if _wordy(x)] for sec in self.sections]

    @functools.cached_property
    def firsts(self) -> list[str]:
        """Each section's first sentence in words (not a formula)."""
        return [sec[0] for sec in self._in_words if sec]

    @functools.cached_property
    def rest(self) -> list[str]:
        """The other sentences, a section at a time in turn; formulas and code last."""
        rest = [sec[1:] for sec in self._in_words]
        turns = [sec[k] for k in range(max(map(len, rest), default=0)) for sec in rest if k < len(sec)]
        return turns + [x for sec in self.sections for x in sec if not _wordy(x)]


_UNWORDY = re.compile(r"[^\w\s]|_")


def _wordy(line: str) -> bool:
    """Mostly letters and digits, not a rule of ``====`` or a row of punctuation."""
    return len(_UNWORDY.findall(line)) <= 0.3 * len(line)


def _todos(call: str) -> str:
    """A TodoWrite call's items, as the plan they are ("Analyze test_gpu.c …; Check header …")."""
    try:
        items = json.loads(call.split("] ", 1)[1]).get("todos", [])
    except (IndexError, ValueError, AttributeError):
        return ""
    return "; ".join(str(t.get("content", "")) for t in items if isinstance(t, dict) and t.get("content"))


def _tool_lines(text: str) -> tuple[list[str], str | None]:
    """A tool output's error lines (at most two, "error:" lines first) and its result line: the
    whole output when it is short ("No matches found", "Found 4 files: …"; ``SHORT_OUTPUT`` lines),
    else its last line when that reads as a tally ("4 failed, 23 passed in 0.12s")."""
    lines = [_line(ln) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    errors = [ln for ln in lines if 12 <= len(ln) <= 240 and ERRORISH.search(ln) and not _BANNER.match(ln)
              and not _CODE.match(ln) and _wordy(ln)]
    errors.sort(key=lambda ln: "error:" not in ln.lower())
    result = None
    if lines and not _BANNER.match(lines[0]):
        if len(lines) <= SHORT_OUTPUT:
            result = ": ".join([lines[0], ", ".join(lines[1:])]) if len(lines) > 1 else lines[0]
        elif _TALLY.search(lines[-1]):
            result = lines[-1]
    return errors[:2], result


def _rows(text: str) -> list[str]:
    """A table's rows with words in them, cells joined by " | " (not its ``|---|`` rule)."""
    out = []
    for ln in text.splitlines():
        m = _ROW.match(ln)
        if m:
            cells = [_HEADING.sub("", c).strip() for c in m.group(1).split("|")]
            if any(_HAS_WORD.search(c) for c in cells):
                out.append(" | ".join(c for c in cells if c))
    return out


_GREP_PATH = re.compile(r"^/(?:[^\s/:]+/)+(?=[^\s/:]+[:-])")
"""A grep hit's directory ("/home/me/vsla/src/"): the file name says which file; the rest costs a
line a quarter of its tokens."""
_HIT = re.compile(r"^…/[^\s/:]+?[:-](?:\d+[:-])?")
"""A grep hit's file (and line number), before the line it found."""
_COMMENT = re.compile(r"(?://|/\*|^\s*\*|#\s)\s*[A-Za-z]{2,}")


def _output_lines(text: str) -> tuple[list[str], list[str]]:
    """A long tool output's lines with words in them, in order: (its comments and prose — what a file
    or a grep says in words: "// Backend priority order (higher index = higher priority)" — then the
    other lines). A grep hit's directory is shown as "…/"."""
    said: list[str] = []
    other: list[str] = []
    for ln in map(_line, text.splitlines()):
        found = _HIT.sub("", ln)  # what the line says, without the grep hit's file
        if len(re.findall(r"[A-Za-z]{3,}", found)) >= 2 and not _BANNER.match(ln):
            (said if _COMMENT.search(found) or _prose(found) else other).append(ln)
    return said, other


def _line(raw: str) -> str:
    """An output line as quoted: no line number of a file read, spaces collapsed, a grep hit's
    directory as "…/"."""
    return _GREP_PATH.sub("…/", " ".join(_NUMBERED.sub("", raw).split()))


def _prose(line: str) -> bool:
    """Mostly plain words ("Build failed because the header is missing"), not code."""
    words = line.split()
    plain = [w for w in words if re.fullmatch(r"[A-Za-z][a-z']*[,.;:]?", w)]
    return len(plain) >= 4 and len(plain) >= 0.6 * len(words)


def _tool_opening(text: str) -> str | None:
    """A long tool output's first line of words (what a file or a listing is: "@brief Core definitions
    and error codes for VSLA library"), for when nothing else of it is quoted."""
    for ln in text.splitlines():
        ln = _line(ln).lstrip("/*# ").strip()
        if len(ln.split()) >= 3 and _wordy(ln) and not _CODE.match(ln) and not _BANNER.match(ln):
            return ln
    return None


Place = tuple[int, int]
"""Where a line is shown: (its source's index, its place in a document, else 0 — shown as picked)."""
Candidate = tuple[Place, str, str]
"""A line a step offers: (its place, who said it, the words)."""


def _placer(i: int, doc: _Document | None) -> Callable[[str], Place]:
    """The place of a sentence of source ``i``: a document's sentences are shown in the document's order."""
    return lambda x: (i, doc.where.get(x, 0) if doc else 0)


def _candidates(step_items: Sequence[SourceItem], base: int) -> list[list[Candidate]]:
    """Per level (1–12 of the module docstring), the (place, who, sentence) a step offers."""
    levels: list[list[Candidate]] = [[] for _ in range(LEVELS)]
    last_answer: tuple[Place, Place, list[str]] | None = None
    for k, s in enumerate(step_items):
        i = base + k
        at = _placer(i, None)
        if s.role == "user" and not _NOT_SAID.match(s.text):
            parsed = _Document(_ATTACHED.sub("", s.text), MIN_WORDS)
            said = parsed.said
            doc = parsed if parsed.is_document else None
            at = _placer(i, doc)
            levels[0] += [(at(x), "user", x) for x in said[:2]]
            levels[0] += [(at(x), "user", x) for x in _tool_lines(s.text)[0][:1]]
            levels[2] += [(at(x), "user", x) for x in said[2:] if DECIDES.search(x)]
            levels[8] += [(at(x), "user", x) for x in said[2:8]]
            if doc:
                levels[9] += [(at(x), "user", x) for x in doc.headings + doc.concluding + doc.firsts]
                levels[11] += [(at(x), "user", x) for x in doc.rest]
            else:
                levels[8] += [(at(x), "user", x) for x in parsed.concluding]
                levels[11] += [(at(x), "user", x) for x in said[8:]]
        elif s.role == "assistant":
            said_prose = _CODE_BLOCK.sub("\n", "\n\n".join(x for x in (steps.prose(s.text), steps.written(s.text)) if x))
            parsed = _Document(said_prose, MIN_WORDS)
            talk = [x for x in parsed.said if len(x.split()) >= MIN_WORDS]
            if talk:
                doc = parsed if parsed.is_document else None
                at = _placer(i, doc)
                last_answer = (at(talk[0]), at(talk[-1]), talk)
                levels[2] += [(at(x), "assistant", x) for x in talk[1:-1] if DECIDES.search(x)]
                ends = {talk[0], talk[-1]}
                middle = [x for x in doc.firsts + doc.rest if x not in ends] if doc else talk[1:-1]
                specific = [x for x in middle if _SPECIFIC.search(x)]
                ending = [] if doc else parsed.concluding
                levels[6] += [(at(x), "assistant", x) for x in ending[:SPECIFICS] + specific[:SPECIFICS]]
                levels[8] += [(at(x), "assistant", x) for x in [talk[0], *specific[SPECIFICS:]]]
                levels[8] += [(at(x), "assistant", x) for x in ending[SPECIFICS:]]
                levels[8] += [(at(x), "assistant", x) for x in _rows(said_prose)]
                if doc:
                    levels[9] += [(at(x), "assistant", x) for x in doc.headings + doc.concluding + doc.firsts]
                levels[11] += [(at(x), "assistant", x) for x in (doc.rest if doc else parsed.said)]
            raw_calls = steps.calls(s.text)
            for call in raw_calls[:3]:
                if "TodoWrite" in call.split("]", 1)[0]:
                    plan = _todos(call)
                    if plan:
                        levels[4].append(((i, 0), "assistant planned", plan))
                elif edit := steps.document_edit(call):
                    levels[4].append(((i, 0), "assistant did", edit))
                else:
                    shown = steps.readable_calls(call).strip()
                    if shown.startswith("[") and "*** Begin Patch" not in shown:
                        levels[4].append(((i, 0), "assistant did", shown.splitlines()[0]))
        elif s.role == "tool":
            s = replace(s, text=steps.without_reminders(s.text))
            errors, result = _tool_lines(s.text)
            levels[3] += [(at(x), "tool", x) for x in errors]
            if result and result not in errors:
                levels[5].append(((i, 0), "tool", result))
            elif not errors and (opening := _tool_opening(s.text)):
                levels[7].append(((i, 0), "tool", opening))
            if result is None:
                said, other = _output_lines(s.text)
                levels[10] += [(at(x), "tool", x) for x in said[:OUTPUT_LINES]]
                levels[11] += [(at(x), "tool", x) for x in said[OUTPUT_LINES:] + other]
    if last_answer is not None:
        place, end, talk = last_answer
        levels[1] += [(place, "assistant", talk[0])] + ([(end, "assistant", talk[-1])] if len(talk) > 1 else [])
    return levels


HEAD = "In the chat's words:"
"""The line that opens a summary's quoted lines (after the model's notes)."""
_QUOTE_LINE = re.compile(r"^- (user|assistant|assistant did|assistant planned|tool|system): (.+)$")


def key_lines(sources: Sequence[SourceItem], budget: int, tokenizer: Tokenizer, *, keep: str = "") -> str:
    """The chat's key lines (see the module docstring) in at most ``budget`` tokens, bulleted.

    Over summaries (a condensed summary's sources), the lines their own quoted blocks hold are
    carried up, each source's first ones first: they are still the chat's words. ``keep``: lines an
    earlier call picked in a smaller budget (a leaf's title was asked of them), taken first, so the
    larger budget only adds lines (picked afresh, a larger budget can trade a line for a longer one)."""
    if any(s.kind == "summary" for s in sources):
        per_step, first = [], 0
        for s in sources:
            per_step.append(_summary_ranks(s, first))
            first += len(per_step[-1])
    else:
        per_step = [_candidates(st.items(sources), st.first) for st in steps.split(sources)]
    chosen = _Chosen(budget)
    seen: set[str] = set()
    kept = set(keep.splitlines())
    for only_kept in (True, False) if kept else (False,):
        for level in range(max((len(c) for c in per_step), default=0)):
            for cands in per_step:
                for i, who, text in cands[level] if level < len(cands) else ():
                    key = text.casefold()
                    if key in seen:
                        continue
                    line = clip_sentence(text, LINE_TOKENS, tokenizer)
                    if only_kept and f"- {who}: {line}" not in kept:
                        continue
                    if chosen.take(i, who, line, tokenizer.count(f"- {who}: {line}") + 1, read=only_kept):
                        seen.add(key)
    return chosen.text()


class _Chosen:
    """The lines picked so far within a budget, none of them a repeat of another (``_said``): a line
    whose words a picked one holds is not taken; one that fits and holds a picked line's words and more
    takes its place, unless that line was read for a title (``keep``), which stays as it was read."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.lines: dict[tuple[Place, int], tuple[str, str, int]] = {}  # (place, order): who, line, cost
        self.words: dict[tuple[Place, int], str] = {}
        self.read: set[tuple[Place, int]] = set()
        self.order = 0

    def take(self, i: Place, who: str, line: str, cost: int, *, read: bool) -> bool:
        """Take ``line`` (at place ``i``, costing ``cost`` tokens with its newline) if it fits and says
        something new; whether it was taken."""
        if self.used + cost > self.budget:
            return False
        words = _said(who, line)
        if words and any(_holds(other, words) for other in self.words.values()):
            return False
        held = [at for at, other in self.words.items() if words and _holds(words, other)]
        if any(at in self.read for at in held):
            return False
        for at in held:
            self.used -= self.lines.pop(at)[2]
            del self.words[at]
        self.order += 1
        at = (i, self.order)
        self.lines[at] = (who, line, cost)
        self.used += cost
        if words:
            self.words[at] = words
        if read:
            self.read.add(at)
        return True

    def text(self) -> str:
        return "\n".join(f"- {who}: {line}" for _, (who, line, _cost) in sorted(self.lines.items()))


def _holds(longer: str, words: str) -> bool:
    """``words`` occur in ``longer`` as whole words ("section 1" is not in "section 10")."""
    at = longer.find(words)
    while at >= 0:
        end = at + len(words)
        if (at == 0 or not longer[at - 1].isalnum()) and (end == len(longer) or not longer[end].isalnum()):
            return True
        at = longer.find(words, at + 1)
    return False


_LEADING_MARKS = re.compile(r"^[#>*\s-]+")
_SAID_LEAST = 20
"""A line shorter than this (in characters, once compared) is never taken for a repeat: "ok", "yes"."""


def _said(who: str, line: str) -> str:
    """A line's words as a repeat is found: without a heading's or list's marks, a clip's "…", case or
    runs of spaces; "" for a line never taken for a repeat (a command the agent ran — "uv run pytest -q"
    and "uv run pytest -q --tb=short" are two runs — or a short one). Why: one sentence came into a
    summary twice, alone and inside a longer line (a file's heading and the same heading read back; an
    error the user pasted, clipped at one length at level 1 and another at level 11), a line's budget
    spent on words the reader already has."""
    if who == "assistant did":
        return ""
    words = _SPACES.sub(" ", _LEADING_MARKS.sub("", line.removesuffix("…"))).strip().casefold()
    return words if len(words) >= _SAID_LEAST else ""


def split(text: str) -> tuple[str, str]:
    """(what the model wrote, the chat's key lines that follow it) of a summary's text; a summary
    with no quoted block is all the first."""
    head, found, rest = text.partition(f"\n{HEAD}\n")
    return (head, rest) if found else (text, "")


def quoted(text: str) -> list[tuple[str, str]]:
    """The (who, words) lines a summary quotes: those after ``HEAD``, or, in a summary without
    one (an extractive digest), its ``- user: …`` lines."""
    lines = text.splitlines()
    if HEAD in lines:
        lines = lines[lines.index(HEAD) + 1:]
    return [(m.group(1), m.group(2)) for m in map(_QUOTE_LINE.match, lines) if m]


def _summary_ranks(source: SourceItem, first: int) -> list[list[Candidate]]:
    """A summary's quoted lines carried up, one per level, most telling first: its first line; the
    lines that decide something; what the user said in words ("ok box swap yes, pir stays."); errors;
    the assistant's lines with numbers or names; then the rest (a pasted log, a file's lines), each kind
    in order. One line per level means every source's k-th line comes before any source's (k+1)-th:
    each source gets its share of the condensed summary (issue 19: condensed summaries restated their
    first source only; by kind across sources, one leaf's pasted log crowded out the next leaf's
    decisions and its condensed probe went unanswered). A line's place is ``first`` + its place in
    ``source``: picked lines are shown in the order the sources said them."""
    ranked: list[tuple[int, int, str, str]] = []
    for n, (who, words) in enumerate(quoted(source.text)):
        if n == 0:
            kind = 0
        elif DECIDES.search(words):
            kind = 1
        elif who == "user" and _prose(words):
            kind = 2
        elif ERRORISH.search(words):
            kind = 3
        elif who.startswith("assistant") and _SPECIFIC.search(words):
            kind = 4
        else:
            kind = 5
        ranked.append((kind, n, who, words))
    return [[((first + n, 0), who, words)] for _, n, who, words in sorted(ranked)]
