"""Another tool's summary DAG, checked against ours before any of it is written.

lossless-claw and lossless-code keep summaries of the conversations they store, with edges to
what each one covers. Their rules are not ours (ARCHITECTURE §3): a lossless-code cascade condenses
the same summaries again each time a depth fills up, its merges leave overlapping leaves
behind, a damaged file can hold anything. So every summary is checked here, in the order the
store would have written it, against what the store holds plus what this import has already
accepted:

* a **leaf** covers messages that were imported, contiguous in the session, and overlaps no
  other active leaf;
* a **condensed** summary of depth d+1 has sources that were all accepted, are all active and of
  one depth d, lie next to each other (no other active summary of depth d between them), and
  have no active parent yet.

What fails a check is not written and is counted under its reason (``Problems.skip_summary``);
the episodes are imported whatever happens to the summaries. A summary the tool itself replaced
(``ParsedSummary.superseded``) is written as an old version: only its own edges are checked,
and it points at its replacement when that was imported. Accepted summaries go through
``store.dag.write``, which checks the same rules again, with their fidelity measured against
their sources exactly as ``check`` measures ours.

Ids are ``<session id>/<the tool's id>``: importing the source again finds what the first
import wrote and adds only what is new; a summary we re-made since (ours supersedes theirs) is
left as it is, and the tool's later summaries built on it are reported, not forced in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .base import ParsedSummary, Problems

if TYPE_CHECKING:
    from ..store import NewSummary, Store

@dataclass(slots=True)
class _Node:
    """What the checks need to know of one summary: stored, or accepted by this import."""

    depth: int
    first: int
    last: int
    active: bool
    parent: str | None = None


@dataclass(slots=True)
class _Edges:
    """What an accepted summary is written over: an episode range (leaf) or source summaries in
    coverage order (condensed), and the stored summaries it replaces."""

    first: int
    last: int
    sources: list[str] | None = None
    supersede: list[str] = field(default_factory=list)


class _Dag:
    """The session's summaries as the store will hold them once the accepted ones are written."""

    def __init__(self, store: Store, session_id: str, ids: list[str]) -> None:
        self.nodes: dict[str, _Node] = {
            s.id: _Node(s.depth, s.first_seq, s.last_seq, True, s.parent_id) for s in store.dag.spans(session_id)
        }
        self.stored = store.dag.spans_by_id(ids)
        for sid, (span, status) in self.stored.items():
            self.nodes.setdefault(sid, _Node(span.depth, span.first_seq, span.last_seq, status == "active",
                                             span.parent_id))

    def active_at(self, depth: int) -> list[tuple[str, _Node]]:
        return [(sid, n) for sid, n in self.nodes.items() if n.active and n.depth == depth]

    def leaf_clash(self, first: int, last: int, ignore: list[str]) -> bool:
        return any(n.first <= last and n.last >= first for sid, n in self.active_at(0) if sid not in ignore)

    def between(self, depth: int, first: int, last: int) -> int:
        return sum(1 for _, n in self.active_at(depth) if n.first >= first and n.last <= last)

    def add(self, oid: str, p: ParsedSummary, edges: _Edges) -> None:
        """Record a summary just written: what it replaced is no longer active, its sources have a parent."""
        for old in edges.supersede:
            self.nodes[old].active = False
        if not p.superseded:
            for source in edges.sources or []:
                self.nodes[source].parent = oid
        self.nodes[oid] = _Node(p.depth, edges.first, edges.last, not p.superseded)


def load_summaries(store: Store, session_id: str, summaries: list[ParsedSummary], problems: Problems) -> tuple[int, int]:
    """Write the acceptable ones of ``summaries`` (the session's episodes are stored already).
    Returns (written now, written by an earlier import)."""
    from ..store import SummaryWrite

    prefix = f"{session_id}/"
    ours = {p.source_id: prefix + p.source_id for p in summaries}
    dag = _Dag(store, session_id, list(ours.values()))
    seqs = store.episodes.seqs(prefix + key for p in summaries for key in p.episodes)
    replaced_by = {old: p.source_id for p in summaries if not p.superseded for old in p.replaces}
    added = present = 0
    # Each depth in turn, the tool's current summaries before its replaced ones (a replaced
    # summary names its replacement), oldest first: of two rivals, the older one is kept.
    order = sorted(summaries, key=lambda p: (p.depth, p.superseded,
                                             p.created_at.timestamp() if p.created_at else 0.0, p.source_id))
    for p in order:
        oid = ours[p.source_id]
        if oid in dag.stored:
            present += 1
            continue
        checked = _leaf(p, dag, seqs, prefix) if p.kind == "leaf" else _condensed(p, dag, ours)
        if isinstance(checked, str):
            problems.skip_summary(checked)
            continue
        replaces = _replaced_here(p, dag, ours)
        if isinstance(replaces, str):
            problems.skip_summary(replaces)
            continue
        if p.kind == "leaf" and not p.superseded and dag.leaf_clash(checked.first, checked.last, replaces):
            problems.skip_summary("leaf overlapping another leaf")
            continue
        checked.supersede = replaces
        newer = replaced_by.get(p.source_id) if p.superseded else None
        store.dag.write([SummaryWrite(
            _measured(store, session_id, p, oid, checked),
            episode_range=(checked.first, checked.last) if checked.sources is None else None,
            source_ids=checked.sources, supersede=replaces, superseded=p.superseded,
            superseded_by=ours[newer] if newer is not None and ours[newer] in dag.nodes else None,
        )])
        dag.add(oid, p, checked)
        added += 1
    return added, present


def _leaf(p: ParsedSummary, dag: _Dag, seqs: dict[str, int], prefix: str) -> _Edges | str:
    """The episode range a leaf covers, or why it cannot be written."""
    if p.depth != 0:
        return f"leaf at depth {p.depth}"
    if not p.episodes:
        return "leaf without messages"
    found = [seqs.get(prefix + key) for key in p.episodes]
    covered = sorted({seq for seq in found if seq is not None})
    if len(covered) < len(set(p.episodes)):
        return "leaf over messages that were not imported"
    if covered[-1] - covered[0] + 1 != len(covered):
        return "leaf over non-contiguous messages"
    return _Edges(covered[0], covered[-1])


def _condensed(p: ParsedSummary, dag: _Dag, ours: dict[str, str]) -> _Edges | str:
    """The sources of a condensed summary in coverage order, or why it cannot be written."""
    if p.depth < 1:
        return "condensed summary at depth 0"
    ids = list(dict.fromkeys(ours.get(s, "") for s in p.summaries))
    if not ids:
        return "condensed summary without sources"
    known = [(i, n) for i in ids if (n := dag.nodes.get(i)) is not None]
    if len(known) < len(ids):
        return "condensed over a summary that was not imported"
    depths = {n.depth for _, n in known}
    if len(depths) > 1:
        return "condensed over mixed depths"
    below = known[0][1].depth
    if p.depth != below + 1:
        return f"depth {p.depth} over depth-{below} summaries"
    known.sort(key=lambda item: item[1].first)
    first, last = known[0][1].first, known[-1][1].last
    if not p.superseded:
        if any(not n.active for _, n in known):
            return "condensed over summaries replaced since"
        if any(n.parent is not None for _, n in known):
            return "a source is already condensed into another summary"
        if dag.between(below, first, last) != len(known):
            return "condensed over non-contiguous summaries"
    return _Edges(first, last, [i for i, _ in known])


def _replaced_here(p: ParsedSummary, dag: _Dag, ours: dict[str, str]) -> list[str] | str:
    """The summaries an earlier import stored active that ``p`` is the newer version of (its
    write supersedes them), or why it cannot replace them."""
    if p.superseded:
        return []
    out = []
    for old in p.replaces:
        node = dag.nodes.get(ours.get(old, ""))
        if node is None or not node.active:
            continue
        if node.parent is not None:
            return "replaces a summary that is condensed already"
        out.append(ours[old])
    return out


def _measured(store: Store, session_id: str, p: ParsedSummary, oid: str, edges: _Edges) -> NewSummary:
    """The row to write, its fidelity measured against its sources the way ``check`` does."""
    from ..compaction.check import measure_text
    from ..store import IMPORTED_PROMPT, NewSummary, iso
    from ..summarize.fidelity import keywords_for

    tokens = store.tokenizer.count(p.content)
    if edges.sources is None:
        fid = measure_text(store, session_id, p.content, tokens, episode_range=(edges.first, edges.last))
    else:
        sources = [s for s in (store.dag.get(i) for i in edges.sources) if s is not None]
        fid = measure_text(store, session_id, p.content, tokens, sources=sources)
    keywords = keywords_for(fid)
    return NewSummary(
        id=oid, session_id=session_id, depth=p.depth, tier=p.tier, backend=p.backend, model=p.model,
        prompt_version=IMPORTED_PROMPT, content=p.content, tokens=tokens, input_tokens=p.input_tokens,
        output_tokens=p.output_tokens, fidelity=fid, fid_added=bool(keywords),
        keywords=keywords, trimmed=p.trimmed,
        created_at=iso(p.created_at) if p.created_at is not None else None,
    )
