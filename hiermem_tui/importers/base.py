"""What every importer produces, and how it reports trouble.

An importer is a module with ``NAME``, ``DESCRIPTION``, ``sniff(path, head) -> bool`` and
``parse(path, problems) -> Iterator[ParsedSession]``. Parsers know nothing of the store:
they turn a source into sessions of episodes, and ``importers.load`` writes them. That
keeps each format testable on its own and lets the store decide ids, seq and tokens.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

ROLES = ("user", "assistant", "system", "tool")


class FormatError(Exception):
    """The input is not of the format asked for (or is unreadable): exit 2, nothing written."""


@dataclass(slots=True)
class ParsedEpisode:
    """One message as the source has it.

    ``source_id`` is the source's own id for the message (used to make imports idempotent);
    None means the source has none, and the position in the session is used instead.
    ``created_at`` is timezone-aware UTC, or None when the source has no timestamp (the store
    then fills one deterministically and flags it synthetic).
    ``former_content`` is the text an earlier version of the importer stored for this same
    message, when it rendered it differently: a stored episode with that text is this message
    as imported before, not an older version of it (see ``_versions``).
    """

    role: str
    content: str
    created_at: datetime | None = None
    source_id: str | None = None
    metadata: dict[str, Any] | None = None
    former_content: str | None = None


@dataclass(slots=True)
class ParsedSummary:
    """A summary another tool made of the session (its DAG comes with the conversation).

    ``source_id`` is that tool's id for it. A leaf names the messages it covers in
    ``episodes`` (their ``ParsedEpisode.source_id``), a condensed summary its sources in
    ``summaries`` (their ``source_id``s), both in the tool's order. ``superseded``: the tool
    itself replaced it; ``replaces`` names the summaries it is the newer version of. Nothing
    here is trusted: ``importers._summaries`` checks the DAG against the store's invariants
    before it writes any of it.
    """

    source_id: str
    kind: Literal["leaf", "condensed"]
    depth: int
    content: str
    backend: str
    model: str | None = None
    tier: Literal["normal", "aggressive", "fallback"] = "normal"
    episodes: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    input_tokens: int | None = None
    """The tool's count of what it summarised."""
    output_tokens: int | None = None
    """The tool's count of the summary's text."""
    superseded: bool = False
    replaces: list[str] = field(default_factory=list)
    trimmed: str | None = None
    """``"clipped"`` when the tool cut the text to a size."""


@dataclass(slots=True)
class ParsedSession:
    """One conversation. ``id`` is stable across imports of the same source (``<format>:<id>``)
    and unique across sources: two different conversations never share one.

    ``former_ids`` are ids an earlier version of the importer gave this conversation; the loader
    keeps using one of them when the store holds this very conversation under it (see ``_versions``).
    """

    id: str
    title: str
    source: str
    episodes: list[ParsedEpisode]
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    former_ids: list[str] = field(default_factory=list)
    summaries: list[ParsedSummary] = field(default_factory=list)
    """The summary DAG the source keeps of this conversation (only formats that have one)."""


@dataclass
class Problems:
    """Malformed records skipped during an import: a count per reason and the first few places."""

    max_examples: int = 5
    count: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    summaries: Counter[str] = field(default_factory=Counter)
    """Another tool's summaries not imported, by reason (their episodes are imported all the same)."""

    def skip(self, reason: str, where: str = "") -> None:
        """Record one skipped record. ``where`` is e.g. ``file.jsonl:12``."""
        self.count += 1
        self.reasons[reason] += 1
        if len(self.examples) < self.max_examples:
            self.examples.append(f"{where}: {reason}" if where else reason)

    def skip_summary(self, reason: str) -> None:
        """Record one of another tool's summaries that is not imported, and why."""
        self.summaries[reason] += 1

    def merge(self, other: Problems) -> None:
        """Add ``other``'s counts and as many of its examples as there is room for."""
        self.count += other.count
        self.reasons.update(other.reasons)
        self.summaries.update(other.summaries)
        room = self.max_examples - len(self.examples)
        self.examples.extend(other.examples[: max(room, 0)])

    def summary(self) -> str:
        if not self.count:
            return ""
        top = ", ".join(f"{r} ({n})" for r, n in self.reasons.most_common(3))
        return f"skipped {self.count} malformed record(s): {top}"

    def summaries_line(self) -> str:
        """``3 summaries not imported: leaf over non-contiguous messages (2), …`` ("" when none)."""
        n = sum(self.summaries.values())
        if not n:
            return ""
        why = ", ".join(f"{r} ({k})" for r, k in self.summaries.most_common())
        return f"{n} summar{'y' if n == 1 else 'ies'} not imported: {why}"


def text_field(obj: dict[str, Any], key: str) -> str:
    """``obj[key]`` when it is a string, else "" (exports hold null, numbers or objects where
    a string is documented)."""
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def dict_field(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is an object, else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


# Times outside [1970, 3000) are treated as missing (the store then fills a synthetic one).
_EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
_LATEST = datetime(3000, 1, 1, tzinfo=timezone.utc)
_LATEST_EPOCH = 32503680000  # _LATEST as Unix seconds


def utc_from_epoch(value: Any) -> datetime | None:
    """Unix seconds (int/float/str) → aware UTC datetime; None for missing or absurd values."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float's range
        return None
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    if not (0 < seconds < _LATEST_EPOCH):
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _read_iso(value: Any) -> datetime | None:
    """ISO-8601 text as datetime reads it (``Z`` accepted, naive taken as UTC), not yet converted to UTC;
    None if unreadable."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        # SQLite-style "2024-01-02 03:04:05.123456" is handled by fromisoformat too.
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def is_iso_text(value: Any) -> bool:
    """Whether ``value`` is ISO-8601 text at all, sane or not: lets a strict format tell a malformed
    time (a bad record) from an absurd one like year 1 (a time to treat as missing)."""
    return _read_iso(value) is not None


def utc_from_iso(value: Any) -> datetime | None:
    """ISO-8601 text (``Z`` or offset; naive means UTC) → aware UTC datetime; None for missing,
    malformed or absurd (outside 1970–2999) values."""
    dt = _read_iso(value)
    if dt is None:
        return None
    try:
        # Converting year 1 or 9999 with an offset leaves datetime's range: OverflowError.
        dt = dt.astimezone(timezone.utc)
    except OverflowError:
        return None
    # Same window as utc_from_epoch: a chat before 1970 or after 2999 is a placeholder or junk,
    # and such times only break arithmetic further on (durations, the store's synthetic fill).
    if not (_EARLIEST <= dt < _LATEST):
        return None
    return dt


def read_head(path: Path, size: int = 65536) -> bytes:
    """The first bytes of a file (for sniffing); empty for directories."""
    if path.is_dir():
        return b""
    with path.open("rb") as fh:
        return fh.read(size)
