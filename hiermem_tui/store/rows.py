"""Small helpers the repositories share: ids, and the JSON text columns hold.

Why here: several tables keep JSON lists or objects in TEXT columns (lost names, rejections,
keywords, run counters); reading them leniently (a foreign writer, a damaged cell) is decided
in one place.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from typing import Any


def new_id(prefix: str) -> str:
    """Time-ordered, collision-resistant ids (``s_`` summaries, ``r_`` runs)."""
    return f"{prefix}_{time.time_ns() // 1_000_000:x}{secrets.token_hex(4)}"


def jlist(text: str | None) -> tuple[Any, ...]:
    """A JSON list column as a tuple (empty for NULL or anything that is not a list)."""
    if not text:
        return ()
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    return tuple(value) if isinstance(value, list) else ()


def jdump(items: Sequence[Any]) -> str | None:
    """A list for a JSON list column (NULL when empty)."""
    return json.dumps(list(items), ensure_ascii=False) if items else None


def jdict(text: str | None) -> dict[str, Any]:
    """A JSON object column as a dict (empty for NULL or anything that is not an object)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
