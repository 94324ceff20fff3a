"""The importers' registry: every format's CLI name and module, and detection by each module's ``sniff``."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from .base import FormatError, read_head

# CLI name -> module name. Order is the detection order: the most specific sniffers first
# (SQLite files by their tables, then JSONL record shapes, then JSON array shapes).
FORMATS: dict[str, str] = {
    "lossless-claw": "lossless_claw",
    "lossless-code": "lossless_code",
    "llm": "llm",
    "openwebui": "openwebui",
    "oterm": "oterm",
    "claude-code": "claude_code",
    "codex": "codex",
    "chatgpt": "chatgpt",
    "claude": "claude_ai",
    "sharegpt": "sharegpt",
    "jsonl": "jsonl",
}


def get_importer(name: str) -> ModuleType:
    if name not in FORMATS:
        raise FormatError(f"unknown format {name!r}; choose from auto, {', '.join(sorted(FORMATS))}")
    return importlib.import_module(f".{FORMATS[name]}", __package__)


def detect(path: Path) -> str:
    """The format of ``path``, decided by each importer's cheap ``sniff``; FormatError if none claims it."""
    if not path.exists():
        raise FormatError(f"{path} does not exist")
    try:
        head = read_head(path)
    except PermissionError:
        raise FormatError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    for name in FORMATS:
        module = get_importer(name)
        try:
            if module.sniff(path, head):
                return name
        except (OSError, ValueError):
            continue
    if not path.is_dir() and not head:
        raise FormatError(f"{path} is empty")
    raise FormatError(f"cannot tell what format {path} is; pass --format (one of {', '.join(sorted(FORMATS))})")
