"""What compaction bought: per session or for the whole file, from aggregates where possible.

Why these sources: the ``sessions`` row already carries trigger-kept totals (episodes,
tokens, covered tokens, tokens of the top summaries, fallbacks), so whole-file sizes and
compression are one pass over 10k small rows, never a scan of a million episodes. What the
aggregates do not hold (summaries per depth and tier, fidelity, model time, runs) is one
grouped query each over ``summaries`` / ``runs``, through the indexes schema 3 adds.

Compression is raw tokens ÷ what a model would be given now (the DAG's top summaries plus
every episode under no active leaf: ``Session.uncompacted_tokens``).

Fidelity: a summary is *low* when the share of its key names it kept (``fid_key_kept /
fid_key``; for one measured before schema 4, ``fid_kept / fid_identifiers``) is under the
policy's ``fidelity_threshold``; one whose sources held no identifiers counts as measured and
fine; one made before fidelity was measured (NULL) is counted apart as *unmeasured*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .store import RUN_STATUSES, TIERS, StoreError

if TYPE_CHECKING:
    from .store import Store


@dataclass(frozen=True, slots=True)
class DepthStats:
    depth: int
    count: int
    tokens: int
    source_tokens: int


@dataclass(frozen=True, slots=True)
class EngineStats:
    """Runs of one backend/model: how many, what they made, the time spent waiting on it."""

    backend: str
    model: str | None
    runs: int
    summaries: int
    llm_seconds: float
    wall_seconds: float


@dataclass(frozen=True, slots=True)
class Stats:
    session_id: str | None
    """None: the whole file."""
    sessions: int
    episodes: int
    raw_tokens: int
    model_tokens: int
    """What a model would be given now (top summaries + unsummarised episodes)."""
    top_tokens: int
    covered_episodes: int
    active: int
    superseded: int
    by_depth: tuple[DepthStats, ...]
    by_tier: dict[str, int]
    low_fidelity: int
    measured: int
    unmeasured: int
    threshold: float
    min_retention: float | None
    llm_seconds: float
    wall_seconds: float
    runs_by_status: dict[str, int]
    engines: tuple[EngineStats, ...] = field(default=())

    @property
    def compression(self) -> float | None:
        """Raw tokens per token a model is given now (None for an empty scope)."""
        return self.raw_tokens / self.model_tokens if self.model_tokens else None

    @property
    def coverage(self) -> float:
        return self.covered_episodes / self.episodes if self.episodes else 0.0

    @property
    def runs(self) -> int:
        return sum(self.runs_by_status.values())

    def as_json(self) -> dict[str, Any]:
        """``stats --json`` (documented in README.md)."""
        return {
            "scope": "file" if self.session_id is None else "session",
            "session": self.session_id,
            "sessions": self.sessions,
            "episodes": self.episodes,
            "tokens": {"raw": self.raw_tokens, "model_sees": self.model_tokens, "top_summaries": self.top_tokens,
                       "compression": None if self.compression is None else round(self.compression, 3)},
            "coverage": {"episodes": self.covered_episodes, "fraction": round(self.coverage, 4)},
            "summaries": {
                "active": self.active, "superseded": self.superseded,
                "by_depth": [{"depth": d.depth, "count": d.count, "tokens": d.tokens,
                              "source_tokens": d.source_tokens} for d in self.by_depth],
                "by_tier": dict(self.by_tier),
            },
            "fallbacks": self.by_tier.get("fallback", 0),
            "fidelity": {"threshold": self.threshold, "low": self.low_fidelity, "measured": self.measured,
                         "unmeasured": self.unmeasured,
                         "min_retention": None if self.min_retention is None else round(self.min_retention, 4)},
            "model_time": {"llm_seconds": round(self.llm_seconds, 3), "wall_seconds": round(self.wall_seconds, 3),
                           "by_engine": [{"backend": e.backend, "model": e.model, "runs": e.runs,
                                          "summaries": e.summaries, "llm_seconds": round(e.llm_seconds, 3),
                                          "wall_seconds": round(e.wall_seconds, 3)} for e in self.engines]},
            "runs": {"total": self.runs, "by_status": dict(self.runs_by_status)},
        }


def compute_stats(store: Store, session_id: str | None = None, *, threshold: float = 0.5) -> Stats:
    """Stats for one session, or for the whole file when ``session_id`` is None."""
    with store.db.read_snapshot():
        if session_id is not None and store.sessions.get(session_id) is None:
            raise StoreError(f"no session {session_id!r}")
        size = store.stats.sizes(session_id)
        depths, tiers, low, measured = _summary_groups(store, session_id, threshold)
        total = store.stats.summary_count(session_id)
        runs_by_status, engines = _run_groups(store, session_id)
    active = sum(d.count for d in depths)
    return Stats(
        session_id=session_id, sessions=size[0], episodes=size[1], raw_tokens=size[2], model_tokens=size[3],
        top_tokens=size[4], covered_episodes=size[5], active=active, superseded=total - active,
        by_depth=tuple(depths), by_tier=tiers, low_fidelity=low, measured=measured, unmeasured=active - measured,
        threshold=threshold, min_retention=size[6], llm_seconds=sum(e.llm_seconds for e in engines),
        wall_seconds=sum(e.wall_seconds for e in engines), runs_by_status=runs_by_status,
        engines=tuple(sorted(engines, key=lambda e: -e.llm_seconds)),
    )


def _summary_groups(
    store: Store, session_id: str | None, threshold: float
) -> tuple[list[DepthStats], dict[str, int], int, int]:
    """Active summaries per depth and per tier, and how many are low-fidelity / measured."""
    per_depth: dict[int, list[int]] = {}
    tiers: dict[str, int] = dict.fromkeys(TIERS, 0)
    low = measured = 0
    for depth, tier, count, tokens, source, n_low, n_measured in store.stats.summary_groups(session_id, threshold):
        tiers[tier] = tiers.get(tier, 0) + count
        acc = per_depth.setdefault(depth, [0, 0, 0])
        acc[0] += count
        acc[1] += tokens or 0
        acc[2] += source or 0
        low += n_low or 0
        measured += n_measured or 0
    depths = [DepthStats(d, *per_depth[d]) for d in sorted(per_depth)]
    return depths, tiers, low, measured


def _run_groups(store: Store, session_id: str | None) -> tuple[dict[str, int], list[EngineStats]]:
    """Runs per status, and per backend/model what they made and the time they took."""
    by_status: dict[str, int] = dict.fromkeys(RUN_STATUSES, 0)
    per_engine: dict[tuple[str, str | None], list[float]] = {}
    for backend, model, status, runs, made, llm_s, wall_s in store.stats.run_groups(session_id):
        by_status[status] = by_status.get(status, 0) + runs
        acc = per_engine.setdefault((backend, model), [0, 0, 0.0, 0.0])
        for i, value in enumerate((runs, made, llm_s, wall_s)):
            acc[i] += value or 0
    engines = [EngineStats(b, m, int(a[0]), int(a[1]), float(a[2]), float(a[3])) for (b, m), a in per_engine.items()]
    return by_status, engines
