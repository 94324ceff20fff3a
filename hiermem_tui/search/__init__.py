"""Full-text search over episodes and summaries: the query language, ranking, snippets.

Headless (no Textual): the CLI's ``search`` and the TUI's search screen both call
:func:`search`. The index itself (FTS5 tables, triggers, building it for older files) is
part of the store: store/schema.py (version 3) and store/search_index.py.
"""

from ..store.search_index import IndexStatus, build_search_index, search_index_status
from .engine import DEFAULT_LIMIT, RANK_WINDOW, SearchHit, SearchResult, search
from .query import ParsedQuery, QueryError, Term, parse_query
from .snippet import Snippet, make_snippet

__all__ = [
    "DEFAULT_LIMIT", "RANK_WINDOW", "IndexStatus", "ParsedQuery", "QueryError", "SearchHit", "SearchResult",
    "Snippet", "Term", "build_search_index", "make_snippet", "parse_query", "search", "search_index_status",
]
