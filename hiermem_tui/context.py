"""What a model would be given from a session now: the DAG's top summaries and the raw tail.

The full context is every *root* of the session's forest (an active summary with no active
parent), plus every episode under no active leaf (the fresh tail, and any gap a leaf pass
left), in episode order. Together they cover each episode of the session exactly once.

When a token budget is too small for all of it, the context is the **newest part that
fits**: items are taken from the end (the raw tail first, newest episode first, then the
most recent summaries) until the next older one would not fit; that one and everything
older are left out, and :class:`ContextView` says what (how many items, which episodes,
how many tokens). The context never has a hole in the middle: a model reading it sees a
contiguous stretch of the conversation, the most recent one.

When even the newest item is larger than the budget, it comes alone, **clipped**: the head of
its text that fits, cut after a word where one ends near the cut, marked with "…" where it was
cut (:func:`shown_text`), its item saying so (``clipped``, and ``full_tokens`` beside the
``tokens`` it keeps). A non-empty session never gives an empty context under a budget that can
hold a token; a budget of 0 asks for nothing and gets nothing (``left_out`` says what there is).

Tokens are the stored counts of each summary and episode (cl100k_base); the short headers
a rendering adds are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from .store import StoreError

if TYPE_CHECKING:
    from .store import Store
    from .tokens import Tokenizer

_EPISODE_PAGE = 1000


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One block of the context: a root summary, or one raw episode."""

    kind: Literal["summary", "episode"]
    id: str
    depth: int | None
    first_seq: int
    last_seq: int
    tokens: int
    start_at: str
    end_at: str
    role: str | None = None
    tier: str | None = None
    full_tokens: int | None = None
    """A clipped item's whole size (``tokens`` is what it keeps); None when it is whole."""
    clip_chars: int | None = None
    """Characters of its text a clipped item keeps."""

    @property
    def clipped(self) -> bool:
        return self.clip_chars is not None

    def as_json(self) -> dict[str, Any]:
        """The ``context --json`` item (ARCHITECTURE §6): its keys, then ``clipped`` and ``full_tokens``."""
        return {"kind": self.kind, "id": self.id, "depth": self.depth, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "tokens": self.tokens, "clipped": self.clipped,
                "full_tokens": self.tokens if self.full_tokens is None else self.full_tokens}


@dataclass(frozen=True, slots=True)
class ContextView:
    session_id: str
    budget: int | None
    """Token budget asked for (None: no limit)."""
    items: tuple[ContextItem, ...]
    """What the model is given, oldest first."""
    left_out: tuple[ContextItem, ...] = ()
    """Older items that did not fit the budget, oldest first (empty when everything fits)."""

    @property
    def total_tokens(self) -> int:
        return sum(i.tokens for i in self.items)

    @property
    def left_out_tokens(self) -> int:
        return sum(i.tokens for i in self.left_out)

    @property
    def clipped(self) -> ContextItem | None:
        """The newest item when it was clipped to fit the budget (then it is the only item)."""
        return self.items[-1] if self.items and self.items[-1].clipped else None

    @property
    def complete(self) -> bool:
        """Every episode of the session is covered whole (nothing was left out nor clipped)."""
        return not self.left_out and self.clipped is None

    def as_json(self) -> dict[str, Any]:
        """``context --json`` (ARCHITECTURE §6): exactly session, budget, total_tokens, items."""
        return {"session": self.session_id, "budget": self.budget, "total_tokens": self.total_tokens,
                "items": [i.as_json() for i in self.items]}


def context_items(store: Store, session_id: str) -> list[ContextItem]:
    """Every root summary and every episode under no active leaf, in episode order."""
    items: list[ContextItem] = []
    for s in store.dag.top(session_id):
        items.append(ContextItem("summary", s.id, s.depth, s.first_seq, s.last_seq, s.tokens, s.start_at, s.end_at,
                                 tier=s.tier))
    for first, last in store.dag.unsummarised_ranges(session_id):
        after = first - 1
        while after < last:
            rows = store.episodes.headers(session_id, after, last, _EPISODE_PAGE)
            if not rows:
                break
            items.extend(ContextItem("episode", r[0], None, r[1], r[1], r[2], r[3], r[3], role=r[4]) for r in rows)
            after = rows[-1][1]
    items.sort(key=lambda i: (i.first_seq, -(i.depth if i.depth is not None else -1)))
    return items


def fit_budget(items: Sequence[ContextItem], budget: int | None) -> tuple[list[ContextItem], list[ContextItem]]:
    """(kept, left out): the longest run of newest items whose tokens fit ``budget``."""
    if budget is None:
        return list(items), []
    used = 0
    cut = len(items)
    while cut > 0 and used + items[cut - 1].tokens <= budget:
        cut -= 1
        used += items[cut].tokens
    return list(items[cut:]), list(items[:cut])


def build_context(store: Store, session_id: str, budget: int | None = None) -> ContextView:
    """The context a model would be given from ``session_id`` now, within ``budget`` tokens."""
    if budget is not None and budget < 0:
        raise ValueError("the budget must be zero or more tokens")
    if store.sessions.get(session_id) is None:
        raise StoreError(f"no session {session_id!r}")
    with store.db.read_snapshot():
        items = context_items(store, session_id)
    kept, dropped = fit_budget(items, budget)
    if not kept and dropped and budget:  # even the newest is too big: its head, clipped to the budget
        kept, dropped = [clip_item(store, dropped[-1], budget)], dropped[:-1]
    return ContextView(session_id, budget, tuple(kept), tuple(dropped))


def clip_item(store: Store, item: ContextItem, budget: int) -> ContextItem:
    """``item`` keeping the head of its text that fits ``budget`` tokens (:func:`head_within`)."""
    text = next(item_texts(store, [item]))[1]
    head = head_within(store.tokenizer, text, budget)
    return replace(item, tokens=store.tokenizer.count(head), full_tokens=item.tokens, clip_chars=len(head))


def head_within(tokenizer: Tokenizer, text: str, budget: int) -> str:
    """The longest head of ``text`` within ``budget`` tokens, cut after the last word that ends in its
    second half (a cut mid-word reads as a different word), trailing spaces left out."""
    head = tokenizer.clip(text, budget)
    while head and not text.startswith(head):  # a character whose bytes the last token split
        head = head[:-1]
    if len(head) < len(text):
        space = max(head.rfind(" "), head.rfind("\n"))
        if space > len(head) // 2:
            head = head[:space]
    head = head.rstrip()
    while head and (n := tokenizer.count(head)) > budget:  # re-encoded, a head may take a token more
        head = head[: len(head) * budget // n].rstrip()
    return head


def shown_text(item: ContextItem, text: str) -> str:
    """``text`` as the context gives it: a clipped item's head, "…" where it was cut."""
    return text if item.clip_chars is None else text[: item.clip_chars] + "…"


def item_header(item: ContextItem) -> str:
    """The one-line header a rendering puts above each item (times in UTC, as stored)."""
    size = (f"{item.tokens} tokens" if item.full_tokens is None
            else f"the first {item.tokens} of {item.full_tokens} tokens (clipped to the budget)")
    if item.kind == "summary":
        span = f"#{item.first_seq}" if item.first_seq == item.last_seq else f"#{item.first_seq}–{item.last_seq}"
        return (f"## Summary (depth {item.depth}) of episodes {span}, {_when(item.start_at)} → {_when(item.end_at)}"
                f" · {size}")
    return f"## {item.role} · episode #{item.first_seq} · {_when(item.start_at)} · {size}"


def _when(stamp: str) -> str:
    return stamp[:16].replace("T", " ") + " UTC" if len(stamp) >= 16 else stamp


def view_header(view: ContextView) -> str:
    """The first line of a rendering: what this is, its size, and what was left out."""
    budget = "no budget" if view.budget is None else f"budget {view.budget:,}"
    line = (f"# Context of session {view.session_id}: {len(view.items):,} items, {view.total_tokens:,} tokens "
            f"({budget})")
    if view.left_out:
        first, last = view.left_out[0].first_seq, view.left_out[-1].last_seq
        line += (f"; left out to fit: {len(view.left_out):,} older items, episodes #{first}–{last}, "
                 f"{view.left_out_tokens:,} tokens")
    if (clipped := view.clipped) is not None:
        line += f"; the newest item clipped to fit: its first {clipped.tokens:,} of {clipped.full_tokens:,} tokens"
    return line


def item_texts(store: Store, items: Sequence[ContextItem]) -> Iterator[tuple[ContextItem, str]]:
    """Each item with its text, fetched a page at a time (never the whole session at once)."""
    for start in range(0, len(items), 200):
        page = items[start:start + 200]
        texts = store.dag.texts([i.id for i in page if i.kind == "summary"])
        texts.update(store.episodes.texts(i.id for i in page if i.kind == "episode"))
        for item in page:
            yield item, texts.get(item.id, "")


def render_context(store: Store, view: ContextView, mask: Callable[[str], str] | None = None) -> Iterator[str]:
    """The context as text, piece by piece: a header line, then a header and the text of each item;
    each text through ``mask`` when one is given (the TUI's copy and save while it masks secrets)."""
    yield view_header(view) + "\n"
    for item, text in item_texts(store, view.items):
        if mask is not None:
            text = mask(text)  # the whole text, then the cut: a secret the cut falls in is masked first
        yield "\n" + item_header(item) + "\n" + shown_text(item, text).rstrip("\n") + "\n"
