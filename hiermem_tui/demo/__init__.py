"""Deterministic synthetic chat history at any scale, for ``hiermem-tui demo``.

Why this exists: the TUI, the store and compaction must be exercised on databases far larger
than anyone's real history (a million episodes) without shipping such data. So this package
invents sessions that look like chat history (titles, role patterns, lengths, code blocks,
pastes, gaps between turns) from a seed, one session at a time.

Why it is built this way:
- Output depends only on ``(sessions, episodes, seed, start)``: one ``random.Random(seed)`` drives
  everything, and the default ``start`` is a fixed date, never "now".
- Speed: per-message text is picked from pools of whole messages composed once per call, then
  glued to an opener; per episode that is a handful of ``random()`` calls, not one per word.
- Streaming: episode counts are allocated on the fly (each session takes its share of what is
  left), so memory is bounded by the largest single session, whatever ``sessions`` is.

Where things are: :mod:`.generator` (the stream, the public :func:`generate`), :mod:`.compose`
(the message pools), :mod:`.topics` and :mod:`.snippets` (the data), :mod:`.topic` (its type).
Headless: nothing here imports Textual.
"""

from __future__ import annotations

from pathlib import Path

from .generator import DEFAULT_START, SOURCE, SPAN_DAYS, generate
from .topic import Topic
from .topics import TOPICS

__all__ = ["DEFAULT_START", "SOURCE", "SPAN_DAYS", "TOPICS", "Topic", "bundled_demo_path", "generate"]


def bundled_demo_path() -> Path:
    """Path of the bundled ``demo.jsonl`` (what ``hiermem-tui --demo`` loads).

    Resolved from this package's location so it works from a checkout, an editable install and
    a wheel (``assets/**`` is package data).
    """
    return Path(__file__).resolve().parent.parent / "assets" / "demo" / "demo.jsonl"
