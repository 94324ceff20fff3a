"""``doctor --fix``: repair what a check found, where a repair is safe, and say what was done.

Safe means derived or reversible, never a loss:

* counts the triggers keep (session aggregates) and a run's counters: recomputed from the rows;
* a summary's parent link, time range and source token count: re-derived from its edges and
  sources;
* a summary whose shape is broken (edges missing or dangling, sources not contiguous…): set aside
  as ``superseded`` (``superseded_by = 'doctor:<kind>'``) with the active summaries built on it,
  so the next pass re-makes that part of the tree. It is kept, never deleted;
* runs left ``running`` by a dead process: marked ``interrupted`` (what opening the file does);
* the search index: rows missing from ``search_docs`` recorded again, a damaged index rebuilt.

Episodes are never touched. What cannot be repaired this way (SQLite damage, dangling foreign
keys, overlapping summaries, a summary with two active parents, gaps in a session's seqs) is left
as it is and stays reported. Each session's repairs commit together, so a kill mid-way leaves every
session either repaired or as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from .db import Db
from .health import SET_ASIDE, SET_ASIDE_KINDS, HealthReport
from .health_session import Problem
from .runs import Runs
from .schema import RECOMPUTE_SESSION
from .search_index import BACKFILL_KEY, INDEXED_KEY, build_search_index

IndexProgress = Callable[[int, int], None]
"""``on_progress(done, total)`` while the search index is being rebuilt."""


class HealthFix:
    """Applies the fixable problems of a :class:`~.health.HealthReport` to a writable file."""

    def __init__(self, db: Db) -> None:
        db.require_writable()
        self.db = db

    @property
    def readonly(self) -> bool:  # what build_search_index asks of its owner
        return self.db.readonly

    def apply(self, report: HealthReport, *, on_progress: IndexProgress | None = None) -> list[str]:
        """Repair every fixable problem of ``report``; one line per thing done."""
        fixable = [p for p in report.problems if p.fixable]
        done: list[str] = []
        by_session: dict[str, list[Problem]] = {}
        for p in fixable:
            if p.session is not None and p.kind not in {"run_dead", "search_unrecorded"}:
                by_session.setdefault(p.session, []).append(p)
        dead = [p.ids[0] for p in fixable if p.kind == "run_dead"]
        if dead:
            done += self._dead_runs(dead)
        for session_id, problems in by_session.items():
            done += self._session(session_id, problems)
        unrecorded = any(p.kind == "search_unrecorded" for p in fixable)
        damaged = any(p.kind == "search_index" for p in fixable)
        if unrecorded or damaged:
            done += self._search(unrecorded, damaged, on_progress)
        return done

    # ------------------------------------------------------------------ runs
    def _dead_runs(self, run_ids: Sequence[str]) -> list[str]:
        runs = Runs(self.db)
        runs.mark_interrupted()  # opening the file for writing may have done it already
        marked = [rid for rid in run_ids if (r := runs.get(rid)) is not None and r.status == "interrupted"]
        if not marked:
            return []
        return [f"marked {_n(len(marked), 'run')} interrupted (the process was gone): {_few(marked)}"]

    # ------------------------------------------------------------------ one session
    def _session(self, session_id: str, problems: Sequence[Problem]) -> list[str]:
        done: list[str] = []
        with self.db.transaction() as conn:
            aside: set[str] = set()
            for p in problems:
                if p.kind in SET_ASIDE_KINDS and p.ids and p.ids[0] not in aside:
                    chain = _set_aside(conn, p.ids[0], p.kind)
                    aside |= set(chain)
                    if chain:
                        above = f" and {_n(len(chain) - 1, 'summary', 'summaries')} built on it" if len(chain) > 1 else ""
                        done.append(f"session {session_id}: set aside {chain[0]}{above} ({p.kind}): superseded, "
                                    "kept; the next pass re-makes them")
            kinds = {p.kind for p in problems}
            if aside or "parent_link" in kinds:
                n = _relink(conn, session_id)
                if n:
                    done.append(f"session {session_id}: re-linked {_n(n, 'parent link')} from the edges")
            spans = [p.ids[0] for p in problems if p.kind in {"time_range", "source_tokens"} and p.ids[0] not in aside]
            if spans:
                n = _recompute_spans(conn, spans)
                done.append(f"session {session_id}: recomputed the time range and source tokens of "
                            f"{_n(n, 'summary', 'summaries')}")
            for p in problems:
                if p.kind == "run_counters":
                    _recount_run(conn, p.ids[0])
                    done.append(f"session {session_id}: recomputed the counters of run {p.ids[0]}")
            for statement in RECOMPUTE_SESSION:
                conn.execute(statement, {"sid": session_id})
            if "aggregates" in kinds:
                done.append(f"session {session_id}: recomputed its aggregates from its rows")
        return done

    # ------------------------------------------------------------------ search
    def _search(self, unrecorded: bool, damaged: bool, on_progress: IndexProgress | None) -> list[str]:
        done: list[str] = []
        with self.db.transaction() as conn:
            if unrecorded:
                # the upgrade's backfill, from the start: it records exactly the rows without a
                # search_docs row (a unique index keeps the others from being recorded twice)
                conn.execute("INSERT INTO meta (key, value) VALUES (?, 'episode:') ON CONFLICT (key) DO UPDATE "
                             "SET value = excluded.value", (BACKFILL_KEY,))
            if damaged:
                conn.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
                conn.execute("UPDATE meta SET value = '0' WHERE key = ?", (INDEXED_KEY,))
        try:
            indexed = build_search_index(self, on_progress)
        except sqlite3.IntegrityError as exc:
            return [f"could not record the missing rows for search ({exc}): search_docs holds duplicates"]
        if unrecorded:
            done.append("recorded the episodes and summaries missing from search")
        done.append(f"{'rebuilt' if damaged else 'brought up to date'} the search index: {indexed:,} rows indexed")
        return done


def _set_aside(conn: sqlite3.Connection, summary_id: str, kind: str) -> list[str]:
    """Supersede an active summary and every active summary built on it (they cover it); unlink their
    children. Returns the ids superseded, the summary first (empty if it was not active)."""
    row = conn.execute("SELECT status FROM summaries WHERE id = ?", (summary_id,)).fetchone()
    if row is None or row[0] != "active":
        return []
    chain = [summary_id]
    seen = {summary_id}
    i = 0
    while i < len(chain):
        current = chain[i]
        i += 1
        above = {r[0] for r in conn.execute(
            "SELECT e.summary_id FROM summary_sources e JOIN summaries s ON s.id = e.summary_id "
            "WHERE e.source_id = ? AND e.source_type = 'summary' AND s.status = 'active'", (current,))}
        parent = conn.execute("SELECT s.id FROM summaries c JOIN summaries s ON s.id = c.parent_id "
                              "WHERE c.id = ? AND s.status = 'active'", (current,)).fetchone()
        if parent is not None:
            above.add(parent[0])
        for sid in sorted(above - seen):
            seen.add(sid)
            chain.append(sid)
    for n, sid in enumerate(chain):
        reason = f"{SET_ASIDE}{kind}" if n == 0 else f"{SET_ASIDE}built-on-{summary_id}"
        conn.execute("UPDATE summaries SET status = 'superseded', parent_id = NULL, "
                     "superseded_by = coalesce(superseded_by, ?) WHERE id = ? AND status = 'active'", (reason, sid))
    marks = ",".join("?" * len(chain))
    conn.execute(f"UPDATE summaries SET parent_id = NULL WHERE status = 'active' AND parent_id IN ({marks})", chain)
    return chain


def _relink(conn: sqlite3.Connection, session_id: str) -> int:
    """Every summary's parent link from the edges: an active summary's parent is the one active summary
    naming it as a source (none: no parent; two or more: left alone, reported); a superseded one has none."""
    changed = conn.execute("UPDATE summaries SET parent_id = NULL WHERE session_id = ? AND status = 'superseded' "
                           "AND parent_id IS NOT NULL", (session_id,)).rowcount
    claims: dict[str, list[str]] = {}
    for parent, child in conn.execute(
        "SELECT s.id, e.source_id FROM summaries s JOIN summary_sources e ON e.summary_id = s.id "
        "WHERE s.session_id = ? AND s.status = 'active' AND s.kind = 'condensed' AND e.source_type = 'summary'",
        (session_id,),
    ):
        claims.setdefault(child, []).append(parent)
    updates = []
    for sid, parent in conn.execute(
        "SELECT id, parent_id FROM summaries WHERE session_id = ? AND status = 'active'", (session_id,)
    ).fetchall():
        parents = claims.get(sid, [])
        if len(parents) > 1:
            continue
        want = parents[0] if parents else None
        if parent != want:
            updates.append((want, sid))
    conn.executemany("UPDATE summaries SET parent_id = ? WHERE id = ?", updates)
    return changed + len(updates)


def _recompute_spans(conn: sqlite3.Connection, summary_ids: Iterable[str]) -> int:
    """Time range and source tokens of the given summaries and their active ancestors, from what
    they cover, shallowest first (a parent's figures are its sources')."""
    todo: dict[str, int] = {}
    for sid in summary_ids:
        current: str | None = sid
        while current is not None and current not in todo:
            row = conn.execute("SELECT depth, parent_id FROM summaries WHERE id = ?", (current,)).fetchone()
            if row is None:
                break
            todo[current] = row[0]
            current = row[1]
    for sid in sorted(todo, key=lambda s: todo[s]):
        kind, session_id, first, last = conn.execute(
            "SELECT kind, session_id, first_seq, last_seq FROM summaries WHERE id = ?", (sid,)).fetchone()
        if kind == "leaf":
            span = conn.execute("SELECT min(created_at), max(created_at), coalesce(sum(tokens), 0) FROM episodes "
                                "WHERE session_id = ? AND seq BETWEEN ? AND ?", (session_id, first, last)).fetchone()
        else:
            span = conn.execute("SELECT min(s.start_at), max(s.end_at), coalesce(sum(s.tokens), 0) FROM summary_sources e "
                                "JOIN summaries s ON s.id = e.source_id WHERE e.summary_id = ?", (sid,)).fetchone()
        if span[0] is not None:
            conn.execute("UPDATE summaries SET start_at = ?, end_at = ?, source_tokens = ? WHERE id = ?", (*span, sid))
    return len(todo)


def _recount_run(conn: sqlite3.Connection, run_id: str) -> None:
    conn.execute(
        "UPDATE runs SET (normal, aggressive, fallback, summaries_created) = (SELECT coalesce(sum(tier = 'normal'), 0), "
        "coalesce(sum(tier = 'aggressive'), 0), coalesce(sum(tier = 'fallback'), 0), count(*) FROM summaries "
        "WHERE run_id = :rid) WHERE id = :rid", {"rid": run_id})


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def _few(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5:,} more" if len(ids) > 5 else "")
