"""Figures of ``bench_real_model.py``: one record per summary made, aggregated per session.

Kept apart from the script so the figures are defined in one place: what each figure means is
decided here, and the table, the JSON file and bench/README.md all come from these definitions.

* compression = source tokens ÷ summary tokens, pooled over a group (Σ source ÷ Σ summary);
* retention = identifiers kept ÷ identifiers in the sources, of the stored text, which is the
  model's own (the names it lost are keywords beside it, never in it): pooled, and the median
  of the per-summary figures; *key retention* is the same over the key names the low-fidelity
  flag judges (``fidelity.key_kept`` / ``fidelity.key``);
* flagged = summaries under the policy's threshold of their key names (what the lists flag);
  each is printed with what it lost so a person can judge whether a user would miss it;
* novel = identifiers in the stored text that are in no source;
* over target = summaries longer than their tier's target (must be 0);
* discarded share = model seconds spent on answers that were not kept ÷ all model seconds;
* length rejections = answers rejected for length alone (``cut_off``, ``too_long``; must be 0);
* clipped = answers that ran past their target and were clipped and kept;
* retry re-evaluation = for each call made again after a rejected answer, the share of its prompt
  the server evaluated anew (its ``prompt_eval_count`` ÷ the prompt's size in the model's
  tokens, estimated from our count with the ratio the first call of the same summary showed);
* floor ratio = model seconds of a leaf ÷ the floor of one call: its prompt tokens ÷ the measured
  prompt speed + its target ÷ the measured generation speed (both from ``model_speed``);
* timeouts = rejected attempts whose error says the call timed out;
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
from hiermem_tui.summarize.summariser import targets_for

TIERS = ("normal", "aggressive", "fallback")
LENGTH_REASONS = ("cut_off", "too_long")


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
    prompt_tokens: int = 0  # ours
    fresh_prompt_tokens: int | None = None  # ours: what differs from the previous prompt
    thinking_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "done_reason": self.done_reason, "eval_count": self.eval_count,
                "prompt_eval_count": self.prompt_eval_count, "prompt_tokens": self.prompt_tokens,
                "fresh_prompt_tokens": self.fresh_prompt_tokens, "seconds": round(self.seconds, 2),
                "error": self.error}


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

    @property
    def target(self) -> int:
        """The token target of the tier the stored summary came from."""
        t = targets_for(self.request)
        return {"normal": t.normal, "aggressive": t.aggressive, "fallback": t.fallback}[self.stored.tier]

    @property
    def body_tokens(self) -> int:
        """The summary's tokens without a pinned block (what the target bounds)."""
        return self.stored.tokens

    @property
    def over_target(self) -> bool:
        return self.body_tokens > self.target and not self.request.pinned

    def _answered(self) -> list[Call]:
        return [c for c in self.calls if c.reachable and c.error is None]

    def _retried(self) -> list[int]:
        """Indexes (into the answered calls) of the calls made again after a rejected answer:
        in a summary made in parts, the other calls are other parts, not retries."""
        records = self.result.calls
        return [i for i in range(1, len(records)) if records[i - 1].discarded]

    def retry_shares(self) -> list[float]:
        """The share of each retry's prompt the server evaluated anew (see the module docstring)."""
        calls = self._answered()
        if len(calls) < 2 or len(calls) != len(self.result.calls):
            return []
        first = calls[0]
        if not first.prompt_eval_count or not first.fresh_prompt_tokens:
            return []
        per_token = first.prompt_eval_count / first.fresh_prompt_tokens  # model tokens per token of ours
        return [round(c.prompt_eval_count / (c.prompt_tokens * per_token), 4)
                for c in (calls[i] for i in self._retried()) if c.prompt_eval_count is not None and c.prompt_tokens]

    def attempts(self) -> list[dict[str, Any]]:
        """Each rejection with the answer it judged: the rejected calls, in order."""
        calls = [c for c in self.calls if c.reachable]
        records = self.result.calls
        judged = ([calls[i] for i, r in enumerate(records) if r.discarded] if len(calls) == len(records)
                  else calls)
        out = []
        for k, r in enumerate(self.result.rejections):
            call = judged[k] if k < len(judged) else None
            out.append({**r.as_dict(), "answer": call.text if call else None,
                        "done_reason": call.done_reason if call else None})
        return out

    def as_dict(self) -> dict[str, Any]:
        s, res, ex = self.stored, self.result, self.extractive
        fid = s.fidelity
        return {
            "summary_id": s.id, "depth": s.depth, "first_seq": s.first_seq, "last_seq": s.last_seq,
            "tier": s.tier, "tokens": s.tokens, "target": self.target, "source_tokens": res.source_tokens,
            "compression": round(res.source_tokens / s.tokens, 2) if s.tokens else None,
            "identifiers": fid.identifiers if fid else None, "kept": fid.kept if fid else None,
            "key": fid.key if fid else None, "key_kept": fid.key_kept if fid else None,
            "trimmed": s.trimmed, "keywords": list(s.keywords),
            "novel": list(res.fidelity.novel) if res.fidelity else [], "lost": list(fid.lost) if fid else [],
            "llm_seconds": round(s.llm_seconds, 2), "discarded_seconds": round(res.discarded_seconds, 2),
            "attempts": res.attempts, "timeouts": self.timeouts, "retry_shares": self.retry_shares(),
            "rejections": self.attempts(), "calls": [c.as_dict() for c in self.calls], "text": s.content,
            "extractive": None if ex is None else {
                "tokens": ex.tokens, "compression": round(ex.source_tokens / ex.tokens, 2) if ex.tokens else None,
                "kept": ex.fidelity.kept if ex.fidelity else None, "text": ex.text,
            },
        }


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 3) if den else None


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _compression(pairs: Iterable[tuple[int, int]]) -> float | None:
    src = tok = 0
    for s, t in pairs:
        src, tok = src + s, tok + t
    return round(src / tok, 2) if tok else None


def _own(r: Record) -> float | None:
    fid = r.stored.fidelity
    if fid is None or not fid.identifiers:
        return None
    return fid.retention


def floor_seconds(r: Record, prompt_tps: float, output_tps: float) -> float | None:
    """The floor of one call for this summary: its first prompt and its target at the measured speeds."""
    first = next((c for c in r.calls if c.reachable and c.prompt_tokens), None)
    if first is None or not prompt_tps or not output_tps:
        return None
    return first.prompt_tokens / prompt_tps + targets_for(r.request).normal / output_tps


def aggregate(records: Sequence[Record], rejections: Counter[str] | None = None, *, threshold: float = 0.5,
              speed: tuple[float, float] | None = None) -> dict[str, Any]:
    """The figures of one group of summaries (see the module docstring)."""
    tiers = Counter(r.stored.tier for r in records)
    n = len(records)
    normal = [r for r in records if r.stored.tier == "normal"]
    model = [r for r in records if r.stored.tier != "fallback"]
    measured = [r.stored.fidelity for r in records if r.stored.fidelity is not None]
    ids = sum(f.identifiers for f in measured)
    kept = sum(f.kept for f in measured)
    key = sum(f.key or 0 for f in measured)
    key_kept = sum(f.key_kept or 0 for f in measured)
    secs = [r.stored.llm_seconds for r in records]
    all_seconds = sum(c.seconds for r in records for c in r.result.calls)
    discarded = sum(r.result.discarded_seconds for r in records)
    ex = [r.extractive for r in records if r.extractive is not None]
    if rejections is None:
        rejections = Counter(x.reason for r in records for x in r.result.rejections)
    shares = [x for r in records for x in r.retry_shares()]
    own = [v for v in (_own(r) for r in records) if v is not None]
    own_by_tier = {t: _median([v for r in records if r.stored.tier == t if (v := _own(r)) is not None])
                   for t in TIERS}
    floors: list[float] = []
    if speed is not None:
        for r in records:
            f = floor_seconds(r, *speed)
            if f:
                floors.append(r.stored.llm_seconds / f)
    flagged = [r for r in records if r.stored.low_fidelity(threshold)]
    return {
        "summaries": n,
        "tiers": {t: tiers.get(t, 0) for t in TIERS},
        "tier_shares": {t: round(tiers.get(t, 0) / n, 3) if n else None for t in TIERS},
        "compression": _compression((r.result.source_tokens, r.stored.tokens) for r in records),
        "compression_normal": _compression((r.result.source_tokens, r.stored.tokens) for r in normal),
        "compression_model_tiers": _compression((r.result.source_tokens, r.stored.tokens) for r in model),
        "identifiers": ids,
        "retention": _ratio(kept, ids),
        "retention_median": _median(own),
        "retention_median_by_tier": own_by_tier,
        "key_retention": _ratio(key_kept, key),
        "flagged": len(flagged),
        "over_target": sum(1 for r in records if r.over_target),
        "clipped": sum(1 for r in records if r.stored.trimmed),
        "novel": sum(len(r.result.fidelity.novel) for r in records if r.result.fidelity),
        "rejections": dict(sorted(rejections.items(), key=lambda p: (-p[1], p[0]))),
        "length_rejections": sum(v for k, v in rejections.items() if k in LENGTH_REASONS),
        "timeouts": sum(r.timeouts for r in records),
        "model_calls": sum(r.result.attempts for r in records),
        "model_seconds_all_calls": round(all_seconds, 1),
        "discarded_seconds": round(discarded, 1),
        "discarded_share": _ratio(discarded, all_seconds),
        "retry_reevaluated": {"retries": len(shares), "median": _median(shares),
                              "max": round(max(shares), 3) if shares else None},
        "floor_ratio": {"median": _median(floors), "max": round(max(floors), 2) if floors else None,
                        "pooled": _ratio(sum(r.stored.llm_seconds for r in records
                                             if speed and floor_seconds(r, *speed)),
                                         sum(f for r in records if speed and (f := floor_seconds(r, *speed))))},
        "llm_seconds_total": round(sum(secs), 1),
        "llm_seconds_per_summary": {
            "mean": round(statistics.fmean(secs), 1) if secs else None,
            "median": round(statistics.median(secs), 1) if secs else None,
            "max": round(max(secs), 1) if secs else None,
        },
        "extractive": {
            "compression": _compression((e.source_tokens, e.tokens) for e in ex),
            "retention": _ratio(sum(e.fidelity.kept for e in ex if e.fidelity), ids),
        },
    }


def _f(value: float | None, fmt: str = "{:.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return _f(value * 100 if value is not None else None, "{:.0f}%")


TABLE_HEAD = ("session", "leaves", "normal/aggr/fallb", "compr all", "compr extr", "ret (median)", "key ret",
              "ret extr", "flagged", "clipped", "discarded s", "s/leaf (max)", "÷ floor")


def table_row(name: str, a: dict[str, Any]) -> tuple[str, ...]:
    t, ex, sec = a["tiers"], a["extractive"], a["llm_seconds_per_summary"]
    return (
        name, str(a["summaries"]), f"{t['normal']}/{t['aggressive']}/{t['fallback']}",
        _f(a["compression"], "{:.1f}×"), _f(ex["compression"], "{:.1f}×"),
        f"{_pct(a['retention'])} ({_pct(a['retention_median'])})", _pct(a["key_retention"]),
        _pct(ex["retention"]), str(a["flagged"]), str(a["clipped"]), _pct(a["discarded_share"]),
        f"{_f(sec['mean'], '{:.0f}')} ({_f(sec['max'], '{:.0f}')})", _f(a["floor_ratio"]["pooled"], "{:.2f}×"),
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
