"""A folder given to ``import --format auto`` that holds more than one kind of export.

Why: format detection decides once per path, and a folder is claimed whole by the first
importer that recognises something in it — a Claude Code project folder next to a ChatGPT
``conversations.json`` imported the Claude Code sessions and passed over the ChatGPT file
without a word. Here such a *mixed* folder is split into its top-level entries, each
detected (and imported) on its own, and what no importer recognises is named, so nothing is
left behind silently. A folder of one kind (a Claude Code projects folder, a Codex sessions
tree) is still imported as one path, exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .registry import detect
from .base import FormatError

MAX_ENTRIES = 500
"""A folder with more top-level entries than this is taken as one kind, unchecked: detecting
each entry of a huge tree (years of agent logs) would cost more than the import's first
look, and such trees come from one tool."""


@dataclass
class ImportPlan:
    """What to import for one command-line path, and what was passed over."""

    parts: list[tuple[Path, str]] = field(default_factory=list)
    """Paths to import with the format each was detected as (``auto`` where none was needed yet):
    the given path itself, or a mixed folder's entries."""
    skipped: list[Path] = field(default_factory=list)
    """Top-level entries of a mixed folder that no importer recognises (a README, a licence)."""


def _entries(folder: Path) -> list[Path] | None:
    try:
        found = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    except OSError:
        return None
    return found if len(found) <= MAX_ENTRIES else None


MAX_DEPTH = 3
"""How deep a folder no importer recognises as a whole is looked into for files it holds
(``tools/oterm/store.db``): deep enough for one folder per tool, shallow enough to stay cheap."""


def plan_auto(path: Path) -> ImportPlan:
    """The paths ``import --format auto PATH`` imports: PATH, or a mixed folder's entries.

    A subfolder no importer recognises as a whole (``oterm/`` holding only ``store.db``) is
    looked into, so every file of a known format under PATH is imported with its own format;
    everything else is in ``skipped``. A folder of one kind with nothing left over is one part.
    Raises FormatError only when nothing in ``path`` is recognised (as :func:`detect` does).
    """
    if not path.is_dir():
        return ImportPlan(parts=[(path, "auto")])
    try:
        whole: str | None = detect(path)
    except FormatError:
        whole = None
    entries = _entries(path)
    if entries is None:
        return ImportPlan(parts=[(path, whole or "auto")])
    plan = _split(entries, MAX_DEPTH)
    kinds = {name for _, name in plan.parts}
    if whole is not None and kinds <= {whole} and not plan.skipped:
        return ImportPlan(parts=[(path, whole)])  # one kind: the importer reads the folder as it always has
    if not plan.parts:
        detect(path)  # nothing recognised anywhere: the usual one-line error
    return plan


def _split(entries: list[Path], depth: int) -> ImportPlan:
    """Each entry with its detected format; an unrecognised folder looked into (``depth`` more levels)."""
    plan = ImportPlan()
    for entry in entries:
        try:
            plan.parts.append((entry, detect(entry)))
            continue
        except FormatError:
            pass
        inner = _entries(entry) if depth > 0 and entry.is_dir() else None
        sub = _split(inner, depth - 1) if inner else ImportPlan()
        if sub.parts:
            plan.parts.extend(sub.parts)
            plan.skipped.extend(sub.skipped)
        else:
            plan.skipped.append(entry)  # a folder with nothing known in it is named once, as a whole
    return plan
