"""Masking one answer (an MCP result, an export) and counting what was masked, by kind.

Why apart from :mod:`hiermem_tui.redact`: that module finds secrets in a text and masks them; a
``Masker`` is one answer's use of it, with the tally and the secrets seen so far that the answer's
``redacted`` field and its closing line report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from hiermem_tui.redact import MARK, MARK_RE, Redactor

CLIPPED_LEAST = 8
"""The shortest head of a seen secret masked where a quote was clipped."""


class Masker:
    """Masks every piece of text of one answer (an MCP result, an export) and counts what it masked;
    with no redactor (``--no-redact``) it passes text through."""

    def __init__(self, redactor: Redactor | None) -> None:
        self.redactor = redactor
        self.tally: Counter[str] = Counter()
        self.seen: dict[str, str] = {}
        """The secrets masked so far (→ kind): a name that is a piece of one is masked too."""

    def __call__(self, text: str) -> str:
        if self.redactor is None or not text:
            return text
        return self._clipped(self.redactor.mask(text, self.tally, self.seen))

    def _clipped(self, text: str) -> str:
        """``text`` without the head of a secret seen earlier in this answer that a quote clipped ("…"): a
        URL cut after its password no longer has the shape the detector knows."""
        if "…" not in text:
            return text
        for secret, kind in self.seen.items():
            for n in range(len(secret) - 1, CLIPPED_LEAST - 1, -1):
                piece = secret[:n] + "…"
                if piece in text:
                    text = text.replace(piece, MARK.format(kind) + "…")
                    self.tally[kind] += 1
                    break
        return text

    def names(self, names: Iterable[str]) -> list[str]:
        """A summary's keywords, lost or made-up names, each masked (see :meth:`Redactor.mask_name`)."""
        if self.redactor is None:
            return list(names)
        return [self.redactor.mask_name(n, self.tally, self.seen) for n in names]

    def count_marks(self, text: str) -> None:
        """Count the marks ``text`` holds (text masked elsewhere: what an answer shows)."""
        if "[secret: " in text:
            self.tally.update(m.group(0)[9:-1] for m in MARK_RE.finditer(text))

    @property
    def count(self) -> int:
        return sum(self.tally.values())

    def json(self) -> dict[str, Any]:
        """The ``redacted`` field of a result: ``{"masked", "secrets", "by_kind"}``."""
        return {"masked": self.redactor is not None, "secrets": self.count, "by_kind": dict(sorted(self.tally.items()))}

    def line(self) -> str:
        """``2 secrets masked (github token ×1, private key ×1)``, for a text answer."""
        if self.redactor is None:
            return "secrets not masked (--no-redact)"
        if not self.count:
            return "no secrets masked"
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(self.tally.items()))
        return f"{self.count} secret{'s' if self.count != 1 else ''} masked ({kinds})"
