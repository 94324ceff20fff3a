"""Doctor: what is wrong in a file, found from the data itself, in bounded memory.

Why it re-derives everything instead of trusting the store's own helpers: a file may have been
copied, synced, restored or written by another tool, so the aggregates, the edges and the search
index are checked against the rows they are meant to follow. The checks are ARCHITECTURE §3's
invariants, read session by session (one read snapshot each, so a compaction going on in another
process is never caught half-way): a session's episodes, summaries and edges are what is held in
memory at a time, never a whole table. File-wide facts (SQLite's own checks, foreign keys, the
search index, runs left ``running``) are read with counts and range lookups on indexes.

Every problem names its session and the summary, episode or run ids, and says whether
``doctor --fix`` may repair it (``health_fix.py``): only what is derived from other rows (links,
counts, time ranges, the index) or what the app already does on its own (marking dead runs), and
setting aside a broken summary as ``superseded``. Episodes are never touched; nothing is deleted.

Reading never writes: the checker is given a :class:`~.db.Db` whose connections refuse writes
(``Db(..., checking=True)``) when it runs for ``doctor``; the TUI passes its own.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .db import Db
from .models import utcnow
from .runs import Runs
from .schema import SCHEMA_VERSION
from .health_session import AGG_COLS, MAX_NAMED, Problem, check_session
from .search_index import BACKFILL_KEY, INDEXED_KEY, meta_value

SET_ASIDE = "doctor:"
"""``superseded_by`` of a summary the doctor set aside (``doctor:<kind>``): known broken, not reported again."""
LAST_KEY = "doctor_last"
"""The ``meta`` row holding the last doctor result (JSON), shown on the TUI's stats screen."""
MAX_SQLITE_LINES = 50
"""``quick_check`` / ``integrity_check`` stop after this many errors (a wrecked file has millions)."""
PAGE = 500
"""Sessions read per keyset page."""

KINDS: dict[str, str] = {
    "sqlite": "SQLite's own check (quick_check, or integrity_check with --full) found damage",
    "foreign_key": "rows that refer to a row that does not exist",
    "schema_old": "an older schema: opening the file in hiermem-tui upgrades it",
    "episode_seq": "a session's episode seqs are not 0, 1, 2, … without gaps",
    "edges_missing": "a summary without source edges",
    "edges_broken": "a summary's edges name rows that do not exist, are of another session, or do not match its coverage",
    "sources_wrong": "a condensed summary's sources are not contiguous, not one depth below, or do not cover what it claims",
    "source_superseded": "an active condensed summary built on a superseded summary",
    "coverage": "a summary covers episodes the session does not have",
    "overlap": "active summaries of one depth cover the same episodes",
    "two_parents": "a summary is a source of more than one active summary",
    "parent_link": "a summary's parent link disagrees with the edges",
    "time_range": "a summary's time range is not that of what it covers",
    "source_tokens": "a summary's source token count is not that of its sources",
    "aggregates": "a session's stored counts disagree with its rows",
    "run_counters": "a run's summary and tier counts disagree with the summaries that name it",
    "run_dead": "a run still reads running but its process is gone",
    "search_unrecorded": "episodes or summaries not recorded for search",
    "search_index": "rows recorded as indexed are missing from the search index",
}
"""Every kind of problem, with what it means (``doctor``'s JSON ``kind``)."""

SET_ASIDE_KINDS = frozenset({"edges_missing", "edges_broken", "sources_wrong", "source_superseded", "coverage"})
"""Broken shape: an active summary with one of these is set aside (superseded) by ``--fix``."""

Progress = Callable[[str, int, int], None]
"""``on_progress(phase, done, total)``: phase ``pages`` (total 0: SQLite's check, no measure),
``sessions``, ``search``, ``runs``. It may raise :class:`CheckCancelled` to stop the check."""


class CheckCancelled(Exception):
    """Raised by an ``on_progress`` callback to stop a check (the TUI leaving the screen)."""


@dataclass(frozen=True, slots=True)
class HealthReport:
    """What one check found. ``checked`` counts what was read (sessions, episodes, summaries, …)."""

    problems: tuple[Problem, ...]
    checked: Mapping[str, int]
    full: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def fixable(self) -> int:
        return sum(p.fixable for p in self.problems)

    def as_json(self) -> dict[str, Any]:
        """``doctor --json``: ``{"ok", "checked", "problems": [{"kind", "session", "ids", "detail", "fixable"}]}``."""
        return {"ok": self.ok, "checked": dict(self.checked), "problems": [p.as_json() for p in self.problems]}


@dataclass(frozen=True, slots=True)
class DoctorRecord:
    """The last doctor result kept in the file (``meta``), for the stats screen."""

    at: str
    ok: bool
    problems: int
    fixable: int
    kinds: Mapping[str, int]
    first: tuple[Problem, ...]
    full: bool
    seconds: float
    fixed: int = 0


class Health:
    """Checks one file (and keeps the last result in it); :mod:`.health_fix` repairs what it may."""

    def __init__(self, db: Db) -> None:
        self.db = db
        self._last_tick = 0.0

    # ------------------------------------------------------------------ the whole check
    def check(self, *, full: bool = False, version: int = SCHEMA_VERSION, on_progress: Progress | None = None
              ) -> HealthReport:
        """Every check, file-wide first (SQLite's own, foreign keys), then session by session.

        ``version``: the file's schema version; an older file gets SQLite's checks only (its
        tables lack what the others read) and a ``schema_old`` problem that ``--fix`` clears.
        """
        started = time.monotonic()
        problems: list[Problem] = []
        conn = self.db.conn
        checked: dict[str, int] = {"schema_version": version}
        checked["pages"] = int(conn.execute("PRAGMA page_count").fetchone()[0])
        problems += self._sqlite(full, on_progress)
        if version < SCHEMA_VERSION:
            problems.append(Problem("schema_old", None, (), f"schema {version}; this version of hiermem-tui uses "
                                    f"{SCHEMA_VERSION}: --fix upgrades it (as opening it in the app would), then "
                                    "checks the rest", True))
            return HealthReport(tuple(problems), checked, full, time.monotonic() - started)
        problems += self._guarded("foreign keys", self._foreign_keys)
        counts = {"sessions": 0, "episodes": 0, "summaries": 0, "edges": 0, "runs": 0}

        def sessions() -> list[Problem]:
            found: list[Problem] = []
            total = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
            for done, session_id in enumerate(self._session_ids(), 1):
                found += self._check_session(session_id, counts)
                self._tick(on_progress, "sessions", done, total, last=done == total)
            return found

        problems += self._guarded("the sessions", sessions)
        checked.update(counts)
        self._tick(on_progress, "search", 0, 1, last=True)

        def search() -> list[Problem]:
            found, rows = self._search()
            checked.update(rows)
            return found

        problems += self._guarded("the search index", search)
        self._tick(on_progress, "runs", 0, 1, last=True)
        problems += self._guarded("the runs", self._dead_runs)
        return HealthReport(tuple(problems), checked, full, time.monotonic() - started)

    @staticmethod
    def _guarded(what: str, check: Callable[[], list[Problem]]) -> list[Problem]:
        """A check a damaged page stops half-way: one ``sqlite`` problem saying what could not be checked."""
        try:
            return check()
        except sqlite3.DatabaseError as exc:
            return [Problem("sqlite", None, (), f"could not check {what}: {exc}", False)]

    def _tick(self, on_progress: Progress | None, phase: str, done: int, total: int, *, last: bool = False) -> None:
        """Progress at most ten times a second (a check of 10k sessions must not post 10k messages)."""
        if on_progress is None:
            return
        now = time.monotonic()
        if last or now - self._last_tick >= 0.1:
            self._last_tick = now
            on_progress(phase, done, total)

    # ------------------------------------------------------------------ file-wide
    def _sqlite(self, full: bool, on_progress: Progress | None) -> list[Problem]:
        """``PRAGMA quick_check`` (``integrity_check`` when ``full``), ticking progress while it runs."""
        conn = self.db.conn
        pragma = "integrity_check" if full else "quick_check"
        self._tick(on_progress, "pages", 0, 0, last=True)
        cancelled: list[CheckCancelled] = []

        def tick() -> int:
            try:
                self._tick(on_progress, "pages", 0, 0)
            except CheckCancelled as exc:
                cancelled.append(exc)
                return 1  # SQLite stops the statement ("interrupted")
            return 0

        if on_progress is not None:
            conn.set_progress_handler(tick, 200_000)
        try:
            lines = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}({MAX_SQLITE_LINES})")]
        except sqlite3.DatabaseError as exc:
            if cancelled:
                raise cancelled[0] from None
            lines = [f"{pragma} could not finish: {exc}"]
        finally:
            conn.set_progress_handler(None, 0)
        if lines == ["ok"]:
            return []
        return [Problem("sqlite", None, (), line, False) for line in lines]

    def _foreign_keys(self) -> list[Problem]:
        """``PRAGMA foreign_key_check``, one problem per (table, what it refers to), naming a few rows."""
        conn = self.db.conn
        groups: dict[tuple[str, str], list[int | None]] = {}
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
            groups.setdefault((table, parent), []).append(rowid)
        out = []
        for (table, parent), rowids in sorted(groups.items()):
            ids = self._row_ids(table, parent, [r for r in rowids if r is not None][:MAX_NAMED])
            out.append(Problem("foreign_key", None, ids,
                               f"{len(rowids):,} row(s) of {table} refer to {parent} rows that do not exist", False))
        return out

    def _row_ids(self, table: str, parent: str, rowids: list[int]) -> tuple[str, ...]:
        """Readable ids for a few offending rows (``summary_sources`` has no rowid: its summary ids)."""
        conn = self.db.conn
        if table == "summary_sources" and parent == "summaries":
            return tuple(r[0] for r in conn.execute(
                "SELECT DISTINCT summary_id FROM summary_sources WHERE summary_id NOT IN (SELECT id FROM summaries) "
                "LIMIT ?", (MAX_NAMED,)))
        key = {"episode_marks": "episode_id"}.get(table, "id")
        if table not in {"sessions", "episodes", "summaries", "runs", "episode_marks"} or not rowids:
            return ()
        marks = ",".join("?" * len(rowids))
        return tuple(str(r[0]) for r in conn.execute(f"SELECT {key} FROM {table} WHERE rowid IN ({marks})", rowids))

    def _session_ids(self) -> Iterator[str]:
        after = ""
        while True:
            page = [r[0] for r in self.db.conn.execute(
                "SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after, PAGE))]
            if not page:
                return
            yield from page
            after = page[-1]

    def _search(self) -> tuple[list[Problem], dict[str, int]]:
        """Every episode and summary recorded in ``search_docs``, and every row up to meta
        ``search_indexed`` in the FTS index (rows above it are pending: indexed before a search)."""
        conn = self.db.conn
        out: list[Problem] = []
        with self.db.read_snapshot():
            indexed = int(meta_value(conn, INDEXED_KEY) or 0)
            pending_backfill = meta_value(conn, BACKFILL_KEY) is not None
            last = int(conn.execute("SELECT coalesce(max(docid), 0) FROM search_docs").fetchone()[0])
            recorded = int(conn.execute("SELECT count(*) FROM search_docs WHERE docid <= ?", (indexed,)).fetchone()[0])
            in_index = int(conn.execute(
                "SELECT count(*) FROM search_index_docsize WHERE id <= ?", (indexed,)).fetchone()[0])
            if in_index < recorded or indexed > last:
                out.append(Problem("search_index", None, (), f"the search index holds {in_index:,} of the "
                                   f"{max(recorded, indexed):,} rows it should (docids 1–{indexed:,})", True))
            if not pending_backfill:
                out += self._unrecorded(conn)
        pending = last - min(indexed, last)
        return out, {"search_rows": last, "search_pending": pending}

    def _unrecorded(self, conn: sqlite3.Connection) -> list[Problem]:
        """Sessions with episodes or summaries that have no ``search_docs`` row. Three counts first;
        only when they disagree, grouped counts per session (and, for the first sessions, the rows)."""
        docs = dict(conn.execute("SELECT kind, count(*) FROM search_docs GROUP BY kind").fetchall())
        episodes = int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
        summaries = int(conn.execute("SELECT count(*) FROM summaries").fetchone()[0])
        if docs.get("episode", 0) >= episodes and docs.get("summary", 0) >= summaries:
            return []
        have: dict[tuple[str, str], int] = {}
        for sid, kind, n in conn.execute(
            "SELECT session_id, kind, count(*) FROM search_docs GROUP BY session_id, kind"
        ):
            have[(sid, kind)] = n
        out: list[Problem] = []
        for kind, table in (("episode", "episodes"), ("summary", "summaries")):
            for sid, n in conn.execute(f"SELECT session_id, count(*) FROM {table} GROUP BY session_id"):
                missing = n - have.get((sid, kind), 0)
                if missing <= 0:
                    continue
                ids: tuple[str, ...] = ()
                if len(out) < 20:  # name some rows (a scan of search_docs each): for the first sessions only
                    ids = tuple(r[0] for r in conn.execute(
                        f"SELECT id FROM {table} WHERE session_id = ? AND id NOT IN "
                        "(SELECT ref_id FROM search_docs WHERE kind = ? AND session_id = ?) LIMIT ?",
                        (sid, kind, sid, MAX_NAMED)))
                out.append(Problem("search_unrecorded", sid, ids,
                                   f"{missing:,} {kind}{'s' if missing != 1 else ''} not recorded for search", True))
        return out

    def _dead_runs(self) -> list[Problem]:
        out = []
        for rid, sid, pid, host in Runs(self.db).dead_running():
            where = f"process {pid} on {host}" if pid else "its process"
            out.append(Problem("run_dead", sid, (rid,), f"run {rid} still reads running but {where} is gone", True))
        return out

    # ------------------------------------------------------------------ one session
    def _check_session(self, session_id: str, counts: dict[str, int]) -> list[Problem]:
        try:
            with self.db.read_snapshot() as conn:
                agg = conn.execute(f"SELECT {', '.join(AGG_COLS)} FROM sessions WHERE id = ?", (session_id,)).fetchone()
                if agg is None:  # gone between the page and now: nothing to check
                    return []
                runs = conn.execute(
                    "SELECT id, normal, aggressive, fallback, summaries_created FROM runs WHERE session_id = ?",
                    (session_id,)).fetchall()
                s = check_session(conn, session_id, tuple(agg), runs)
        except sqlite3.DatabaseError as exc:
            return [Problem("sqlite", session_id, (), f"the session could not be read: {exc}", False)]
        counts["sessions"] += 1
        counts["episodes"] += s.episodes
        counts["summaries"] += len(s.nodes)
        counts["edges"] += sum(f.edges for f in s.leaves.values()) + sum(map(len, s.edges.values()))
        counts["runs"] += len(runs)
        return s.problems

    # ------------------------------------------------------------------ the last result
    def record(self, report: HealthReport, *, fixed: int = 0, at: str | None = None) -> DoctorRecord:
        """Keep ``report`` (its counts and first problems) as the file's last doctor result."""
        rec = doctor_record(report, fixed=fixed, at=at)
        value = json.dumps({
            "at": rec.at, "ok": rec.ok, "problems": rec.problems, "fixable": rec.fixable, "kinds": dict(rec.kinds),
            "first": [p.as_json() for p in rec.first], "full": rec.full, "seconds": round(rec.seconds, 3),
            "fixed": rec.fixed,
        }, ensure_ascii=False)
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = "
                         "excluded.value", (LAST_KEY, value))
        return rec

    def last(self) -> DoctorRecord | None:
        """The last result kept by :meth:`record` (None: never, or unreadable)."""
        text = meta_value(self.db.conn, LAST_KEY)
        try:
            v = json.loads(text) if text else None
            if not isinstance(v, dict):
                return None
            first = tuple(Problem(str(p["kind"]), p.get("session"), tuple(map(str, p.get("ids", ()))),
                                  str(p.get("detail", "")), bool(p.get("fixable"))) for p in v.get("first", ()))
            return DoctorRecord(str(v["at"]), bool(v["ok"]), int(v["problems"]), int(v.get("fixable", 0)),
                                {str(k): int(n) for k, n in dict(v.get("kinds", {})).items()}, first,
                                bool(v.get("full")), float(v.get("seconds", 0.0)), int(v.get("fixed", 0)))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def doctor_record(report: HealthReport, *, fixed: int = 0, at: str | None = None) -> DoctorRecord:
    """What is kept of a report: counts by kind and the first problems (``at``: now)."""
    kinds: dict[str, int] = {}
    for p in report.problems:
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    return DoctorRecord(at or utcnow(), report.ok, len(report.problems), report.fixable, kinds,
                        report.problems[:MAX_NAMED], report.full, report.seconds, fixed)
