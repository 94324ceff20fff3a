"""Importers: one module per chat-history format (each only *parses*, see ``base.py``), the
registry and detection (``registry``), and writing what they parse into the store (``loading``).
This face re-exports what callers use.
"""

from __future__ import annotations

from .base import FormatError, Problems
from .loading import ImportReport, import_paths, load_session, scrub_session
from .registry import FORMATS, detect, get_importer


__all__ = [
    "FORMATS", "FormatError", "ImportReport", "Problems", "detect", "get_importer", "import_paths", "load_session",
    "scrub_session",
]
