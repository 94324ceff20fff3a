"""Chat text as the screen shows it while ``f4`` masks secrets (screen sharing), as the MCP server and
``export`` mask them: the app's :class:`ScreenMask` (``app.shown`` goes through it).

The detector is loaded the first time it is needed, so an app that never masks never imports it
(detect-secrets takes a while to load; ``tests/unit/test_core_headless.py`` checks the app's module
does not load it), and a text masked once is not masked again when the screen repaints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hiermem_tui.redact import Redactor

CACHED = 4096
"""Masked texts remembered for repaints (the memory is cleared when it holds more)."""


class ScreenMask:
    """Masks chat text and names for the screen, remembering what it masked."""

    def __init__(self) -> None:
        self._masked: dict[str, str] = {}
        self._redactor: Redactor | None = None

    def text(self, text: str) -> str:
        """``text`` with its secrets masked."""
        hit = self._masked.get(text)
        if hit is None:
            if len(self._masked) > CACHED:
                self._masked.clear()
            hit = self._masked[text] = self._detector().mask(text)
        return hit

    def names(self, names: Sequence[str]) -> list[str]:
        """A summary's keywords, lost or made-up names, each masked."""
        redactor = self._detector()
        return [redactor.mask_name(n) for n in names]

    def _detector(self) -> Redactor:
        if self._redactor is None:
            from hiermem_tui.redact import Redactor  # here, not at the top: see the module's docstring

            self._redactor = Redactor()
        return self._redactor
