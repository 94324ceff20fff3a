"""A session's brief: what a person reads first about a whole chat, in at most ``BRIEF_TOKENS``.

What it was about, the decisions with their reasons, what was produced (by name), the main problem and its
fix, and where it ended (the last request, and whether it was answered). A model writes only what it writes
faithfully — a title and the one-line "about" — and the rest is the chat's own words, chosen here:

* ``Material.read`` reads a session's messages once, in order, keeping only what a brief can use (the first
  request, deciding lines, the names of what was made, errors with what followed them, the last request and
  its answer), so a session of any length is read in one pass without holding its text;
* ``Material.summaries`` are the texts of the session's summaries at the finest level of at most ``LEVEL``
  (``requests.brief_level``): what a model that writes reads besides the quotes (``brief_writes.py``);
* ``render`` lays the brief out: the about line first (the model's, else the first request in the user's
  words), then "Decided", "Problem", "Written in the chat" and "Ended".

Every line but the about line and the title is a quote with who said it: the titles of the session's
summaries are a model's words, and a brief does not show them. A quote follows another
("→") only where the second answered the first: the assistant's next message after the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from hiermem_tui.summarize.brief_rules import (
    acted,
    answer_gist,
    artifact_names,
    ask_of,
    content_words,
    listed_decisions,
    reason_after,
    solved,
)
from hiermem_tui.summarize.keylines import assistant, lists, role_lines
from hiermem_tui.summarize.keylines.kinds import Kind
from hiermem_tui.summarize.text import clip_sentence, closes, courtesy, first_sentence, sentences
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

BRIEF_TOKENS = 250
"""The most a brief may be."""
BRIEF_VERSION = "brief-v4"
"""The version of the brief's ask and layout, recorded with every brief."""
ANSWER_TOKENS = 90
"""What the model's title and about line may take."""
QUOTE_TOKENS = 45
"""One quoted line of a brief is clipped to this."""
DECISIONS = 3
"""Decisions a brief quotes at most."""
NAMES = 8
"""Names of what was made a brief lists at most."""
DONE = 2
"""The user's latest "it shipped" words a brief quotes at most."""
FOLLOW = 12
TROUBLE_WITHIN = 3
"""A user's message says something went wrong in its first sentence, or a correction in one of its first this
many ("wait. … is wrong")."""
TROUBLE_WORDS = 6
"""Fewer words than this ("what am i doing wrong?") do not say what went wrong."""
SHORT_CAUSE = 10
"""A sentence naming a cause in fewer words ("The cause is the file you copied from.") is quoted with the next."""
"""Messages after a problem in which the answer that names its cause, and then its fix, is looked for."""
LEVEL = 8
"""Summaries a written brief reads at most (the finest level of the session's tree that has no more)."""
CLOSING_QUOTE = 20
"""The user's closing words ("thanks, that's it") are clipped to this."""
ANSWER_QUOTE = 55
"""The answer to the chat's last request is clipped to this (its request to ``QUOTE_TOKENS``)."""
WRITTEN = "Written in the chat:"
"""The label of the names of what the chat wrote (files, a canvas, a thing a lead-in names) and the user's word
that something shipped: written, not said to be adopted (an example file the user then declined is one too)."""
PRIORITY = ("made", "decided", "problem")
"""The order a brief's lines are given the budget in (after the about line and the ending): what was made
is short and is what a reader asks for by name."""
SHOWN = ("decided", "problem", "made")
"""The order a brief's middle lines are shown in."""

_REASON = re.compile(r"\b(?:because|since|so that|so\b|rather than|instead of|which means|as it|due to|to avoid|"
                     r"otherwise|cheaper|faster|simpler|safer)\b", re.I)
_USER_DECIDES = re.compile(r"\b(?:(?<!as )(?<!what )(?<!how )it is(?=\s*(?:[,.!;]|$|then\b))|go with|let'?s (?:go|do|use|keep|stick)|decided|i'?ll (?:go|take|use|keep|"
                           r"stick)|sounds good|we'?ll (?:go|use|take)|chose|picked|switch(?:ing)? to|(?:i|we)(?:'ve| have)? agreed|"
                           r"yes go|ok (?:let'?s|go|do))\b", re.I)
_PROCESS = re.compile(r"\b(?:one at a time|go(?:ing)? through|in order|step by step|your list)\b", re.I)
"""Words of a user's sentence about how to proceed, not what they chose ("let's go through them one at a time")."""
_ADVISES = re.compile(r"\b(?:i'?d (?:go|use|pick|recommend|stick|keep|suggest)|i recommend|i would (?:go|use|pick)|"
                      r"recommendation|go with|rather than|instead of|better choice|the right (?:choice|approach))\b",
                      re.I)
_CAUSE = re.compile(r"\b(?:caus(?:e|ed|es)|the problem is|the issue is|what'?s happening|culprit|the reason|explains|"
                    r"comes from|root cause|is that)\b", re.I)
_ITEM = re.compile(r"^\s*(?:[-*•|>]|\d+[.)])\s")
"""A line of a list, table or quote the user pasted: what they work on, not what went wrong."""
_FIX = re.compile(r"\b(?:the fix|to fix|fix(?:es)? (?:it|this|that)|fixed by|solution|the cure|workaround|"
                  r"the way out)\b", re.I)
_TROUBLE = re.compile(r"\b(?:error|fails?|failing|failed|crash(?:es|ing)?|not working|doesn'?t work|keeps? "
                      r"(?:restarting|crashing|rebooting|failing|resetting|growing)|boot ?loop|broken|mistake|nan\b|"
                      r"brown ?out|stuck|timed out|sold out|double[- ]booked|over (?:the )?(?:cap|budget|limit)|"
                      r"disk (?:at|is) \d+ ?%|out of (?:memory|space|disk)|disk full|outage|paged\b|incident|"
                      r"leak(?:s|ing)?\b|oom|climbing|spiking|locked|\b50[234]s?\b|never (?:fires|fired|runs|ran|starts|started|"
                      r"triggers)|(?:isn'?t|is not|not|doesn'?t|won'?t) (?:firing|running|starting|triggering|fire|run|"
                      r"start|trigger)\b)", re.I)
_CORRECTION = re.compile(r"\b(?:wrong|mistake|mix-?up|confusion|typo|miscalculat\w*|doesn'?t add up|isn'?t right)\b",
                         re.I)
"""Words of a sentence after a user's first that says something was wrong ("wait. … made the water level
wrong"): a problem too, in a sentence of at least ``TROUBLE_WORDS``."""
_PRINTED = re.compile(r"^\W*(?:\[[\w-]+\]\s*)?(?:[\w.:-]*(?:error|exception|fatal|panic|failed|failure)\b|"
                      r"traceback|[A-Z]\d{3,5}\b)|\b(?:error|exception|failed)\W*$", re.I)
"""An error line as a program prints it: it opens with the error ("ERROR: …", "[INSTALL_PODS] Error: …",
"error[E0503]", "Traceback") or ends with it — not the user's own sentence that names an invalid index."""
_ERROR_LINE = re.compile(r"\b(?:error|exception|traceback|failed|failure|fatal|panic(?:ked)?|denied|refused|"
                         r"not found|timed out|invalid)\b", re.I)
"""An error a tool printed, as a word (not "failed_count" in a table's header)."""
_DONE = re.compile(r"\b(?:ship(?:ped|ping)|releas(?:ed|ing)|tagg(?:ed|ing)|deployed|published|merged|launched|is live|"
                   r"went out|is out)\b", re.I)
_WEAK_DONE = re.compile(r"\b(?:is out|went out)\b", re.I)
"""Done words that say a release only beside a version ("0.1.0 is out"; "so 90 days is out" is not one)."""
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LOG_RECORD = re.compile(r"^\W{0,3}(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d|\[?\d{2}/\w{3}/\d{4})")
"""A line that begins with a timestamp: a log record the user shows (data to work on), not an error they met."""
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)?\b")
_NOT_DONE = re.compile(r"\b(?:not|n't|never|yet|before|will|going to|want(?:s)? to|should|need|require[sd]?|if|once|"
                       r"as long as|when|would|\?)", re.I)
"""Words of a user's message that says something was finished ("0.1.0 is tagged and on crates.io")."""
_FILE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*(?:\.?[\w-]+\.(?:ya?ml|json|toml|ini|env|conf|cfg|py|rs|go|js|ts|tsx|"
                   r"jsx|sh|sql|md|txt|csv|ino|cpp|c|h|hpp|java|kt|rb|php|html|css|service|timer|tf|xml)|"
                   r"\.env|Dockerfile|Caddyfile|Makefile|Cargo\.toml|compose\.ya?ml)\b")
_CANVAS = re.compile(r"^\[canmore\.create_textdoc\] name: (.+)$")
_WRITE = re.compile(r"^\[(?:Write|Edit|MultiEdit|NotebookEdit|apply_patch|write_file|create_file)\] "
                    r"(?:file_path|path): (\S+)")
_MADE = re.compile(r"^(?:here(?:'s| is| are)|below is|save (?:this|it) as|create|put this in|add this to|"
                   r"the (?:final|full|complete|updated|revised))\b[^:]{0,80}:$", re.I)
_HERE_IS = re.compile(r"^(?:here(?:'s| is| are)|below (?:is|are))\s+(?:the |your |a |an |my )?((?:final |full |complete |"
                      r"updated |revised |new |draft |tighter |short )*[\w'’ -]{0,30}?\b(?:email|letter|table|budget|"
                      r"plan|checklist|list|config(?:uration)?|script|schedule|itinerary|draft|outline|abstract|"
                      r"proposal|section|readme|timeline|roadmap|summary|description|message|template|sketch|"
                      r"function|class|test|query|command|policy|contract|agenda))(?: for [^:]{1,40})?:$", re.I)
"""A lead-in that names a thing the assistant made ("Here's the revised budget table:")."""



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
    words: set[str]
    """What the problem is about: the content words of the user's messages about it until its cause is named."""
    pasted: bool = False
    """An error line the user pasted (not only words that say something went wrong)."""
    reply: Quote | None = None
    """The first sentence of the assistant's next message."""
    cause: Quote | None = None
    """The first sentence of an answer within ``FOLLOW`` messages that names a cause and speaks of the problem."""
    fix: Quote | None = None
    """The sentence after the cause in the answer that named it, or of a later answer within ``FOLLOW`` messages
    that speaks of the problem, that names a fix."""
    solved: Quote | None = None
    """The user's report, within ``FOLLOW`` messages, that it is gone ("reset worked, tests green again")."""
    left: int = 0
    """Messages still to come in which its cause and fix are looked for."""

    def told(self) -> list[Quote]:
        """What followed it, in order: its cause, its fix, the user's word that it is gone."""
        return [q for q in (self.cause, self.fix, self.solved) if q is not None]

    def about(self, sentence: str) -> bool:
        """Whether ``sentence`` speaks of this problem (names one of its words)."""
        return bool(self.words & content_words(sentence))


@dataclass(slots=True)
class Material:
    """What a brief can use of a session, gathered in one pass over its messages (``read``)."""

    first_request: Quote | None = None
    decisions: list[tuple[int, Quote, Quote | None]] = field(default_factory=list)
    """(weight, the user's decision, the advice before it that names what was chosen)."""
    advice: list[Quote] = field(default_factory=list)
    """The last answer's advice ("I'd go with …"): a reason for a decision the user makes next."""
    summaries: list[str] = field(default_factory=list)
    """The texts of the session's summaries at the finest level of at most ``LEVEL``, in order: what a model
    that writes reads of the chat besides the quotes."""
    done: list[Quote] = field(default_factory=list)
    """The user's latest words that say something was finished (shipped, tagged, sent)."""
    names: dict[str, int] = field(default_factory=dict)
    problems: list[_Problem] = field(default_factory=list)
    open_problems: list[_Problem] = field(default_factory=list)
    """The problems whose cause and fix are still looked for (``left`` > 0): the only ones each message touches."""
    last_request: Quote | None = None
    """The chat's last request, from the part of the message that asks (``ask_of``)."""
    answer: Quote | None = None
    """What the answer to the last request says it is (``answer_gist``)."""
    closing: Quote | None = None
    last_seq: int = -1
    first_seq: int = -1
    _asked_in: str = ""
    """The whole message of the last request (what it told before asking is the news an answer reacts to)."""

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
        self._age()
        gone, did = solved(text), acted(text)
        for p in self.open_problems:
            if p.solved is None and gone:
                p.solved = Quote("user", gone, seq)
            if p.cause is not None and p.fix is None and did and did != gone:
                p.fix = Quote("user", did, seq)
            if p.cause is None:
                p.words |= content_words(said.words)
        error = next((ln.words for ln in found if ln.kind is Kind.USER_PASTED_ERROR
                      and _ERROR_LINE.search(_INLINE_CODE.sub("", ln.words)) and _PRINTED.search(ln.words)
                      and not _LOG_RECORD.match(ln.words) and not _ITEM.match(ln.words)), None)
        trouble = next((x for n, x in enumerate(opening[:TROUBLE_WITHIN])
                        if (_TROUBLE if n == 0 else _CORRECTION).search(_INLINE_CODE.sub("", x))
                        and not _LOG_RECORD.match(x) and not x.startswith(">")
                        and (n == 0 or len(x.split()) >= TROUBLE_WORDS)), None)
        if error or trouble:
            told = error or trouble or ""
            self._problem(_Problem(Quote("user", told, seq), content_words(told) | content_words(said.words),
                                   pasted=error is not None, left=FOLLOW))
        if self.first_request is None:
            self.first_request = said
        told_all = sentences(text)
        decides = [x for x in told_all if _USER_DECIDES.search(x) and len(x.split()) >= 3 and not _PROCESS.search(x)]
        if not decides and closes(text):
            self.closing = said  # "thanks, that's it": the chat closes, the request before stays the last one
            return
        done = next((x for x in told_all if _DONE.search(x) and len(x.split()) >= 3
                     and not x.startswith("|") and not _NOT_DONE.search(x) and not _CAUSE.search(x)
                     and not _TROUBLE.search(x) and (_VERSION.search(x) or not _WEAK_DONE.search(x))), None)
        if done:
            self.done.append(Quote("user", done, seq))
            del self.done[:-20]
        ask = ask_of(text)
        self._asked_in = text
        shown = ask if text.lstrip().startswith(ask[:20]) else f"… {ask}"
        self.last_request, self.answer, self.closing = Quote("user", shown, seq), None, None
        listed = listed_decisions(text)
        if listed:
            self.decisions.append((3, Quote("user", "; ".join(listed), seq), None))
        elif decides:
            why = _reason_for(decides[0], self.advice)
            self.decisions.append((1 + bool(why or _REASON.search(decides[0])), Quote("user", decides[0], seq), why))

    def _assistant(self, seq: int, text: str) -> None:
        found = role_lines("assistant", text)
        content = [ln for ln in found if ln.kind in (Kind.ANSWER_ENDS, Kind.LIST, Kind.CODE)]
        if self.last_request is not None and self.answer is None:
            gist = answer_gist(text, self.last_request.words, self._asked_in)
            if gist:
                self.answer = Quote("assistant", gist, seq)
            elif content:
                best = next((ln for ln in content if ln.kind in (Kind.LIST, Kind.CODE)), content[0])
                self.answer = Quote("assistant", best.words, seq)
        said = [x for x in sentences(assistant.said_text(text))
                if not courtesy(x) and len(x.split()) >= 4 and not x.startswith("#")]
        self._age()
        for p in self.open_problems:
            if p.reply is None and said and p.left == FOLLOW - 1:
                p.reply = Quote("assistant", said[0], seq)
            after = said
            if p.cause is None:
                n = next((k for k, x in enumerate(said) if _CAUSE.search(x) and p.about(x)), None)
                if n is None:
                    continue
                cause = said[n] + (f" {said[n + 1]}" if len(said[n].split()) < SHORT_CAUSE and n + 1 < len(said) else "")
                p.cause, after = Quote("assistant", cause, seq), said[n + 1:]
                fix = next((x for x in after if _FIX.search(x)), None)  # the answer that named the cause goes on
            else:
                fix = next((x for x in after if _FIX.search(x) and p.about(x)), None)
            if p.fix is None and fix:
                p.fix = Quote("assistant", fix, seq)
        talk = [ln.words for ln in found if ln.kind in (Kind.REST, Kind.DECIDING, Kind.SPECIFIC)]
        reason = reason_after(text)
        self.advice = [Quote("assistant", x if _REASON.search(x) or not reason else f"{x} {reason}", seq)
                       for x in talk if _ADVISES.search(x)][:4]
        for ln in found:
            if ln.who == "assistant did":
                made = _CANVAS.match(ln.words) or _WRITE.match(ln.words)
                if made:
                    self._name(made.group(1))
        whole = assistant.code_and_said(text)
        for name in artifact_names(whole):
            self._name(name)
        for lead in [b.lead for b in lists.code_blocks(whole)] + [x.lead for x in lists.lists(whole)]:
            for name in _FILE.findall(lead):
                self._name(name)
            here = _HERE_IS.match(lead.strip("*` "))
            if here and not _FILE.search(lead):
                self._name(here.group(1).strip())

    def _tool(self, seq: int, text: str) -> None:
        self._age()
        errors = [ln.words for ln in role_lines("tool", text) if ln.kind is Kind.TOOL_ERROR and _ERROR_LINE.search(ln.words)]
        if errors and len(self.problems) < 20:
            self._problem(_Problem(Quote("tool", errors[0], seq), content_words(errors[0]), left=FOLLOW))

    def _problem(self, problem: _Problem) -> None:
        self.problems.append(problem)
        self.open_problems.append(problem)

    def _age(self) -> None:
        for p in self.open_problems:
            p.left -= 1
        self.open_problems = [p for p in self.open_problems if p.left > 0]

    def _name(self, name: str) -> None:
        name = name.strip("`'\" ")
        if name and name not in self.names:
            self.names[name] = len(self.names)

    # ------------------------------------------------------------------------------------------- choosing
    def main_problem(self) -> _Problem | None:
        """The problem a reader most needs: one the user met whose cause an answer named (an error they pasted
        before words that say something went wrong), the first such."""
        if not self.problems:
            return None
        return max(self.problems, key=lambda p: (p.error.who == "user", bool(p.told()), p.pasted, len(p.told()),
                                                 -p.error.seq))

    def finished(self) -> list[Quote]:
        """What the user said was finished, at most ``DONE``: the latest that names a version (a release) and the
        latest other, in chat order."""
        versioned = [q for q in self.done if _VERSION.search(q.words)][-1:]
        other = [q for q in self.done if q not in versioned][-(DONE - len(versioned)):]
        return sorted(versioned + other, key=lambda q: q.seq)

    def chosen_decisions(self) -> list[tuple[Quote, Quote | None]]:
        """The decisions a brief quotes, each with the advice that gave its reason: the user's own first (with a
        reason first), then the assistant's advice that gave one; in chat order."""
        ranked = sorted(self.decisions, key=lambda d: (-d[0], d[1].seq))[:DECISIONS]
        return [(q, why) for _, q, why in sorted(ranked, key=lambda d: d[1].seq)]


def render(material: Material, about: str, tokenizer: Tokenizer, budget: int = BRIEF_TOKENS) -> str:
    """The brief's text: ``about`` (one line), then what was decided, the main problem and
    what followed it, what was made and where it ended. The ending is always kept, last; the others are
    taken while they fit the budget in ``PRIORITY`` order and shown in the order of ``SHOWN``."""
    first = material.first_request
    lines = [about.strip() or (f"Asked: {first.shown(tokenizer)}" if first else "(no text)")]
    ended = _ended(material, tokenizer)
    parts: dict[str, str] = {}
    shorter: dict[str, str] = {}
    """A line's shorter form, tried when the whole line does not fit (one decision of two)."""
    decisions = material.chosen_decisions()
    if decisions:
        parts["decided"] = "Decided: " + " · ".join(
            q.shown(tokenizer) + (f" (why: {why.shown(tokenizer)})" if why else "") for q, why in decisions)
        one, why_one = max(decisions, key=lambda d: d[1] is not None)
        shorter["decided"] = "Decided: " + one.shown(tokenizer) + (
            f" (why: {why_one.shown(tokenizer)})" if why_one else "")
    problem = material.main_problem()
    if problem is not None:
        told = problem.told()
        if not told and problem.reply is not None and problem.about(problem.reply.words):
            told = [problem.reply]
        parts["problem"] = f"Problem: {problem.error.shown(tokenizer)}" + "".join(f" → {q.shown(tokenizer)}"
                                                                                 for q in told)
        if len(told) > 1:
            shorter["problem"] = f"Problem: {problem.error.shown(tokenizer)} → {told[-1].shown(tokenizer)}"
    names = sorted(material.names, key=material.names.__getitem__)[:NAMES]
    done = " · ".join(q.shown(tokenizer) for q in material.finished())
    if names or done:
        parts["made"] = (f"{WRITTEN} " + ", ".join(names) + ("; " if names and done else "")
                         + (f"done: {done}" if done else ""))
    used = tokenizer.count("\n".join(lines + [ended] if ended else lines))
    kept: dict[str, str] = {}
    for key in PRIORITY:
        for part in (parts.get(key), shorter.get(key)):
            cost = tokenizer.count(part) + 1 if part else budget
            if used + cost <= budget:
                kept[key] = part or ""
                used += cost
                break
    lines += [kept[k] for k in SHOWN if k in kept]
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
    answer = (f' → assistant: "{clip_sentence(material.answer.words, ANSWER_QUOTE, tokenizer)}"' if material.answer
              else " → not answered")
    closing = (f' · then user: "{clip_sentence(material.closing.words, CLOSING_QUOTE, tokenizer)}"'
               if material.closing else "")
    return f"Ended: {request.shown(tokenizer)}{answer}{closing}"


SAME_WORDS = 2
"""Content words an advice must share with a decision to be its reason (one alone, "price", names no choice)."""


def _reason_for(decision: str, advice: list[Quote]) -> Quote | None:
    """The advice that gave ``decision`` its reason: the one naming most of what was chosen, and at least
    ``SAME_WORDS`` of its words (all of them when the decision names fewer); for a decision that names nothing
    ("10 it is", "B it is"), the first advice of the answer it replies to."""
    chosen = content_words(decision)
    if not chosen:  # "10 it is": a choice named only by the answer it replies to, whose advice is its reason
        return advice[0] if advice else None
    need = min(SAME_WORDS, len(chosen))
    scored = [(len(chosen & content_words(a.words)), a) for a in advice]
    best = max(scored, key=lambda x: x[0], default=None)
    return best[1] if best is not None and best[0] >= need else None


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
ABOUT_LEAST = 6
"""An about line of fewer words says too little: the chat's first request is shown instead."""
ABOUT_WORDS = 40
"""An about line is its first sentence, cut to this many words ("…")."""
FIELD = re.compile(r"^\W*(title|about)\W*[:—-]\s*(.+)$", re.I)
"""A "Title:" or "About:" line of the model's answer."""


def answer_fields(answer: str) -> tuple[str, str]:
    """(title, about) of the model's answer: its "Title:" and "About:" lines, else its first two lines."""
    found: dict[str, str] = {}
    plain = []
    for ln in answer.splitlines():
        if not ln.strip():
            continue
        m = FIELD.match(ln)
        if m:
            found.setdefault(m.group(1).lower(), m.group(2).strip().strip('"*').strip())
        else:
            plain.append(ln.strip().strip('"*').strip())
    title = found.get("title") or (plain.pop(0) if plain else "")
    about = found.get("about") or (plain.pop(0) if plain else "")
    return title, about


def about_sentence(about: str) -> str:
    """An about line as kept: its first sentence, at most ``ABOUT_WORDS`` words; "" for one that says too little
    to be one ("Solo founder here.")."""
    words = first_sentence(about).split()
    if len(words) < ABOUT_LEAST:
        return ""
    return " ".join(words[:ABOUT_WORDS]) + ("…" if len(words) > ABOUT_WORDS else "")


_LAYOUT = re.compile(r"^\W*(?:asked|steps|problem|decided|made|written in the chat|ended)\s*:|\b(?:user|assistant|tool): [\"“]", re.I)


def laid_out(answer: str) -> bool:
    """Whether a title or about line holds the brief's own layout (a "Decided:" label, a ``user: "…"`` quote): the
    material written back, not the model's words."""
    return bool(_LAYOUT.search(answer))


def about_line(text: str) -> str:
    """The brief's first line (what the sessions list shows)."""
    return text.split("\n", 1)[0]
