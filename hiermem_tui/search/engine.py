"""Ranked full-text search over episodes and summaries (FTS5, bm25), with snippets.

Why ranking is capped: bm25 must score every matching row before it can sort them, about
1.5 µs a row; a word found in 800k of a million episodes ("the") would take over a second. So
when a query matches more than :data:`RANK_WINDOW` rows, only the newest ``RANK_WINDOW`` of
them (by when they were written to the file) are ranked, and the result says so
(``SearchResult.capped``). Finding where that window starts is one walk down the doclist in
rowid order, which FTS5 does without scoring.

Superseded summaries are left out unless asked for: the tree shows only active ones, and an
old version is reached from its active successor (``v``, versions). Episodes always count.

Our writes index what they write as they commit (store/search_index.py); before it searches,
:func:`search` still brings the index up to date for rows others left (another tool, an older
version, an upgrade's backfill) — three lookups when nothing is new. A caller that wants to show
progress for a big catch-up runs ``build_search_index`` first. A reader that cannot write (a
read-only file, the MCP server) searches the newest rows above the index's cursor by a scan
(``scan_unindexed``) and merges their hits into the index's by rank.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, Literal

from ..store.search_index import Scan, build_search_index, scan_unindexed, search_index_status, session_token
from .query import ParsedQuery, QueryError, Term, parse_query
from .snippet import REACH, WIDTH, Snippet, cut_snippet, make_snippet

if TYPE_CHECKING:
    from ..store import Store

RANK_WINDOW = 10_000
"""At most this many matching rows, the newest, are ranked by bm25."""
DEFAULT_LIMIT = 20
Ranked = tuple[str, str, float]
"""``(kind, ref_id, rank)``: a matching row, as the index and the scan rank it."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching episode or summary, best first in :class:`SearchResult`."""

    session_id: str
    kind: Literal["episode", "summary"]
    id: str
    first_seq: int
    last_seq: int
    snippet: Snippet
    rank: float
    created_at: str
    """The episode's time, or the end of the summary's time range."""
    role: str | None = None
    depth: int | None = None
    tier: str | None = None
    active: bool = True
    """False for a superseded summary (only with ``include_superseded``)."""

    def as_json(self) -> dict[str, Any]:
        """The ``search --json`` element (ARCHITECTURE §6): exactly these keys."""
        return {
            "session": self.session_id,
            "kind": self.kind,
            "id": self.id,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "snippet": self.snippet.text,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: ParsedQuery
    hits: tuple[SearchHit, ...]
    capped: bool
    """True when more than RANK_WINDOW rows matched and only the newest were ranked."""
    unindexed: int = 0
    """Rows not searched: above the index's cursor on a file this process cannot index, and beyond
    what the scan takes (:data:`~hiermem_tui.store.search_index.SCAN_ROWS`, the newest)."""
    scanned: int = 0
    """Rows above the index's cursor that were searched by a scan instead (a reader that cannot index)."""


def _match_expr(query: ParsedQuery, session_id: str | None) -> str:
    expr = f"text : {query.fts}"
    if session_id is not None:
        expr = f'sess : "{session_token(session_id)}" AND {expr}'
    return expr


def search(
    store: Store,
    text: str | ParsedQuery,
    *,
    session_id: str | None = None,
    limit: int = DEFAULT_LIMIT,
    include_superseded: bool = False,
    snippet_width: int = WIDTH,
    mask: Callable[[str], str] | None = None,
) -> SearchResult:
    """The ``limit`` best hits for ``text`` (optionally within one session).

    ``mask`` masks secrets in each hit's snippet (the MCP server, the TUI's f4): the snippet is found
    in the raw text, the lines around it are masked whole (``redact.masked_lines``: a key cut in half
    at a snippet's edge would not be recognised) and the snippet cut again from them.
    Raises :class:`QueryError` for a query that cannot be searched (one line, for the user).
    """
    query = parse_query(text) if isinstance(text, str) else text
    expr = _match_expr(query, session_id)
    build_search_index(store)
    scan = Scan([], 0)
    try:
        with store.db.read_snapshot() as conn:
            status = search_index_status(store)
            if status.pending:  # a reader that cannot index: the rows it has not reached, by a scan
                scan = scan_unindexed(conn, expr)
            lowest = store.search.lowest_ranked_rowid(expr, RANK_WINDOW)
            hits: list[SearchHit] = []
            if limit > 0:
                for page in _pages(store.search.ranked(expr, lowest or 0, limit + 8), scan.hits, limit + 8):
                    hits += _hits(store, page, query, include_superseded, snippet_width, mask, session_id,
                                  limit - len(hits))
                    if len(hits) >= limit:
                        break
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc) or "syntax error" in str(exc):
            raise QueryError(f"the search index cannot read this query ({exc})") from None
        raise
    left = status.missing - scan.scanned if status.pending else 0
    return SearchResult(query, tuple(hits), lowest is not None, left, scan.scanned)


def _pages(indexed: Iterable[list[Ranked]], scanned: list[Ranked], size: int) -> Iterator[list[Ranked]]:
    """The index's ranked pages, with the scan's hits merged in by rank (bm25: lower is better)."""
    if not scanned:
        yield from indexed
        return
    merged = heapq.merge(chain.from_iterable(indexed), scanned, key=lambda r: r[2])
    while page := list(islice(merged, size)):
        yield page


def _hits(
    store: Store, page: list[Ranked], query: ParsedQuery, superseded: bool, width: int,
    mask: Callable[[str], str] | None, session_id: str | None, want: int,
) -> list[SearchHit]:
    """Hits for a page of ranked rows, in rank order: two queries for the page, not two per row
    (each query hands the GIL back and forth, which a busy UI thread makes slow)."""
    found: dict[str, tuple[Any, ...]] = {}
    for kind in ("episode", "summary"):
        ids = [ref for k, ref, _ in page if k == kind]
        if ids:
            found.update((row[0], row) for row in store.search.hit_rows(kind, ids))
    out: list[SearchHit] = []
    for kind, ref_id, rank in page:
        row = found.get(ref_id)
        if row is None or (row[9] != "active" and not superseded) or (session_id is not None and row[1] != session_id):
            continue
        if len(out) >= want:  # the rest of the page is not needed: no snippet (nor masking) for it
            break
        text = row[4]
        snippet = make_snippet(text, query.terms, width) if mask is None else _masked(text, query.terms, width, mask)
        out.append(SearchHit(
            row[1], kind, ref_id, row[2], row[3], snippet, rank,  # type: ignore[arg-type]
            row[5], role=row[6], depth=row[7], tier=row[8], active=row[9] == "active",
        ))
    return out


def _masked(text: str, terms: tuple[Term, ...], width: int, mask: Callable[[str], str]) -> Snippet:
    """The snippet of ``text`` with its secrets masked, masking only the lines it comes from: the
    snippet is cut from the raw text; the lines it comes from — to :data:`REACH` past its end, which
    holds the window it was chosen by — are masked (exactly as masking the whole text masks them);
    when nothing in them was masked the raw snippet stands, else the snippet is cut again from the
    masked lines (a mark is shorter or longer than what it hides: the snippet may move a little)."""
    from ..redact import masked_lines  # here: the CLI's search never masks

    raw, start, end = cut_snippet(text, terms, width)
    piece, a, b = masked_lines(mask, text, start, end + REACH)
    if piece == text[a:b]:
        return raw
    return make_snippet(piece, terms, width, more_before=a > 0, more_after=b < len(text))
