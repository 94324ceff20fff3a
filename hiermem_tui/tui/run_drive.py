"""Running one UI job to its end inside the compaction worker's thread, reporting back as messages.

Why a module of its own: this is the code that runs on the worker's own event loop (see
:mod:`.runs` for why a thread); everything it tells the app crosses as a message built here
from the engine's frozen events, so it needs nothing of the app but ``post_message``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.message import Message

from hiermem_tui.compaction import (
    CancelToken,
    RunEvent,
    RunRefused,
    RunStarted,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
    make_runner,
)
from hiermem_tui.store import Run, Store
from hiermem_tui.summarize import BackendUnavailable, ModelMissing
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui.messages import (
    RunAttempted,
    RunBegan,
    RunCallProgress,
    RunEnded,
    RunNotStarted,
    RunSummaryStarted,
    RunSummaryWritten,
)
from hiermem_tui.tui.run_job import RunJob
from hiermem_tui.tui.run_notices import nothing_due


def wrap_event(job: RunJob, event: RunEvent) -> Message:
    """The UI message for one engine event."""
    if isinstance(event, RunStarted):
        return RunBegan(job, event)
    if isinstance(event, SummaryStarted):
        return RunSummaryStarted(job, event)
    if isinstance(event, SummaryAttempt):
        return RunAttempted(job, event)
    if isinstance(event, SummaryProgress):
        return RunCallProgress(job, event)
    if isinstance(event, SummaryWritten):
        return RunSummaryWritten(job, event)
    return RunEnded(job, event)


async def drive_job(store: Store, job: RunJob, cancel: CancelToken, post: Callable[[Message], object]) -> Run | None:
    """Run ``job`` to its end on the current loop; every outcome is posted as a message.

    The backend check runs as a task attached to ``cancel`` so a cancel aborts it too, and a
    cancel that lands before the run is recorded records nothing.
    """
    def on_event(event: RunEvent) -> None:
        post(wrap_event(job, event))

    runner = make_runner(store, job.settings, on_event=on_event, cancel=cancel)
    try:
        check: asyncio.Future[None] = asyncio.ensure_future(runner.check())
        cancel.attach(check)  # type: ignore[arg-type]
        try:
            await check
        except asyncio.CancelledError:
            if not cancel.cancelled:
                raise
        finally:
            cancel.detach(check)  # type: ignore[arg-type]
        if cancel.cancelled:
            post(RunNotStarted(job, "Cancelled before the run started: nothing was written.", "information",
                               "Run cancelled"))
            return None
        if job.action == "resummarize-summary":
            return await runner.remake.summary(job.summary_id or "")
        if job.action == "resummarize-session":
            return await runner.remake.session(job.session_id)
        if job.action == "repair":
            repaired = await runner.remake.repair(job.session_id, skip_idle=True)
            if repaired is None:
                post(RunNotStarted(job, "Nothing to repair: no fallback, no summary under the fidelity threshold, "
                                        "no missing pin.", "information", "Nothing to do"))
            return repaired
        run = await runner.compact(job.session_id, job.action, skip_idle=True)
        if run is None:
            post(RunNotStarted(job, nothing_due(job.action), "information", "Nothing to do"))
        return run
    except (BackendUnavailable, ModelMissing) as exc:
        post(RunNotStarted(job, one_line(str(exc), 400), "error", "Backend not ready — nothing ran"))
    except RunRefused as exc:
        post(RunNotStarted(job, one_line(str(exc), 400), "error", "Run refused"))
    except Exception as exc:  # a store error or a bug: one line, never a traceback
        post(RunNotStarted(job, one_line(f"unexpected error: {type(exc).__name__}: {exc}", 400), "error",
                           f"{job.label} failed"))
    finally:
        await runner.summariser.backend.aclose()
    return None
