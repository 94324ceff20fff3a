"""Building a run from :class:`Settings`: the backend, the runner, and one job over some sessions.

The CLI, the TUI, the watcher and the demo builder all make their runners here, so a run behaves
the same wherever it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..config import Server, Settings
from ..store import Run, Store
from ..summarize import Backend, ExtractiveBackend, Summariser
from ..summarize.prompts import PromptSet
from ..tokens import Tokenizer
from .events import CancelToken, RunEvent
from .runner import PassKind, Runner


def make_backend(settings: Settings, tokenizer: Tokenizer, host: Server | str | None = None) -> Backend:
    """The backend ``settings.backend`` names, configured from ``settings`` (the caller closes it), for the
    server ``host`` (a bare URL: one of the settings' backend's kind; default: the first of
    ``settings.servers()``). Each kind's module is imported only when a backend of that kind is made."""
    if settings.backend == "extractive" and not isinstance(host, Server):
        return ExtractiveBackend(tokenizer)
    server = host if isinstance(host, Server) else Server(settings.backend, host) if host else settings.servers()[0]
    if server.backend == "openai":
        from ..summarize.openai_backend import OpenAIBackend

        return OpenAIBackend(server.url, settings.model, tokenizer, timeout_s=settings.timeout_s)
    from ..summarize.ollama_backend import OllamaBackend

    return OllamaBackend(server.url, settings.model, tokenizer,
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
    Without ``backend``, a runner of a model backend gets one backend per server of ``settings.servers()``
    (Ollama and OpenAI-compatible ones alike); ``runner.aclose()`` closes them all.
    """
    tok = tokenizer or store.tokenizer

    ways = store.ways.all()  # how each model summarises, as calibrated

    def summariser(b: Backend) -> Summariser:
        return Summariser(b, tok, prompts=PromptSet(settings.prompts), summary_format=settings.summary_format,
                          ways=ways, summary_way=settings.summary_way)

    more = [summariser(b) for b in more_backends]
    if backend is None and settings.backend != "extractive":  # one summariser per server (ARCHITECTURE §7)
        first, *rest = settings.servers()
        backend = make_backend(settings, tok, first)
        more = [summariser(make_backend(settings, tok, s)) for s in rest]
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
