"""SQLite storage for sessions, episodes, summaries (with source edges) and runs.

:class:`Store` is a small facade: ``store.sessions``, ``store.episodes``, ``store.dag``,
``store.runs``, ``store.marks``, ``store.speeds``, ``store.search`` and ``store.stats`` are the
repositories, sharing one :class:`Db` (``store.db``: connections, transactions, snapshots).
"""

from .dag import Dag, InvariantViolation
from .rows import new_id
from .db import DamagedDatabase, Db, ForeignDatabase, NewerSchema, NotADatabase, ReadOnlyError, StoreError
from .models import (
    IMPORTED_PROMPT,
    RUN_STATUSES,
    STOPPED_EARLY,
    TIERS,
    Brief,
    Episode,
    NewSummary,
    Run,
    Session,
    Summary,
    SummarySpan,
    SummaryWrite,
    iso,
    parse_iso,
    utcnow,
)
from .schema import SCHEMA_VERSION
from .episodes import AppendResult, NewEpisode
from .store import Store

__all__ = [
    "Brief",
    "IMPORTED_PROMPT", "RUN_STATUSES", "STOPPED_EARLY", "TIERS", "SCHEMA_VERSION", "AppendResult", "Dag", "DamagedDatabase", "Db", "Episode", "ForeignDatabase",
    "InvariantViolation", "NewEpisode", "NewSummary", "NewerSchema", "NotADatabase", "ReadOnlyError", "Run",
    "Session", "Store", "StoreError", "Summary", "SummarySpan", "SummaryWrite", "iso", "new_id", "parse_iso",
    "utcnow",
]
