"""Finding summaries that need repair: low identifier retention, fallbacks, missing pins.

``check_session`` measures every active summary of a session against its sources (a
summary made before fidelity was measured is measured now, and the result is stored when
the file is writable), verifies pinned episodes, and lists the summaries worst first.
``repair_trees`` turns what needs repair into the groups the runner re-makes: each
group is the summaries to redo in one tree plus their ancestors, so one commit per tree
keeps every condensed summary consistent with its (new) sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..store import Store, Summary
from ..summarize.fidelity import MAX_STORED, Fidelity
from ..summarize.summariser import measure_against, strip_pinned
from .requests import episode_item, summary_item


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One summary's fidelity, as ``check`` reports it."""

    summary: Summary
    identifiers: int
    kept: int
    lost: tuple[str, ...]
    novel: tuple[str, ...]
    pins_missing: tuple[str, ...]

    @property
    def retention(self) -> float:
        return self.kept / self.identifiers if self.identifiers else 1.0

    def needs_repair(self, below: float) -> bool:
        return self.summary.tier == "fallback" or self.retention < below or bool(self.pins_missing)

    def as_json(self) -> dict[str, Any]:
        """The ``check --json`` element (DESIGN §6): exactly these keys."""
        s = self.summary
        return {
            "summary_id": s.id,
            "depth": s.depth,
            "tier": s.tier,
            "identifiers": self.identifiers,
            "kept": self.kept,
            "retention": round(self.retention, 4),
            "lost": list(self.lost),
        }


def measure_summary(store: Store, s: Summary) -> Fidelity:
    """``s`` against what its summariser was given (excluded episodes left out)."""
    if s.kind == "leaf":
        marks = store.marks(s.session_id, s.first_seq, s.last_seq)
        items = [episode_item(e) for e in store.episode_range(s.session_id, s.first_seq, s.last_seq)
                 if marks.get(e.seq) != "exclude"]
    else:
        items = [summary_item(k) for k in store.children(s.id)]
    return measure_against(strip_pinned(s.content), items)


def pins_missing(store: Store, s: Summary) -> tuple[str, ...]:
    """Labels (``#12``) of pinned episodes under ``s`` whose text ``s`` does not carry verbatim."""
    marks = store.marks(s.session_id, s.first_seq, s.last_seq)
    out = []
    for seq, mark in marks.items():
        if mark != "pin":
            continue
        ep = store.episode_at(s.session_id, seq)
        if ep is not None and ep.content not in s.content:
            out.append(f"#{seq}")
    return tuple(out)


def check_summary(store: Store, s: Summary, *, save: bool = True) -> CheckRow:
    if s.fid_identifiers is None or s.fid_kept is None:
        fid = measure_summary(store, s)
        if save and not store.readonly:
            store.set_fidelity(s.id, fid.identifiers, fid.kept, fid.lost[:MAX_STORED], fid.novel[:MAX_STORED])
        identifiers, kept, lost, novel = fid.identifiers, fid.kept, fid.lost[:MAX_STORED], fid.novel[:MAX_STORED]
    else:
        identifiers, kept, lost, novel = s.fid_identifiers, s.fid_kept, s.fid_lost, s.fid_novel
    return CheckRow(s, identifiers, kept, tuple(lost), tuple(novel), pins_missing(store, s))


def check_session(store: Store, session_id: str, *, below: float | None = None, save: bool = True) -> list[CheckRow]:
    """Every active summary of the session, worst first; with ``below``, only those under it
    (or fallbacks, or missing a pin)."""
    rows = [check_summary(store, s, save=save) for s in store.summaries(session_id)]
    if below is not None:
        rows = [r for r in rows if r.needs_repair(below)]
    rows.sort(key=lambda r: (r.retention, r.summary.tier != "fallback", r.summary.depth, r.summary.first_seq))
    return rows


def _ancestors(store: Store, s: Summary, cache: dict[str, Summary]) -> list[Summary]:
    out = []
    cur = s
    while cur.parent_id is not None:
        parent = cache.get(cur.parent_id) or store.get_summary(cur.parent_id)
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
