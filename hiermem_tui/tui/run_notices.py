"""The words a user reads when a UI run ends, or when there was nothing for it to do.

Why a module of its own: it is wording, not control flow, and two places use it: the worker
(:mod:`.run_drive`) when a pass finds nothing due, and the app (:mod:`.runs`) when a run ends.
"""

from __future__ import annotations

from hiermem_tui.store import Run
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.run_job import RunJob


def nothing_due(action: str) -> str:
    """Why a leaf, condensation or full pass found no work (it ran nothing and wrote nothing)."""
    if action == "leaf":
        return "Nothing to summarise: every episode outside the fresh tail is under a leaf (or waits for more)."
    if action == "condense":
        return "Nothing to condense: no depth has enough contiguous summaries without a parent."
    return "Nothing to compact: the session is as compact as the policy allows."


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def outcome(job: RunJob, run: Run, error: str | None, *, brief: bool = False) -> tuple[str, str, str]:
    """(title, message, severity) for a finished run, saying why it ended and what was kept (``brief``: the run
    made the session's brief too)."""
    n = run.summaries_created
    tiers = f"{run.normal} normal · {run.aggressive} aggressive · {run.fallback} fallback · {run.flagged} flagged"
    if job.action == "resummarize-summary":
        kept_note = "nothing was changed (a re-summarised chain is written all at once)"
    elif n:
        kept_note = f"{_count(n, 'summary', 'summaries')} written before the {{why}} {'is' if n == 1 else 'are'} kept"
    else:
        kept_note = "nothing had been written yet"
    if run.status == "done":
        made = f"{_count(n, 'summary', 'summaries')} ({tiers})" + (" and the brief" if brief else "")
        text = f"{made if n or not brief else 'The brief'} in {fmt.duration(run.wall_seconds)}"
        if run.fallback:
            text += f"; {_count(run.fallback, 'fallback', 'fallbacks')}: press f in the session to find them"
        if run.flagged:
            text += f"; {_count(run.flagged, 'summary', 'summaries')} flagged low-fidelity: X repairs them"
        if job.action in ("resummarize-session", "repair"):
            text += "; the previous summaries are kept as superseded"
        if run.rejections:
            worst = sorted(run.rejections.items(), key=lambda p: -p[1])[:3]
            text += "; answers rejected: " + ", ".join(f"{reason.replace('_', ' ')} {n}" for reason, n in worst)
        return f"{job.label} done", text, "warning" if run.fallback else "information"
    if run.status == "cancelled":
        return f"{job.label} cancelled", _sentence(kept_note.replace("{why}", "cancel")) + ".", "warning"
    reason = one_line(error or run.error or "unknown error", 300)
    return f"{job.label} failed", f"{reason}. {_sentence(kept_note.replace('{why}', 'failure'))}.", "error"
