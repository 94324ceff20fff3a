"""Small message dataclasses the TUI passes around (ARCHITECTURE §7: core work reports back as messages).

Why here and not on the widgets: these cross screens. A worker posts them to the app,
and any screen or widget may handle them, so they live in one place others can import
without importing each other's screens. What they carry is named for the type checker only:
importing this module loads neither the engine nor the Ollama client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from pathlib import Path

    from hiermem_tui.backend_status import BackendStatus
    from hiermem_tui.compaction.backlog import Backlog, BacklogProgress
    from hiermem_tui.compaction.priority import BacklogControl
    from hiermem_tui.compaction.events import (
        RunFinished,
        RunStarted,
        SummaryAttempt,
        SummaryProgress,
        SummaryStarted,
        SummaryWritten,
    )
    from hiermem_tui.config import Settings
    from hiermem_tui.importers.discover import Source
    from hiermem_tui.search import SearchResult
    from hiermem_tui.store.health import DoctorRecord
    from hiermem_tui.tui.backlog_view import Waiting
    from hiermem_tui.tui.run_job import RunJob
    from hiermem_tui.tui.run_plans import PlanPreview


@dataclass
class BackendProbed(Message):
    """A backend probe finished (posted by the app's ``backend`` worker)."""

    status: BackendStatus


@dataclass
class OpenSession(Message):
    """Ask the app to open one session (any widget may post it; the app pushes the screen)."""

    session_id: str


@dataclass
class SessionsChanged(Message):
    """Sessions in the store changed (import, compaction): lists should re-read their pages.

    ``session_ids`` names the sessions touched, or is empty when anything may have changed.
    """

    session_ids: tuple[str, ...] = ()
    broadcast: bool = False
    """True on the copies the app hands to each screen: those bubble back up and are ignored."""


@dataclass
class ReloadSession(Message):
    """The app asks a session's screen to re-read itself now (a dialog about it just closed)."""

    session_id: str


@dataclass
class ChainAsked(Message):
    """``c`` on the tree or the transcript: show the summaries covering episode ``seq`` (the session
    screen opens the picker, and moves the tree to the one picked)."""

    seq: int


@dataclass
class SettingsChanged(Message):
    """The app's settings were replaced (already saved); ``previous`` is what they were."""

    settings: Settings
    previous: Settings


class WorkerReport(Message):
    """What a compaction run's or the backlog's worker posts to the app (``post_message`` is
    thread-safe). The app hands each kind to the object that shows it, through one table
    (``HiermemApp``'s relays), not a handler each."""


# ---------------------------------------------------------------------- compaction runs
# Posted to the app from the compaction worker's thread. Each carries the job it belongs to, so a
# late message of an older job is recognised and ignored, and the engine's own frozen event, so
# nothing is copied field by field.


@dataclass
class RunBegan(WorkerReport):
    """The engine recorded a run and knows how many summaries it plans to write."""

    job: RunJob
    event: RunStarted


@dataclass
class RunSummaryStarted(WorkerReport):
    """One summary is being made (``event.what`` says which: "leaf #259–263")."""

    job: RunJob
    event: SummaryStarted


@dataclass
class RunAttempted(WorkerReport):
    """The summariser is calling the model for a tier, or retrying an unanswered call."""

    job: RunJob
    event: SummaryAttempt


@dataclass
class RunCallProgress(WorkerReport):
    """The model call is streaming: phase, tokens, its pace and what it still needs.

    A newer one replaces one still queued (``can_replace``): only the latest matters, and a
    busy UI should not draw a backlog of them.
    """

    job: RunJob
    event: SummaryProgress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunCallProgress) and message.job.id == self.job.id


@dataclass
class RunSummaryWritten(WorkerReport):
    """A summary was committed: counters, progress and tokens/s moved."""

    job: RunJob
    event: SummaryWritten


@dataclass
class RunEnded(WorkerReport):
    """The run finished (done, cancelled or failed); ``event.run`` is the stored row."""

    job: RunJob
    event: RunFinished


@dataclass
class RunNotStarted(WorkerReport):
    """The job ended without recording a run: backend not ready, nothing due, refused, cancelled early.

    ``reason`` is one line for people; ``severity`` is how a notification should show it.
    """

    job: RunJob
    reason: str
    severity: str = "error"
    title: str = "Nothing ran"


@dataclass
class HostLost(WorkerReport):
    """A job with several hosts lost one (left out at the start, or gone mid-call and its
    summary moved to another): ``text`` is the engine's one line, shown as a warning."""

    text: str


# ---------------------------------------------------------------- search, context, stats, run history
# Posted from the screens' thread workers; each carries the ``ticket`` of its request so a late
# answer to an older request (a query typed over) is recognised and dropped.


# ---------------------------------------------------------------- the backlog in the background
# Posted from the backlog's thread worker (tui/backlog_run.py); each carries its job's number, so
# what an earlier backlog reports late is dropped.


@dataclass
class BacklogWaiting(WorkerReport):
    """What is waiting across the file was planned (``say``: tell the user, at start or after an import)."""

    waiting: Waiting
    say: bool = False


@dataclass
class BacklogBegan(WorkerReport):
    """The backlog was planned and starts; ``control`` is how the app steers it (thread-safe)."""

    job: int
    steer: BacklogControl
    sessions: int
    summaries: int


@dataclass
class BacklogMoved(WorkerReport):
    """A summary was written (``progress``), or the queue, the running sessions or the pause changed."""

    job: int
    progress: BacklogProgress | None


@dataclass
class BacklogWrote(WorkerReport):
    """The backlog wrote a summary of ``session_id`` (screens re-read it)."""

    job: int
    session_id: str


@dataclass
class BacklogFinished(WorkerReport):
    """The backlog ended: ``done``, ``budget``, ``paused`` (stopped), ``cancelled`` or ``failed`` (``error`` says why)."""

    job: int
    reason: str
    progress: BacklogProgress | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Found:
    """What a search worker found: the result and the titles of the sessions in it."""

    result: SearchResult
    titles: dict[str, str]


@dataclass
class SearchDone(Message):
    """A search finished: ``found``, or ``error`` (one line) for a query that cannot be searched."""

    ticket: int
    found: Found | None
    error: str | None = None


@dataclass
class IndexProgress(Message):
    """The search index of an upgraded file is being built: ``done`` of ``total`` rows."""

    done: int
    total: int
    finished: bool = False


@dataclass
class Loaded(Message):
    """A screen's data, read from the store in a worker (context view, stats, a page of runs…)."""

    ticket: int
    data: object


# ---------------------------------------------------------------- the screens' own workers


@dataclass
class PlanReady(Message):
    """The run dialog's worker read what each action would make (the dry-run plan)."""

    preview: PlanPreview


@dataclass
class BacklogPlanReady(Message):
    """The run dialog's worker planned the backlog (every session, in the order and over the size asked)."""

    plan: Backlog
    ticket: int
    """Which of the dialog's plans it is (an older one is dropped)."""


@dataclass
class FidelityMeasured(Message):
    """The session screen's ``M`` worker measured the session: ``text`` to show, or ``error``."""

    session_id: str
    text: str
    error: str | None = None


@dataclass
class ContextReady(Message):
    """The context screen's worker rendered the whole context for the clipboard."""

    text: str
    size: str


# ---------------------------------------------------------------------- the import screen
# Posted from the import screen's thread workers. Each carries the ``job`` (or ``ticket``) it
# belongs to, so what an older look or import sends late is recognised and dropped.


@dataclass
class SourcesFound(Message):
    """The histories found at the standard places (``importers.discover``), or at a typed path."""

    ticket: int
    sources: list[Source]
    error: str | None = None
    """One line when a typed path cannot be imported (missing, or of no format we know)."""
    typed: bool = False
    """The answer to a path the user typed (its sources join the list ticked)."""
    skipped: tuple[str, ...] = ()
    """Entries under a typed folder that no importer recognises (named, as the CLI does)."""


@dataclass
class ImportProgressed(Message):
    """An import is reading source ``index`` of ``total``: what it has seen of it so far.

    A newer one replaces one still queued (``can_replace``): only the latest count matters."""

    job: int
    index: int
    total: int
    sessions: int
    episodes: int
    doing: str = ""
    """What the importer is at (``ImportReport.doing``: reading, counting tokens, writing); "" between sessions."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ImportProgressed) and message.job == self.job


@dataclass
class ImportSourceDone(Message):
    """One source is imported (``ok``; ``line`` says what it added) or refused (``line`` says why)."""

    job: int
    index: int
    source: Source
    line: str
    ok: bool
    details: tuple[str, ...] = ()
    """What the CLI says on stderr after it: records skipped as malformed, and a few of them."""


@dataclass
class ImportFinished(Message):
    """The import job ended: every ticked source was tried, or it was stopped between two."""

    job: int
    sessions_created: int
    episodes_appended: int
    stopped: bool = False


# ---------------------------------------------------------------- doctor and backup
# Posted from thread workers (the stats screen's doctor, the backup before a run); each carries the
# ``ticket`` of its job, so what a job started before the current one reports is dropped.


@dataclass
class DoctorProgress(Message):
    """The doctor is at ``phase`` (pages, sessions, search, runs): ``done`` of ``total`` (0: no measure)."""

    ticket: int
    phase: str
    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DoctorProgress) and message.ticket == self.ticket


@dataclass
class DoctorDone(Message):
    """The doctor finished: ``record`` (what the stats screen shows), or ``error`` (one line)."""

    ticket: int
    record: DoctorRecord | None
    error: str | None = None


@dataclass
class BackupProgress(Message):
    """A backup has copied ``done`` of ``total`` pages."""

    ticket: int
    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BackupProgress) and message.ticket == self.ticket


@dataclass
class BackupDone(Message):
    """A backup finished: the copy's ``path`` and a one-line ``summary``, or ``error``."""

    ticket: int
    path: Path | None
    summary: str = ""
    error: str | None = None
