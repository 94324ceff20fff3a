"""Counted nouns in what the app says: "1 run", "2 runs", "1 summary", "3 summaries".

Why one helper: screens and commands spelled "{n} runs" by hand, so a file with one run said
"1 runs" and a leaf over one episode "1 episodes" (issue 21).
"""

from __future__ import annotations

IRREGULAR = {"summary": "summaries", "entry": "entries", "was": "were"}


def plural(noun: str) -> str:
    return IRREGULAR.get(noun, noun + "s")


def counted(n: int, noun: str, *, width: int = 0) -> str:
    """``n`` with its noun, singular for exactly one: ``counted(1, "summary")`` → ``1 summary``;
    thousands separated, right-aligned in ``width`` characters."""
    return f"{n:>{width},} {noun if n == 1 else plural(noun)}"
