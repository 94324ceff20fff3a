"""Finding summaries that need repair: too few key names kept, fallbacks, missing pins.

``check_session`` measures every active summary of a session against its sources (a
summary made before fidelity or key names were measured is measured now — its own text,
without the "Also mentioned" line earlier versions appended — and the result is stored when
the file is writable), verifies pinned episodes, and lists the summaries worst first.
A summary is *low-fidelity* when it kept under the threshold of its key names (the sources'
most important identifiers, as many as its length can carry: see summarize/fidelity.py).
``repair_trees`` turns what needs repair into the groups the runner re-makes: each
group is the summaries to redo in one tree plus their ancestors, so one commit per tree
keeps every condensed summary consistent with its (new) sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import Store, Summary
from ..fidelity_value import Fidelity
from ..summarize.fidelity import key_count
from ..summarize.summariser import measure_against, strip_pinned
from .requests import episode_item, summary_item


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One summary's fidelity, as ``check`` reports it: the stored value (or one measured now)
    and the pinned episodes it misses."""

    summary: Summary
    fidelity: Fidelity
    pins_missing: tuple[str, ...]

    def needs_repair(self, below: float) -> bool:
        return self.summary.tier == "fallback" or self.fidelity.low(below) or bool(self.pins_missing)

    def as_json(self) -> dict[str, Any]:
        """The ``check --json`` element (ARCHITECTURE §6): exactly these keys."""
        s, fid = self.summary, self.fidelity
        return {
            "summary_id": s.id,
            "depth": s.depth,
            "tier": s.tier,
            "identifiers": fid.identifiers,
            "kept": fid.kept,
            "retention": round(fid.retention, 4),
            "lost": list(fid.lost),
            "key_retention": round(fid.key_retention, 4),
        }


OLD_GUARD_LINE = "\nAlso mentioned: "
"""The line versions before schema 4 appended to a lossy summary's text (now: keywords)."""


def own_text(content: str) -> str:
    """A summary's own words: without its pinned block and an old guard's "Also mentioned" line."""
    text = strip_pinned(content)
    at = text.rfind(OLD_GUARD_LINE)
    return text[:at] if at >= 0 and "\n" not in text[at + 1 :] else text


def measure_summary(store: Store, s: Summary) -> Fidelity:
    """``s`` against what its summariser was given (excluded episodes left out), judged on as
    many key names as a summary of its length can carry."""
    if s.kind == "leaf":
        return measure_text(store, s.session_id, s.content, s.tokens, episode_range=(s.first_seq, s.last_seq))
    return measure_text(store, s.session_id, s.content, s.tokens, sources=store.dag.children(s.id))


def measure_text(
    store: Store, session_id: str, content: str, tokens: int, *,
    episode_range: tuple[int, int] | None = None, sources: Sequence[Summary] = (),
) -> Fidelity:
    """A summary's text (``tokens`` long) against the episodes ``episode_range`` (a leaf; excluded
    ones left out) or the summaries ``sources`` (a condensed one), before or after it is stored:
    an import measures what another tool wrote the same way ``check`` measures ours."""
    if episode_range is not None:
        first, last = episode_range
        marks = store.marks.of(session_id, first, last)
        items = [episode_item(e) for e in store.episodes.range(session_id, first, last)
                 if marks.get(e.seq) != "exclude"]
    else:
        items = [summary_item(k) for k in sources]
    return measure_against(own_text(content), items, key=key_count(tokens))


def pins_missing(store: Store, s: Summary) -> tuple[str, ...]:
    """Labels (``#12``) of pinned episodes under ``s`` whose text ``s`` does not carry verbatim."""
    marks = store.marks.of(s.session_id, s.first_seq, s.last_seq)
    out = []
    for seq, mark in marks.items():
        if mark != "pin":
            continue
        ep = store.episodes.at(s.session_id, seq)
        if ep is not None and ep.content not in s.content:
            out.append(f"#{seq}")
    return tuple(out)


def check_summary(store: Store, s: Summary, *, save: bool = True) -> CheckRow:
    fid = s.fidelity
    if fid is None or fid.key is None:  # made before fidelity, or key names, were measured
        fid = measure_summary(store, s).bounded()
        if save and not store.readonly:
            store.dag.set_fidelity(s.id, fid)
    return CheckRow(s, fid, pins_missing(store, s))


def check_session(store: Store, session_id: str, *, below: float | None = None, save: bool = True) -> list[CheckRow]:
    """Every active summary of the session, worst first (by key names kept, then identifiers);
    with ``below``, only those keeping under that share of their key names (or fallbacks, or
    missing a pin)."""
    rows = [check_summary(store, s, save=save) for s in store.dag.summaries(session_id)]
    if below is not None:
        rows = [r for r in rows if r.needs_repair(below)]
    rows.sort(key=lambda r: (r.fidelity.key_retention, r.fidelity.retention, r.summary.tier != "fallback", r.summary.depth,
                             r.summary.first_seq))
    return rows


def _ancestors(store: Store, s: Summary, cache: dict[str, Summary]) -> list[Summary]:
    out = []
    cur = s
    while cur.parent_id is not None:
        parent = cache.get(cur.parent_id) or store.dag.get(cur.parent_id)
        if parent is None:
            break
        cache[parent.id] = parent
        out.append(parent)
        cur = parent
    return out


def repair_trees(store: Store, targets: Iterable[Summary]) -> list[list[Summary]]:
    """Group ``targets`` by the tree they are in, each group with every ancestor added, oldest
    tree first. Re-making a group bottom-up and committing it at once keeps the DAG valid."""
    cache: dict[str, Summary] = {}
    trees: dict[str, dict[str, Summary]] = {}
    for s in targets:
        chain = [s, *_ancestors(store, s, cache)]
        root = chain[-1]
        trees.setdefault(root.id, {}).update({n.id: n for n in chain})
    groups = [list(nodes.values()) for nodes in trees.values()]
    groups.sort(key=lambda g: min(n.first_seq for n in g))
    return groups


def repair_targets(store: Store, session_id: str, below: float) -> list[Summary]:
    """Active summaries of the session that need repair at threshold ``below``."""
    return [r.summary for r in check_session(store, session_id, below=below)]
