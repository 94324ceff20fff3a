"""The three-tier summariser of DESIGN §4: normal → aggressive → fallback.

It never fails because of the *model*: a model error, an empty answer or an answer that
is not shorter than its input moves on to the next tier, and the last tier is the
deterministic extractive digest. It does fail when the *server* goes away: connection
failures are retried with backoff, and after ``max_connection_failures`` in a row the
run is aborted (RunAborted) instead of quietly filling the store with fallbacks that
would all need repairing later. A missing model (ModelMissing) also propagates.

"Shorter than its input" compares our token count of the answer with
``SummaryRequest.source_tokens`` — the sum of the source items' stored tokens, not the
rendered prompt (which adds instructions and the prior summary).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from hiermem_tui.summarize.extractive import extractive_digest
from hiermem_tui.summarize.prompts import EXTRACTIVE_VERSION, Prompt, build_prompt
from hiermem_tui.summarize.types import (
    Backend,
    BackendUnavailable,
    EventCallback,
    Generation,
    ModelError,
    RunAborted,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
    Tier,
)
from hiermem_tui.tokens import Tokenizer

Sleep = Callable[[float], Awaitable[None]]
_MODEL_TIERS: tuple[tuple[Tier, bool], ...] = (("normal", False), ("aggressive", True))


@dataclass(slots=True)
class _Attempts:
    """Book-keeping for one summarise() call."""

    calls: int = 0
    llm_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


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
    ) -> None:
        self.backend = backend
        self.tokenizer = tokenizer
        self.extractive_fallback = extractive_fallback
        self.max_connection_failures = max(1, max_connection_failures)
        self.retry_backoff_s = tuple(retry_backoff_s) or (0.0,)
        self._sleep = sleep
        self._connection_failures = 0

    @property
    def connection_failures(self) -> int:
        """Connection failures in a row so far (0 after any answer from the server)."""
        return self._connection_failures

    async def summarise(self, request: SummaryRequest, *, on_event: EventCallback | None = None) -> SummaryResult:
        """One summary for ``request``, by the first tier that gives an acceptable answer.

        Raises RunAborted (server gone), ModelMissing (model gone), or ModelError only
        when ``extractive_fallback`` is off and both model tiers failed.
        """
        started = time.monotonic()
        state = _Attempts()
        source_tokens = request.source_tokens
        if self.backend.name == "extractive":
            text = extractive_digest(request, self.tokenizer)
            tokens = self.tokenizer.count(text)
            tier: Tier = "normal" if tokens < source_tokens else "fallback"
            if tier == "fallback":
                state.notes.append(f"extractive: digest not shorter than input ({tokens} >= {source_tokens} tokens)")
            return self._result(text, tokens, tier, EXTRACTIVE_VERSION, None, None, request, started, state)
        for tier, aggressive in _MODEL_TIERS:
            prompt = build_prompt(request, aggressive=aggressive)
            try:
                gen = await self._call(prompt, tier, state, on_event)
            except ModelError as exc:
                state.notes.append(f"{tier}: {exc}")
                continue
            text = gen.text.strip()
            if not text:
                state.notes.append(f"{tier}: empty answer")
                continue
            tokens = self.tokenizer.count(text)
            if tier == "normal" and tokens >= source_tokens:
                state.notes.append(f"normal: answer not shorter than input ({tokens} >= {source_tokens} tokens)")
                continue
            return self._result(text, tokens, tier, prompt.version, gen, prompt, request, started, state)
        if not self.extractive_fallback:
            raise ModelError("no acceptable summary from the model: " + "; ".join(state.notes))
        text = extractive_digest(request, self.tokenizer)
        tokens = self.tokenizer.count(text)
        return self._result(text, tokens, "fallback", EXTRACTIVE_VERSION, None, None, request, started, state)

    def _result(
        self,
        text: str,
        tokens: int,
        tier: Tier,
        version: str,
        gen: Generation | None,
        prompt: Prompt | None,
        request: SummaryRequest,
        started: float,
        state: _Attempts,
    ) -> SummaryResult:
        by_model = False
        if gen is not None and prompt is not None:
            by_model = True
            input_tokens = gen.prompt_eval_count
            if input_tokens is None:  # counted only when needed: ~0.4 ms for a 3k-token prompt
                input_tokens = self.tokenizer.count(prompt.system) + self.tokenizer.count(prompt.prompt)
            output_tokens = gen.eval_count if gen.eval_count is not None else tokens
        else:
            input_tokens, output_tokens = request.source_tokens, tokens
        return SummaryResult(
            text=text,
            tier=tier,
            backend=self.backend.name if by_model else "extractive",
            model=self.backend.model if by_model else None,
            prompt_version=version,
            tokens=tokens,
            source_tokens=request.source_tokens,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            duration_s=time.monotonic() - started,
            llm_seconds=state.llm_seconds,
            attempts=state.calls,
            notes=tuple(state.notes),
        )

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
