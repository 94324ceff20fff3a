"""Loading what a format module parsed into the store: :func:`import_paths` (one transaction per
input path, so a file that turns out not to be of its format leaves nothing behind) and
:func:`load_session` (one parsed session, for the watcher too).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._util import first_user_title
from ._versions import episode_key, mark_revisions, resolve_session_id
from .base import FormatError, ParsedSession, Problems
from .registry import detect, get_importer

if TYPE_CHECKING:
    from ..store import Store
    from ..tokens import Tokenizer


@dataclass
class ImportReport:
    """What an import did, for the CLI's summary line and the tests."""

    sessions_seen: int = 0
    sessions_created: int = 0
    episodes_appended: int = 0
    episodes_present: int = 0
    episodes_revised: int = 0
    """Of ``episodes_appended``, how many are a new version of a message the source changed."""
    summaries_added: int = 0
    """Summaries another tool made (lossless-claw, lossless-code) written with their DAG."""
    summaries_present: int = 0
    """Of those, how many an earlier import had written already."""
    problems: Problems = field(default_factory=Problems)
    formats: dict[str, str] = field(default_factory=dict)
    doing: str = ""
    """What the import is at now, for progress ("counting tokens: 12,000 of 32,978 messages of
    session big"); "" between two sessions."""

    def describe(self) -> str:
        """What the import did, in one line (the CLI prints it after ``<path> (<format>): ``)."""
        text = (f"{self.sessions_seen} session(s), {self.sessions_created} new; {self.episodes_appended} "
                f"episode(s) added, {self.episodes_present} already present")
        if self.episodes_revised:
            text += f"; {self.episodes_revised} added as new version(s) of message(s) the source changed"
        skipped = self.problems.summaries_line()
        if self.summaries_added or self.summaries_present or skipped:
            text += f"; {self.summaries_added} summar{'y' if self.summaries_added == 1 else 'ies'} added, " \
                    f"{self.summaries_present} already present"
        return text + (f"; {skipped}" if skipped else "")


ProgressFn = Callable[[str, ImportReport], None]
"""Told ``(path, report)`` when a path is opened, as a big session's tokens are counted (a batch at a
time, and every ``HEARTBEAT_S`` while one batch takes long), before a session is written and after."""


def import_paths(
    store: "Store",
    paths: list[Path],
    fmt: str = "auto",
    *,
    on_progress: ProgressFn | None = None,
    parallel: bool = True,
) -> ImportReport:
    """Import every path; each path is one transaction (all of it lands, or none of it).

    ``parallel=False`` counts tokens in this process only: a TUI (whose standard streams are not
    real files) cannot start the worker processes big inputs are otherwise counted in."""
    report = ImportReport()
    tell: ProgressFn = on_progress or _silent
    for path in paths:
        name = detect(path) if fmt == "auto" else fmt
        module = get_importer(name)
        report.formats[str(path)] = name
        before = _counts(report)
        report.doing = f"reading {path.name}"
        tell(str(path), report)
        try:
            with _counting(store, path) if parallel else nullcontext(), store.db.transaction():
                # Pipeline: sessions are tokenised ahead (in a worker process for big inputs)
                # while earlier ones are written here, so an import costs little more than
                # tokenising its text. At most AHEAD sessions wait, which bounds memory.
                pending: deque[tuple[ParsedSession, _Counting]] = deque()
                for parsed in module.parse(path, report.problems):
                    scrub_session(parsed)  # before counting, so tokens are those of the text stored
                    pending.append((parsed, _Counting(store.tokenizer, [e.content for e in parsed.episodes])))
                    if len(pending) > AHEAD:
                        _write_next(store, pending, str(path), report, tell)
                while pending:
                    _write_next(store, pending, str(path), report, tell)
        except FormatError:
            _set_counts(report, before)
            raise
        except RecursionError:
            raise FormatError(f"{path}: data nested too deeply to be a {name} export") from None
        except UnicodeDecodeError as exc:
            raise FormatError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    return report


_COUNTS = ("sessions_seen", "sessions_created", "episodes_appended", "episodes_present", "episodes_revised",
           "summaries_added", "summaries_present")


def _counts(report: ImportReport) -> tuple[int, ...]:
    return tuple(getattr(report, name) for name in _COUNTS)


def _set_counts(report: ImportReport, values: tuple[int, ...]) -> None:
    """Put the counters back: a path that failed as a whole wrote nothing (its transaction rolled back)."""
    for name, value in zip(_COUNTS, values):
        setattr(report, name, value)


# Lone UTF-16 surrogates: JSON can spell them (\ud800) and Python keeps them in a str, but
# they are not Unicode text, so SQLite (UTF-8) cannot store them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _scrubbed(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and dict keys) replaced by U+FFFD."""
    if isinstance(value, str):
        if value.isascii() or not _SURROGATES.search(value):  # isascii: a fast path for most text
            return value
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_scrubbed(k): _scrubbed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v) for v in value]
    return value


def scrub_session(parsed: ParsedSession) -> None:
    """Make every string of a parsed session storable, in place (see ``_SURROGATES``).

    Done here, once for all formats, rather than in each importer: any JSON string a source
    holds can carry one. Ids are scrubbed too, so they stay stable across re-imports.
    """
    parsed.id = _scrubbed(parsed.id)
    parsed.title = _scrubbed(parsed.title)
    parsed.source = _scrubbed(parsed.source)
    parsed.metadata = _scrubbed(parsed.metadata)
    for ep in parsed.episodes:
        ep.content = _scrubbed(ep.content)
        ep.former_content = _scrubbed(ep.former_content)
        ep.source_id = _scrubbed(ep.source_id)
        if ep.metadata:
            ep.metadata = _scrubbed(ep.metadata)


AHEAD = 8
"""How many parsed sessions may wait for their token counts before the oldest is written."""
PARALLEL_BYTES = 8_000_000
"""Inputs at least this big are tokenised in worker processes while the main one parses and writes."""
COUNT_BATCH = 2_000_000
"""Characters of text counted in one go: a bigger session is counted in batches (spread over the worker
processes, and each one a progress step), so a 50 MB session is not one silent minute."""
HEARTBEAT_S = 1.0
"""While one batch takes long (one huge message), progress is told this often all the same."""


def _silent(_ref: str, _report: ImportReport) -> None:
    return None


class _Counting:
    """One parsed session's token counts, a batch of messages at a time: submitted to the worker processes
    at once inside ``Tokenizer.parallel()``, else counted here when the session is written."""

    def __init__(self, tokenizer: Tokenizer, texts: list[str]) -> None:
        self.tokenizer = tokenizer
        self.batches: list[list[str]] = []
        size = 0
        for text in texts:
            if not self.batches or size + len(text) > COUNT_BATCH:
                self.batches.append([])
                size = 0
            self.batches[-1].append(text)
            size += len(text)
        self.total = len(texts)
        self.chars = sum(map(len, texts))
        self.later: list[Future[list[int]]] | None = (
            [tokenizer.count_many_later(b) for b in self.batches] if tokenizer.pooled else None)

    def counts(self, tell: Callable[[int], None]) -> list[int]:
        """Every message's count, in order; ``tell(messages counted so far)`` before each batch, while a
        batch is awaited (every ``HEARTBEAT_S``) and at the end."""
        out: list[int] = []
        for i, batch in enumerate(self.batches):
            tell(len(out))
            if self.later is None:
                out.extend(self.tokenizer.count_many(batch))
                continue
            while True:
                try:
                    out.extend(self.later[i].result(timeout=HEARTBEAT_S))
                    break
                except FutureTimeout:
                    tell(len(out))
        tell(len(out))
        return out


def _write_next(
    store: Store,
    pending: deque[tuple[ParsedSession, _Counting]],
    ref: str,
    report: ImportReport,
    tell: ProgressFn,
) -> None:
    parsed, counting = pending.popleft()
    what = f"of session {parsed.id} ({_size(counting.chars)})"

    def counted(done: int) -> None:
        report.doing = f"counting tokens: {done:,} of {counting.total:,} messages {what}"
        tell(ref, report)

    tokens = counting.counts(counted)
    report.doing = f"writing {counting.total:,} messages {what}"
    tell(ref, report)
    load_session(store, parsed, ref, report, tokens)
    report.doing = ""
    tell(ref, report)


def _size(chars: int) -> str:
    return f"{chars / 1_000_000:,.1f} M characters" if chars >= 100_000 else f"{chars:,} characters"


def _counting(store: Store, path: Path) -> AbstractContextManager[None]:
    try:
        big = path.is_dir() or path.stat().st_size >= PARALLEL_BYTES
    except OSError:
        big = False
    return store.tokenizer.parallel() if big else nullcontext()


def load_session(
    store: Store, parsed: ParsedSession, ref: str | None, report: ImportReport, tokens: list[int] | None = None
) -> None:
    """Write one parsed session: create it if new, then append only the episodes not yet stored.

    A session without a title, from the source or stored, is titled by the first line of its first user
    message (clipped), what the chat is about; a title the source gives later replaces that one.

    A message the source has changed since an earlier import is appended as a new version, and
    a conversation stored under an id an earlier importer version gave it keeps that id (both in
    ``_versions``). ``tokens``, when given, must be the counts of the episodes' text after
    ``scrub_session``.
    """
    from ..store import NewEpisode

    if tokens is None:  # import_paths scrubbed before counting; other callers get it here
        scrub_session(parsed)
    report.sessions_seen += 1
    if not parsed.episodes:
        report.problems.skip("conversation without messages", parsed.id)
        return
    session_id = resolve_session_id(store, parsed)
    created = parsed.created_at or next((e.created_at for e in parsed.episodes if e.created_at), None)
    title = str(parsed.title).strip() if parsed.title else ""
    is_new = store.sessions.upsert(
        session_id, title=title, source=parsed.source, source_ref=ref, created_at=created, metadata=parsed.metadata,
        fallback_title="" if title else first_user_title(parsed.episodes, trim_cut=True),  # what the chat is about
    )
    if is_new:
        report.sessions_created += 1
    episodes = [
        NewEpisode(
            key=episode_key(ep, i), role=ep.role, content=ep.content, created_at=ep.created_at, metadata=ep.metadata
        )
        for i, ep in enumerate(parsed.episodes)
    ]
    if not is_new:
        keyed = [bool(ep.source_id) for ep in parsed.episodes]
        former = [ep.former_content for ep in parsed.episodes]
        revised, conflicts = mark_revisions(store, session_id, episodes, keyed, former)
        report.episodes_revised += revised
        for i in conflicts:
            report.problems.skip("message differs from the one already stored at its place (stored one kept)",
                                 f"{session_id} message {i}")
    appended, present = store.episodes.append(session_id, episodes, tokens)
    report.episodes_appended += appended
    report.episodes_present += present
    if parsed.summaries:
        from ._summaries import load_summaries

        added, already = load_summaries(store, session_id, parsed.summaries, report.problems)
        report.summaries_added += added
        report.summaries_present += already
