"""The bundled demo database: the demo sessions, imported and compacted by the app itself.

Built once per (app version, demo data, recorded answers, summarising code) into the user cache
directory, then copied to a fresh temporary file for every ``--demo``, so the user's own database
is never touched and every demo starts clean. The build needs no model and no network:

1. a full pass with the offline extractive backend (``backend=extractive``);
2. every summarised session re-summarised through the same runner with a :class:`ReplayBackend`
   over ``assets/demo/model_answers.json``: a real model's answers to these very prompts, recorded
   once by ``scripts/make_demo_answers.py``. The model's summaries become the active ones, recorded
   as ``backend=ollama-recorded`` with the recorded model's name; the extractive ones are kept as
   their superseded versions (compare, history and revert show both). A prompt that changed since
   the recording finds no answer and falls back to the extractive digest, as a failed call does.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sqlite3
import tempfile
from dataclasses import replace
from pathlib import Path

import platformdirs

from . import __version__
from .config import APP_NAME, Settings
from .demo import bundled_demo_path
from .demo.replay import Recording, ReplayBackend, answers_path
from .importers import import_paths
from .store import Run, Store
from .summarize import Backend
from .tokens import Tokenizer

SHAPING = ("demo_db.py", "config.py", "tokens.py", "store/schema.py", "demo/replay.py", "summarize/*.py", "summarize/*/*.py",
           "compaction/*.py")
"""The code whose change changes what the build writes: the schema, the policy's defaults, the
tokenizer, the runner, and every module that makes a prompt or judges an answer."""


def shaping_modules() -> list[Path]:
    """The files of :data:`SHAPING`, in a stable order."""
    here = Path(__file__).parent
    return [m for pattern in SHAPING for m in sorted(here.glob(pattern))]


def _fingerprint(source: Path, answers: Path | None = None) -> str:
    """Changes whenever the demo data, the recorded answers, the schema or the code that writes
    the summaries does, so a cached template is never older than the app that shows it."""
    digest = hashlib.sha256(source.read_bytes())
    answers = answers or answers_path()
    digest.update(answers.read_bytes() if answers.exists() else b"no answers")
    here = Path(__file__).parent
    for module in shaping_modules():
        digest.update(module.relative_to(here).as_posix().encode() + b"\0" + module.read_bytes())
    return f"{__version__}-{digest.hexdigest()[:16]}"


def demo_settings(target: Path) -> Settings:
    """What the demo is built with: the app's defaults (policy, prompts, summary format), not the
    user's: the recorded answers are to the default prompts, and the cache is shared."""
    return Settings(db_path=target, backend="extractive", model=None)


def build_demo_db(target: Path, tokenizer: Tokenizer | None = None, *, answers: Path | None = None,
                  replay: bool = True) -> Path:
    """Import the bundled sessions into ``target``, run a full extractive pass on each, then (``replay``)
    re-summarise each with the recorded model answers in ``answers`` (default: the bundled file), all
    with :func:`demo_settings`."""
    from .compaction import compact_sessions

    store = Store.open(target, tokenizer=tokenizer)
    try:
        import_paths(store, [bundled_demo_path()], "jsonl")
        ids = [s.id for s in store.sessions.each()]
        base = demo_settings(target)
        asyncio.run(compact_sessions(store, ids, "full", base))
        path = answers or answers_path()
        if replay and path.exists():
            recording = Recording.load(path)
            asyncio.run(resummarize_sessions(store, replace(base, model=recording.model), ReplayBackend(recording)))
        store.db.checkpoint()
    finally:
        store.close()
    return target


async def resummarize_sessions(store: Store, settings: Settings, backend: Backend) -> list[Run]:
    """A new version of every summarised session's summaries, made by ``backend`` (which the caller
    keeps) with ``settings``' policy, prompts and summary format: the old versions are superseded."""
    from .compaction import make_runner

    runner = make_runner(store, settings, backend=backend)
    return [await runner.remake.session(s.id) for s in list(store.sessions.each()) if s.summaries]


def fresh_demo_copy(tokenizer: Tokenizer | None = None) -> Path:
    """A new temporary copy of the demo DB (building the cached template first if needed; the user's
    settings play no part in it: see :func:`demo_settings`)."""
    source = bundled_demo_path()
    cache = Path(platformdirs.user_cache_dir(APP_NAME)) / f"demo-{_fingerprint(source)}.db"
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix="demo-build-", suffix=".db", dir=cache.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        tmp.unlink()
        try:
            build_demo_db(tmp, tokenizer)
            os.replace(tmp, cache)
        finally:
            for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
                leftover.unlink(missing_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="hiermem-demo-"))
    copy = workdir / "demo.db"
    # sqlite's backup API gives a consistent copy even if another process has the template open
    src = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return copy


def cleanup_demo_copy(path: Path) -> None:
    shutil.rmtree(path.parent, ignore_errors=True)
