"""Key lines over summaries: an outline of a condensed summary's sources.

Each source is a heading — its range and its title (what a model titled it, the line before ``HEAD``) — with
the few of its quoted lines that matter most under it. Every source's heading comes first, then the last
source's ending (its last request and what answered it, or that nothing did), then the sources' lines a rank
at a time across sources (``carried.py``), so each source gets its share, within the budget. The outline is
shown in the sources' order.
"""

from __future__ import annotations

from collections.abc import Sequence

from hiermem_tui.summarize.keylines import carried
from hiermem_tui.summarize.keylines.kinds import Kind, Line
from hiermem_tui.summarize.keylines.select import Levels, bullet, select
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer

from hiermem_tui.summarize.keylines.carried import UNANSWERED

TITLE_WORDS = 16
"""A source's title in its heading is cut to this many words."""


def heading(source: SourceItem) -> str:
    """A source's heading: its range ("#12–40") and its title, either when it has one ("" when neither)."""
    span = f"#{source.span[0]}–{source.span[1]}" if source.span else ""
    words = carried.title(source.text).split()
    title = " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")
    shown = f"{span}: {title}" if span and title else span or title
    return f"- {shown}" if shown else ""


def _ending(source: SourceItem, index: int) -> tuple[list[Line], bool]:
    """A source's ending as it quotes it: its last request and the most telling line of what answered it (or
    that nothing did)."""
    lines = carried.quoted_lines(source.text)
    asked = [n for n, (who, _words) in enumerate(lines) if who == "user"]
    if not asked:
        return [], False
    n = asked[-1]
    first = [Line(Kind.REST, (index, n), "user", lines[n][1])]
    after = lines[n + 1:]
    if after and after[0][1] == UNANSWERED:
        return first, True
    replies = [(carried.rank(k, w, t), k, w, t) for k, (w, t) in enumerate(after, n + 1) if w not in ("user", "")]
    if not replies:
        return first, False
    _, k, who, words = min(replies)
    return first + [Line(Kind.REST, (index, k), who, words)], False


def outline(sources: Sequence[SourceItem], budget: int, tokenizer: Tokenizer, *, keep: str = "") -> str:
    """The outline of ``sources`` in at most ``budget`` tokens (see the module docstring); "" when no source
    quotes anything (summaries made before key lines: the digest is their first and last sentences). A source
    with neither range nor title has no heading: its lines stand on their own."""
    if not any(carried.quoted(s.text) for s in sources):
        return ""
    heads = [heading(s) for s in sources]
    room = budget - sum(tokenizer.count(h) + 1 for h in heads if h)
    per_source: list[Levels] = [carried.levels(s, k) for k, s in enumerate(sources)]
    first, unanswered = _ending(sources[-1], len(sources) - 1) if sources else ([], False)
    if unanswered:
        room -= tokenizer.count("  - " + UNANSWERED) + 1
    if room <= 0:
        return "\n".join(heads)
    picked = select(per_source, room, tokenizer, keep=carried.quoted(keep), first=first)
    by_source: dict[int, list[str]] = {}
    for (k, _n), who, words in picked:
        by_source.setdefault(k, []).append(("  " if heads[k] else "") + bullet(who, words))
    out = []
    for k, head in enumerate(heads):
        out += [head] if head else []
        out += by_source.get(k, [])
    if unanswered and first:
        out.append(("  " if heads[-1] else "") + "- " + UNANSWERED)
    shown = {h for h in heads if h}
    while len(out) > len(shown) and tokenizer.count("\n".join(out)) > budget:
        drop = max(n for n, ln in enumerate(out) if ln not in shown and not ln.endswith(UNANSWERED))
        del out[drop]
    return "\n".join(out)
