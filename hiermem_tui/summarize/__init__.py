"""Summary text from a backend (Ollama or the built-in extractive digest), in three tiers.

The compaction runner builds ``SummaryRequest``s and calls ``Summariser.summarise``; it
never talks to a backend directly except for ``check()`` before a run and ``aclose()``.
"""

from hiermem_tui.summarize.extractive import ExtractiveBackend, extractive_digest
from hiermem_tui.summarize.prompts import Prompt, build_prompt, prompt_version
from hiermem_tui.summarize.summariser import Answered, Summariser
from hiermem_tui.summarize.types import (
    Backend,
    BackendUnavailable,
    Generation,
    ModelError,
    ModelMissing,
    RunAborted,
    SourceItem,
    SummariserError,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
    Tier,
)

__all__ = [
    "Answered",
    "Backend",
    "BackendUnavailable",
    "ExtractiveBackend",
    "Generation",
    "ModelError",
    "ModelMissing",
    "OllamaBackend",
    "Prompt",
    "RunAborted",
    "SourceItem",
    "Summariser",
    "SummariserError",
    "SummaryEvent",
    "SummaryRequest",
    "SummaryResult",
    "Tier",
    "build_prompt",
    "extractive_digest",
    "normalize_host",
    "prompt_version",
    "resolve_model",
]


_LAZY = {"OllamaBackend", "normalize_host", "resolve_model"}


def __getattr__(name: str) -> object:
    """The Ollama backend pulls in the ollama client and httpx (~0.2 s): load it only when a
    run actually needs it, so CLI commands that never talk to a model start fast."""
    if name in _LAZY:
        from hiermem_tui.summarize import ollama_backend

        return getattr(ollama_backend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
