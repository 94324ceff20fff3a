"""A checker for every ARCHITECTURE §3 invariant of one session, read straight from the file.

It deliberately re-derives everything with its own SQL instead of trusting the store's
helpers (coverage from edges, times from episodes, aggregates from rows), so a bug in the
store or the runner cannot hide behind the same bug in the check. Other tests reuse it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from hiermem_tui.store import Store

EpisodeFacts = tuple[str, str, str]  # (role, content, created_at) of one seq


def _fail(session_id: str, message: str) -> None:
    raise AssertionError(f"[{session_id}] {message}")


def check_invariants(
    store: Store,
    session_id: str,
    *,
    fresh_tail: int,
    episodes: Mapping[int, EpisodeFacts] | None = None,
    known_summaries: Collection[str] | None = None,
    allow_running: bool = True,
) -> None:
    """Assert invariants 1–6 of ARCHITECTURE §3 for ``session_id`` (raises AssertionError).

    ``episodes``: what the test appended, by seq (invariant 1: unchanged, none lost).
    ``known_summaries``: ids seen earlier (invariant 5: nothing was ever deleted).
    ``allow_running``: False after a reopen, when no run may still read ``running``.
    """
    conn = store.db.conn
    sid = session_id
    # ---- database-level health (6): a consistent file
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []

    # ---- 1. episodes: seq 0..n-1, unchanged
    eps = conn.execute(
        "SELECT seq, role, content, created_at, tokens FROM episodes WHERE session_id = ? ORDER BY seq", (sid,)
    ).fetchall()
    n = len(eps)
    if [e[0] for e in eps] != list(range(n)):
        _fail(sid, "episode seqs are not 0..n-1")
    if episodes is not None:
        if n != len(episodes):
            _fail(sid, f"{n} episodes stored, {len(episodes)} appended")
        for seq, role, content, created_at, _ in eps:
            if (role, content, created_at) != episodes[seq]:
                _fail(sid, f"episode #{seq} changed")
    created = [e[3] for e in eps]
    tokens = [e[4] or 0 for e in eps]

    rows = conn.execute(
        "SELECT id, depth, kind, status, tier, tokens, source_tokens, first_seq, last_seq, start_at, end_at, "
        "parent_id, supersedes, superseded_by, run_id FROM summaries WHERE session_id = ?",
        (sid,),
    ).fetchall()
    cols = ("id", "depth", "kind", "status", "tier", "tokens", "source_tokens", "first_seq", "last_seq",
            "start_at", "end_at", "parent_id", "supersedes", "superseded_by", "run_id")
    summ: dict[str, dict[str, Any]] = {r[0]: dict(zip(cols, r)) for r in rows}
    edges: dict[str, list[tuple[str, str]]] = {k: [] for k in summ}
    for summary_id, _pos, stype, source in conn.execute(
        "SELECT e.summary_id, e.position, e.source_type, e.source_id FROM summary_sources e "
        "JOIN summaries s ON s.id = e.summary_id WHERE s.session_id = ? ORDER BY e.summary_id, e.position",
        (sid,),
    ):
        edges[summary_id].append((stype, source))

    # ---- 5. nothing deleted; superseded ones are kept and unparented
    if known_summaries is not None:
        gone = set(known_summaries) - set(summ)
        if gone:
            _fail(sid, f"summaries disappeared: {sorted(gone)[:3]}")
    for s in summ.values():
        if s["status"] == "superseded" and s["parent_id"] is not None:
            _fail(sid, f"superseded {s['id']} still has a parent")
        if s["supersedes"] is not None and s["supersedes"] not in summ:
            _fail(sid, f"{s['id']} supersedes an unknown summary")

    ep_seq: dict[str, int] = dict(conn.execute("SELECT id, seq FROM episodes WHERE session_id = ?", (sid,)).fetchall())
    for s in summ.values():
        srcs = edges[s["id"]]
        if not srcs:
            _fail(sid, f"{s['id']} has no edges")
        first, last = s["first_seq"], s["last_seq"]
        if not (0 <= first <= last < n):
            _fail(sid, f"{s['id']} covers #{first}–{last} outside 0..{n - 1}")
        # ---- 4. time range = [min, max] created_at of the covered episodes
        if (s["start_at"], s["end_at"]) != (min(created[first:last + 1]), max(created[first:last + 1])):
            _fail(sid, f"{s['id']} time range does not match its episodes")
        if s["kind"] == "leaf":
            if s["depth"] != 0 or any(t != "episode" for t, _ in srcs):
                _fail(sid, f"leaf {s['id']} has non-episode sources or depth {s['depth']}")
            if [ep_seq.get(e) for _, e in srcs] != list(range(first, last + 1)):
                _fail(sid, f"leaf {s['id']} edges are not exactly episodes #{first}–{last} in order")
            if s["source_tokens"] != sum(tokens[first:last + 1]):
                _fail(sid, f"leaf {s['id']} source_tokens wrong")
        else:
            # ---- 3. contiguous same-depth sources, depth d+1, coverage = union
            kids = [summ.get(c) for t, c in srcs if t == "summary"]
            if len(kids) != len(srcs) or any(k is None for k in kids):
                _fail(sid, f"condensed {s['id']} has a source that is not a summary of this session")
            if {k["depth"] for k in kids} != {s["depth"] - 1}:  # type: ignore[index]
                _fail(sid, f"condensed {s['id']} sources are not all of depth {s['depth'] - 1}")
            for a, b in zip(kids, kids[1:]):
                if b["first_seq"] != a["last_seq"] + 1:  # type: ignore[index]
                    _fail(sid, f"condensed {s['id']} sources are not contiguous")
            if (kids[0]["first_seq"], kids[-1]["last_seq"]) != (first, last):  # type: ignore[index]
                _fail(sid, f"condensed {s['id']} coverage is not the union of its sources")
            if s["source_tokens"] != sum(k["tokens"] for k in kids):  # type: ignore[index]
                _fail(sid, f"condensed {s['id']} source_tokens wrong")
            if s["status"] == "active":
                for k in kids:
                    if k["status"] != "active" or k["parent_id"] != s["id"]:  # type: ignore[index]
                        _fail(sid, f"active {s['id']} has a source {k['id']} that is not its active child")  # type: ignore[index]

    active = [s for s in summ.values() if s["status"] == "active"]
    # ---- parents: active, one depth up, and really listing the child
    for s in active:
        p = s["parent_id"]
        if p is None:
            continue
        parent = summ.get(p)
        if parent is None or parent["status"] != "active" or parent["depth"] != s["depth"] + 1:
            _fail(sid, f"{s['id']} has parent {p} that is not an active summary one depth up")
        if ("summary", s["id"]) not in edges[p]:
            _fail(sid, f"{s['id']} names parent {p} which does not list it")
    claimed: dict[str, int] = {}
    for s in active:
        if s["kind"] == "condensed":
            for _, c in edges[s["id"]]:
                claimed[c] = claimed.get(c, 0) + 1
    if any(v > 1 for v in claimed.values()):
        _fail(sid, "a summary has more than one active parent")

    # ---- 2. active summaries of each depth are disjoint; leaves stay out of the fresh tail
    by_depth: dict[int, list[dict[str, Any]]] = {}
    for s in active:
        by_depth.setdefault(s["depth"], []).append(s)
    for depth, level in by_depth.items():
        level.sort(key=lambda s: s["first_seq"])
        for a, b in zip(level, level[1:]):
            if b["first_seq"] <= a["last_seq"]:
                _fail(sid, f"active depth-{depth} summaries {a['id']} and {b['id']} overlap")
    for s in summ.values():
        if s["kind"] == "leaf" and s["last_seq"] >= n - fresh_tail:
            _fail(sid, f"leaf {s['id']} covers #{s['last_seq']}, inside the fresh tail of {fresh_tail}")

    # ---- 6. runs: counters match what they wrote; finished runs have an end
    for run in conn.execute(
        "SELECT id, status, finished_at, normal, aggressive, fallback, summaries_created FROM runs WHERE session_id = ?",
        (sid,),
    ).fetchall():
        rid, status, finished, normal, aggressive, fallback, made = run
        mine = [s for s in summ.values() if s["run_id"] == rid]
        tiers = [sum(s["tier"] == t for s in mine) for t in ("normal", "aggressive", "fallback")]
        if made != len(mine) or [normal, aggressive, fallback] != tiers:
            _fail(sid, f"run {rid} counters ({made}, {normal}/{aggressive}/{fallback}) != its summaries {tiers}")
        if status == "running":
            if not allow_running:
                _fail(sid, f"run {rid} still reads running")
        elif finished is None:
            _fail(sid, f"run {rid} is {status} without finished_at")

    # ---- session aggregates agree with the rows (triggers kept them)
    agg = conn.execute(
        "SELECT episode_count, token_count, summary_count, max_depth, covered_episodes, covered_tokens, "
        "fallback_count, top_tokens, last_summarized_seq FROM sessions WHERE id = ?",
        (sid,),
    ).fetchone()
    leaves = [s for s in active if s["kind"] == "leaf"]
    want = (
        n,
        sum(tokens),
        len(active),
        max((s["depth"] for s in active), default=None),
        sum(s["last_seq"] - s["first_seq"] + 1 for s in leaves),
        sum(s["source_tokens"] for s in leaves),
        sum(s["tier"] == "fallback" for s in active),
        sum(s["tokens"] for s in active if s["parent_id"] is None),
        max((s["last_seq"] for s in leaves), default=None),
    )
    if tuple(agg) != want:
        _fail(sid, f"session aggregates {tuple(agg)} != recomputed {want}")
