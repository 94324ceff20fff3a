"""Compaction: the planner (pure: what is eligible) and the runner (does it, reports
progress through small events, can be cancelled from any thread).

``make_runner`` / ``compact_sessions`` build everything from :class:`Settings` for callers
that do not need to hold the pieces (the demo builder, scripts); the CLI and the TUI use
the same factory so a run behaves the same wherever it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..config import Settings
from ..store import Run, Store
from ..summarize import Backend, ExtractiveBackend, Summariser
from ..summarize.prompts import PromptSet
from ..tokens import Tokenizer
from .events import (
    BriefWritten,
    CancelToken,
    HostNotice,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
    TierCounts,
)
from .planner import CondenseGroup, EpisodeRange, LeafChunk
from .runner import PassKind, Runner, RunRefused
from .select import UnknownSession, passes_triggers, select_sessions

__all__ = [
    "BriefWritten", "CancelToken", "CondenseGroup", "HostNotice", "EpisodeRange", "LeafChunk", "PassKind", "RunEvent", "RunFinished",
    "RunRefused", "RunStarted", "Runner", "SummaryAttempt", "SummaryProgress", "SummaryStarted", "SummaryWritten", "TierCounts",
    "UnknownSession", "compact_sessions", "make_backend", "make_runner", "passes_triggers", "select_sessions",
]


def make_backend(settings: Settings, tokenizer: Tokenizer, host: str | None = None) -> Backend:
    """The backend ``settings.backend`` names, configured from ``settings`` (the caller closes it);
    an Ollama backend talks to ``host`` (default: the first of the settings' hosts)."""
    if settings.backend == "extractive":
        return ExtractiveBackend(tokenizer)
    from ..summarize.ollama_backend import OllamaBackend

    return OllamaBackend(host or settings.ollama_host, settings.model, tokenizer,
                         timeout_s=settings.timeout_s, keep_alive=settings.keep_alive)


def make_runner(
    store: Store,
    settings: Settings,
    *,
    tokenizer: Tokenizer | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    cancel: CancelToken | None = None,
    backend: Backend | None = None,
    more_backends: Sequence[Backend] = (),
) -> Runner:
    """A Runner with a fresh backend (or ``backend``, which the caller keeps) and summariser;
    close with ``await runner.summariser.backend.aclose()``.

    A long-lived caller (watch mode) passes its backend (and ``more_backends``: the other hosts')
    and makes a Runner per job, because a Runner remembers its backend check for life and a server
    that went away must be re-checked.
    Without ``backend``, an Ollama runner gets one backend per host of ``settings.hosts()``;
    ``runner.aclose()`` closes them all.
    """
    tok = tokenizer or store.tokenizer

    ways = store.ways.all()  # how each model summarises, as calibrated

    def summariser(b: Backend) -> Summariser:
        return Summariser(b, tok, prompts=PromptSet(settings.prompts), summary_format=settings.summary_format,
                          ways=ways, summary_way=settings.summary_way)

    more = [summariser(b) for b in more_backends]
    if backend is None and settings.backend == "ollama":  # one summariser per host (ARCHITECTURE §7)
        backend = make_backend(settings, tok)
        more = [summariser(make_backend(settings, tok, h)) for h in settings.hosts()[1:]]
    backend = backend or make_backend(settings, tok)
    return Runner(store, summariser(backend), settings.policy, parallel=settings.parallel, on_event=on_event,
                  cancel=cancel, more_hosts=more)


async def compact_sessions(
    store: Store,
    session_ids: Iterable[str],
    pass_: PassKind,
    settings: Settings,
    *,
    tokenizer: Tokenizer | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    cancel: CancelToken | None = None,
    skip_idle: bool = False,
) -> list[Run]:
    """One job over ``session_ids`` (see :meth:`Runner.compact_many`); the backend is closed after.

    Raises BackendUnavailable / ModelMissing before recording anything if the backend is not ready.
    """
    runner = make_runner(store, settings, tokenizer=tokenizer, on_event=on_event, cancel=cancel)
    try:
        return await runner.compact_many(session_ids, pass_, skip_idle=skip_idle)
    finally:
        await runner.aclose()
