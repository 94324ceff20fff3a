"""The doctor's checks of one session, from its rows read in one snapshot (``health.py`` runs them).

Why a module of its own: these are ARCHITECTURE §3's invariants said once more over rows that may
have been written by anything (a copy, a sync, another tool), each a plain function of what was
read of the session; :class:`~.health.Health` pages through the sessions, runs them, and adds the
file-wide checks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .schema import KEY_RETENTION

MAX_NAMED = 5
"""Ids named in one problem about many rows (the count says how many in all)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong: ``ids`` are the summaries, episodes or runs it is about (the subject first)."""

    kind: str
    session: str | None
    ids: tuple[str, ...]
    detail: str
    fixable: bool

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "session": self.session, "ids": list(self.ids), "detail": self.detail,
                "fixable": self.fixable}


@dataclass(slots=True)
class _Node:
    """One summary of the session being checked (no text)."""

    id: str
    depth: int
    kind: str
    status: str
    tier: str
    tokens: int
    source_tokens: int
    first: int
    last: int
    start_at: str
    end_at: str
    parent: str | None
    run_id: str | None
    created_at: str
    retention: float | None
    set_aside: bool

    @property
    def active(self) -> bool:
        return self.status == "active"

    def label(self) -> str:
        return f"{'leaf' if self.kind == 'leaf' else f'd{self.depth}'} #{self.first}–{self.last}"


_NODE_SQL = (
    "SELECT id, depth, kind, status, tier, tokens, source_tokens, first_seq, last_seq, start_at, end_at, parent_id, "
    f"run_id, created_at, {KEY_RETENTION}, "
    "coalesce(superseded_by LIKE 'doctor:%', 0) FROM summaries WHERE session_id = ? ORDER BY depth, first_seq, id"
)
"""A session's summaries without their text, shallowest first, in coverage order (the order problems are told in)."""
AGG_COLS = ("episode_count", "token_count", "summary_count", "max_depth", "covered_episodes", "covered_tokens",
             "fallback_count", "top_tokens", "last_summarized_seq", "last_summary_at", "min_retention")


@dataclass(frozen=True, slots=True)
class _LeafFacts:
    """A leaf's edges measured against the episodes at their seqs, in SQL (no row reaches Python)."""

    edges: int
    matching: int
    start_at: str | None
    end_at: str | None
    tokens: int


@dataclass(slots=True)
class _Session:
    """What is read of one session, and the problems found in it."""

    id: str
    conn: sqlite3.Connection
    episodes: int = 0
    tokens: int = 0
    seq_ok: bool = True
    nodes: dict[str, _Node] = field(default_factory=dict)
    leaves: dict[str, _LeafFacts] = field(default_factory=dict)
    edges: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def add(self, kind: str, ids: Sequence[str], detail: str, fixable: bool) -> None:
        self.problems.append(Problem(kind, self.id, tuple(ids), detail, fixable))


def check_session(conn: sqlite3.Connection, session_id: str, aggregates: tuple[Any, ...],
                  runs: Sequence[tuple[Any, ...]]) -> _Session:
    """Read one session (inside the caller's read snapshot) and check it: its summaries' shapes,
    parents and overlaps, its stored ``aggregates`` (:data:`AGG_COLS`) and its ``runs``' counters.
    The session read, with the problems found in ``problems``."""
    s = _Session(session_id, conn)
    _read(s)
    for node in s.nodes.values():
        if node.set_aside:
            continue
        if node.kind == "leaf":
            _check_leaf(s, node)
        else:
            _check_condensed(s, node)
    _check_parents(s)
    _check_overlaps(s)
    _check_aggregates(s, aggregates)
    _check_runs(s, runs)
    return s


def _structural(s: _Session, node: _Node, kind: str, detail: str, ids: Sequence[str] = ()) -> None:
    """A broken shape: fixable (set aside) on an active summary; on a superseded one it is history."""
    if not node.active:
        detail += " (a superseded version: kept as it is)"
    s.add(kind, (node.id, *ids), f"{node.label()}: {detail}", node.active)


_LEAF_SQL = """
    SELECT s.id, count(e.summary_id), coalesce(sum(e.source_type = 'episode' AND ep.id = e.source_id), 0),
           min(ep.created_at), max(ep.created_at), coalesce(sum(ep.tokens), 0)
    FROM summaries s
    LEFT JOIN summary_sources e ON e.summary_id = s.id
    LEFT JOIN episodes ep ON ep.session_id = s.session_id AND ep.seq = s.first_seq + e.position
    WHERE s.session_id = ? AND s.kind = 'leaf' GROUP BY s.id
"""
"""Per leaf: its edges, how many name the episode at their seq (edge ``i`` is episode ``first_seq + i``),
and the time range and tokens of those episodes — one pass over the indexes, in SQL."""


def _read(s: _Session) -> None:
    conn = s.conn
    n, top, tokens = conn.execute(
        "SELECT count(*), coalesce(max(seq), -1), coalesce(sum(tokens), 0) FROM episodes WHERE session_id = ?",
        (s.id,)).fetchone()
    s.episodes, s.tokens = int(n), int(tokens)
    if top != n - 1:  # seqs are unique and ≥ 0 (schema), so this is a gap
        s.seq_ok = False
        expect = 0
        for seq, eid in conn.execute("SELECT seq, id FROM episodes WHERE session_id = ? ORDER BY seq", (s.id,)):
            if seq != expect:
                before = f"#{expect - 1}" if expect else "the start"
                s.add("episode_seq", (eid,), f"episode {eid} has seq #{seq} right after {before}: the session's "
                      "leaves were not checked against its episodes", False)
                break
            expect += 1
    for r in conn.execute(_NODE_SQL, (s.id,)):
        s.nodes[r[0]] = _Node(
            id=r[0], depth=r[1], kind=r[2], status=r[3], tier=r[4], tokens=r[5], source_tokens=r[6], first=r[7],
            last=r[8], start_at=r[9], end_at=r[10], parent=r[11], run_id=r[12], created_at=r[13], retention=r[14],
            set_aside=bool(r[15]))
    for sid, edges, matching, start_at, end_at, leaf_tokens in conn.execute(_LEAF_SQL, (s.id,)):
        s.leaves[sid] = _LeafFacts(edges, matching, start_at, end_at, leaf_tokens)
    for summary_id, pos, kind, source in conn.execute(
        "SELECT e.summary_id, e.position, e.source_type, e.source_id FROM summaries s "
        "JOIN summary_sources e ON e.summary_id = s.id WHERE s.session_id = ? AND s.kind = 'condensed' "
        "ORDER BY e.summary_id, e.position",
        (s.id,),
    ):
        s.edges.setdefault(summary_id, []).append((pos, kind, source))


def _check_leaf(s: _Session, node: _Node) -> None:
    facts = s.leaves.get(node.id)
    if facts is None or facts.edges == 0:
        _structural(s, node, "edges_missing", "a leaf without source edges")
        return
    if not s.seq_ok:
        return
    if node.last >= s.episodes:
        _structural(s, node, "coverage", f"the session has {s.episodes:,} episodes")
        return
    covered = node.last - node.first + 1
    if facts.edges != covered or facts.matching != covered:
        _structural(s, node, "edges_broken", _leaf_mismatch(s, node))
        return
    if (node.start_at, node.end_at) != (facts.start_at, facts.end_at):
        s.add("time_range", (node.id,), f"{node.label()}: time range {node.start_at} – {node.end_at}, its episodes "
              f"span {facts.start_at} – {facts.end_at}", True)
    if node.source_tokens != facts.tokens:
        s.add("source_tokens", (node.id,), f"{node.label()}: source_tokens {node.source_tokens:,}, its episodes "
              f"hold {facts.tokens:,}", True)


def _leaf_mismatch(s: _Session, node: _Node) -> str:
    """Which edge of a broken leaf is wrong (read only for the leaves that are)."""
    edges = s.conn.execute("SELECT position, source_type, source_id FROM summary_sources WHERE summary_id = ? "
                           "ORDER BY position", (node.id,)).fetchall()
    want = [r[0] for r in s.conn.execute("SELECT id FROM episodes WHERE session_id = ? AND seq BETWEEN ? AND ? "
                                         "ORDER BY seq", (s.id, node.first, node.last))]
    for i, (pos, kind, source) in enumerate(edges):
        if kind != "episode":
            return f"edge {pos} names {source}, a summary"
        if pos != i:
            return f"its edge positions are not 0, 1, 2, … (edge {i} is at {pos})"
        if i >= len(want) or source != want[i]:
            seq = f"episode #{node.first + i} ({want[i]})" if i < len(want) else "past its coverage"
            return f"edge {i} names {source}, not {seq}"
    return f"{len(edges):,} edges for the {len(want):,} episodes it covers"


def _check_condensed(s: _Session, node: _Node) -> None:
    edges = s.edges.get(node.id, [])
    if not edges:
        _structural(s, node, "edges_missing", "a condensed summary without source edges")
        return
    kids: list[_Node] = []
    for pos, kind, source in edges:
        kid = s.nodes.get(source)
        if kind != "summary" or kid is None:
            what = "an episode" if kind == "episode" else "a summary that does not exist in this session"
            _structural(s, node, "edges_broken", f"edge {pos} names {source}, {what}", (source,))
            return
        kids.append(kid)
    if {k.depth for k in kids} != {node.depth - 1}:
        _structural(s, node, "sources_wrong", f"its sources are not all of depth {node.depth - 1}")
        return
    for a, b in zip(kids, kids[1:]):
        if b.first != a.last + 1:
            _structural(s, node, "sources_wrong", f"its sources are not contiguous ({a.label()} then {b.label()})",
                        (a.id, b.id))
            return
    if (kids[0].first, kids[-1].last) != (node.first, node.last):
        _structural(s, node, "sources_wrong", f"its sources cover #{kids[0].first}–{kids[-1].last}")
        return
    if node.active:
        stale = [k.id for k in kids if not k.active]
        if stale:
            s.add("source_superseded", (node.id, *stale), f"{node.label()}: active, built on superseded "
                  f"{', '.join(stale[:MAX_NAMED])}", True)
            return
    span = (min(k.start_at for k in kids), max(k.end_at for k in kids))
    if (node.start_at, node.end_at) != span:
        s.add("time_range", (node.id,), f"{node.label()}: time range {node.start_at} – {node.end_at}, its sources "
              f"span {span[0]} – {span[1]}", True)
    tokens = sum(k.tokens for k in kids)
    if node.source_tokens != tokens:
        s.add("source_tokens", (node.id,), f"{node.label()}: source_tokens {node.source_tokens:,}, its sources "
              f"hold {tokens:,}", True)


def _check_parents(s: _Session) -> None:
    """Each active summary's parent is the one active summary whose edges name it (or none)."""
    claims: dict[str, list[str]] = {}
    for node in s.nodes.values():
        if node.active and node.kind == "condensed":
            for _, kind, source in s.edges.get(node.id, []):
                if kind == "summary":
                    claims.setdefault(source, []).append(node.id)
    for node in s.nodes.values():
        if not node.active:
            if node.parent is not None:
                s.add("parent_link", (node.id, node.parent), f"{node.label()}: superseded, still linked to parent "
                      f"{node.parent}", True)
            continue
        parents = claims.get(node.id, [])
        if len(parents) > 1:
            s.add("two_parents", (node.id, *parents), f"{node.label()}: a source of {len(parents)} active "
                  f"summaries ({', '.join(parents[:MAX_NAMED])})", False)
            continue
        want = parents[0] if parents else None
        if node.parent != want:
            if want is None:
                detail = f"linked to parent {node.parent}, which does not list it as an active source"
            elif node.parent is None:
                detail = f"a source of active {want} but not linked to it"
            else:
                detail = f"linked to {node.parent}, but it is a source of active {want}"
            s.add("parent_link", tuple(x for x in (node.id, node.parent, want) if x), f"{node.label()}: {detail}", True)


def _check_overlaps(s: _Session) -> None:
    by_depth: dict[int, list[_Node]] = {}
    for node in s.nodes.values():
        if node.active:
            by_depth.setdefault(node.depth, []).append(node)
    for depth, level in sorted(by_depth.items()):
        level.sort(key=lambda n: (n.first, n.last))
        reach: _Node | None = None
        for node in level:
            if reach is not None and node.first <= reach.last:
                s.add("overlap", (reach.id, node.id), f"active depth-{depth} summaries {reach.label()} and "
                      f"{node.label()} overlap", False)
            if reach is None or node.last > reach.last:
                reach = node


def _check_aggregates(s: _Session, stored: tuple[Any, ...]) -> None:
    """The session row against its rows, with the triggers' own formulas (schema.py)."""
    active = [n for n in s.nodes.values() if n.active]
    leaves = [n for n in active if n.kind == "leaf"]
    ratios = [n.retention for n in active if n.retention is not None]
    want = (
        s.episodes, s.tokens, len(active), max((n.depth for n in active), default=None),
        sum(n.last - n.first + 1 for n in leaves), sum(n.source_tokens for n in leaves),
        sum(n.tier == "fallback" for n in active), sum(n.tokens for n in active if n.parent is None),
        max((n.last for n in leaves), default=None), max((n.created_at for n in active), default=None),
        min(ratios) if ratios else None,
    )
    wrong = [f"{col} {have} (rows: {need})" for col, have, need in zip(AGG_COLS, stored, want)
             if not _same(have, need)]
    if wrong:
        s.add("aggregates", (), "stored " + ", ".join(wrong), True)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) < 1e-9
    return a == b


def _check_runs(s: _Session, runs: Sequence[tuple[Any, ...]]) -> None:
    made: dict[str, list[int]] = {}
    for node in s.nodes.values():
        if node.run_id is not None:
            c = made.setdefault(node.run_id, [0, 0, 0, 0])
            c[("normal", "aggressive", "fallback").index(node.tier)] += 1
            c[3] += 1
    for rid, normal, aggressive, fallback, created in runs:
        want = made.get(rid, [0, 0, 0, 0])
        if [normal, aggressive, fallback, created] != want:
            s.add("run_counters", (rid,), f"run {rid} counts {created} summaries ({normal}/{aggressive}/{fallback} "
                  f"normal/aggressive/fallback), {want[3]} name it ({want[0]}/{want[1]}/{want[2]})", True)
