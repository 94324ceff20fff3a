"""SQLite storage for sessions, episodes, summaries (with source edges) and runs."""

from .dag import InvariantViolation, new_id
from .db import DamagedDatabase, ForeignDatabase, NewerSchema, NotADatabase, ReadOnlyError, StoreError
from .models import (
    TIERS,
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
    "TIERS", "SCHEMA_VERSION", "AppendResult", "DamagedDatabase", "Episode", "ForeignDatabase",
    "InvariantViolation", "NewEpisode", "NewSummary", "NewerSchema", "NotADatabase", "ReadOnlyError", "Run",
    "Session", "Store", "StoreError", "Summary", "SummarySpan", "SummaryWrite", "iso", "new_id", "parse_iso",
    "utcnow",
]
