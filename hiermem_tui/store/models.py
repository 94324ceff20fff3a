"""Row types returned by the store. Plain frozen dataclasses: cheap, hashable, Textual-free."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from ..fidelity_value import Fidelity

Role = Literal["user", "assistant", "system", "tool"]
Tier = Literal["normal", "aggressive", "fallback"]
SummaryKind = Literal["leaf", "condensed"]
RunKind = Literal["leaf", "condense", "full", "resummarize", "resummarize-session", "repair"]
RunStatus = Literal["running", "done", "cancelled", "failed", "interrupted", "budget", "paused", "moved"]
RUN_STATUSES: tuple[RunStatus, ...] = ("done", "running", "cancelled", "failed", "interrupted", "budget", "paused",
                                       "moved")
"""Every status a run may have. ``cancelled``: a user's cancel (esc, ctrl+c); ``interrupted``: the process
running it went away. The last three are runs that stopped early without failing and without being
cancelled, their finished summaries kept and the rest still due: ``budget`` (``compact --for``'s time
ran out), ``paused`` (the background backlog was stopped, or the app quit under it), ``moved`` (the backlog
left the session for one moved to the front, or for an interactive run on it; queued again)."""
STOPPED_EARLY: frozenset[str] = frozenset({"budget", "paused", "moved"})
"""The statuses of a run that ended early for an ordinary reason (see :data:`RUN_STATUSES`)."""
TIERS: tuple[Tier, ...] = ("normal", "aggressive", "fallback")
IMPORTED_PROMPT = "imported"
"""The ``prompt_version`` of a summary another tool made (lossless-claw, lossless-code): its
prompt is not known; its ``backend`` names the tool."""


def iso(dt: datetime) -> str:
    """The one timestamp format the store writes: UTC, millisecond precision, ``Z``.

    One fixed-width format means text order is time order, so SQL can compare and
    ``max()`` timestamps without parsing them.
    """
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    elif dt.tzinfo is not timezone.utc:
        dt = dt.astimezone(timezone.utc)
    # isoformat pads the year (strftime's %Y does not, for years before 1000) and is ~5× faster
    return dt.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def parse_iso(text: str) -> datetime:
    """Inverse of :func:`iso` (also accepts any ISO-8601 text with an offset)."""
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


def utcnow() -> str:
    return iso(datetime.now(timezone.utc))


SYNTHETIC_BASE = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Where the times of a source that keeps none start: its session's ``created_at``, and its episodes
at one second apart from here (flagged ``synthetic_time``). No chat log is from January 2000."""
_SYNTHETIC_MONTH = "2000-01-"


def synthetic_stamp(stamp: str | None) -> bool:
    """Whether ``stamp`` (as the store writes times) is one the store filled in, not the source's."""
    return bool(stamp) and str(stamp).startswith(_SYNTHETIC_MONTH)


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    title: str
    source: str
    source_ref: str | None
    created_at: str
    updated_at: str
    episodes: int
    tokens: int
    summaries: int
    max_depth: int | None
    covered_episodes: int
    covered_tokens: int
    fallbacks: int
    top_tokens: int
    last_summarized_seq: int | None
    last_summary_at: str | None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)
    min_retention: float | None = None
    """Lowest identifier retention among the active summaries (None: none measured)."""
    about: str | None = None
    """The first line of the session's brief: what it was about (None: no brief yet)."""

    @property
    def times_known(self) -> bool:
        """False for a session whose source kept no times (ShareGPT, oterm, some JSONL): its ``created_at``
        and its episodes' times were filled in, and its ``updated_at`` is when it was first imported;
        the time orders list it after the sessions with times (store/sessions.py)."""
        return not synthetic_stamp(self.created_at)

    @property
    def coverage(self) -> float:
        """Fraction of episodes under an active leaf (0..1)."""
        return self.covered_episodes / self.episodes if self.episodes else 0.0

    @property
    def uncompacted_tokens(self) -> int:
        """What a model would see now: unsummarised episodes plus top-level summaries."""
        return self.tokens - self.covered_tokens + self.top_tokens

    @property
    def new_episodes(self) -> int:
        """Episodes after the last active leaf (what a leaf pass could still take)."""
        done = -1 if self.last_summarized_seq is None else self.last_summarized_seq
        return self.episodes - (done + 1)

    def as_json(self) -> dict[str, Any]:
        """The ``sessions --json`` element (ARCHITECTURE §6), plus a few extra fields."""
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "episodes": self.episodes,
            "tokens": self.tokens,
            "summaries": self.summaries,
            "max_depth": self.max_depth,
            "covered_episodes": self.covered_episodes,
            "fallbacks": self.fallbacks,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "uncompacted_tokens": self.uncompacted_tokens,
            "times_known": self.times_known,
            "about": self.about,
        }


@dataclass(frozen=True, slots=True)
class Episode:
    id: str
    session_id: str
    seq: int
    role: Role
    content: str
    created_at: str
    tokens: int
    synthetic_time: bool
    metadata: dict[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Summary:
    id: str
    session_id: str
    depth: int
    kind: SummaryKind
    status: Literal["active", "superseded"]
    tier: Tier
    backend: str
    model: str | None
    prompt_version: str
    content: str
    tokens: int
    source_tokens: int
    input_tokens: int | None
    output_tokens: int | None
    first_seq: int
    last_seq: int
    start_at: str
    end_at: str
    parent_id: str | None
    supersedes: str | None
    superseded_by: str | None
    created_at: str
    duration_s: float
    llm_seconds: float
    run_id: str | None
    fidelity: Fidelity | None = None
    """Its names measured against its sources (None: made before fidelity was measured)."""
    fid_added: bool = False
    """Lost names were kept beside it as keywords (schema < 4: an "Also mentioned" line was
    appended to its text)."""
    fid_pins_missing: tuple[str, ...] = ()
    """Pinned episodes covered by the summary whose text it does not carry verbatim."""
    rejections: tuple[dict[str, Any], ...] = ()
    """Attempts rejected while making it, in order: ``{"tier", "reason", "detail", "seconds"}``."""
    keywords: tuple[str, ...] = ()
    """Names of its sources the text does not carry, most important first: shown, exported and
    searchable with the summary, never part of the text a model is given."""
    trimmed: str | None = None
    """``"clipped"`` when the model's answer ran past its target and was cut at a boundary."""

    @property
    def retention(self) -> float | None:
        """Kept / identifiers (None when not measured; 1.0 when the sources had none)."""
        return None if self.fidelity is None else self.fidelity.retention

    @property
    def key_retention(self) -> float | None:
        """The figure the low-fidelity flag is judged on (see ``Fidelity.key_retention``; None:
        not measured)."""
        return None if self.fidelity is None else self.fidelity.key_retention

    def low_fidelity(self, threshold: float) -> bool:
        """Flagged: it kept under ``threshold`` of its key names."""
        return self.fidelity is not None and self.fidelity.low(threshold)

    @property
    def episode_count(self) -> int:
        return self.last_seq - self.first_seq + 1

    @property
    def ratio(self) -> float:
        """Compression: output tokens / source tokens."""
        return self.tokens / self.source_tokens if self.source_tokens else 0.0


@dataclass(frozen=True, slots=True)
class SummarySpan:
    """The lightweight shape of a summary for maps and planners (no text)."""

    id: str
    depth: int
    kind: SummaryKind
    tier: Tier
    first_seq: int
    last_seq: int
    tokens: int
    parent_id: str | None
    start_at: str
    end_at: str
    retention: float | None = None
    """The low-fidelity figure: key names kept / key names (identifiers kept / in the sources for
    summaries measured before schema 4); None when not measured, or the sources had none."""


@dataclass(frozen=True, slots=True)
class Brief:
    """A session's brief (store/briefs.py): its text starts with the about line."""

    id: str
    session_id: str
    status: str
    title: str
    about: str
    text: str
    first_seq: int
    last_seq: int
    tier: str
    backend: str
    model: str | None
    prompt_version: str
    tokens: int
    llm_seconds: float
    run_id: str | None
    created_at: str

    def as_json(self) -> dict[str, Any]:
        """The ``brief`` of ``export --format json``."""
        return {"text": self.text, "first_seq": self.first_seq, "last_seq": self.last_seq, "made_by": self.backend,
                "model": self.model, "tier": self.tier, "title": self.title, "about": self.about,
                "created_at": self.created_at}


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    session_id: str
    kind: RunKind
    status: RunStatus
    backend: str
    model: str | None
    started_at: str
    finished_at: str | None
    normal: int
    aggressive: int
    fallback: int
    summaries_created: int
    llm_seconds: float
    wall_seconds: float
    error: str | None
    target: str | None
    rejections: dict[str, int] = field(default_factory=dict, compare=False)
    """Rejected model attempts by reason over the whole run."""
    planned: int | None = None
    """Summaries the run expected to make when it started."""
    flagged: int = 0
    """Of the summaries it wrote, those flagged low-fidelity when written (beside the tiers, so
    "7 normal" never reads as success when 7 are flagged)."""

    @property
    def tiers(self) -> dict[str, int]:
        return {"normal": self.normal, "aggressive": self.aggressive, "fallback": self.fallback}

    def as_json(self) -> dict[str, Any]:
        """The ``runs`` element of ``export --format json`` (ARCHITECTURE §6)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "backend": self.backend,
            "model": self.model,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "tiers": self.tiers,
            "flagged": self.flagged,
            "summaries_created": self.summaries_created,
            "llm_seconds": round(self.llm_seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "error": self.error,
        }


@dataclass(slots=True)
class NewSummary:
    """A summary to write. Coverage, times and ``source_tokens`` are derived by the store."""

    id: str
    session_id: str
    depth: int
    tier: Tier
    backend: str
    model: str | None
    prompt_version: str
    content: str
    tokens: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    duration_s: float = 0.0
    llm_seconds: float = 0.0
    run_id: str | None = None
    fidelity: Fidelity | None = None
    """Its names measured against its sources, as the summariser (or ``check``, an import) measured them."""
    fid_added: bool = False
    fid_pins_missing: Sequence[str] = ()
    rejections: Sequence[Mapping[str, Any]] = ()
    """Rejected attempts ``{"tier", "reason", "detail", "seconds"}``; their reasons are also counted on the run."""
    keywords: Sequence[str] = ()
    trimmed: str | None = None
    created_at: str | None = None
    """When it was made, if not now (a summary another tool made, brought in by an import)."""
    flagged: bool = False
    """Flagged low-fidelity as it is written: counted on its run (``runs.flagged``)."""


@dataclass(slots=True)
class SummaryWrite:
    """One summary and its edges. Exactly one of ``episode_range`` (leaf) or ``source_ids``
    (condensed) is set. ``supersede`` lists active summaries this write replaces.

    ``superseded`` writes the summary as an old version from the start, replaced by
    ``superseded_by`` (an id, or None when the newer version is not known): history another tool
    kept, brought in by an import. The rules about *active* summaries (disjoint leaves, one
    active parent, contiguous sources) do not apply to it; its edges are checked all the same,
    and it never becomes its sources' parent."""

    summary: NewSummary
    episode_range: tuple[int, int] | None = None
    source_ids: list[str] | None = None
    supersede: list[str] = field(default_factory=list)
    superseded: bool = False
    superseded_by: str | None = None
