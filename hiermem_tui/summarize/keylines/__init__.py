"""The chat's own words that matter most in a chunk, picked without a model ("key lines").

A pipeline: the chunk is cut into steps (``summarize/steps.py``); each message's lines are offered by the
extractor of its role (``user.py``, ``assistant.py``, ``tool.py``; a long text with headings by
``document.py``), each line a quote with who said it and its ``Kind``; the lines are ranked by ``PRIORITY``
(``kinds.py``, which carries the version) and taken under a budget a level at a time across steps, none
repeating another (``select.py``). Over summaries, the lines they quote are carried up (``carried.py``).
Every line is a quote of the chat (clipped with "…"): nothing here can be a statement the chat did not make.
"""

from __future__ import annotations

from collections.abc import Sequence

from hiermem_tui.summarize import steps
from hiermem_tui.summarize.keylines import assistant, carried, tool, user
from hiermem_tui.summarize.keylines.carried import HEAD, quoted, split
from hiermem_tui.summarize.keylines.kinds import EXTRACTIVE_VERSION, PRIORITY, QUOTES_VERSION, Kind, Line
from hiermem_tui.summarize.keylines.select import LINE_TOKENS, Levels, bullet, select
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

__all__ = ["EXTRACTIVE_VERSION", "HEAD", "LINE_TOKENS", "PRIORITY", "QUOTES_VERSION", "Kind", "Line", "key_lines",
           "message_lines", "quoted", "split", "step_levels"]


def message_lines(source: SourceItem, index: int) -> list[Line]:
    """The lines one message offers, by the extractor of its role (``index``: its place in the chunk)."""
    if source.role == "user":
        return user.lines(source.text, index)
    if source.role == "assistant":
        return assistant.lines(source.text, index)
    if source.role == "tool":
        return tool.lines(source.text, index)
    return []


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


def key_lines(sources: Sequence[SourceItem], budget: int, tokenizer: Tokenizer, *, keep: str = "") -> str:
    """The chat's key lines in at most ``budget`` tokens, bulleted, in chat order.

    Over summaries (a condensed summary's sources), the lines their own quoted blocks hold are carried up.
    ``keep``: lines an earlier call picked in a smaller budget (a leaf's title was asked of them), taken
    first, so the larger budget only adds lines."""
    if any(s.kind == "summary" for s in sources):
        per_step, first = [], 0
        for s in sources:
            per_step.append(carried.levels(s, first))
            first += len(per_step[-1])
    else:
        per_step = [step_levels(st.items(sources), st.first) for st in steps.split(sources)]
    return "\n".join(bullet(who, words) for _place, who, words in select(per_step, budget, tokenizer, keep=keep))
