"""What both llm ``logs.db`` layouts need: the source name and how id and argument cells read.

The legacy and the threads layouts are read by modules of their own (``_llm_legacy``,
``_llm_threads``), and ``llm`` imports both to choose between them. The pieces they share live
here so that neither reader imports the other and ``llm`` imports them without a cycle, and so
that an id or a tool call comes out as the same text whichever layout stored it.
"""

from __future__ import annotations

import json
from typing import Any

from hiermem_tui.importers._sqlite import text_or_none

NAME = "llm"


def id_text(value: Any) -> str:
    """An id cell as text (``str`` as before, but a BLOB id is decoded rather than shown as ``b'…'``)."""
    return str(text_or_none(value))


def args_json(value: Any) -> str:
    """Tool arguments as one short literal line (JSON text is re-serialised compactly).

    Unlike ``_util.compact_json`` (Claude-style tool input: spaced, key order kept, clipped)
    this sorts keys, packs tightly and never clips; both are kept so stored text stays the same.
    """
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # ValueError: also ints over Python's 4300-digit limit
            return text
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return str(value)
