"""A session's brief: what a person reads first about a whole chat, in at most ``BRIEF_TOKENS``.

What it was about, the decisions with their reasons, what was produced (by name), the main problem and its
fix, and where it ended (the last request, and whether it was answered). A model writes only what it writes
faithfully — a title and the one-line "about" — and the rest is the chat's own words, chosen here:

* ``Material.read`` reads a session's messages once, in order, keeping only what a brief can use (the first
  request, deciding lines, the names of what was made, errors with what followed them, the last request and
  its answer), so a session of any length is read in one pass without holding its text;
* ``Material.lines`` chooses, and ``render`` lays the brief out: the about line first (the model's, else the
  first request in the user's words), then "Decided", "Made", "Problem", "Ended".

Every line but the about line and the title is a quote with who said it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from hiermem_tui.summarize.keylines import assistant, lists, role_lines
from hiermem_tui.summarize.keylines.kinds import Kind
from hiermem_tui.summarize.text import clip_sentence, courtesy, first_sentence, sentences
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

BRIEF_TOKENS = 250
"""The most a brief may be."""
BRIEF_VERSION = "brief-v1"
"""The version of the brief's ask and layout, recorded with every brief."""
ANSWER_TOKENS = 90
"""What the model's title and about line may take."""
QUOTE_TOKENS = 45
"""One quoted line of a brief is clipped to this."""
DECISIONS = 2
"""Decisions a brief quotes at most."""
NAMES = 8
"""Names of what was made a brief lists at most."""
FOLLOW = 6
"""Messages after an error in which its fix and the user's "that fixed it" are looked for."""

_REASON = re.compile(r"\b(?:because|since|so that|so\b|rather than|instead of|which means|as it|due to|to avoid|"
                     r"otherwise|cheaper|faster|simpler|safer)\b", re.I)
_USER_DECIDES = re.compile(r"\b(?:it is|go with|let'?s (?:go|do|use|keep|stick)|decided|i'?ll (?:go|take|use|keep|"
                           r"stick)|sounds good|we'?ll (?:go|use|take)|chose|picked|switch(?:ing)? to|instead|"
                           r"keep(?:ing)?|drop(?:ping)?|cut(?:ting)?|yes go|ok (?:let'?s|go|do))\b", re.I)
_ADVISES = re.compile(r"\b(?:i'?d (?:go|use|pick|recommend|stick|keep|suggest)|i recommend|i would (?:go|use|pick)|"
                      r"recommendation|go with|rather than|instead of|better choice|the right (?:choice|approach))\b",
                      re.I)
_WORKED = re.compile(r"\b(?:that was it|works?(?: now)?|working|fixed|solved|that did it|all good|running now|"
                     r"healthy|no more|gone|passes|passed|green)\b|👍|🎉", re.I)
_CAUSE = re.compile(r"\b(?:caus(?:e|ed|es)|the problem is|the issue is|what'?s happening|culprit|the reason|explains|"
                    r"comes from|root cause|is that)\b", re.I)
_FIX = re.compile(r"\b(?:the fix|to fix|fix(?:es)? (?:it|this|that)|fixed by|solution|the cure|workaround)\b", re.I)
_CHANGE = re.compile(r"\b(?:instead|replace|set |add |remove |change |switch )", re.I)
_TROUBLE = re.compile(r"\b(?:error|fails?|failing|failed|crash(?:es|ing)?|not working|doesn'?t work|keeps? "
                      r"(?:restarting|crashing|rebooting|failing|resetting)|boot ?loop|broken|mistake|nan\b|"
                      r"brown ?out|stuck|timed out|sold out|double[- ]booked|over (?:the )?(?:cap|budget|limit))", re.I)
_FILE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*(?:\.?[\w-]+\.(?:ya?ml|json|toml|ini|env|conf|cfg|py|rs|go|js|ts|tsx|"
                   r"jsx|sh|sql|md|txt|csv|ino|cpp|c|h|hpp|java|kt|rb|php|html|css|service|timer|tf|xml)|"
                   r"\.env|Dockerfile|Caddyfile|Makefile|Cargo\.toml|compose\.ya?ml)\b")
_CANVAS = re.compile(r"^\[canmore\.create_textdoc\] name: (.+)$")
_WRITE = re.compile(r"^\[(?:Write|Edit|MultiEdit|NotebookEdit|apply_patch|write_file|create_file)\] "
                    r"(?:file_path|path): (\S+)")
_MADE = re.compile(r"^(?:here(?:'s| is| are)|below is|save (?:this|it) as|create|put this in|add this to|"
                   r"the (?:final|full|complete|updated|revised))\b[^:]{0,80}:$", re.I)
_HERE_IS = re.compile(r"^(?:here(?:'s| is| are)|below (?:is|are))\s+(?:the |your |a |an |my )?((?:final |full |complete |"
                      r"updated |revised |new |draft |tighter |short )*[\w'’ -]{3,40}?)(?: for [^:]{1,40})?:$", re.I)


@dataclass(slots=True)
class Quote:
    """A quoted sentence and who said it, at ``seq`` (the message's place in the session)."""

    who: str
    words: str
    seq: int

    def shown(self, tokenizer: Tokenizer) -> str:
        return f'{self.who}: "{clip_sentence(self.words, QUOTE_TOKENS, tokenizer)}"'


@dataclass(slots=True)
class _Problem:
    error: Quote
    fix: Quote | None = None
    worked: bool = False
    left: int = FOLLOW
    pasted: bool = False
    """An error line the user pasted (not only words that say something went wrong)."""


@dataclass(slots=True)
class Material:
    """What a brief can use of a session, gathered in one pass over its messages (``read``)."""

    first_request: Quote | None = None
    decisions: list[tuple[int, Quote, Quote | None]] = field(default_factory=list)
    """(weight, the decision, the advice that gave its reason)."""
    advice: Quote | None = None
    """The last answer's advice ("I'd go with …"), the reason of a decision the user makes next."""
    names: dict[str, int] = field(default_factory=dict)
    problems: list[_Problem] = field(default_factory=list)
    last_request: Quote | None = None
    answer: Quote | None = None
    closing: Quote | None = None
    last_seq: int = -1
    first_seq: int = -1

    def read(self, messages: Iterable[tuple[int, SourceItem]]) -> Material:
        """Read ``(seq, message)`` pairs in order; returns itself."""
        for seq, m in messages:
            if self.first_seq < 0:
                self.first_seq = seq
            self.last_seq = seq
            if m.role == "user":
                self._user(seq, m.text)
            elif m.role == "assistant":
                self._assistant(seq, m.text)
            elif m.role == "tool":
                self._tool(seq, m.text)
        return self

    # ------------------------------------------------------------------------------------------ per role
    def _user(self, seq: int, text: str) -> None:
        found = role_lines("user", text)
        opening = [ln.words for ln in found if ln.kind is Kind.USER_OPENING]
        if not opening:
            return
        said = Quote("user", " ".join(opening), seq)
        for p in self.problems:
            if p.left > 0 and _WORKED.search(text):
                p.worked = True
        self._age()
        error = next((ln.words for ln in found if ln.kind is Kind.USER_PASTED_ERROR), None)
        trouble = next((x for x in opening if _TROUBLE.search(x)), None)
        if error or trouble:
            self.problems.append(_Problem(Quote("user", error or trouble or "", seq), pasted=error is not None))
        if self.first_request is None:
            self.first_request = said
        decides = [x for x in sentences(text) if _USER_DECIDES.search(x) and len(x.split()) >= 3]
        if courtesy(opening[0]) and not decides and "?" not in text and len(text.split()) <= 25:
            self.closing = said  # "thanks, that's it": the chat closes, the request before stays the last one
            return
        self.last_request, self.answer, self.closing = said, None, None
        if decides:
            why = self.advice if self.advice is not None and _REASON.search(self.advice.words) else None
            self.decisions.append((3 + bool(why or _REASON.search(decides[0])), Quote("user", decides[0], seq), why))

    def _assistant(self, seq: int, text: str) -> None:
        found = role_lines("assistant", text)
        self._age()
        content = [ln for ln in found if ln.kind in (Kind.ANSWER_ENDS, Kind.LIST, Kind.CODE)]
        if self.last_request is not None and self.answer is None and content:
            best = next((ln for ln in content if ln.kind in (Kind.LIST, Kind.CODE)), content[0])
            self.answer = Quote("assistant", best.words, seq)
        talk = [ln.words for ln in found if ln.kind in (Kind.REST, Kind.DECIDING, Kind.SPECIFIC)]
        for p in self.problems:
            if p.fix is None and p.left == FOLLOW - 1:  # the answer right after the problem
                said = [x for x in talk if not courtesy(x)]
                cause = next((x for pattern in (_FIX, _CAUSE, _CHANGE) for x in said if pattern.search(x)), None)
                if cause:
                    p.fix = Quote("assistant", cause, seq)
        advice = next((x for x in talk if _ADVISES.search(x)), None)
        self.advice = Quote("assistant", advice, seq) if advice else None
        if advice:
            self.decisions.append((1 + bool(_REASON.search(advice)), Quote("assistant", advice, seq), None))
        for ln in found:
            if ln.who == "assistant did":
                made = _CANVAS.match(ln.words) or _WRITE.match(ln.words)
                if made:
                    self._name(made.group(1))
        whole = assistant.code_and_said(text)
        for lead in [b.lead for b in lists.code_blocks(whole)] + [x.lead for x in lists.lists(whole)]:
            for name in _FILE.findall(lead):
                self._name(name)
            here = _HERE_IS.match(lead.strip("*` "))
            if here and not _FILE.search(lead):
                self._name(here.group(1).strip())

    def _tool(self, seq: int, text: str) -> None:
        self._age()
        errors = [ln.words for ln in role_lines("tool", text) if ln.kind is Kind.TOOL_ERROR]
        if errors and len(self.problems) < 20:
            self.problems.append(_Problem(Quote("tool", errors[0], seq)))

    def _age(self) -> None:
        for p in self.problems:
            p.left -= 1

    def _name(self, name: str) -> None:
        name = name.strip("`'\" ")
        if name and name not in self.names:
            self.names[name] = len(self.names)

    # ------------------------------------------------------------------------------------------- choosing
    def main_problem(self) -> _Problem | None:
        """The problem a reader most needs: one the user confirmed fixed, else an error they pasted, else one with a
    fix, else the first. Its fix is the answer's sentence that says the fix, else the cause, else what it
    changed."""
        if not self.problems:
            return None
        return max(self.problems, key=lambda p: (p.worked and p.fix is not None, p.pasted, p.fix is not None,
                                                 p.error.who == "user", -p.error.seq))

    def chosen_decisions(self) -> list[tuple[Quote, Quote | None]]:
        """The decisions a brief quotes, each with the advice that gave its reason: the user's own first (with a
        reason first), then the assistant's advice that gave one; in chat order."""
        ranked = sorted(self.decisions, key=lambda d: (-d[0], d[1].seq))[:DECISIONS]
        return [(q, why) for _, q, why in sorted(ranked, key=lambda d: d[1].seq)]


def render(material: Material, about: str, tokenizer: Tokenizer, budget: int = BRIEF_TOKENS) -> str:
    """The brief's text: ``about`` (one line), then the main problem and its fix, what was decided, what was made
    and where it ended, each while it fits the budget (the ending is always kept, last)."""
    first = material.first_request
    lines = [about.strip() or (f"Asked: {first.shown(tokenizer)}" if first else "(no text)")]
    ended = _ended(material, tokenizer)
    parts: list[str] = []
    problem = material.main_problem()
    if problem is not None:
        fix = f" → fix: {problem.fix.shown(tokenizer)}" if problem.fix else ""
        parts.append(f"Problem: {problem.error.shown(tokenizer)}{fix}")
    decisions = material.chosen_decisions()
    if decisions:
        parts.append("Decided: " + " · ".join(q.shown(tokenizer) + (f" (why: {why.shown(tokenizer)})" if why else "")
                                              for q, why in decisions))
    names = sorted(material.names, key=material.names.__getitem__)[:NAMES]
    if names:
        parts.append("Made: " + ", ".join(names))
    used = tokenizer.count("\n".join(lines + [ended] if ended else lines))
    for part in parts:
        cost = tokenizer.count(part) + 1
        if used + cost <= budget:
            lines.append(part)
            used += cost
    if ended:
        lines.append(ended)
    text = "\n".join(lines)
    while tokenizer.count(text) > budget and len(lines) > 1:
        lines.pop(-2 if len(lines) > 2 else -1)
        text = "\n".join(lines)
    return text


def _ended(material: Material, tokenizer: Tokenizer) -> str:
    """Where the chat ended: its last request and what answered it, or that nothing did; and the user's closing
    words when they closed it."""
    request = material.last_request
    if request is None:
        return ""
    answer = f" → {material.answer.shown(tokenizer)}" if material.answer else " → not answered"
    closing = f" · then {material.closing.shown(tokenizer)}" if material.closing else ""
    return f"Ended: {request.shown(tokenizer)}{answer}{closing}"


def material_text(material: Material, tokenizer: Tokenizer) -> str:
    """What the model reads to write a brief's title and about line: the brief's chosen lines, the first
    request first (not its ending: asked of it, a small model titled the last request, not the chat)."""
    first = material.first_request
    body = render(material, "", tokenizer, budget=BRIEF_TOKENS)
    lines = [ln for ln in body.splitlines()[1:] if not ln.startswith("Ended:")]
    return "\n".join(([f"Asked: {first.shown(tokenizer)}"] if first else []) + lines)


ASK = ("What was this chat about? Answer in exactly two lines. The first: 'Title: ' and a title of at most eight "
       "words. The second: 'About: ' and one sentence of at most 25 words saying what the user set out to do and "
       "what came of it. Use the words the chat uses.")
"""What the model is asked of a brief's material: a title and the one-line about."""
ABOUT_WORDS = 40
"""An about line is its first sentence, cut to this many words ("…")."""
_FIELD = re.compile(r"^\W*(title|about)\W*[:—-]\s*(.+)$", re.I)


def answer_fields(answer: str) -> tuple[str, str]:
    """(title, about) of the model's answer: its "Title:" and "About:" lines, else its first two lines."""
    found: dict[str, str] = {}
    plain = []
    for ln in answer.splitlines():
        if not ln.strip():
            continue
        m = _FIELD.match(ln)
        if m:
            found.setdefault(m.group(1).lower(), m.group(2).strip().strip('"*').strip())
        else:
            plain.append(ln.strip().strip('"*').strip())
    title = found.get("title") or (plain.pop(0) if plain else "")
    about = found.get("about") or (plain.pop(0) if plain else "")
    return title, about


def about_sentence(about: str) -> str:
    """An about line as kept: its first sentence, at most ``ABOUT_WORDS`` words."""
    words = first_sentence(about).split()
    return " ".join(words[:ABOUT_WORDS]) + ("…" if len(words) > ABOUT_WORDS else "")


def about_line(text: str) -> str:
    """The brief's first line (what the sessions list shows)."""
    return text.split("\n", 1)[0]
