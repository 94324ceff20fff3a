"""Read-only queries that serve whole features rather than one table: stats and search.

Why here and not in ``stats.py`` / ``search/engine.py``: every query against our schema lives
in the store, so a schema change is one package's business; those modules shape the rows
these return into what the CLI and the TUI show.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .db import Db
from .schema import KEY_RETENTION

# ---------------------------------------------------------------- stats


def _where(*clauses: str) -> str:
    kept = [c for c in clauses if c]
    return (" WHERE " + " AND ".join(kept)) if kept else ""


class StatsQueries:
    """What compaction bought, from the session aggregates and grouped queries on the indexes."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def sizes(self, session_id: str | None) -> tuple[int, int, int, int, int, int, float | None]:
        """(sessions, episodes, raw tokens, tokens a model sees, top-summary tokens, covered episodes,
        lowest key-name retention) of one session or the whole file, from the aggregates."""
        row = self.db.conn.execute(
            "SELECT count(*), coalesce(sum(episode_count), 0), coalesce(sum(token_count), 0), "
            "coalesce(sum(token_count - covered_tokens + top_tokens), 0), coalesce(sum(top_tokens), 0), "
            "coalesce(sum(covered_episodes), 0), min(min_retention) FROM sessions"
            + ("" if session_id is None else " WHERE id = ?"),
            () if session_id is None else (session_id,),
        ).fetchone()
        return tuple(row)

    def summary_groups(self, session_id: str | None, threshold: float) -> Iterator[tuple[Any, ...]]:
        """Per (depth, tier) of the active summaries: count, tokens, source tokens, how many are
        low-fidelity at ``threshold`` (by key names; by retention for older rows), how many measured."""
        of_session = "" if session_id is None else "session_id = ?"
        yield from self.db.conn.execute(
            "SELECT depth, tier, count(*), sum(tokens), sum(source_tokens), "
            f"sum(coalesce({KEY_RETENTION} < ?, 0)), "
            "sum(fid_identifiers IS NOT NULL) "
            # the whole file reads the covering index (no summary text); one session, its own index
            "FROM summaries" + ("" if of_session else " INDEXED BY summaries_stats")
            + _where(of_session, "status = 'active'") + " GROUP BY depth, tier",
            (threshold, *(() if session_id is None else (session_id,))),
        )

    def summary_count(self, session_id: str | None) -> int:
        """Every summary, active or superseded."""
        return int(self.db.conn.execute(
            "SELECT count(*) FROM summaries" + _where("" if session_id is None else "session_id = ?"),
            () if session_id is None else (session_id,),
        ).fetchone()[0])

    def run_groups(self, session_id: str | None) -> Iterator[tuple[Any, ...]]:
        """Per (backend, model, status) of the runs: runs, summaries made, model and wall seconds."""
        yield from self.db.conn.execute(
            "SELECT backend, model, status, count(*), sum(summaries_created), sum(llm_seconds), sum(wall_seconds) "
            "FROM runs" + _where("" if session_id is None else "session_id = ?") + " GROUP BY backend, model, status",
            () if session_id is None else (session_id,),
        )


# ---------------------------------------------------------------- search

_RANKED = """
    SELECT d.kind, d.ref_id, f.rank FROM search_index f JOIN search_docs d ON d.docid = f.rowid
    WHERE search_index MATCH ? AND f.rowid >= ? ORDER BY f.rank
"""
_EPISODE_SQL = "SELECT id, session_id, seq, seq, content, created_at, role, NULL, NULL, 'active' FROM episodes"
# a summary's keywords are searchable with it (schema 4): the snippet is cut from both
_SUMMARY_SQL = ("SELECT id, session_id, first_seq, last_seq, content || coalesce(char(10) || 'Keywords: ' || "
                "(SELECT group_concat(value, ', ') FROM json_each(keywords)), ''), end_at, NULL, depth, tier, status "
                "FROM summaries")


class SearchQueries:
    """The full-text index (``search_index``, contentless FTS5 over ``search_docs``), ranked by bm25."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def lowest_ranked_rowid(self, match: str, window: int) -> int | None:
        """The rowid above which the newest ``window`` matches lie (None: fewer match)."""
        row = self.db.conn.execute(
            "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, window),
        ).fetchone()
        return int(row[0]) + 1 if row else None

    def ranked(self, match: str, lowest: int, page: int) -> Iterator[list[tuple[str, str, float]]]:
        """``(kind, ref_id, rank)`` of the matches at or above rowid ``lowest``, best first, a page at a time."""
        cursor = self.db.conn.execute(_RANKED, (match, lowest))
        while batch := cursor.fetchmany(page):
            yield batch

    def hit_rows(self, kind: str, ids: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """For episodes or summaries by id: ``(id, session, first_seq, last_seq, text, time, role, depth,
        tier, status)`` — a summary's text with its keywords, where a hit may have matched."""
        sql = _EPISODE_SQL if kind == "episode" else _SUMMARY_SQL
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            yield from self.db.conn.execute(f"{sql} WHERE id IN ({marks})", chunk)
