"""What each browsing widget reads, as narrow protocols.

A widget that pages a list should not be able to write a summary, and its tests should not
need a whole store: the tree, the transcript and the sessions table each take the smallest
slice of :class:`~hiermem_tui.store.Store` they use. ``Store`` satisfies all of them (its
repositories have these methods); anything else that does can stand in for it.
"""

from __future__ import annotations

from typing import Protocol

from .marks import Mark
from .models import Episode, Session, Summary


class SessionLookup(Protocol):
    def get(self, session_id: str) -> Session | None: ...


class SessionPages(Protocol):
    def count(self, text: str | None = None) -> int: ...

    def position(
        self, session_id: str, *, sort: str = "updated", descending: bool = True, text: str | None = None
    ) -> int | None: ...

    def page(
        self, *, sort: str = "updated", descending: bool = True, text: str | None = None,
        limit: int | None = None, offset: int = 0,
    ) -> list[Session]: ...


class EpisodePages(Protocol):
    def page(self, session_id: str, *, after_seq: int = -1, limit: int = 200) -> list[Episode]: ...

    def before(self, session_id: str, *, before_seq: int, limit: int = 200) -> list[Episode]: ...


class DagReads(Protocol):
    def get(self, summary_id: str) -> Summary | None: ...

    def top(self, session_id: str) -> list[Summary]: ...

    def children(self, summary_id: str) -> list[Summary]: ...

    def covering_chain(self, session_id: str, seq: int) -> list[Summary]: ...

    def unsummarised_ranges(self, session_id: str) -> list[tuple[int, int]]: ...


class MarkReads(Protocol):
    def of(self, session_id: str, first_seq: int = 0, last_seq: int | None = None) -> dict[int, Mark]: ...


class TreeSource(Protocol):
    """What the summary tree reads: a session's size, its DAG, and episode pages under a leaf."""

    @property
    def sessions(self) -> SessionLookup: ...

    @property
    def dag(self) -> DagReads: ...

    @property
    def episodes(self) -> EpisodePages: ...


class TranscriptSource(Protocol):
    """What the transcript reads: episode pages either way, and their pin/exclude marks."""

    @property
    def episodes(self) -> EpisodePages: ...

    @property
    def marks(self) -> MarkReads: ...


class SessionListSource(Protocol):
    """What the sessions table reads: counts, pages and positions in one order and filter."""

    @property
    def sessions(self) -> SessionPages: ...
