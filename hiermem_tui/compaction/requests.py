"""What the summariser is given for one summary: built from the store, honouring the marks.

One place builds every request, so a leaf pass, a condensation, a re-summarise and a repair
give a model exactly the same kind of input:

* leaf: the chunk's episodes minus the *excluded* ones, the *pinned* ones to carry verbatim,
  and the previous active leaf's text as context (the prompt clips it);
* condensed: the source summaries' own text (their pinned blocks are taken off, because the
  condensed summary carries every pin under it once, verbatim, itself);
* a session's brief: what its episodes offer a brief (``summarize/brief.py``), read in one pass, and the
  texts of its summaries at one level (``brief_level``), which a model that writes reads too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..store import Episode, Store, Summary, parse_iso
from ..store.models import synthetic_stamp
from ..summarize.brief import LEVEL, Material
from ..summarize.summariser import strip_pinned
from ..summarize.types import SourceItem, SummaryRequest

def episode_item(ep: Episode) -> SourceItem:
    when = parse_iso(ep.created_at)
    return SourceItem("episode", ep.content, ep.tokens, when, when, role=ep.role, label=f"#{ep.seq}",
                      synthetic_time=ep.synthetic_time)


def summary_item(s: Summary, text: str | None = None) -> SourceItem:
    """A summary as a condensed summary's source. The times of an undated chat (a ShareGPT export) are the
    store's own: flagged, so no prompt shows them."""
    body = strip_pinned(s.content if text is None else text)
    return SourceItem("summary", body, s.tokens, parse_iso(s.start_at), parse_iso(s.end_at), depth=s.depth,
                      label=s.id, synthetic_time=synthetic_stamp(s.start_at) and synthetic_stamp(s.end_at),
                      span=(s.first_seq, s.last_seq))


def brief_material(store: Store, session_id: str, ahead: BriefReading | None = None, *,
                   summaries: bool = False) -> Material:
    """What a session's brief is made of: every episode read once, in order, a page at a time (the user's
    excluded episodes left out, as a summary leaves them out). ``ahead``: what was read of it while the model
    answered, finished here; read anew when the session changed since (an episode or a mark more).
    ``summaries``: also the texts of its summaries at :func:`brief_level`, which only a model that writes the
    brief reads (``brief_writes.py``)."""
    if ahead is not None and ahead.session_id == session_id and ahead.fresh(store):
        while ahead.step(store):
            pass
        material = ahead.material
    else:
        excluded = _excluded(store, session_id)
        material = Material().read((ep.seq, episode_item(ep)) for ep in store.episodes.each(session_id)
                                   if ep.seq not in excluded)
    if summaries:  # only a model that writes the brief reads them
        material.summaries = [strip_pinned(s.content) for s in brief_level(store, session_id)]
    return material


def brief_level(store: Store, session_id: str) -> list[Summary]:
    """The finest level of the session's summary tree that has at most ``LEVEL`` summaries, in order: its
    roots, each condensed one opened into its sources while the level stays within ``LEVEL`` (when the roots
    alone are more, ``LEVEL`` of them spread evenly, the first and last kept)."""
    level = store.dag.top(session_id)
    n = 0
    while n < len(level):  # a summary that cannot open now cannot later (the level only grows): one read each
        below = store.dag.children(level[n].id) if level[n].depth > 0 else []
        if below and len(level) - 1 + len(below) <= LEVEL:
            level[n:n + 1] = below  # its sources are looked at next
        else:
            n += 1
    if len(level) > LEVEL:
        level = [level[round(k * (len(level) - 1) / (LEVEL - 1))] for k in range(LEVEL)]
    return level


def _excluded(store: Store, session_id: str) -> frozenset[int]:
    return frozenset(seq for seq, mark in store.marks.of(session_id, 0, 1 << 62).items() if mark == "exclude")


def _episodes(store: Store, session_id: str) -> int:
    session = store.sessions.get(session_id)
    return session.episodes if session is not None else 0


BRIEF_STEP = 8
"""Episodes a brief's reading ahead takes at a time (an answer that arrives waits for one step at most)."""


@dataclass
class BriefReading:
    """A session's brief material read ahead, a few episodes at a time, while the model answers the pass's
    calls: what :func:`brief_material` would read, as long as the session has the same episodes and marks."""

    session_id: str
    episodes: int
    marks: Mapping[int, str]
    material: Material = field(default_factory=Material)
    after: int = -1
    done: bool = False

    @classmethod
    def start(cls, store: Store, session_id: str) -> BriefReading:
        return cls(session_id, _episodes(store, session_id), store.marks.of(session_id, 0, 1 << 62))

    def fresh(self, store: Store) -> bool:
        """The session is as it was when the reading began."""
        return (_episodes(store, self.session_id) == self.episodes
                and store.marks.of(self.session_id, 0, 1 << 62) == self.marks)

    def step(self, store: Store) -> bool:
        """Read the next few episodes; False once every one is read."""
        if self.done:
            return False
        page = store.episodes.page(self.session_id, after_seq=self.after, limit=BRIEF_STEP)
        if not page:
            self.done = True
            return False
        excluded = {seq for seq, mark in self.marks.items() if mark == "exclude"}
        self.material.read((ep.seq, episode_item(ep)) for ep in page if ep.seq not in excluded)
        self.after = page[-1].seq
        return True


def _pins(store: Store, session_id: str, first: int, last: int,
          marks: Mapping[int, str] | None = None) -> tuple[SourceItem, ...]:
    known = store.marks.of(session_id, first, last) if marks is None else marks
    pins = [seq for seq, mark in known.items() if mark == "pin"]
    out = []
    for seq in pins:
        ep = store.episodes.at(session_id, seq)
        if ep is not None:
            out.append(episode_item(ep))
    return tuple(out)


def leaf_request(store: Store, session_id: str, first: int, last: int, target: int) -> SummaryRequest:
    """The request for a leaf over episodes ``first..last``."""
    episodes = store.episodes.range(session_id, first, last)
    marks = store.marks.of(session_id, first, last)
    items = [episode_item(e) for e in episodes if marks.get(e.seq) != "exclude"]
    return SummaryRequest(0, items, target, leaf_prior(store, session_id, first),
                          pinned=_pins(store, session_id, first, last, marks))


def leaf_prior(store: Store, session_id: str, first: int) -> str | None:
    """A leaf's context: the text of the active leaf before episode ``first``, without its pinned block."""
    prior = store.dag.leaf_before(session_id, first)
    return strip_pinned(prior) if prior is not None else None


def condensed_request(
    store: Store, session_id: str, depth: int, sources: Sequence[SourceItem], first: int, last: int, target: int
) -> SummaryRequest:
    """The request for a depth ``depth`` summary over ``sources`` (covering ``first..last``)."""
    return SummaryRequest(depth, list(sources), target, pinned=_pins(store, session_id, first, last))
