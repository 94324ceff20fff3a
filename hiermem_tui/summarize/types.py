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
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hiermem_tui.summarize.acceptance import Rejection
    from hiermem_tui.summarize.fidelity import Fidelity

Tier = Literal["normal", "aggressive", "fallback"]
SourceKind = Literal["episode", "summary"]


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
        """The size of the input in the sense of DESIGN §4: the sum of the sources' tokens.

        The prompt wrapper and the prior summary are deliberately not counted: they are
        not material being summarised, so "shorter than its input" compares like with like.
        """
        return sum(s.tokens for s in self.sources)


@dataclass(frozen=True, slots=True)
class Generation:
    """One model answer. Counts are Ollama's own (None when the backend has none)."""

    text: str
    prompt_eval_count: int | None
    eval_count: int | None
    seconds: float
    done_reason: str | None = None  # "stop", or "length" when num_predict cut it off (or we stopped reading)
    prompt_seconds: float | None = None  # Ollama's prompt_eval_duration, for the model's measured speed
    eval_seconds: float | None = None  # Ollama's eval_duration


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """A summary plus everything the store records about how it was made."""

    text: str
    tier: Tier
    backend: str  # "ollama" or "extractive" (fallbacks are always "extractive")
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
    rejections: tuple[Rejection, ...] = ()  # the same, as (tier, reason, detail) for the store
    fidelity: Fidelity | None = None  # the accepted text measured against the sources
    fidelity_added: bool = False  # an "Also mentioned" line was appended by the guard
    fidelity_before: Fidelity | None = None  # the accepted text before the guard touched it
    pins_missing: tuple[str, ...] = ()  # labels of pinned episodes the text does not carry


@dataclass(frozen=True, slots=True)
class SummaryEvent:
    """Progress for a live display: a tier attempt started, chunks streamed, or a retry."""

    kind: Literal["attempt", "progress", "retry"]
    tier: Tier
    attempt: int  # 1-based count of model calls for this summary
    chunks: int = 0  # streamed chunks so far (≈ output tokens) for "progress"
    message: str = ""  # the connection error, for "retry"


EventCallback = Callable[[SummaryEvent], None]
ChunkCallback = Callable[[int], None]


class SummariserError(Exception):
    """Base of the errors below; ``str()`` is always a one-line message fit for users."""


class BackendUnavailable(SummariserError):
    """The server cannot be reached (refused, unknown host, connection dropped)."""


class ModelMissing(SummariserError):
    """No usable model: not installed, or none chosen. The message lists installed models."""


class ModelError(SummariserError):
    """One call failed at the model level (HTTP error, bad answer, timeout): try the next tier."""


class RunAborted(SummariserError):
    """The server went away (several connection failures in a row): stop the run, keep what is written."""


@runtime_checkable
class Backend(Protocol):
    """Something that turns a prompt into text.

    ``generate`` raises ModelError for a failure of this one call, BackendUnavailable when
    the server is unreachable, ModelMissing when the model is gone. ``on_chunk`` (optional,
    only passed when someone listens) receives the number of chunks streamed so far.
    """

    name: str
    model: str | None

    async def check(self) -> None: ...

    async def generate(
        self,
        system: str,
        prompt: str,
        *,
        temperature: float,
        num_predict: int,
        on_chunk: ChunkCallback | None = None,
    ) -> Generation: ...

    async def aclose(self) -> None: ...
