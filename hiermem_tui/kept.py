"""What was worked out from a text, kept for the next time it is asked of the same text.

The summariser reads the same message several times: a leaf's key lines are picked twice (the lines a title
is asked of, then the lines that fill what the title left), the session's brief reads every message again, and
a summary's next request is read while the model answers the current one (issue 38). Each of those readings is
a pure function of the text, so what it found is kept here, bounded by the characters of the texts kept (the
oldest dropped first), and safe to share between threads.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    """Values by the text they were worked out from, at most ``chars`` characters of texts (each at most
    ``longest``: a longer one is not kept), the oldest dropped first."""

    def __init__(self, chars: int, longest: int) -> None:
        self.chars = chars
        self.longest = longest
        self._values: dict[str, V] = {}
        self._size = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> V | None:
        return self._values.get(text)

    def put(self, text: str, value: V) -> V:
        """Keep ``value`` for ``text`` (when it is short enough); returns ``value``."""
        if len(text) > self.longest:
            return value
        with self._lock:
            if text not in self._values:
                self._values[text] = value
                self._size += len(text)
                while self._size > self.chars and self._values:
                    oldest = next(iter(self._values))
                    self._size -= len(oldest)
                    del self._values[oldest]
        return value

    def __len__(self) -> int:
        return len(self._values)
