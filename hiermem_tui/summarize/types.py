"""Data passed into and out of the summariser, the backend protocol, and its errors.

These are the contract between the compaction runner and the summariser: the runner
builds a ``SummaryRequest`` from the store, the summariser returns a ``SummaryResult``
with everything a summary row must record (tier, backend, model, prompt version, token
counts, timings), so fallbacks can be found and repaired later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from hiermem_tui.fidelity_value import Fidelity

Tier = Literal["normal", "aggressive", "fallback"]
SourceKind = Literal["episode", "summary"]


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why one attempt was not accepted (``reason``: one of ``acceptance.REASONS``)."""

    tier: str
    reason: str
    detail: str
    seconds: float = 0.0
    """Model seconds the rejected answer cost."""

    def as_dict(self) -> dict[str, str | float]:
        return {"tier": self.tier, "reason": self.reason, "detail": self.detail, "seconds": round(self.seconds, 2)}


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One thing being summarised: an episode (leaf input) or a summary (condensed input).

    ``tokens`` is the stored count of ``text`` (counted once at write time, never here),
    ``label`` is how the UI names it ("#12", or a summary id). Episodes carry a ``role``,
    summaries a ``depth``; ``start_at == end_at`` for an episode.
    """

    kind: SourceKind
    text: str
    tokens: int
    start_at: datetime
    end_at: datetime
    role: str | None = None
    depth: int | None = None
    label: str = ""
    synthetic_time: bool = False  # the importer invented the time: prompts do not show it
    span: tuple[int, int] | None = None
    """A summary's episode range (first and last ``seq``): a condensed summary's outline names it."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What to summarise. ``depth`` is the depth of the summary to make (0 = leaf)."""

    depth: int
    sources: list[SourceItem]
    target_tokens: int
    prior_summary: str | None = None  # leaf only: the previous leaf's text, for continuity
    pinned: tuple[SourceItem, ...] = ()
    """Pinned episodes under this summary: carried verbatim after the model's text."""

    @property
    def source_tokens(self) -> int:
        """The size of the input in the sense of ARCHITECTURE §4: the sum of the sources' tokens.

        The prompt wrapper and the prior summary are deliberately not counted: they are
        not material being summarised, so "shorter than its input" compares like with like.
        """
        return sum(s.tokens for s in self.sources)


@dataclass(frozen=True, slots=True)
class Generation:
    """One model answer. Counts are Ollama's own (None when the backend has none).

    ``text`` is the answer only: a thinking model's ``message.thinking`` (or an inline
    ``<think>`` block) is counted in ``thinking_tokens`` and never part of it.
    """

    text: str
    prompt_eval_count: int | None
    eval_count: int | None
    seconds: float
    done_reason: str | None = None  # "stop", or "length" when num_predict cut it off (or we stopped reading)
    prompt_seconds: float | None = None  # Ollama's prompt_eval_duration, for the model's measured speed
    eval_seconds: float | None = None  # Ollama's eval_duration
    thinking_tokens: int = 0  # streamed thinking chunks (≈ tokens), not part of ``text``
    prompt_tokens: int = 0  # our count of what was sent (system + prompt)
    fresh_prompt_tokens: int | None = None  # our count of what differs from this backend's previous prompt
    load_seconds: float | None = None  # the model's load the server reported (Ollama's load_duration); None: not said
    first_token_s: float | None = None  # when the first chunk arrived, from the call's start
    overlapped: bool = False  # another call of this backend was in flight meanwhile: its wall time was shared


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call made for a summary, and what became of its answer."""

    tier: Tier
    outcome: str  # "accepted", or the rejection reason ("error", "loop", …)
    seconds: float
    prompt_tokens: int  # ours
    prompt_eval_count: int | None  # the server's: only what it evaluated anew when it reuses a cached prefix
    eval_count: int | None
    thinking_tokens: int = 0
    fresh_prompt_tokens: int | None = None  # ours: the part that differs from the backend's previous prompt

    @property
    def discarded(self) -> bool:
        return self.outcome != "accepted"


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """A summary plus everything the store records about how it was made."""

    text: str
    tier: Tier
    backend: str  # "ollama" or "extractive" (fallbacks are always "extractive"); the demo's replay: "ollama-recorded"
    model: str | None
    prompt_version: str
    tokens: int  # our (cl100k) count of ``text``
    source_tokens: int  # sum of the sources' tokens (SummaryRequest.source_tokens)
    input_tokens: int  # Ollama's prompt_eval_count for the accepted call, else our count of the prompt
    output_tokens: int  # Ollama's eval_count for the accepted call, else ``tokens``
    duration_s: float  # wall time of the whole summarise() call, retries and backoff included
    llm_seconds: float  # time spent awaiting the model, over every attempt
    attempts: int  # model calls made for this summary, connection retries included
    notes: tuple[str, ...] = ()  # why earlier tiers were rejected, e.g. "normal: empty answer"
    rejections: tuple[Rejection, ...] = ()  # the same, as (tier, reason, detail, seconds) for the store
    fidelity: Fidelity | None = None  # the text (the model's own, pins aside) measured against the sources, once,
    # its name lists bounded as the store keeps them: the value the summary row holds
    keywords: tuple[str, ...] = ()  # names the text lost, most important first: stored beside it, never in it
    trimmed: str | None = None  # "clipped": the model's answer ran past its target and was cut at a boundary
    pins_missing: tuple[str, ...] = ()  # labels of pinned episodes the text does not carry
    calls: tuple[CallRecord, ...] = ()  # every model call, accepted or not (benchmarks, the run's figures)
    key_target: int = 0  # how many key names the summary was judged on (``fidelity.key``)

    @property
    def discarded_seconds(self) -> float:
        """Model seconds spent on answers that were not kept."""
        return sum(c.seconds for c in self.calls if c.discarded)


CallPhase = Literal["prompt", "thinking", "writing"]


@dataclass(frozen=True, slots=True)
class StreamProgress:
    """How far one model call is, as the backend sees it while the answer streams."""

    phase: CallPhase  # reading the prompt (nothing streamed yet), thinking, or writing the answer
    tokens: int  # answer chunks so far (≈ tokens)
    thinking_tokens: int  # thinking chunks so far
    elapsed_s: float  # since the call was sent
    first_token_s: float | None  # when the first chunk (thinking or answer) arrived, from the start
    fresh_prompt_tokens: int | None = None  # our count of the prompt part the server must evaluate anew


@dataclass(frozen=True, slots=True)
class SummaryEvent:
    """Progress for a live display: a tier attempt started, the answer streaming, or a retry.

    ``progress`` events carry the call's phase, its token counts and an estimate of the seconds
    the call still needs (from the model's measured speeds, corrected by this call's own pace).
    """

    kind: Literal["attempt", "progress", "retry"]
    tier: Tier
    attempt: int  # 1-based count of model calls for this summary
    chunks: int = 0  # streamed answer chunks so far (≈ output tokens) for "progress"
    message: str = ""  # the connection error, for "retry"
    phase: CallPhase = "prompt"
    thinking_tokens: int = 0
    tokens_per_s: float | None = None  # this call's own pace once tokens arrive
    left_s: float | None = None  # the call's remaining seconds, estimated
    part: int = 0
    """Which part of a summary made in parts (``notes``) this call is for, 1-based (0: one call)."""
    parts: int = 0


EventCallback = Callable[[SummaryEvent], None]
ChunkCallback = Callable[[StreamProgress], None]


class SummariserError(Exception):
    """Base of the errors below; ``str()`` is always a one-line message fit for users."""


class BackendUnavailable(SummariserError):
    """The server cannot be reached (refused, unknown host, connection dropped), or is not Ollama.

    ``host`` and ``reason`` ("connection refused", "connection lost mid-answer" …), when known,
    are the message's parts, for a caller that says it in its own words."""

    def __init__(self, message: str, *, host: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.host = host
        self.reason = reason


class ModelMissing(SummariserError):
    """No usable model: not installed, or none chosen. The message lists installed models."""


class ModelError(SummariserError):
    """One call failed at the model level (HTTP error, bad answer, timeout): try the next tier."""


class ServerError(ModelError):
    """The server answered a call with HTTP 5xx (a crashed runner, often transient): the same call is
    made once more before the next tier is tried."""


class RunAborted(SummariserError):
    """The server went away (several connection failures in a row): stop the run, keep what is written.
    ``unavailable`` is the last failure."""

    def __init__(self, message: str, unavailable: BackendUnavailable) -> None:
        super().__init__(message)
        self.unavailable = unavailable


@runtime_checkable
class Backend(Protocol):
    """Something that turns a prompt into text.

    ``generate`` raises ModelError for a failure of this one call, BackendUnavailable when
    the server is unreachable, ModelMissing when the model is gone. ``on_chunk`` (optional,
    only passed when someone listens) receives a :class:`StreamProgress` per streamed chunk.
    ``num_predict`` bounds the *answer*; a backend that must let a model think adds the room
    for that itself. ``format`` is a JSON schema the answer must follow (structured output),
    for backends whose ``structured`` is true.
    """

    name: str
    model: str | None
    structured: bool

    async def check(self) -> None: ...

    async def generate(
        self,
        system: str,
        prompt: str,
        *,
        temperature: float,
        num_predict: int,
        on_chunk: ChunkCallback | None = None,
        format: dict[str, object] | None = None,
    ) -> Generation: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class BriefResult:
    """A session's brief and how it was made (``summarize/brief.py``): ``text`` starts with the about line."""

    text: str
    title: str
    about: str
    tier: Tier
    backend: str
    model: str | None
    prompt_version: str
    tokens: int
    llm_seconds: float
    rejections: tuple[Rejection, ...] = ()
