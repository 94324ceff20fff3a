"""The chat's own words that matter most in a chunk, picked without a model ("key lines").

A pipeline: the chunk is cut into steps (``summarize/steps.py``); each message's lines are offered by the
extractor of its role (``user.py``, ``assistant.py``, ``tool.py``; a long text with headings by
``document.py``), each line a quote with who said it and its ``Kind``; the lines are ranked by ``PRIORITY``
(``kinds.py``, which carries the version) and taken under a budget a level at a time across steps, none
repeating another (``select.py``), the stretch's ending first. They are shown in chat order, each answer under
its request (``render``). Over summaries, an outline of them carries their titles and lines up (``outline.py``).
Every line is a quote of the chat (clipped with "…"): nothing here can be a statement the chat did not make.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hiermem_tui.kept import Kept
from hiermem_tui.summarize import steps
from hiermem_tui.summarize.keylines import assistant, outline, tool, user
from hiermem_tui.summarize.keylines.carried import HEAD, UNANSWERED, quoted, split
from hiermem_tui.summarize.keylines.kinds import EXTRACTIVE_VERSION, PRIORITY, QUOTES_VERSION, Kind, Line, Place
from hiermem_tui.summarize.keylines.select import LINE_TOKENS, Levels, answer_bullet, bullet, select
from hiermem_tui.summarize.text import NOT_SAID, closes
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

__all__ = ["EXTRACTIVE_VERSION", "HEAD", "LINE_TOKENS", "PRIORITY", "QUOTES_VERSION", "UNANSWERED", "Kind", "Line",
           "key_lines", "message_lines", "quoted", "role_lines", "split", "step_levels"]


_EXTRACTORS = {"user": user.lines, "assistant": assistant.lines, "tool": tool.lines}
KEPT_CHARS = 8_000_000
"""Characters of messages whose lines are kept per role (``kept.py``): a session's leaves, then its brief."""
KEPT_LONGEST = 400_000
_KEPT: dict[str, Kept[tuple[Line, ...]]] = {role: Kept(KEPT_CHARS, KEPT_LONGEST) for role in _EXTRACTORS}


def role_lines(role: str | None, text: str) -> tuple[Line, ...]:
    """The lines a message of ``role`` offers, by the extractor of its role, as the first of a chunk (each line's
    place in source 0): worked out once for a text and kept (a leaf's lines are picked twice, the brief reads
    every message again, the next summary's lines are read while the model answers)."""
    extract = _EXTRACTORS.get(role or "")
    if extract is None:
        return ()
    kept = _KEPT[role or ""]
    found = kept.get(text)
    if found is None:
        found = kept.put(text, tuple(extract(text, 0)))
    return found


def message_lines(source: SourceItem, index: int) -> list[Line]:
    """The lines one message offers, by the extractor of its role (``index``: its place in the chunk)."""
    found = role_lines(source.role, source.text)
    if index == 0:
        return list(found)
    return [Line(ln.kind, (index, ln.place[1]), ln.who, ln.words) for ln in found]


def step_levels(items: Sequence[SourceItem], base: int) -> Levels:
    """A step's lines by level of ``PRIORITY``; of its answers' first and last sentences, only its last
    answer's (what the step came to)."""
    found = [ln for k, s in enumerate(items) for ln in message_lines(s, base + k)]
    ends = [ln.place[0] for ln in found if ln.kind is Kind.ANSWER_ENDS]
    found = [ln for ln in found if ln.kind is not Kind.ANSWER_ENDS or ln.place[0] == ends[-1]]
    levels: Levels = [[] for _ in PRIORITY.levels]
    for ln in found:
        level = PRIORITY.level(ln.kind)
        if level is not None:
            levels[level].append(ln)
    return levels




def requests(sources: Sequence[SourceItem]) -> list[int]:
    """The indexes of the user messages that say something in words (not an agent's markup)."""
    return [i for i, s in enumerate(sources) if s.role == "user" and not NOT_SAID.match(s.text) and len(s.text.split()) >= 2]


def asking(sources: Sequence[SourceItem]) -> list[int]:
    """Of ``requests``, those that ask or decide: not a closing "thanks, that's it" (``text.closes``)."""
    return [i for i in requests(sources) if not closes(sources[i].text)]


def ending(sources: Sequence[SourceItem], per_step: Sequence[Levels]) -> tuple[list[Line], bool]:
    """How a stretch ends: its last request's first line and the first line of what answered it (a list or a
    code block, else the answer's first sentence), and whether it went unanswered within the stretch. A closing
    "thanks, that's it" is not a request."""
    asked = asking(sources)
    if not asked:
        return [], False
    last = asked[-1]
    found = [ln for levels in per_step for level in levels for ln in level if ln.place[0] >= last]
    request = sorted((ln for ln in found if ln.place[0] == last and ln.kind is Kind.USER_OPENING), key=lambda ln: ln.place)
    answers = [ln for ln in found if ln.place[0] > last and ln.who == "assistant"]
    if not answers:
        return request[:1], not any(s.role == "assistant" for s in sources[last + 1:])
    by = {Kind.LIST: 0, Kind.CODE: 0, Kind.ANSWER_ENDS: 1}
    answer = sorted((ln for ln in answers if ln.kind in by), key=lambda ln: (by[ln.kind], ln.place))
    return request[:1] + answer[:1], False


def render(picked: Sequence[tuple[Place, str, str]], sources: Sequence[SourceItem], unanswered: bool) -> list[str]:
    """The lines in chat order, each request's answer under it: a line is indented under the request before it
    when that request is shown (the assistant's words without their speaker, ``answer_bullet``); ``UNANSWERED``
    under the last request when nothing answered it."""
    asked = requests(sources)
    shown = {place[0] for place, who, _ in picked if who == "user"}
    out = []
    for place, who, words in picked:
        before = [r for r in asked if r <= place[0]]
        under = bool(before) and before[-1] in shown and not (who == "user" and place[0] == before[-1])
        out.append(answer_bullet(who, words) if under else bullet(who, words))
    last = asking(sources)
    if unanswered and last and last[-1] in shown:
        at = max(n for n, (place, _, _) in enumerate(picked) if place[0] <= last[-1])
        out.insert(at + 1, "  - " + UNANSWERED)
    return out


def key_lines(sources: Sequence[SourceItem], budget: int, tokenizer: Tokenizer, *, keep: str = "") -> str:
    """The chat's key lines in at most ``budget`` tokens, bulleted, in chat order, each answer under its request,
    the stretch's last request with what answered it (or ``UNANSWERED``).

    Over summaries (a condensed summary's sources), an outline of them (``outline.py``). ``keep``: key lines an
    earlier call picked in a smaller budget (a leaf's title was asked of them), taken first, so the larger
    budget only adds lines. The last few answers are kept (the next summary's lines are picked while the model
    answers the current one)."""
    return _key_lines(tuple(sources), budget, tokenizer, keep)


@functools.lru_cache(maxsize=16)
def _key_lines(sources: tuple[SourceItem, ...], budget: int, tokenizer: Tokenizer, keep: str) -> str:
    if any(s.kind == "summary" for s in sources):
        return outline.outline(sources, budget, tokenizer, keep=keep)
    per_step = [step_levels(st.items(sources), st.first) for st in steps.split(sources)]
    first, unanswered = ending(sources, per_step)
    room = budget - (tokenizer.count("  - " + UNANSWERED) + 1 if unanswered else 0)
    picked = select(per_step, room, tokenizer, keep=quoted(keep), first=first)
    lines = render(picked, sources, unanswered)
    while lines and tokenizer.count("\n".join(lines)) > budget:
        lines.pop(-2 if lines[-1].endswith(UNANSWERED) and len(lines) > 1 else -1)
    return "\n".join(lines)
