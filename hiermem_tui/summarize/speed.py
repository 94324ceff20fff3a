"""How fast a model really is: for per-call timeouts, run estimates and dry-run plans.

A 3,000-token leaf on a CPU model took 85–150 s on a laptop-class machine — a fixed 300 s
timeout is too tight for a bigger prompt and far too loose for a fast GPU. So each call's
timeout and every time estimate come from the model's *measured* speed: Ollama reports
``prompt_eval_count`` / ``prompt_eval_duration`` and ``eval_count`` / ``eval_duration`` with
every answer; we keep running sums per model (in memory here, in the ``model_speed`` table
between runs). Before the first measurement a cautious CPU guess is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hiermem_tui.summarize.types import Generation, StreamProgress

GUESS_PROMPT_TPS = 40.0
"""Prompt tokens per second assumed before any measurement (a small model on a laptop CPU)."""
GUESS_OUTPUT_TPS = 6.0
"""Generated tokens per second assumed before any measurement."""
LOAD_SECONDS = 5.0
"""Added once per call: model load, HTTP, chat template."""


@dataclass(slots=True)
class ModelSpeed:
    """Running sums of what a model did and how long it took.

    A call's wall time is its model's load, its wait (what the server's own durations do not account for: a
    queue, a remote host's network, HTTP) and the model's time reading the prompt and writing the answer. The
    sums keep the last three (the wait with the wall clock: a queued or remote host reports tiny durations for
    calls that take seconds); a load is kept apart (:attr:`load_seconds`) and is no part of a speed. Ollama
    reports it (``load_duration``); a server that does not is judged by its first call: that call is held
    (:meth:`observe`) until the next one shows what it should have taken, and its excess is the load."""

    calls: int = 0
    prompt_tokens: int = 0
    prompt_seconds: float = 0.0
    output_tokens: int = 0
    output_seconds: float = 0.0
    wait_seconds: float = 0.0
    """Wall time of the calls beyond the load and what the server says its model took."""
    load_seconds: float = 0.0
    """Model loads seen (not a speed; not kept between runs)."""
    held: ModelSpeed | None = field(default=None, compare=False, repr=False)
    """The first call of a server that reports no load, until the next call judges it."""
    judged: bool = field(default=False, compare=False, repr=False)
    """A first call was held (or known warm): later calls are added as they come."""

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

    @property
    def wait_per_call(self) -> float:
        """Seconds a call waits beyond its model's time, on average (0 before a call)."""
        return self.wait_seconds / self.calls if self.calls > 0 else 0.0

    @property
    def model_seconds(self) -> float:
        """The calls' wall time, loads apart."""
        return self.prompt_seconds + self.output_seconds + self.wait_seconds

    def expected_seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        """Time for one call with this much prompt and answer (model load included until
        a measurement shows the model is fast)."""
        load = LOAD_SECONDS if not self.measured else min(LOAD_SECONDS, self.prompt_seconds / max(1, self.calls))
        return load + prompt_tokens / self.prompt_tps + output_tokens / self.output_tps

    @classmethod
    def of_call(cls, gen: Generation, prompt_tokens: int) -> ModelSpeed:
        """One call's figures (empty when the call tells nothing of the model's speed): the server's durations,
        the wall time they leave unexplained as the wait and its reported load apart; a server that reports no
        durations is timed by the wall clock, reading up to the first token and writing after it."""
        out = gen.eval_count if gen.eval_count is not None else 0
        if not out or gen.seconds <= 0:
            return cls()
        load = gen.load_seconds or 0.0
        if gen.eval_seconds:
            prompt_s = gen.prompt_seconds or 0.0
            prompt = (gen.prompt_eval_count or prompt_tokens) if prompt_s else 0
            wait = 0.0 if gen.overlapped else max(0.0, gen.seconds - load - prompt_s - gen.eval_seconds)
            return cls(1, prompt, prompt_s, out, gen.eval_seconds, wait, load)
        wall = max(0.0, gen.seconds - load)
        first = gen.first_token_s
        if first is not None and 0 < first - load < wall:
            fresh = gen.fresh_prompt_tokens if gen.fresh_prompt_tokens is not None else prompt_tokens
            return cls(1, fresh, first - load, out, wall - (first - load), 0.0, load)
        return cls(1, 0, 0.0, out, wall, 0.0, load)

    def observe(self, gen: Generation, prompt_tokens: int) -> None:
        """Add one answer (:meth:`of_call`). The first answer of a server that reports no load is held until
        the next: if it took well over what the next one's pace says it should (1.5× and a second more), the
        excess was the model loading, and it is added as that pace says."""
        call = ModelSpeed.of_call(gen, prompt_tokens)
        if not call.calls:
            return
        self.load_seconds += call.load_seconds
        held, self.held = self.held, None
        if held is not None:
            self._add(self._judged(held, call))
        elif not self.judged and gen.load_seconds is None:
            self.held, self.judged = call, True
            return
        self.judged = True
        self._add(call)

    def _judged(self, first: ModelSpeed, then: ModelSpeed) -> ModelSpeed:
        """``first`` as it came, or — when it took well over what ``then``'s pace says it should have — timed at that
        pace, its excess counted as a load."""
        if not (then.prompt_seconds > 0 and then.prompt_tokens > 0 and then.output_seconds > 0):
            return first
        took = first.model_seconds
        prompt_s = first.prompt_tokens / (then.prompt_tokens / then.prompt_seconds)
        output_s = first.output_tokens / (then.output_tokens / then.output_seconds)
        should = then.wait_seconds + prompt_s + output_s
        if took < 1.5 * should + 1.0:
            return first
        self.load_seconds += took - should
        return replace(first, prompt_seconds=prompt_s, output_seconds=output_s, wait_seconds=then.wait_seconds)

    def _add(self, call: ModelSpeed) -> None:
        self.calls += call.calls
        self.prompt_tokens += call.prompt_tokens
        self.prompt_seconds += call.prompt_seconds
        self.output_tokens += call.output_tokens
        self.output_seconds += call.output_seconds
        self.wait_seconds += call.wait_seconds

    def settled(self) -> ModelSpeed:
        """These sums with a first call still held added as it came (what a run that ends now measured)."""
        out = replace(self, held=None)
        if self.held is not None:
            out._add(self.held)
        return out

    def merged(self, other: ModelSpeed) -> ModelSpeed:
        return ModelSpeed(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.prompt_seconds + other.prompt_seconds,
            self.output_tokens + other.output_tokens,
            self.output_seconds + other.output_seconds,
            self.wait_seconds + other.wait_seconds,
            self.load_seconds + other.load_seconds,
        )

    def minus(self, earlier: ModelSpeed) -> ModelSpeed:
        """What was added since ``earlier`` (to save only the new part of the sums)."""
        return ModelSpeed(
            self.calls - earlier.calls,
            self.prompt_tokens - earlier.prompt_tokens,
            self.prompt_seconds - earlier.prompt_seconds,
            self.output_tokens - earlier.output_tokens,
            self.output_seconds - earlier.output_seconds,
            self.wait_seconds - earlier.wait_seconds,
            self.load_seconds - earlier.load_seconds,
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
