"""Watch mode, headless: :mod:`.follow` follows chat files and folders as they grow and imports
what is new; :mod:`.queue` decides which sessions to compact. ``commands/watch.py`` drives both."""

from .follow import DEFAULT_SETTLE_S, FileImport, Landed, TickReport, Watcher, complete_end
from .queue import BACKOFF_S, CompactionQueue, default_min_new

__all__ = [
    "BACKOFF_S", "DEFAULT_SETTLE_S", "CompactionQueue", "FileImport", "Landed", "TickReport", "Watcher",
    "complete_end", "default_min_new",
]
