"""Figures of ``bench_real_model.py``: one record per summary made, aggregated per session.

Kept apart from the script so the figures are defined in one place: what "compression",
"retention before / after the guard" and "timeouts" mean is decided here, and the table,
the JSON file and bench/README.md all come from these definitions.

* compression = source tokens ÷ summary tokens, pooled over a group (Σ source ÷ Σ summary);
* retention = identifiers kept ÷ identifiers in the sources, pooled (identifier-weighted);
  *before* is the model's own text (``SummaryResult.fidelity_before``), *after* what is stored
  (``fid_kept`` / ``fid_identifiers``, after any "Also mentioned" line);
* novel = identifiers in the stored text that are in no source;
* timeouts = rejected attempts whose error says the call timed out (must be zero: the
  per-call timeout follows the model's measured speed);
* the extractive baseline is the same request given to an extractive Summariser (the app's
  fallback tier), so every ratio compares like with like.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hiermem_tui.store import Summary
from hiermem_tui.summarize import SummaryRequest, SummaryResult

TIERS = ("normal", "aggressive", "fallback")


@dataclass
class Call:
    """One model call as the backend saw it (``error`` set when it raised)."""

    text: str | None
    done_reason: str | None = None
    eval_count: int | None = None
    prompt_eval_count: int | None = None
    seconds: float = 0.0
    error: str | None = None
    reachable: bool = True  # False: the server could not be reached (retried, never a rejection)

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "done_reason": self.done_reason, "eval_count": self.eval_count,
                "prompt_eval_count": self.prompt_eval_count, "seconds": round(self.seconds, 2), "error": self.error}


@dataclass
class Record:
    """One summary: the request, the summariser's result, the stored row, its calls, and
    the extractive digest of the same request."""

    session_id: str
    request: SummaryRequest
    result: SummaryResult
    stored: Summary
    calls: list[Call] = field(default_factory=list)
    extractive: SummaryResult | None = None

    @property
    def timeouts(self) -> int:
        return sum(1 for r in self.result.rejections if r.reason == "error" and "timed out" in r.detail)

    def attempts(self) -> list[dict[str, Any]]:
        """Each rejection with the answer it judged: a ``low_fidelity`` rejection judged an
        accepted normal answer (then retried); every other one the next call's answer."""
        calls = iter(c for c in self.calls if c.reachable)
        out = []
        for r in self.result.rejections:
            call = next(calls, None)
            out.append({**r.as_dict(), "answer": call.text if call else None,
                        "done_reason": call.done_reason if call else None})
        return out

    def as_dict(self) -> dict[str, Any]:
        s, res, ex = self.stored, self.result, self.extractive
        before = res.fidelity_before
        return {
            "summary_id": s.id, "depth": s.depth, "first_seq": s.first_seq, "last_seq": s.last_seq,
            "tier": s.tier, "tokens": s.tokens, "source_tokens": res.source_tokens,
            "compression": round(res.source_tokens / s.tokens, 2) if s.tokens else None,
            "identifiers": s.fid_identifiers, "kept_before": before.kept if before else None,
            "kept_after": s.fid_kept, "also_mentioned_added": s.fid_added,
            "novel": list(res.fidelity.novel) if res.fidelity else [], "lost": list(s.fid_lost),
            "llm_seconds": round(s.llm_seconds, 2), "attempts": res.attempts, "timeouts": self.timeouts,
            "rejections": self.attempts(), "calls": [c.as_dict() for c in self.calls], "text": s.content,
            "extractive": None if ex is None else {
                "tokens": ex.tokens, "compression": round(ex.source_tokens / ex.tokens, 2) if ex.tokens else None,
                "kept_before": ex.fidelity_before.kept if ex.fidelity_before else None,
                "kept_after": ex.fidelity.kept if ex.fidelity else None, "text": ex.text,
            },
        }


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 3) if den else None


def _compression(pairs: Iterable[tuple[int, int]]) -> float | None:
    src = tok = 0
    for s, t in pairs:
        src, tok = src + s, tok + t
    return round(src / tok, 2) if tok else None


def aggregate(records: Sequence[Record], rejections: Counter[str] | None = None) -> dict[str, Any]:
    """The figures of one group of summaries (see the module docstring)."""
    tiers = Counter(r.stored.tier for r in records)
    n = len(records)
    normal = [r for r in records if r.stored.tier == "normal"]
    model = [r for r in records if r.stored.tier != "fallback"]
    ids = sum(r.stored.fid_identifiers or 0 for r in records)
    before = sum(r.result.fidelity_before.kept for r in records if r.result.fidelity_before)
    after = sum(r.stored.fid_kept or 0 for r in records)
    n_ids = sum(r.stored.fid_identifiers or 0 for r in normal)
    secs = [r.stored.llm_seconds for r in records]
    ex = [r.extractive for r in records if r.extractive is not None]
    if rejections is None:
        rejections = Counter(x.reason for r in records for x in r.result.rejections)
    return {
        "summaries": n,
        "tiers": {t: tiers.get(t, 0) for t in TIERS},
        "tier_shares": {t: round(tiers.get(t, 0) / n, 3) if n else None for t in TIERS},
        "compression": _compression((r.result.source_tokens, r.stored.tokens) for r in records),
        "compression_normal": _compression((r.result.source_tokens, r.stored.tokens) for r in normal),
        "compression_model_tiers": _compression((r.result.source_tokens, r.stored.tokens) for r in model),
        "identifiers": ids,
        "retention_before": _ratio(before, ids),
        "retention_after": _ratio(after, ids),
        "retention_before_normal": _ratio(sum(r.result.fidelity_before.kept for r in normal
                                              if r.result.fidelity_before), n_ids),
        "retention_after_normal": _ratio(sum(r.stored.fid_kept or 0 for r in normal), n_ids),
        "leaves_at_or_over_0.9_after": sum(1 for r in records if (r.stored.retention or 0) >= 0.9),
        "also_mentioned_added": sum(1 for r in records if r.stored.fid_added),
        "novel": sum(len(r.result.fidelity.novel) for r in records if r.result.fidelity),
        "rejections": dict(sorted(rejections.items(), key=lambda p: (-p[1], p[0]))),
        "timeouts": sum(r.timeouts for r in records),
        "model_calls": sum(r.result.attempts for r in records),
        "llm_seconds_total": round(sum(secs), 1),
        "llm_seconds_per_summary": {
            "mean": round(statistics.fmean(secs), 1) if secs else None,
            "median": round(statistics.median(secs), 1) if secs else None,
            "max": round(max(secs), 1) if secs else None,
        },
        "extractive": {
            "compression": _compression((e.source_tokens, e.tokens) for e in ex),
            "retention_before": _ratio(sum(e.fidelity_before.kept for e in ex if e.fidelity_before), ids),
            "retention_after": _ratio(sum(e.fidelity.kept for e in ex if e.fidelity), ids),
        },
    }


def _f(value: float | None, fmt: str = "{:.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return _f(value * 100 if value is not None else None, "{:.0f}%")


TABLE_HEAD = ("session", "leaves", "normal/aggr/fallb", "compr all", "compr normal", "compr extr",
              "ret before", "ret after", "ret extr", "novel", "s/leaf (max)", "timeouts")


def table_row(name: str, a: dict[str, Any]) -> tuple[str, ...]:
    t, ex, sec = a["tiers"], a["extractive"], a["llm_seconds_per_summary"]
    return (
        name, str(a["summaries"]), f"{t['normal']}/{t['aggressive']}/{t['fallback']}",
        _f(a["compression"], "{:.1f}×"), _f(a["compression_normal"], "{:.1f}×"), _f(ex["compression"], "{:.1f}×"),
        _pct(a["retention_before"]), _pct(a["retention_after"]),
        f"{_pct(ex['retention_before'])}→{_pct(ex['retention_after'])}", str(a["novel"]),
        f"{_f(sec['mean'], '{:.0f}')} ({_f(sec['max'], '{:.0f}')})", str(a["timeouts"]),
    )


def render_table(rows: Sequence[tuple[str, ...]], head: tuple[str, ...] = TABLE_HEAD) -> str:
    """A Markdown table (readable as plain text too)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def pick_quotes(records: Sequence[Record]) -> list[Record]:
    """Two summaries to quote: a normal leaf if any, and one of another tier (the model's
    aggressive tier first) — or a second normal leaf when every leaf is normal."""
    leaves = [r for r in records if r.stored.depth == 0]
    normal = [r for r in leaves if r.stored.tier == "normal"]
    other = sorted((r for r in leaves if r.stored.tier != "normal"), key=lambda r: TIERS.index(r.stored.tier))
    picked = normal[:1] + other[:1]
    if len(picked) < 2:
        picked += [r for r in leaves if r not in picked][: 2 - len(picked)]
    return picked
