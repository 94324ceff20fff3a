"""Following chat files and folders as they grow, and importing what is new (watch mode, headless).

Why polling: one ``os.stat`` per file and per folder each tick is portable (no inotify or
FSEvents dependency) and cheap — a quiet tick over 2,000 files costs little more than a bare
stat loop over them (bench/bench_watch.py). A folder is listed again only when its own mtime
moved (a file was created or removed in it), or while that mtime is recent enough that a
second change could hide in the same timestamp.

How each format is followed:

* native JSONL (``jsonl``) is append-only and each line is a whole record: it is read from
  the byte offset where the last tick stopped, complete lines only, so a tick costs what is new;
* Claude Code and Codex logs are append-only too, but their records depend on each other
  (one reply spread over several lines, ids that dedupe): a file that changed is parsed again
  whole and the store's idempotent append keeps only what is new (not more often than
  ``REPARSE_PAUSE`` times what the last parse took, for huge logs). While such a file is being
  written, each session's last episode is held back — the next line may still belong to it,
  and a stored episode never changes — until something follows it or the file has been quiet
  for ``settle_s`` seconds;
* every other format (exports, SQLite sources) is imported whole once the file has been quiet
  for ``settle_s`` (a half-downloaded export is not valid JSON yet).

A half-written last line is never counted as malformed: it waits for the next tick, and only
once the file has been quiet for ``settle_s`` is it taken as the file's real (cut-off) end.
Each file's import is one transaction, as with ``import``; ``should_stop`` is asked between
files, so stopping never cuts an import short.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..importers import FormatError, ImportReport, Problems, detect, get_importer, load_session
from ..importers import jsonl as native
from ..importers.base import ParsedEpisode, ParsedSession
from ..store import Store, StoreError

LINE_FORMATS = frozenset({native.NAME})
"""Read from a byte offset, a complete line at a time."""
LOG_FORMATS = frozenset({"claude-code", "codex"})
"""Parsed again whole when they change, each session's last episode held back while live."""
FOLDER_SUFFIX = ".jsonl"
"""Files a watched folder contributes (as ``import`` reads a folder)."""
DEFAULT_SETTLE_S = 30.0
RACY_S = 2.0
"""A folder whose mtime is this recent is listed again: a second change may share its timestamp."""
REPARSE_PAUSE = 4.0
"""After parsing a file whole, wait this many times as long before parsing it again: a huge live
log then costs at most a fifth of a core…"""
PAUSE_FROM_S = 0.05
"""…while a file parsed faster than this (most logs) is read again at the next tick."""
TAIL_PROBE = 1 << 20
"""How far back from the end a file is read to judge an unterminated last line."""


@dataclass(frozen=True, slots=True)
class Landed:
    """What one file brought into one session in one tick."""

    session_id: str
    appended: int
    created: bool


@dataclass(slots=True)
class FileImport:
    """One file's import in one tick: per-session counts, new malformed records, episodes held back."""

    path: Path
    fmt: str
    landed: list[Landed] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    held: int = 0


@dataclass(slots=True)
class TickReport:
    """What one :meth:`Watcher.tick` did (the CLI turns it into log lines, tests read it)."""

    imports: list[FileImport] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    """Files no importer takes (or unreadable): skipped until they change."""
    failed: list[tuple[Path, str]] = field(default_factory=list)
    """Files the database would not take this time (locked, an error): tried again next tick."""
    gone: list[Path] = field(default_factory=list)
    found: int = 0
    files: int = 0
    folders: int = 0
    stopped: bool = False

    @property
    def sessions(self) -> list[str]:
        """Sessions that received episodes, in order."""
        return list(dict.fromkeys(land.session_id for f in self.imports for land in f.landed if land.appended))

    @property
    def seen(self) -> list[str]:
        """Every session a file that was read holds (new episodes or not), in order."""
        return list(dict.fromkeys(land.session_id for f in self.imports for land in f.landed))

    @property
    def episodes(self) -> int:
        return sum(land.appended for f in self.imports for land in f.landed)


@dataclass(slots=True)
class _Followed:
    """Per-file state: the stat signature last seen and, for JSONL, where reading stopped."""

    path: Path
    explicit: bool = False
    where: str = field(init=False)  # str(path): what os.stat is given, so a quiet tick converts nothing
    sig: tuple[int, int, int] | None = None  # size, mtime_ns, inode
    fmt: str | None = None
    pending: bool = False  # something waits for the file to settle
    offset: int = 0
    lines: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    titled: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)
    ready_at: float = 0.0  # clock time before which a changed file is not parsed again whole

    def __post_init__(self) -> None:
        self.where = str(self.path)

    def restart(self) -> None:
        """Read the file from its start again (it was replaced or cut): imports are idempotent."""
        self.offset, self.lines, self.fmt, self.pending = 0, 0, None, False
        self.counts, self.titled, self.reasons = {}, set(), Counter()


class Watcher:
    """Follows ``paths`` (files of any format, folders of ``*.jsonl``); call :meth:`tick` at an interval.

    ``clock`` is wall time (it is compared with file mtimes to decide that a file is quiet);
    tests move it instead of sleeping. Not thread-safe: one thread ticks.
    """

    def __init__(
        self,
        store: Store,
        paths: Sequence[Path],
        *,
        fmt: str = "auto",
        settle_s: float = DEFAULT_SETTLE_S,
        clock: Callable[[], float] = time.time,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.fmt = fmt
        self.settle_s = settle_s
        self.clock = clock
        self.should_stop = should_stop
        self._roots = {Path(p) for p in paths if Path(p).is_dir()}
        self._dirs: dict[Path, int] = {p: -1 for p in sorted(self._roots)}
        self._files: dict[Path, _Followed] = {
            Path(p): _Followed(Path(p), explicit=True) for p in paths if not Path(p).is_dir()
        }

    @property
    def files(self) -> list[Path]:
        return list(self._files)

    # ------------------------------------------------------------------ the tick
    def scan(self) -> TickReport:
        """Only notice new files (no reading): how much there is to follow, before the first tick."""
        report = TickReport()
        self._rescan(report)
        report.files, report.folders = len(self._files), len(self._dirs)
        return report

    def tick(self) -> TickReport:
        """Notice new files, then import what each changed file gained (one transaction per file)."""
        report = TickReport()
        self._rescan(report)
        now = self.clock()
        stat = os.stat
        for followed in list(self._files.values()):
            try:
                st = stat(followed.where)
            except OSError:
                st = None
            if st is not None and not followed.pending and followed.sig == (st.st_size, st.st_mtime_ns, st.st_ino):
                continue  # the quiet case, kept to one stat and one comparison
            if self.should_stop():
                report.stopped = True
                break
            self._check(followed, st, now, report)
        report.files, report.folders = len(self._files), len(self._dirs)
        return report

    def _rescan(self, report: TickReport) -> None:
        """List folders whose mtime moved (or is recent); new sub-folders are listed at once."""
        pending = deque(self._dirs)
        while pending:
            folder = pending.popleft()
            try:
                st = os.stat(folder)
            except OSError:
                if folder not in self._roots:
                    self._dirs.pop(folder, None)
                continue
            if st.st_mtime_ns == self._dirs.get(folder) and time.time() - st.st_mtime >= RACY_S:
                continue
            self._dirs[folder] = st.st_mtime_ns
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                path = Path(entry.path)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if path not in self._dirs:
                            self._dirs[path] = -1
                            pending.append(path)
                    elif entry.name.endswith(FOLDER_SUFFIX) and path not in self._files and entry.is_file():
                        self._files[path] = _Followed(path)
                        report.found += 1
                except OSError:
                    continue

    def _check(self, f: _Followed, st: os.stat_result | None, now: float, report: TickReport) -> None:
        if st is None:  # gone (or unreadable)
            if f.sig is not None:
                report.gone.append(f.path)
            if f.explicit:
                f.sig = None
                f.restart()
            else:
                del self._files[f.path]
            return
        sig = (st.st_size, st.st_mtime_ns, st.st_ino)
        settled = now - st.st_mtime >= self.settle_s
        if sig == f.sig and not (f.pending and settled):
            return
        if now < f.ready_at:
            return  # f.sig stays old, so a later tick reads it (a big live log must not eat a core)
        if f.sig is not None and (st.st_ino != f.sig[2] or st.st_size < f.offset):
            f.restart()
        f.sig = sig
        f.pending = False
        if st.st_size == 0:
            return
        try:
            if f.fmt is None and not self._identify(f, settled, report):
                return
            if f.fmt in LINE_FORMATS:
                self._read_lines(f, settled, report)
            else:
                self._read_whole(f, st.st_size, settled, report)
        except FormatError as exc:
            report.refused.append((f.path, str(exc)))
        except RecursionError:
            report.refused.append((f.path, f"{f.path.name}: data nested too deeply to be a {f.fmt} file"))
        except UnicodeDecodeError as exc:
            report.refused.append((f.path, f"{f.path.name}: not valid UTF-8 ({exc.reason} at byte {exc.start})"))
        except OSError as exc:
            report.refused.append((f.path, f"{f.path.name}: {exc.strerror or exc}"))
        except (StoreError, sqlite3.Error) as exc:  # the database, not the file: try again next tick
            f.sig = None
            report.failed.append((f.path, str(exc)))

    # ------------------------------------------------------------------ formats
    def _identify(self, f: _Followed, settled: bool, report: TickReport) -> bool:
        """Decide the file's format (sniffers judge complete lines); a live file no format
        claims yet waits, a quiet one is refused until it changes."""
        try:
            f.fmt = detect(f.path) if self.fmt == "auto" else self.fmt
        except FormatError as exc:
            if settled:
                report.refused.append((f.path, str(exc)))
            else:
                f.pending = True  # maybe only its first lines are there yet
            return False
        return True

    def _read_lines(self, f: _Followed, settled: bool, report: TickReport) -> None:
        """Native JSONL from ``f.offset``: complete lines (an unterminated one only once settled
        or when it is a whole JSON object), grouped by session, keyed as ``import`` keys them."""
        problems = Problems()
        records: list[tuple[str, str | None, ParsedEpisode]] = []
        pos, lineno = f.offset, f.lines
        with f.path.open("rb") as fh:
            fh.seek(f.offset)
            for raw in fh:
                if not raw.endswith(b"\n") and not (settled or _is_object(raw)):
                    f.pending = True
                    break
                pos += len(raw)
                lineno += 1
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                result = native.parse_line(line, lineno)
                if isinstance(result, str):
                    problems.skip(result, f"{f.path.name}:{lineno}")
                else:
                    records.append(result)
        counts, titled = dict(f.counts), set(f.titled)
        sessions: dict[str, ParsedSession] = {}
        for sid, title, episode in records:
            parsed = sessions.setdefault(sid, ParsedSession(sid, "", native.NAME, []))
            n = counts.get(sid, 0)
            counts[sid] = n + 1
            episode.source_id = f"@{n}"  # the key ``import`` gives the n-th record of a session
            parsed.episodes.append(episode)
            if sid not in titled and title and title.strip():
                parsed.title = title.strip()
                titled.add(sid)
            if parsed.created_at is None:
                parsed.created_at = episode.created_at
        done = FileImport(f.path, native.NAME, skipped=problems.reasons)
        if sessions:
            with self.store.db.transaction():
                done.landed = [self._load(parsed, f.path) for parsed in sessions.values()]
        f.offset, f.lines, f.counts, f.titled = pos, lineno, counts, titled
        if done.landed or done.skipped:
            report.imports.append(done)

    def _read_whole(self, f: _Followed, size: int, settled: bool, report: TickReport) -> None:
        """Parse the whole file again; logs hold back each session's last episode while live."""
        log = f.fmt in LOG_FORMATS
        if not settled and not (log and complete_end(f.path, size)):
            f.pending = True
            return
        module = get_importer(f.fmt or "")
        problems = Problems()
        done = FileImport(f.path, f.fmt or "")
        _ = self.store.tokenizer  # built once per store (seconds): not a cost of this file
        started = time.monotonic()
        with self.store.db.transaction():
            for parsed in module.parse(f.path, problems):
                if log and not settled and parsed.episodes:
                    parsed.episodes.pop()
                    done.held += 1
                if parsed.episodes:
                    done.landed.append(self._load(parsed, f.path))
        done.skipped = problems.reasons - f.reasons
        f.reasons = problems.reasons
        f.pending = done.held > 0
        cost = time.monotonic() - started
        f.ready_at = self.clock() + REPARSE_PAUSE * cost if cost >= PAUSE_FROM_S else 0.0
        if any(land.appended or land.created for land in done.landed) or done.skipped:
            report.imports.append(done)

    def _load(self, parsed: ParsedSession, path: Path) -> Landed:
        counts = ImportReport()
        load_session(self.store, parsed, str(path), counts)
        return Landed(parsed.id, counts.episodes_appended, bool(counts.sessions_created))


def complete_end(path: Path, size: int) -> bool:
    """Whether the file's last line is whole: it ends in a newline, or its unterminated last
    line is a complete JSON object (some writers never end a file with a newline)."""
    with path.open("rb") as fh:
        fh.seek(max(size - 1, 0))
        if fh.read(1) == b"\n":
            return True
        start = max(size - TAIL_PROBE, 0)
        fh.seek(start)
        tail = fh.read(size - start)
    cut = tail.rfind(b"\n")
    if cut < 0 and start > 0:
        return False
    return _is_object(tail[cut + 1:])


def _is_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except (ValueError, RecursionError):  # ValueError covers bad UTF-8 and bad JSON
        return False
