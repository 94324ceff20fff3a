"""The rules that pick a brief's quotes out of one message, each a function of the message's text alone.

* ``ask_of``: the part of a user's message that asks (its last paragraph with a question or a request), so
  a long "update: … one last thing: can you …" is quoted from its request, not cut before it;
* ``answer_gist``: what an answer says it is ("Here's a short, warm decline …", "Fixable. The key is …")
  and its bottom line (a "Total" row), not the first crumbs of its lists;
* ``listed_decisions``: a user's list of verdicts ("- single NAT: no, keeping 3 …"), the decisions they made
  at once with their reasons;
* ``solved``: a user's report that a problem is gone ("reset worked, tests green again"), and ``acted``: what
  they did about it ("replica_3 was deleted on March 24 … Dropping.");
* ``reason_after``: the sentence of an answer that gives the reason for its advice ("Why large is too tight:
  …", "because …");
* ``artifact_names``: the file names a fenced block names on its first line ("# network-notes.md").
"""

from __future__ import annotations

import re

from hiermem_tui.summarize.text import HEADING_MARKS, courtesy, sentences

_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
"""A fenced block (to its end, or the text's end when unclosed)."""
_ASKS = re.compile(r"\?|^\W*(?:(?:one )?(?:last|more|final) (?:thing|question)\W+|also,? |and |so |ok,? |now,? )*"
                   r"(?:can|could|would|will) you\b|^\W*(?:(?:one )?(?:last|more|final) (?:thing|question)\W+|also,? |"
                   r"ok,? |now,? )*(?:please|pls|write|make|draft|add|give|show|help|tell|explain|redo|rework|"
                   r"rewrite|update|turn|put|list|check)\b", re.I)
"""A sentence that asks: a question, or a request ("one last thing: can you …", "write the email")."""


def ask_of(text: str) -> str:
    """The part of a user's message that asks: from the first asking sentence of its last paragraph that
    holds one to that paragraph's end; the whole message when no sentence asks."""
    text = _FENCED.sub("\n\n", text)
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    for para in reversed(paragraphs):
        said = sentences(para)
        at = next((n for n, x in enumerate(said) if _ASKS.search(x)), None)
        if at is not None:
            return " ".join(said[at:])
    return " ".join(sentences(text))


_BOTTOM = re.compile(r"^\W*(?:total|net|grand total|overall|saving|savings|result|bottom line|estimated total)\b",
                     re.I)
"""A table row or line that states an answer's bottom line ("| **Total** | $5,923 | …")."""
GIST_WORDS = 8
"""An answer's opening sentences are taken until they hold this many words ("Fixable." alone says little)."""


def answer_gist(text: str, ask: str = "", news: str = "") -> str:
    """What an answer says it is: its first paragraph of prose that answers — not a reaction to the user's
    ``news`` (what their message said before ``ask``, the request: "Great result, and nice catch …"), not only
    courtesy — from the sentence that presents what it made ("Here's a short, warm decline …") when it or the
    first paragraph has one, a reaction opening it passed over; its opening sentences until they hold
    ``GIST_WORDS`` words (headings, code, lists and quoted blocks left out). Then its bottom-line row or line when
    it has one, outside its code ("total=0" in a script is none)."""
    prose = _FENCED.sub("\n\n", text)
    paragraphs = [p for p in map(_prose_of, re.split(r"\n\s*\n", prose)) if p]
    asked, told = content_words(ask), content_words(news) - content_words(ask)
    first = paragraphs[0] if paragraphs else []
    answering = next((p for p in paragraphs if not _reaction(p, asked, told) and not all(map(_polite, p))), first)
    presents = next((p[n:] for p in (first, answering) for n, x in enumerate(p) if _PRESENTS.match(x)), None)
    chosen = presents or answering
    while len(chosen) > 1 and _REACTS.match(chosen[0]) and not _polite(chosen[1]):
        chosen = chosen[1:]
    opening: list[str] = []
    for x in chosen:
        opening.append(x)
        if sum(len(o.split()) for o in opening) >= GIST_WORDS:
            break
    said = " ".join(opening)
    if said.endswith(":"):  # what it presents, code included ("`table_health.py`:")
        said = f"{said} {_shown_after(text, opening[-1])}".rstrip()
    elif opening and _PRESENTS.match(opening[0]) and len(said.split()) < GIST_WORDS:
        said = f"{said} {_shown_after(prose, opening[-1])}".rstrip()
    bottom = next((_row(ln) for ln in prose.splitlines() if _BOTTOM.match(HEADING_MARKS.sub("", ln.strip("|> *")))),
                  "")
    return said + (f" … {bottom}" if bottom else "")


_PREAMBLE = re.compile(r"^(?:import|from|#!|using|package|require|use)\b")
"""A code block's opening line that only imports: the first line after it is shown instead."""
_MARKUP = re.compile(r"^\s*(?:#+|>|[-*•]|\d+[.)]|\|)?\s*")


def _shown_after(text: str, sentence: str) -> str:
    """The first line of what a sentence ending in ":" (or a short "Here's …") presents ("Here it is, ready to
    paste:" → the PR's title, an email's subject line, a file's first definition), its Markdown taken off; a
    table is left to its bottom line; "" when none follows."""
    at = text.find(sentence.rstrip(":").strip()[-40:])
    if at < 0:
        return ""
    for line in text[at:].splitlines()[1:]:
        if line.lstrip().startswith("|"):
            return ""
        shown = HEADING_MARKS.sub("", _MARKUP.sub("", _MARKUP.sub("", line))).strip().strip("|").strip()
        if shown and not shown.startswith(("```", "---")) and re.search(r"\w", shown) and not _PREAMBLE.match(shown):
            return shown
    return ""


_REACTS = re.compile(r"^\W*(?:nice|great|good|glad|congrat\w*|awesome|excellent|perfect|well done|that'?s (?:a |an )?"
                     r"(?:great|good|clean|solid|nice|excellent)|love (?:it|this|that)|sorry)\b", re.I)
"""The opening of a paragraph that reacts to the user's news ("Great result, and nice catch …")."""


_PRESENTS = re.compile(r"^\W*(?:(?:of course|sure|okay|ok)\W+)?(?:here(?:'s| is| are)|below (?:is|are))\b", re.I)
"""A sentence that presents what the answer made, looked for in its first paragraph (a later "Here's …" is
often a line of what it made)."""


REACTION_SHARES = 2
"""A paragraph that opens with a reaction answers the request only when it names this many of its words."""


def _reaction(paragraph: list[str], asked: set[str], told: set[str]) -> bool:
    """A paragraph that reacts to the user's news rather than answering their request: it opens with a
    reaction, or speaks more of the news than of the request."""
    said = content_words(" ".join(paragraph))
    return (bool(_REACTS.match(paragraph[0])) and len(said & asked) < REACTION_SHARES
            or bool(said & told) and len(said & told) >= len(said & asked))


_SIGN_OFF = re.compile(r"^\W*(?:have (?:a|fun)|enjoy|good luck|safe travels|congrat\w*|best of luck)\b", re.I)


def _polite(sentence: str) -> bool:
    """A sentence that only greets, thanks, offers more or wishes well ("Have a wonderful time in Portugal!"); not
    one that presents what the answer made ("Here's a paste-ready version.")."""
    return not _PRESENTS.match(sentence) and (courtesy(sentence) or bool(_SIGN_OFF.match(sentence)))


def _prose_of(paragraph: str) -> list[str]:
    """The sentences of a paragraph of prose; [] for a heading, a list, a table, a quote or a rule."""
    s = paragraph.strip()
    if not s or s.startswith(("#", "|", ">", "---")) or re.match(r"^(?:[-*•]|\d+[.)])\s", s):
        return []
    return sentences(HEADING_MARKS.sub("", s))


_WORD = re.compile(r"[a-z][a-z0-9_.-]{3,}", re.I)
_PLAIN = frozenset("""that this with from have what your will would could should about there their then them they
just like want need into only also been were when which some more most much make made sure okay yeah thanks going
lets it's that's good great last thing please does doing done each what's here""".split())


def content_words(text: str) -> set[str]:
    """The content words of ``text``: of four letters or more, not plain ones, lower case; a dotted, snake or
    hyphenated name also by its parts ("db.r6g.xlarge" is "xlarge" too)."""
    found = {w.lower().strip(".-") for w in _WORD.findall(text)}
    parts = {x for w in found if any(c in w for c in "._-") for x in re.split(r"[._-]", w) if len(x) >= 4}
    return (found | parts) - _PLAIN


def _row(line: str) -> str:
    cells = [HEADING_MARKS.sub("", c).strip() for c in line.strip().strip(">").strip().strip("|").split("|")]
    return " | ".join(c for c in cells if c)


_VERDICT = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+([^:\n]{2,60}):\s*((?:yes|no|nope|keep(?:ing)?|skip(?:ping)?|"
                      r"drop(?:ping)?|go(?:ing)?|not now|later|done|doing it|defer(?:red)?)\b[^\n]*)", re.I)
"""A list item that gives a verdict on one option ("- single NAT: no, keeping 3. the cross AZ thing kills it")."""
LEAST_VERDICTS = 2
"""Verdicts a user's list must hold to be their decisions."""


def listed_decisions(text: str) -> list[str]:
    """A user's verdicts on several options, each "option: verdict, reason" as written; [] for a message
    with fewer than ``LEAST_VERDICTS``."""
    found = [f"{m.group(1).strip()}: {m.group(2).strip()}" for m in map(_VERDICT.match, text.splitlines()) if m]
    return found if len(found) >= LEAST_VERDICTS else []


_SOLVED = re.compile(r"\b(?:that (?:was it|did it|worked|fixed it)|(?:it |that |this |reset |fix )?works? now|"
                     r"worked|fixed|(?:validate|plan|build|tests?|ci) (?:is |are |was |were )?(?:clean|green|"
                     r"pass(?:es|ed)?)|(?:all )?tests? (?:pass(?:es|ed)?|green)|green again|no (?:more )?errors|"
                     r"resolved|back (?:up|online|to normal)|came back|succeeded|all good)\b", re.I)
_STILL = re.compile(r"\b(?:still|not|never|but|then|again\?|crash\w*|fail\w*|errors?|broke\w*)\b|n't\b", re.I)


def solved(text: str) -> str:
    """The first sentence of a user's message that reports a problem gone ("reset worked, tests green
    again."), or ""."""
    return next((x for x in sentences(text)[:2] if _SOLVED.search(x) and not _STILL.search(x)), "")


_DEEDS = (r"(?:dropp(?:ed|ing)|went with|applied|applying|switched|switching|restarted|rolled back|reverted|removed|"
          r"deleted|replaced|upgraded|downgraded|installed|killed|pinned|bumped|moved|renamed|rebuilt|reset)")
_DID = re.compile(r"^\W*(?:(?:ok|so|then|and|yep|done)\W+)?(?:(?:i|we)(?:'ve| have)?\s+(?:\w+\s+)?)?" + _DEEDS
                  + r"\b", re.I)
"""A sentence that says the user did something: it opens with the deed ("Dropping.", "went with option 1") or
with the user or their team doing it ("we rolled back", "i just reverted"), not "why we deleted it"."""


def acted(text: str) -> str:
    """The last sentence of a user's message that says what they did about a problem ("… Dropping.", "went
    with option 1"), with the sentence before it when that one is short; ""."""
    said = sentences(text)
    for n, x in reversed(list(enumerate(said))):
        if _DID.search(x) and "?" not in x:
            before = said[n - 1] if n and len(x.split()) < 4 and len(said[n - 1].split()) <= 25 else ""
            return f"{before} {x}".strip()
    return ""


_WHY = re.compile(r"\b(?:because|since|so that|which means|due to|to avoid|otherwise)\b", re.I)
_WHY_HEADING = re.compile(r"^\s*#+\s*\**\s*why\b|^\s*\**why\b[^?]*\**:?\s*$", re.I)


def reason_after(text: str) -> str:
    """The sentence of an answer that gives the reason for what it advises: the first point under a "Why …"
    heading, else its first sentence with "because" (or the like); ""."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if _WHY_HEADING.match(line):
            rest = next((x for x in lines[n + 1:] if x.strip()), "")
            found = sentences(HEADING_MARKS.sub("", rest))
            if found:
                return found[0] + (" " + found[1] if len(found) > 1 and len(found[0].split()) < 8 else "")
    prose = _FENCED.sub("\n\n", text)
    return next((x for x in sentences(prose) if _WHY.search(x) and len(x.split()) >= 6), "")


_NAMED = re.compile(r"^\s*(?:#+|//|--|;|/\*)\s*(?:file(?:name)?:\s*)?`?((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{1,5})`?\s*"
                    r"(?:\*/)?\s*$")


def artifact_names(text: str) -> list[str]:
    """The file names fenced blocks of ``text`` name on their first line ("# network-notes.md",
    "// file: main.rs")."""
    out = []
    for m in re.finditer(r"```[^\n]*\n([^\n]*)", text):
        named = _NAMED.match(m.group(1))
        if named:
            out.append(named.group(1))
    return out
