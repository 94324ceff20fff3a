"""The three-tier summariser of DESIGN §4: normal → aggressive → fallback, bounded and checked.

It never fails because of the *model*: an answer that is empty, cut off, too long, looping,
echoing the prompt, continuing the chat or inventing identifiers is *rejected* (the reason is
kept, see ``acceptance.py``) and the next tier is tried; the last tier is the deterministic
extractive digest. It does fail when the *server* goes away: connection failures are retried
with backoff, and after ``max_connection_failures`` in a row the run is aborted (RunAborted)
instead of quietly filling the store with fallbacks. A missing model (ModelMissing) propagates.

Bounds (never trusting the server to obey ``num_predict`` or to stop):

* targets scale with the input: normal = min(the depth's target, ¼ of the source tokens,
  at least ``MIN_TARGET``), aggressive = half of that, fallback = the normal target;
* normal answers over their target or cut off by the server are rejected; aggressive answers
  are clipped to their target at a sentence or line boundary;
* every prompt fits the model's context with its ``num_predict`` (the material is clipped);
* pinned episodes are appended verbatim after the text and do not count against the target.

Fidelity (``fidelity.py``): every accepted text is measured against its sources. At the
normal tier under ``fidelity_threshold`` there is one retry naming what was lost; if still
under, an "Also mentioned: …" line with the most important lost identifiers is appended within
the target, and the result records that it was added.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from hiermem_tui.summarize import acceptance
from hiermem_tui.summarize.acceptance import Rejection
from hiermem_tui.summarize.extractive import clip_to, extractive_digest
from hiermem_tui.summarize.fidelity import Fidelity, also_mentioned, measure
from hiermem_tui.summarize.prompts import (
    EXTRACTIVE_VERSION,
    Prompt,
    PromptSet,
    aggressive_num_predict,
    build_prompt,
    fmt_time,
    normal_num_predict,
)
from hiermem_tui.summarize.types import (
    Backend,
    BackendUnavailable,
    EventCallback,
    Generation,
    ModelError,
    RunAborted,
    SourceItem,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
    Tier,
)
from hiermem_tui.tokens import Tokenizer

Sleep = Callable[[float], Awaitable[None]]
MIN_TARGET = 24
"""No normal target is smaller than this (tiny inputs still get a readable sentence)."""
SOURCE_FRACTION = 4
"""A summary's target is at most 1/SOURCE_FRACTION of its source tokens."""
DEFAULT_CONTEXT = 8192
"""Assumed context of a model that does not report one."""
CONTEXT_SLACK = 64
PROMPT_MARGIN = 1.10  # the model's tokenizer may need more tokens than cl100k
MAX_RETRY_NAMES = 40
PIN_HEADER = "Pinned (kept verbatim):"
ALL_EXCLUDED = "(The episodes here are excluded from summaries by the user.)"
_BOUNDARY = re.compile(r"(?<=[.!?])\s|\n")


@dataclass(frozen=True, slots=True)
class Targets:
    """Token targets of one summary, per tier (the text before any pinned block)."""

    normal: int
    aggressive: int
    fallback: int


def targets_for(request: SummaryRequest, pinned_tokens: int = 0) -> Targets:
    """See the module docstring: scaled with the input, never above the depth's target."""
    source = max(1, request.source_tokens - pinned_tokens)
    normal = min(request.target_tokens, max(MIN_TARGET, source // SOURCE_FRACTION))
    if normal >= source:
        normal = max(1, source - 1)
    aggressive = max(1, min(normal, max(12, normal // 2)))
    return Targets(normal, aggressive, normal)


def clip_at_boundary(text: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    """``text`` within ``max_tokens``, cut after the last whole sentence or line that fits
    (or at a word, marked with …, when that would drop more than half)."""
    if tokenizer.count(text) <= max_tokens:
        return text
    cut = clip_to(text, max_tokens, tokenizer)
    ends = [m.start() for m in _BOUNDARY.finditer(cut)]
    if ends and ends[-1] >= len(cut) // 2:
        return cut[: ends[-1] + 1].strip()
    space = cut.rfind(" ")
    short = (cut[:space] if space > len(cut) // 2 else cut).rstrip(" ,;:")
    return clip_to(short + "…", max_tokens, tokenizer)


def pinned_block(request: SummaryRequest) -> str:
    """The verbatim pinned episodes, one per paragraph, labelled with seq and role."""
    if not request.pinned:
        return ""
    parts = [f"{p.label} {p.role or 'unknown'}: {p.text}" for p in request.pinned]
    return PIN_HEADER + "\n" + "\n".join(parts)


def strip_pinned(text: str) -> str:
    """A summary's own text, without its pinned block (a condensed prompt re-adds pins itself)."""
    at = text.find("\n\n" + PIN_HEADER + "\n")
    if at >= 0:
        return text[:at]
    return "" if text.startswith(PIN_HEADER + "\n") else text


def measure_against(text: str, sources: Sequence[SourceItem]) -> Fidelity:
    """``text`` measured against what a summariser was given; the sources' times (as the
    prompt shows them) may be quoted without counting as invented."""
    known = " ".join(f"{fmt_time(s.start_at)} {fmt_time(s.end_at)}" for s in sources)
    return measure(text, [(s.text, s.role == "tool") for s in sources], known=known)


@dataclass(slots=True)
class _Attempts:
    """Book-keeping for one summarise() call."""

    calls: int = 0
    llm_seconds: float = 0.0
    rejections: list[Rejection] = field(default_factory=list)

    def reject(self, tier: str, reason: str, detail: str = "") -> None:
        self.rejections.append(Rejection(tier, reason, detail or acceptance.REASONS.get(reason, reason)))


@dataclass(slots=True)
class _Accepted:
    text: str
    gen: Generation
    prompt: Prompt


class Summariser:
    """Makes one summary at a time; safe to share between concurrent tasks of one run.

    The consecutive-connection-failure counter is shared by every call on this instance
    (parallel summaries hitting a dead server add up) and is reset by any answer from the
    server, successful or a model error: both prove the server is reachable.
    """

    def __init__(
        self,
        backend: Backend,
        tokenizer: Tokenizer,
        *,
        extractive_fallback: bool = True,
        max_connection_failures: int = 3,
        retry_backoff_s: Sequence[float] = (0.5, 1, 2),
        sleep: Sleep = asyncio.sleep,
        fidelity_threshold: float = 0.8,
        prompts: PromptSet | None = None,
    ) -> None:
        self.backend = backend
        self.tokenizer = tokenizer
        self.extractive_fallback = extractive_fallback
        self.max_connection_failures = max(1, max_connection_failures)
        self.retry_backoff_s = tuple(retry_backoff_s) or (0.0,)
        self.fidelity_threshold = fidelity_threshold
        self.prompts = prompts or PromptSet()
        self._sleep = sleep
        self._connection_failures = 0

    @property
    def connection_failures(self) -> int:
        """Connection failures in a row so far (0 after any answer from the server)."""
        return self._connection_failures

    # ------------------------------------------------------------------ budgets
    def context_limit(self) -> int:
        return getattr(self.backend, "context_limit", None) or DEFAULT_CONTEXT

    def max_prompt_tokens(self, num_predict: int) -> int:
        """Prompt tokens (ours) that fit the model's context with ``num_predict`` to spare."""
        return max(64, int((self.context_limit() - num_predict - CONTEXT_SLACK) / PROMPT_MARGIN))

    # ------------------------------------------------------------------ the tiers
    async def summarise(self, request: SummaryRequest, *, on_event: EventCallback | None = None) -> SummaryResult:
        """One summary for ``request``, by the first tier that gives an acceptable answer.

        Raises RunAborted (server gone), ModelMissing (model gone), or ModelError only
        when ``extractive_fallback`` is off and both model tiers failed.
        """
        started = time.monotonic()
        state = _Attempts()
        pins = pinned_block(request)
        t = targets_for(request, self.tokenizer.count(pins) if pins else 0)
        if not request.sources:  # every episode here is excluded: nothing may be given to a model
            return self._finish(ALL_EXCLUDED, "normal", t.normal, EXTRACTIVE_VERSION, None, request, pins, started, state)
        if self.backend.name == "extractive":
            text = self._digest(request, t.normal)
            tier: Tier = "normal" if self.tokenizer.count(text) < request.source_tokens else "fallback"
            if tier == "fallback":
                state.reject("normal", "not_shorter", "the extractive digest is not shorter than its input")
            return self._finish(text, tier, t.normal, EXTRACTIVE_VERSION, None, request, pins, started, state)
        for tier, aggressive in (("normal", False), ("aggressive", True)):
            target = t.aggressive if aggressive else t.normal
            got = await self._attempt(request, tier, aggressive, target, state, on_event)  # type: ignore[arg-type]
            if got is None:
                continue
            if tier == "normal":
                got = await self._fidelity_retry(request, got, target, state, on_event)
            return self._finish(got.text, tier, target, got.prompt.version, got, request, pins, started, state)  # type: ignore[arg-type]
        if not self.extractive_fallback:
            raise ModelError("no acceptable summary from the model: " + "; ".join(self._notes(state)))
        text = self._digest(request, t.fallback)
        return self._finish(text, "fallback", t.fallback, EXTRACTIVE_VERSION, None, request, pins, started, state)

    def _digest(self, request: SummaryRequest, target: int) -> str:
        return extractive_digest(replace(request, target_tokens=target), self.tokenizer)

    def _measure(self, text: str, request: SummaryRequest) -> Fidelity:
        return measure_against(strip_pinned(text), request.sources)

    async def _attempt(
        self, request: SummaryRequest, tier: Tier, aggressive: bool, target: int, state: _Attempts,
        on_event: EventCallback | None, lost: Sequence[str] = (),
    ) -> _Accepted | None:
        """One model call and every acceptance rule; None (with the rejection recorded) if refused."""
        num_predict = aggressive_num_predict(target) if aggressive else normal_num_predict(target)
        prompt = build_prompt(
            request, aggressive=aggressive, target=target, prompts=self.prompts, tokenizer=self.tokenizer,
            max_prompt_tokens=self.max_prompt_tokens(num_predict), lost=lost,
        )
        try:
            gen = await self._call(prompt, tier, state, on_event)
        except ModelError as exc:
            state.reject(tier, "error", str(exc))
            return None
        text = acceptance.strip_preamble(gen.text)
        if not text:
            state.reject(tier, "empty")
            return None
        tokens = self.tokenizer.count(text)
        if not aggressive:
            if gen.done_reason == "length":
                state.reject(tier, "cut_off", f"stopped at the {prompt.num_predict}-token cap")
                return None
            if tokens > target:
                state.reject(tier, "too_long", f"{tokens} tokens, target {target}")
                return None
        elif tokens > target or gen.done_reason == "length":
            text = clip_at_boundary(text, target, self.tokenizer)
            tokens = self.tokenizer.count(text)
        if tokens >= request.source_tokens:
            state.reject(tier, "not_shorter", f"answer not shorter than input ({tokens} >= {request.source_tokens} tokens)")
            return None
        material = [s.text for s in request.sources]
        broken = acceptance.judge_text(text, prior=request.prior_summary, sources=material, leaf=request.depth == 0)
        if broken is not None:
            state.reject(tier, *broken)
            return None
        fid = self._measure(text, request)
        invented = acceptance.find_invented(fid.novel, fid.kept)
        if invented:
            state.reject(tier, "invented", invented)
            return None
        return _Accepted(text, gen, prompt)

    async def _fidelity_retry(
        self, request: SummaryRequest, got: _Accepted, target: int, state: _Attempts, on_event: EventCallback | None
    ) -> _Accepted:
        """One more normal-tier call naming what was lost, kept only if it keeps more."""
        fid = self._measure(got.text, request)
        if not fid.identifiers or fid.retention >= self.fidelity_threshold:
            return got
        state.reject("normal", "low_fidelity", f"kept {fid.kept} of {fid.identifiers} identifiers; retrying")
        retry = await self._attempt(request, "normal", False, target, state, on_event, fid.lost[:MAX_RETRY_NAMES])
        if retry is not None and self._measure(retry.text, request).kept > fid.kept:
            return retry
        return got

    def _guard(self, text: str, target: int, request: SummaryRequest) -> tuple[str, Fidelity, bool, Fidelity]:
        """Append "Also mentioned: …" when retention is under the threshold (within ``target``).
        Returns the text, its fidelity, whether the line was added, and the fidelity before."""
        fid = before = self._measure(text, request)
        if not fid.identifiers or fid.retention >= self.fidelity_threshold:
            return text, fid, False, before
        room = target - self.tokenizer.count(text) - 2
        if room < 12:
            # make room: a few lost names are worth more than the tail of a long summary
            text = clip_at_boundary(text, max(1, target - min(target // 3, 96)), self.tokenizer)
            room = target - self.tokenizer.count(text) - 2
            fid = self._measure(text, request)
        line = also_mentioned(fid.lost, room, self.tokenizer)
        if not line:
            return text, fid, False, before
        text = f"{text}\n{line}"
        return text, self._measure(text, request), True, before

    def _finish(
        self, text: str, tier: Tier, target: int, version: str, got: _Accepted | None,
        request: SummaryRequest, pins: str, started: float, state: _Attempts,
    ) -> SummaryResult:
        text, fid, added, before = self._guard(text, target, request)
        body_tokens = self.tokenizer.count(text)
        if pins:
            text = f"{text}\n\n{pins}" if text.strip() else pins
        tokens = self.tokenizer.count(text) if pins else body_tokens
        if got is not None:
            input_tokens = got.gen.prompt_eval_count
            if input_tokens is None:  # counted only when needed: ~0.4 ms for a 3k-token prompt
                input_tokens = self.tokenizer.count(got.prompt.system) + self.tokenizer.count(got.prompt.prompt)
            output_tokens = got.gen.eval_count if got.gen.eval_count is not None else body_tokens
        else:
            input_tokens, output_tokens = request.source_tokens, body_tokens
        missing = tuple(p.label for p in request.pinned if p.text not in text)
        return SummaryResult(
            text=text,
            tier=tier,
            backend=self.backend.name if got is not None else "extractive",
            model=self.backend.model if got is not None else None,
            prompt_version=version,
            tokens=tokens,
            source_tokens=request.source_tokens,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            duration_s=time.monotonic() - started,
            llm_seconds=state.llm_seconds,
            attempts=state.calls,
            notes=tuple(self._notes(state)),
            rejections=tuple(state.rejections),
            fidelity=fid,
            fidelity_added=added,
            fidelity_before=before,
            pins_missing=missing,
        )

    @staticmethod
    def _notes(state: _Attempts) -> list[str]:
        return [f"{r.tier}: {acceptance.REASONS.get(r.reason, r.reason)} — {r.detail}" for r in state.rejections]

    # ------------------------------------------------------------------ the server
    def _backoff(self, failures: int) -> float:
        return float(self.retry_backoff_s[min(failures, len(self.retry_backoff_s)) - 1])

    async def _call(self, prompt: Prompt, tier: Tier, state: _Attempts, on_event: EventCallback | None) -> Generation:
        """One model call, retried while the server is unreachable (see class docstring)."""
        while True:
            state.calls += 1
            attempt = state.calls
            kwargs: dict[str, object] = {"temperature": prompt.temperature, "num_predict": prompt.num_predict}
            if on_event is not None:
                on_event(SummaryEvent("attempt", tier, attempt))

                def progress(chunks: int, tier: Tier = tier, attempt: int = attempt) -> None:
                    on_event(SummaryEvent("progress", tier, attempt, chunks=chunks))

                kwargs["on_chunk"] = progress
            began = time.monotonic()
            try:
                gen = await self.backend.generate(prompt.system, prompt.prompt, **kwargs)  # type: ignore[arg-type]
            except BackendUnavailable as exc:
                state.llm_seconds += time.monotonic() - began
                self._connection_failures += 1
                if self._connection_failures >= self.max_connection_failures:
                    raise RunAborted(f"{exc} (gave up after {self._connection_failures} failed attempts)") from exc
                if on_event is not None:
                    on_event(SummaryEvent("retry", tier, attempt, message=str(exc)))
                await self._sleep(self._backoff(self._connection_failures))
                continue
            except ModelError:
                state.llm_seconds += time.monotonic() - began
                self._connection_failures = 0
                raise
            except BaseException:  # cancelled, ModelMissing, bugs: still account the time
                state.llm_seconds += time.monotonic() - began
                raise
            state.llm_seconds += time.monotonic() - began
            self._connection_failures = 0
            return gen
