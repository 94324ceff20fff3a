"""The one value a summary's fidelity is: :class:`Fidelity`.

``summarize/fidelity.py`` measures it (once per answer, in the summariser), ``store/`` keeps it
(``Summary.fidelity``, ``NewSummary.fidelity``: the store maps its columns to and from this value
in one place, ``store/dag.py``) and ``compaction/check.py`` reports it. It lives here, beside
neither, because the store and the summariser import nothing of each other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_STORED = 40
"""How many lost / novel identifiers a summary row keeps (most important first)."""


@dataclass(frozen=True, slots=True)
class Fidelity:
    """A summary measured against its sources (see ``summarize/fidelity.py``).

    ``key`` / ``key_kept`` are None for a measurement made before key names were (schema < 4):
    such a summary is judged on all its identifiers."""

    identifiers: int
    kept: int
    lost: tuple[str, ...]
    novel: tuple[str, ...]
    key: int | None = None
    key_kept: int | None = None

    @property
    def retention(self) -> float:
        """Kept / identifiers; 1.0 when the sources had none (nothing could be lost)."""
        return self.kept / self.identifiers if self.identifiers else 1.0

    @property
    def judged_on(self) -> int:
        """How many names the low-fidelity flag is judged on: the key names (every identifier
        for a measurement made before key names were)."""
        return self.identifiers if self.key is None else self.key

    @property
    def key_retention(self) -> float:
        """Share of the key names kept (1.0 when there were none to keep); the plain retention
        for a measurement made before key names were."""
        if self.key is None or self.key_kept is None:
            return self.retention
        return self.key_kept / self.key if self.key else 1.0

    def low(self, threshold: float) -> bool:
        """Flagged: under ``threshold`` of the key names kept."""
        return self.key_retention < threshold

    def bounded(self) -> Fidelity:
        """As a summary row keeps it: at most ``MAX_STORED`` lost and novel names."""
        if len(self.lost) <= MAX_STORED and len(self.novel) <= MAX_STORED:
            return self
        return replace(self, lost=self.lost[:MAX_STORED], novel=self.novel[:MAX_STORED])
