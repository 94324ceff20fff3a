"""Summaries and their source edges: the DAG of each session.

Every summary is written together with its edges, its parent links and its run's
counters in one transaction, after checking the invariants (docs/ARCHITECTURE.md,
"Invariants") against what is in the file at that moment — so no code path (or concurrent
writer) can commit a summary that breaks them, and a crash leaves either the whole write or
none of it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..fidelity_value import Fidelity
from .db import Db, StoreError
from .episodes import Episodes
from .models import Summary, SummarySpan, SummaryWrite, utcnow
from .rows import jdict, jdump, jlist
from .sessions import Sessions

_SUMMARY_COLS = (
    "id, session_id, depth, kind, status, tier, backend, model, prompt_version, content, tokens, "
    "source_tokens, input_tokens, output_tokens, first_seq, last_seq, start_at, end_at, parent_id, "
    "supersedes, superseded_by, created_at, duration_s, llm_seconds, run_id"
)
_FIDELITY_COLS = "fid_identifiers, fid_kept, fid_lost, fid_novel, fid_key, fid_key_kept"
_READ_COLS = f"{_SUMMARY_COLS}, {_FIDELITY_COLS}, fid_added, fid_pins_missing, rejections, keywords, trimmed"
_SPAN_COLS = ("id, depth, kind, tier, first_seq, last_seq, tokens, parent_id, start_at, end_at, "
              "fid_identifiers, fid_kept, fid_key, fid_key_kept")


class InvariantViolation(StoreError):
    """A write would break a DAG invariant; nothing was written."""


# The one place the ``fid_*`` columns become a Fidelity and a Fidelity becomes them (in
# ``_FIDELITY_COLS`` order): a summary's fidelity is one value everywhere above the store.
def _fidelity(identifiers: int | None, kept: int | None, lost: str | None, novel: str | None,
              key: int | None, key_kept: int | None) -> Fidelity | None:
    if identifiers is None or kept is None:
        return None  # made before fidelity was measured
    return Fidelity(identifiers, kept, tuple(str(x) for x in jlist(lost)), tuple(str(x) for x in jlist(novel)),
                    key if key_kept is not None else None, key_kept if key is not None else None)


def _fidelity_values(fid: Fidelity | None) -> tuple[Any, ...]:
    if fid is None:
        return None, None, None, None, None, None
    fid = fid.bounded()
    return fid.identifiers, fid.kept, jdump(fid.lost), jdump(fid.novel), fid.key, fid.key_kept


def _summary(r: Sequence[Any]) -> Summary:
    # The first 25 columns are Summary's first 25 fields, in order (``_SUMMARY_COLS``). Passed
    # positionally: this runs for every summary a tree or a pass reads, and building a dict
    # of them costs more than the rest of the row. mypy cannot see the slice's length.
    return Summary(  # type: ignore[misc]
        *r[:25], fidelity=_fidelity(*r[25:31]), fid_added=bool(r[31]), fid_pins_missing=jlist(r[32]),
        rejections=tuple(x for x in jlist(r[33]) if isinstance(x, dict)),
        keywords=tuple(str(k) for k in jlist(r[34])), trimmed=r[35],
    )


def _span(r: Sequence[Any]) -> SummarySpan:
    """A span; its ``retention`` the low-fidelity figure, None when not measured or nothing was judged."""
    fid = _fidelity(r[10], r[11], None, None, r[12], r[13])
    retention = fid.key_retention if fid is not None and fid.judged_on > 0 else None
    return SummarySpan(*r[:10], retention=retention)  # type: ignore[misc]


class Dag:
    """The summaries of every session and their source edges; reads and checked writes."""

    def __init__(self, db: Db, sessions: Sessions, episodes: Episodes) -> None:
        self.db = db
        self.sessions = sessions
        self.episodes = episodes

    # ------------------------------------------------------------------ reads
    def get(self, summary_id: str) -> Summary | None:
        row = self.db.conn.execute(f"SELECT {_READ_COLS} FROM summaries WHERE id = ?", (summary_id,)).fetchone()
        return _summary(row) if row else None

    def summaries(self, session_id: str, *, status: str | None = "active") -> list[Summary]:
        """Summaries of a session (with text), by depth then position."""
        where = "session_id = ?" + (" AND status = ?" if status else "")
        params: tuple[Any, ...] = (session_id, status) if status else (session_id,)
        rows = self.db.conn.execute(
            f"SELECT {_READ_COLS} FROM summaries WHERE {where} ORDER BY depth, first_seq, created_at", params
        )
        return [_summary(r) for r in rows]

    def spans(self, session_id: str) -> list[SummarySpan]:
        """Active summaries without text: the shape the planner and the coverage map need."""
        rows = self.db.conn.execute(
            f"SELECT {_SPAN_COLS} FROM summaries WHERE session_id = ? AND status = 'active' ORDER BY depth, first_seq",
            (session_id,),
        )
        return [_span(r) for r in rows]

    def spans_since(
        self, session_id: str, after_rowid: int
    ) -> tuple[list[tuple[SummarySpan, str, str | None]], int]:
        """Summaries of a session written after ``after_rowid``, in write order, each with its
        status now and the summary it superseded; and the table's highest rowid. Summaries are
        never deleted, so a view that keeps the rowid reads only what is new (``changes.py``)."""
        rows = self.db.conn.execute(
            f"SELECT {_SPAN_COLS}, status, supersedes FROM summaries WHERE rowid > ? AND session_id = ? ORDER BY rowid",
            (after_rowid, session_id),
        ).fetchall()
        top = self.db.conn.execute("SELECT coalesce(max(rowid), 0) FROM summaries").fetchone()[0]
        return [(_span(r[:14]), r[14], r[15]) for r in rows], top

    def top(self, session_id: str) -> list[Summary]:
        """Active summaries with no active parent, oldest coverage first (the DAG's roots)."""
        rows = self.db.conn.execute(
            f"SELECT {_READ_COLS} FROM summaries WHERE session_id = ? AND status = 'active' AND parent_id IS NULL "
            "ORDER BY first_seq, depth DESC",
            (session_id,),
        )
        return [_summary(r) for r in rows]

    def newest_tops(self, session_ids: Sequence[str], n: int) -> dict[str, tuple[int, list[Summary]]]:
        """For each of a page of sessions: how many top summaries it has (those :meth:`top` lists) and
        its ``n`` newest, oldest coverage first, as :meth:`top` orders them.

        Two queries for the whole page, not one per session: the tops' places only (no text), then the
        whole rows of the few shown. :meth:`top` read every top's text and fidelity lists to show
        three, one session at a time: on a cold page cache that was most of a listing's time."""
        if not session_ids:
            return {}
        marks = ",".join("?" * len(session_ids))
        places: dict[str, list[tuple[int, int, str]]] = {sid: [] for sid in session_ids}
        for sid, ref, first, depth in self.db.conn.execute(
            f"SELECT session_id, id, first_seq, depth FROM summaries WHERE session_id IN ({marks}) "
            "AND status = 'active' AND parent_id IS NULL", list(session_ids),
        ):
            places[sid].append((first, -depth, ref))
        shown = {sid: [ref for _, _, ref in sorted(tops)[-n:]] if n > 0 else [] for sid, tops in places.items()}
        wanted = [ref for refs in shown.values() for ref in refs]
        rows: dict[str, Summary] = {}
        if wanted:
            found = self.db.conn.execute(
                f"SELECT {_READ_COLS} FROM summaries WHERE id IN ({','.join('?' * len(wanted))})", wanted)
            rows = {s.id: s for s in map(_summary, found)}
        return {sid: (len(places[sid]), [rows[ref] for ref in shown[sid] if ref in rows]) for sid in session_ids}

    def children(self, summary_id: str) -> list[Summary]:
        """The source summaries of a condensed summary, in order (empty for a leaf)."""
        rows = self.db.conn.execute(
            f"SELECT {', '.join('s.' + c.strip() for c in _READ_COLS.split(','))} FROM summary_sources e "
            "JOIN summaries s ON s.id = e.source_id WHERE e.summary_id = ? AND e.source_type = 'summary' "
            "ORDER BY e.position",
            (summary_id,),
        )
        return [_summary(r) for r in rows]

    def active_ids(self, session_id: str) -> set[str]:
        """Ids of a session's active summaries (a view checks it holds exactly these)."""
        rows = self.db.conn.execute("SELECT id FROM summaries WHERE session_id = ? AND status = 'active'", (session_id,))
        return {r[0] for r in rows}

    def source_ids(self, summary_id: str) -> list[str]:
        """Ids of a summary's sources (episodes for a leaf, summaries for a condensed one)."""
        rows = self.db.conn.execute(
            "SELECT source_id FROM summary_sources WHERE summary_id = ? ORDER BY position", (summary_id,)
        )
        return [r[0] for r in rows]

    def covering_chain(self, session_id: str, seq: int) -> list[Summary]:
        """Active summaries covering episode ``seq``: its leaf, then each parent up to the top."""
        row = self.db.conn.execute(
            f"SELECT {_READ_COLS} FROM summaries WHERE session_id = ? AND status = 'active' AND depth = 0 "
            "AND first_seq <= ? AND last_seq >= ? ORDER BY first_seq DESC LIMIT 1",
            (session_id, seq, seq),
        ).fetchone()
        chain: list[Summary] = []
        while row is not None:
            s = _summary(row)
            chain.append(s)
            if s.parent_id is None:
                break
            row = self.db.conn.execute(f"SELECT {_READ_COLS} FROM summaries WHERE id = ?", (s.parent_id,)).fetchone()
        return chain

    def versions(self, summary_id: str) -> list[Summary]:
        """All versions of a summary (following supersedes/superseded_by), oldest first."""
        s = self.get(summary_id)
        if s is None:
            return []
        older: list[Summary] = []
        cur = s
        while cur.supersedes:
            prev = self.get(cur.supersedes)
            if prev is None:
                break
            older.append(prev)
            cur = prev
        newer: list[Summary] = []
        cur = s
        while cur.superseded_by:
            nxt = self.get(cur.superseded_by)
            if nxt is None:
                break
            newer.append(nxt)
            cur = nxt
        return [*reversed(older), s, *newer]

    def versions_with_replaced(self, summary_id: str, extra: Sequence[str] = ()) -> list[Summary]:
        """:meth:`versions`, plus the superseded summaries of its depth over overlapping episodes (what a
        whole-session redo replaced has no link to the new summaries) and the ids in ``extra``, oldest
        first: every version a reader may want beside this one."""
        base = self.get(summary_id)
        if base is None:
            return []
        chain = self.versions(summary_id)
        order = {s.id: i for i, s in enumerate(chain)}
        found = {s.id: s for s in chain}
        rows = self.db.conn.execute(  # the detail pane asks this on every move: filtered here, not in Python
            f"SELECT {_READ_COLS} FROM summaries WHERE session_id = ? AND status = 'superseded' AND depth = ?"
            " AND first_seq <= ? AND last_seq >= ?",
            (base.session_id, base.depth, base.last_seq, base.first_seq),
        )
        for s in map(_summary, rows):
            found.setdefault(s.id, s)
        for sid in extra:
            if sid not in found and (other := self.get(sid)) is not None:
                found[sid] = other
        return sorted(found.values(), key=lambda s: (s.created_at, order.get(s.id, len(order)), s.id))

    def unsummarised_ranges(self, session_id: str, episodes: int | None = None) -> list[tuple[int, int]]:
        """Seq ranges of episodes under no active leaf, in order (``episodes``: the session's count,
        when the caller has its row already)."""
        if episodes is None:
            session = self.sessions.get(session_id)
            if session is None:
                return []
            episodes = session.episodes
        if episodes == 0:
            return []
        gaps: list[tuple[int, int]] = []
        nxt = 0
        for first, last in self.db.conn.execute(
            "SELECT first_seq, last_seq FROM summaries WHERE session_id = ? AND status = 'active' AND depth = 0 "
            "ORDER BY first_seq",
            (session_id,),
        ):
            if first > nxt:
                gaps.append((nxt, first - 1))
            nxt = max(nxt, last + 1)
        if nxt <= episodes - 1:
            gaps.append((nxt, episodes - 1))
        return gaps

    # ------------------------------------------------------------------ writes
    def write(self, writes: Sequence[SummaryWrite]) -> list[Summary]:
        """Write summaries with their edges in ONE transaction, checking invariants first.

        Order matters: a later write may name an earlier one of the same batch as a source
        (re-summarising a node and re-condensing its ancestors commit together).
        """
        with self.db.transaction() as conn:
            for w in writes:
                self._write_one(conn, w)
            return [s for w in writes if (s := self.get(w.summary.id)) is not None]

    def _write_one(self, conn: sqlite3.Connection, w: SummaryWrite) -> None:
        s = w.summary
        active = not w.superseded
        if w.superseded and w.supersede:
            raise InvariantViolation("a summary written as an old version cannot replace others")
        for old_id in w.supersede:
            old = conn.execute("SELECT status, session_id FROM summaries WHERE id = ?", (old_id,)).fetchone()
            if old is None or old[0] != "active" or old[1] != s.session_id:
                raise InvariantViolation(f"cannot supersede {old_id}: not an active summary of {s.session_id}")
            conn.execute(
                "UPDATE summaries SET status = 'superseded', superseded_by = ?, parent_id = NULL WHERE id = ?",
                (s.id, old_id),
            )
            # children of a replaced summary lose their parent until the new version adopts them
            conn.execute("UPDATE summaries SET parent_id = NULL WHERE parent_id = ? AND status = 'active'", (old_id,))
        if (w.episode_range is None) == (w.source_ids is None):
            raise InvariantViolation("a summary needs exactly one of an episode range or source summaries")
        if w.episode_range is not None:
            if s.depth != 0:
                raise InvariantViolation("a leaf summary has depth 0")
            first, last = w.episode_range
            if first > last:
                raise InvariantViolation("empty episode range")
            clash = active and conn.execute(
                "SELECT id FROM summaries WHERE session_id = ? AND status = 'active' AND depth = 0 "
                "AND first_seq <= ? AND last_seq >= ? LIMIT 1",
                (s.session_id, last, first),
            ).fetchone()
            if clash:
                raise InvariantViolation(f"episodes #{first}–{last} overlap active leaf {clash[0]}")
            source_tokens, start_at, end_at = self.episodes.stats(s.session_id, first, last, conn)
            kind = "leaf"
            edges = [(s.id, i, "episode", eid) for i, eid in enumerate(self.episodes.ids(s.session_id, first, last, conn))]
        else:
            ids = list(w.source_ids or [])
            if not ids:
                raise InvariantViolation("a condensed summary needs sources")
            marks = ",".join("?" * len(ids))
            rows = conn.execute(
                f"SELECT id, depth, status, parent_id, first_seq, last_seq, tokens, start_at, end_at, session_id "
                f"FROM summaries WHERE id IN ({marks})",
                ids,
            ).fetchall()
            by_id = {r[0]: r for r in rows}
            if len(by_id) != len(ids):
                raise InvariantViolation("unknown or repeated source summary")
            src = [by_id[i] for i in ids]
            depths = {r[1] for r in src}
            if len(depths) != 1 or s.depth != src[0][1] + 1:
                raise InvariantViolation("sources must share one depth d and the summary must have depth d+1")
            for r in src:
                if r[9] != s.session_id or (active and r[2] != "active"):
                    raise InvariantViolation(f"source {r[0]} is not an active summary of this session")
                if active and r[3] is not None:
                    raise InvariantViolation(f"source {r[0]} already has an active parent {r[3]}")
            src.sort(key=lambda r: r[4])
            if [r[0] for r in src] != ids:
                raise InvariantViolation("sources must be given in coverage order")
            first, last = src[0][4], src[-1][5]
            if active and self._active_between(conn, s.session_id, src[0][1], first, last) != len(src):
                raise InvariantViolation("condensed sources must be contiguous")
            source_tokens = sum(r[6] for r in src)
            start_at = min(r[7] for r in src)
            end_at = max(r[8] for r in src)
            kind = "condensed"
            edges = [(s.id, i, "summary", sid) for i, sid in enumerate(ids)]
        conn.execute(
            f"INSERT INTO summaries ({_READ_COLS}) VALUES ({','.join('?' * 36)})",
            (
                s.id, s.session_id, s.depth, kind, "active" if active else "superseded", s.tier, s.backend, s.model,
                s.prompt_version, s.content, s.tokens, source_tokens, s.input_tokens, s.output_tokens, first, last,
                start_at, end_at, None, w.supersede[0] if w.supersede else None, w.superseded_by,
                s.created_at or utcnow(), s.duration_s, s.llm_seconds, s.run_id,
                *_fidelity_values(s.fidelity), int(s.fid_added),
                jdump(s.fid_pins_missing), jdump([dict(r) for r in s.rejections]), jdump(s.keywords), s.trimmed,
            ),
        )
        conn.executemany(
            "INSERT INTO summary_sources (summary_id, position, source_type, source_id) VALUES (?, ?, ?, ?)", edges
        )
        if kind == "condensed" and active:
            conn.executemany("UPDATE summaries SET parent_id = ? WHERE id = ?", [(s.id, i) for i in w.source_ids or []])
        if s.run_id:
            conn.execute(
                f"UPDATE runs SET {s.tier} = {s.tier} + 1, summaries_created = summaries_created + 1, "
                "llm_seconds = llm_seconds + ?, flagged = flagged + ? WHERE id = ?",
                (s.llm_seconds, int(s.flagged), s.run_id),
            )
            if s.rejections:
                row = conn.execute("SELECT rejections FROM runs WHERE id = ?", (s.run_id,)).fetchone()
                counts = jdict(row[0] if row else None)
                for r in s.rejections:
                    reason = str(r.get("reason", "unknown"))
                    counts[reason] = int(counts.get(reason, 0)) + 1
                conn.execute("UPDATE runs SET rejections = ? WHERE id = ?", (json.dumps(counts, sort_keys=True), s.run_id))

    @staticmethod
    def _active_between(conn: sqlite3.Connection, session_id: str, depth: int, first: int, last: int) -> int:
        """How many active summaries of one depth lie within episodes ``first..last``."""
        return int(conn.execute(
            "SELECT count(*) FROM summaries WHERE session_id = ? AND status = 'active' AND depth = ? "
            "AND first_seq >= ? AND last_seq <= ?",
            (session_id, depth, first, last),
        ).fetchone()[0])

    def supersede_all(self, session_id: str, run_id: str | None = None) -> int:
        """Mark every active summary of a session superseded (the start of a whole-session redo)."""
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE summaries SET status = 'superseded', parent_id = NULL, "
                "superseded_by = coalesce(superseded_by, ?) WHERE session_id = ? AND status = 'active'",
                (f"run:{run_id}" if run_id else None, session_id),
            )
            return cur.rowcount

    def revert_run(self, run_id: str) -> int:
        """Undo a re-summarise: its summaries become superseded and the ones it replaced active again.

        Refused if anything newer builds on the run's summaries. Returns how many were restored.
        """
        with self.db.transaction() as conn:
            made = [r[0] for r in conn.execute(
                "SELECT id FROM summaries WHERE run_id = ? AND status = 'active'", (run_id,)
            )]
            replaced = [r[0] for r in conn.execute(
                "SELECT id FROM summaries WHERE status = 'superseded' AND (superseded_by = ? OR superseded_by IN "
                "(SELECT id FROM summaries WHERE run_id = ?))",
                (f"run:{run_id}", run_id),
            )]
            if not made and not replaced:
                raise StoreError(f"run {run_id} has nothing to revert")
            replaced_since = conn.execute(
                "SELECT count(*) FROM summaries WHERE run_id = ? AND status = 'superseded'", (run_id,)
            ).fetchone()[0]
            if replaced_since:
                raise StoreError(f"cannot revert run {run_id}: its summaries have been replaced since")
            made_set = set(made)
            for sid in made:
                parent = conn.execute("SELECT parent_id FROM summaries WHERE id = ?", (sid,)).fetchone()[0]
                if parent is not None and parent not in made_set:
                    raise StoreError(f"cannot revert run {run_id}: summary {parent} was built on it since")
            session = conn.execute("SELECT session_id FROM runs WHERE id = ?", (run_id,)).fetchone()
            if made:
                marks = ",".join("?" * len(made))
                conn.execute(
                    f"UPDATE summaries SET status = 'superseded', parent_id = NULL, superseded_by = ? WHERE id IN ({marks})",
                    (f"revert:{run_id}", *made),
                )
                # older summaries the run's condensed ones had adopted are parentless again
                conn.execute(
                    f"UPDATE summaries SET parent_id = NULL WHERE status = 'active' AND parent_id IN ({marks})", made
                )
            restored = 0
            for sid in replaced:
                conn.execute("UPDATE summaries SET status = 'active', superseded_by = NULL WHERE id = ?", (sid,))
                restored += 1
            # rebuild parent links of the restored set from their edges
            for sid in replaced:
                for (child,) in conn.execute(
                    "SELECT source_id FROM summary_sources WHERE summary_id = ? AND source_type = 'summary'", (sid,)
                ).fetchall():
                    conn.execute(
                        "UPDATE summaries SET parent_id = ? WHERE id = ? AND status = 'active'", (sid, child)
                    )
            if session:
                self._check_leaves_disjoint(conn, session[0])
            return restored

    def _check_leaves_disjoint(self, conn: sqlite3.Connection, session_id: str) -> None:
        last = -1
        for first, end in conn.execute(
            "SELECT first_seq, last_seq FROM summaries WHERE session_id = ? AND status = 'active' AND depth = 0 "
            "ORDER BY first_seq",
            (session_id,),
        ):
            if first <= last:
                raise InvariantViolation("this change would leave overlapping active leaves")
            last = end

    # ------------------------------------------------------------------ what runs and checks read
    def texts(self, summary_ids: Sequence[str]) -> dict[str, str]:
        """``{id: content}`` of the given summaries that exist."""
        out: dict[str, str] = {}
        for start in range(0, len(summary_ids), 500):
            chunk = list(summary_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            out.update(self.db.conn.execute(f"SELECT id, content FROM summaries WHERE id IN ({marks})", chunk))
        return out

    def made_by(self, run_id: str) -> list[tuple[SummarySpan, str]]:
        """What one run wrote, as it stands now (with its status), in coverage order, deepest
        first where ranges start together."""
        rows = self.db.conn.execute(
            "SELECT id, depth, kind, tier, first_seq, last_seq, tokens, parent_id, start_at, end_at, status "
            "FROM summaries WHERE run_id = ? ORDER BY first_seq, depth DESC",
            (run_id,),
        ).fetchall()
        return [(SummarySpan(*r[:10]), r[10]) for r in rows]

    def leaf_before(self, session_id: str, first_seq: int) -> str | None:
        """The text of the active leaf just before ``first_seq`` (a new leaf's context), if any."""
        row = self.db.conn.execute(
            "SELECT content FROM summaries WHERE session_id = ? AND status = 'active' AND depth = 0 "
            "AND first_seq < ? ORDER BY first_seq DESC LIMIT 1", (session_id, first_seq)).fetchone()
        return str(row[0]) if row else None

    def spans_by_id(self, summary_ids: Sequence[str]) -> dict[str, tuple[SummarySpan, str]]:
        """``{id: (span, status)}`` of the given summaries that exist, whatever their status: what an
        import needs to know of the summaries an earlier import of the same source wrote."""
        out: dict[str, tuple[SummarySpan, str]] = {}
        for start in range(0, len(summary_ids), 500):
            chunk = list(summary_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for r in self.db.conn.execute(f"SELECT {_SPAN_COLS}, status FROM summaries WHERE id IN ({marks})", chunk):
                out[r[0]] = (_span(r[:14]), r[14])
        return out

    def content(self, summary_id: str) -> str | None:
        """One summary's text by id (None if there is no such summary)."""
        row = self.db.conn.execute("SELECT content FROM summaries WHERE id = ?", (summary_id,)).fetchone()
        return str(row[0]) if row else None

    def write_unchanged(self, writes: Sequence[SummaryWrite], expected: dict[str, str | None]) -> list[Summary]:
        """:meth:`write`, only if each summary in ``expected`` is still active with that parent
        (``{id: parent_id}``): a tree re-made from a plan commits only onto the tree it was planned
        from, so a concurrent writer cannot have its changes silently replaced."""
        with self.db.transaction() as conn:
            for sid, parent in expected.items():
                row = conn.execute("SELECT status, parent_id FROM summaries WHERE id = ?", (sid,)).fetchone()
                if row is None or row[0] != "active" or row[1] != parent:
                    raise StoreError(f"summary {sid} changed while it was being re-summarised; run it again")
            return self.write(writes)

    def set_fidelity(self, summary_id: str, fidelity: Fidelity) -> None:
        """Record a measurement for a summary made before fidelity was measured (``check``)."""
        with self.db.transaction() as conn:
            conn.execute(f"UPDATE summaries SET ({_FIDELITY_COLS}) = (?, ?, ?, ?, ?, ?) WHERE id = ?",
                         (*_fidelity_values(fidelity), summary_id))
