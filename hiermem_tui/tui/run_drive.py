"""Running one UI job to its end inside the compaction worker's thread, reporting back as messages.

Why a module of its own: this is the code that runs on the worker's own event loop (see
:mod:`.runs` for why a thread); everything it tells the app crosses as a message built here
from the engine's frozen events, so it needs nothing of the app but ``post_message``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from textual.message import Message

from hiermem_tui.compaction import (
    CancelToken,
    HostNotice,
    PassKind,
    RunFinished,
    RunStarted,
    Runner,
    SummaryAttempt,
    SummaryProgress,
    SummaryStarted,
    SummaryWritten,
)
from hiermem_tui.compaction.job import Job, JobError, JobEvent
from hiermem_tui.compaction.priority import BacklogControl
from hiermem_tui.store import Run, Store
from hiermem_tui.tui.messages import (
    HostLost,
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

_RUN_EVENTS = (RunStarted, SummaryStarted, SummaryAttempt, SummaryProgress, SummaryWritten, RunFinished)


def wrap_event(job: RunJob, event: RunStarted | SummaryStarted | SummaryAttempt | SummaryProgress | SummaryWritten
               | RunFinished) -> Message:
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


async def drive_job(store: Store, job: RunJob, cancel: CancelToken, post: Callable[[Message], object], *,
                    goes_before: BacklogControl | None = None) -> Run | None:
    """Run ``job`` to its end on the current loop through the engine's :class:`Job` (which checks
    the backend first, cancellably, and closes it); every outcome is posted as a message.
    ``goes_before``: the backlog running in the background, held while this job runs."""
    def on_event(event: JobEvent) -> None:
        if isinstance(event, HostNotice):
            post(HostLost(event.text))
        elif isinstance(event, _RUN_EVENTS):
            post(wrap_event(job, event))

    async def work(runner: Runner) -> Run | None:
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
        run = await runner.compact(job.session_id, cast(PassKind, job.action), skip_idle=True)
        if run is None:
            post(RunNotStarted(job, nothing_due(job.action), "information", "Nothing to do"))
        return run

    try:
        return await Job(store, job.settings, on_event=on_event, cancel=cancel).run(
            work, check_first=True, goes_before=goes_before, session_id=job.session_id)
    except JobError as exc:
        title = f"{job.label} failed" if exc.kind == "unexpected" else exc.title
        post(RunNotStarted(job, exc.message, exc.severity, title))
    return None
