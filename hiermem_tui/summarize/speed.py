"""How fast a model really is: for per-call timeouts, run estimates and dry-run plans.

A 3,000-token leaf on a CPU model took 85–150 s on a laptop-class machine — a fixed 300 s
timeout is too tight for a bigger prompt and far too loose for a fast GPU. So each call's
timeout and every time estimate come from the model's *measured* speed: Ollama reports
``prompt_eval_count`` / ``prompt_eval_duration`` and ``eval_count`` / ``eval_duration`` with
every answer; we keep running sums per model (in memory here, in the ``model_speed`` table
between runs). Before the first measurement a cautious CPU guess is used.
"""

from __future__ import annotations

from dataclasses import dataclass

from hiermem_tui.summarize.types import Generation, StreamProgress

GUESS_PROMPT_TPS = 40.0
"""Prompt tokens per second assumed before any measurement (a small model on a laptop CPU)."""
GUESS_OUTPUT_TPS = 6.0
"""Generated tokens per second assumed before any measurement."""
LOAD_SECONDS = 5.0
"""Added once per call: model load, HTTP, chat template."""


@dataclass(slots=True)
class ModelSpeed:
    """Running sums of what a model did and how long it took."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_seconds: float = 0.0
    output_tokens: int = 0
    output_seconds: float = 0.0

    @property
    def measured(self) -> bool:
        return self.calls > 0 and self.output_seconds > 0

    @property
    def prompt_tps(self) -> float:
        if self.prompt_seconds > 0 and self.prompt_tokens > 0:
            return self.prompt_tokens / self.prompt_seconds
        return GUESS_PROMPT_TPS

    @property
    def output_tps(self) -> float:
        if self.output_seconds > 0 and self.output_tokens > 0:
            return self.output_tokens / self.output_seconds
        return GUESS_OUTPUT_TPS

    def expected_seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        """Time for one call with this much prompt and answer (model load included until
        a measurement shows the model is fast)."""
        load = LOAD_SECONDS if not self.measured else min(LOAD_SECONDS, self.prompt_seconds / max(1, self.calls))
        return load + prompt_tokens / self.prompt_tps + output_tokens / self.output_tps

    def observe(self, gen: Generation, prompt_tokens: int) -> None:
        """Add one answer. Without Ollama's own durations the whole call counts as generation."""
        out = gen.eval_count if gen.eval_count is not None else 0
        if gen.eval_seconds and out:
            self.output_tokens += out
            self.output_seconds += gen.eval_seconds
            if gen.prompt_seconds:
                self.prompt_tokens += gen.prompt_eval_count or prompt_tokens
                self.prompt_seconds += gen.prompt_seconds
        elif out and gen.seconds > 0:
            self.output_tokens += out
            self.output_seconds += gen.seconds
        else:
            return
        self.calls += 1

    def merged(self, other: ModelSpeed) -> ModelSpeed:
        return ModelSpeed(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.prompt_seconds + other.prompt_seconds,
            self.output_tokens + other.output_tokens,
            self.output_seconds + other.output_seconds,
        )

    def minus(self, earlier: ModelSpeed) -> ModelSpeed:
        """What was added since ``earlier`` (to save only the new part of the sums)."""
        return ModelSpeed(
            self.calls - earlier.calls,
            self.prompt_tokens - earlier.prompt_tokens,
            self.prompt_seconds - earlier.prompt_seconds,
            self.output_tokens - earlier.output_tokens,
            self.output_seconds - earlier.output_seconds,
        )


LIVE_MIN_TOKENS = 4
"""Streamed tokens before a call's own pace replaces the model's measured speed."""


@dataclass(frozen=True, slots=True)
class CallClock:
    """The seconds one model call still needs, re-estimated at every streamed chunk.

    Before the first token: the fresh part of the prompt at the measured prompt speed, then the
    expected answer at the measured generation speed. Once tokens arrive, this call's own pace
    (tokens since the first one ÷ seconds since) replaces the measured generation speed, and
    what is left of the expected answer is what remains (or, past it, what is left up to the
    cap). A thinking model's thinking is expected to use half its headroom."""

    speed: ModelSpeed
    prompt_tokens: int
    expected_tokens: int
    cap: int
    thinking_headroom: int = 0

    def pace(self, p: StreamProgress) -> float | None:
        """This call's own tokens per second, once enough have arrived."""
        streamed = p.tokens + p.thinking_tokens
        if p.first_token_s is None or streamed < LIVE_MIN_TOKENS:
            return None
        span = p.elapsed_s - p.first_token_s
        return streamed / span if span > 0 else None

    def left(self, p: StreamProgress) -> float:
        prompt = p.fresh_prompt_tokens if p.fresh_prompt_tokens is not None else self.prompt_tokens
        tps = self.pace(p) or self.speed.output_tps
        answer = self.expected_tokens - p.tokens if p.tokens < self.expected_tokens else self.cap - p.tokens
        answer = max(0, answer)
        if p.first_token_s is None:
            reading = max(0.0, prompt / self.speed.prompt_tps - p.elapsed_s)
            return reading + (self.thinking_headroom / 2 + answer) / tps
        if p.phase == "thinking":
            return (max(0.0, self.thinking_headroom / 2 - p.thinking_tokens) + answer) / tps
        return answer / tps
