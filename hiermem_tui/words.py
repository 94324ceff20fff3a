"""Counted nouns in what the app says: "1 run", "2 runs", "1 summary", "3 summaries"; and the name of
what writes summaries (:func:`engine_label`), which the CLI and the TUI say alike.

Why one helper: screens and commands spelled "{n} runs" by hand, so a file with one run said
"1 runs" and a leaf over one episode "1 episodes" (issue 21).
"""

from __future__ import annotations

from hiermem_tui.textsafe import one_line

IRREGULAR = {"summary": "summaries", "entry": "entries", "was": "were"}


def plural(noun: str) -> str:
    return IRREGULAR.get(noun, noun + "s")


def counted(n: int, noun: str, *, width: int = 0) -> str:
    """``n`` with its noun, singular for exactly one: ``counted(1, "summary")`` → ``1 summary``;
    thousands separated, right-aligned in ``width`` characters."""
    return f"{n:>{width},} {noun if n == 1 else plural(noun)}"


def duration(seconds: float) -> str:
    """``0.4 s``, ``12 s``, ``3 m 05 s``, ``2 h 07 m``: a time span for people (the TUI and the CLI)."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    total = int(round(seconds))
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} m {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} m"


def engine_label(backend: str, model: str | None) -> str:
    """``ollama/llama3.2:latest``, ``openai/qwen2.5-coder``, ``ollama/(the loaded model)`` or ``extractive``:
    what will write (a model's name shortened to one line of at most 60 characters)."""
    if backend == "extractive":
        return "extractive"
    if model:
        return f"{backend}/{one_line(model, 60)}"
    return f"{backend}/{'(the loaded model)' if backend == 'ollama' else '(the model it serves)'}"
