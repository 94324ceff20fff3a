"""The bundled demo database: the demo sessions, imported and compacted by the app itself.

Built once per (app version, demo data) into the user cache directory with the offline
extractive backend — so its summaries are real output of the engine, honestly recorded as
``backend=extractive`` — and then copied to a fresh temporary file for every ``--demo``,
so the user's own database is never touched and every demo starts clean.
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
from .importers import import_paths
from .store import Store
from .tokens import Tokenizer


def _fingerprint(source: Path) -> str:
    """Changes whenever the demo data, the schema or the code that writes the summaries does,
    so a cached template is never older than the app that shows it."""
    digest = hashlib.sha256(source.read_bytes())
    here = Path(__file__).parent
    for module in ("store/schema.py", "summarize/extractive.py", "summarize/quotes.py", "summarize/steps.py",
                   "summarize/summariser.py", "summarize/fidelity.py", "compaction/planner.py", "compaction/runner.py"):
        digest.update((here / module).read_bytes())
    return f"{__version__}-{digest.hexdigest()[:16]}"


def build_demo_db(target: Path, settings: Settings, tokenizer: Tokenizer | None = None) -> Path:
    """Import the bundled sessions into ``target`` and run a full extractive pass on each."""
    from .compaction import compact_sessions

    store = Store.open(target, tokenizer=tokenizer)
    try:
        import_paths(store, [bundled_demo_path()], "jsonl")
        ids = [s.id for s in store.sessions.each()]
        demo_settings = replace(settings, backend="extractive", model=None, db_path=target)
        asyncio.run(compact_sessions(store, ids, "full", demo_settings))
        store.db.checkpoint()
    finally:
        store.close()
    return target


def fresh_demo_copy(settings: Settings, tokenizer: Tokenizer | None = None) -> Path:
    """A new temporary copy of the demo DB (building the cached template first if needed)."""
    source = bundled_demo_path()
    cache = Path(platformdirs.user_cache_dir(APP_NAME)) / f"demo-{_fingerprint(source)}.db"
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix="demo-build-", suffix=".db", dir=cache.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        tmp.unlink()
        try:
            build_demo_db(tmp, settings, tokenizer)
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
