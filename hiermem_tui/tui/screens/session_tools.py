"""Fidelity and marks on the session screen: measure, repair, colour by fidelity, pin, exclude.

Kept out of ``session.py`` (which lays out and syncs the four views) because each of these is
an action with its own rules and wording:

* ``M`` measures every summary of the session made before fidelity was measured (a thread
  worker: a long session reads all its episodes once), then reloads;
* ``x`` re-makes the selected summary when it needs it (fallback, under the threshold, or
  missing a pin) — the usual compare → keep / revert flow; ``X`` repairs every such summary
  of the session in one run, with the live indicator;
* ``C`` colours the coverage map by identifier retention instead of tier;
* ``P`` / ``E`` pin or exclude the current episode (pressing again undoes it): pinned text is
  carried verbatim by every summary covering it, excluded text is never given to a model.
  Summaries made before the change do not change by themselves; the notice says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.text import Text

from hiermem_tui.store import StoreError
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import FidelityMeasured
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.run_launch import resummarize_selected
from hiermem_tui.words import counted

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


def _threshold(screen: SessionScreen) -> float:
    return screen.settings.policy.fidelity_threshold


def measure(screen: SessionScreen) -> None:
    """``M``: measure the session's unmeasured summaries in a worker, then reload."""
    store = screen.store
    session_id = screen.session_id
    planner = screen.app.planner
    threshold = _threshold(screen)

    def work() -> None:
        try:
            measured, low = planner.measure(session_id)
        except StoreError as exc:
            screen.post_message(FidelityMeasured(session_id, "", one_line(str(exc), 300)))
            return
        finally:
            store.release_thread()
        text = f"{counted(measured, 'summary')} measured; {low} keep under {fmt.percent(threshold)} of their key names" + (
            ": x repairs the selected one, X all of them" if low else "")
        screen.post_message(FidelityMeasured(session_id, text))

    screen.notify("Measuring what each summary kept of its sources…", title="Measure fidelity", timeout=2)
    screen.run_worker(work, thread=True, exclusive=True, group="measure", exit_on_error=False)


def measured(screen: SessionScreen, message: FidelityMeasured) -> None:
    """The measure worker's answer, on the UI thread: reload and say what was found."""
    if message.error is not None:
        screen.notify(message.error, title="Measure fidelity", severity="error", markup=False)
        return
    screen.reload()
    screen.notify(message.text, title="Measure fidelity", markup=False)


def repair_selected(screen: SessionScreen) -> None:
    """``x``: re-make the selected summary if it needs it (else say why not, and that R forces it)."""
    ref = screen.dag_tree.cursor_ref
    if ref is None or ref.kind != "summary" or ref.summary is None:
        screen.notify("Select a summary in the tree first: x repairs a fallback or low-fidelity one.",
                      title="Repair")
        return
    reason = screen.app.planner.repair_reason(ref.summary.id)
    if reason is None:
        screen.notify("This summary needs no repair (not a fallback, enough key names kept, pins carried); "
                      "R re-summarises it anyway.", title="Repair")
        return
    resummarize_selected(screen, why=f"Needs repair: {reason}.")


def repair_session(screen: SessionScreen) -> None:
    """``X``: one run re-making every summary of the session that needs it."""
    session = screen.session
    subject = (session.title if session else "") or screen.session_id
    detail = Text("Re-makes every fallback, every summary keeping less than "
                  f"{fmt.percent(_threshold(screen))} of its sources' key names and every summary missing a "
                  "pinned episode, with the summaries above them. The old versions are kept as superseded.")
    screen.app.runs.request("repair", screen.session_id, subject=subject, detail=detail)


def toggle_colour(screen: SessionScreen) -> None:
    """``C``: colour the coverage map by tier or by fidelity."""
    screen.map.fidelity_threshold = _threshold(screen)
    mode = screen.map.toggle_colour()
    screen.refresh_legend()
    screen.notify("Coverage map: colour by " + ("identifier retention" if mode == "fidelity" else "tier"),
                  timeout=2)


def toggle_mark(screen: SessionScreen, mark: str) -> None:
    """``P`` / ``E``: pin or exclude the current episode, or undo that mark."""
    seq = screen.current_episode()
    if seq is None:
        screen.notify("Select an episode first (in the transcript, or expand a leaf in the tree).",
                      title="Pin / exclude")
        return
    store = screen.store
    current = store.marks.of(screen.session_id, seq, seq).get(seq)
    new = None if current == mark else mark
    try:
        store.marks.set(screen.session_id, seq, new)  # type: ignore[arg-type]
    except StoreError as exc:
        screen.notify(one_line(str(exc), 300), title="Pin / exclude", severity="error", markup=False)
        return
    covering = store.dag.covering_chain(screen.session_id, seq)
    after = f" {len(covering)} summar{'y' if len(covering) == 1 else 'ies'} already cover it: x re-makes them." if (
        covering and new is not None) else ""
    what = {"pin": f"Pinned #{seq}: every summary covering it carries it verbatim.",
            "exclude": f"Excluded #{seq}: no summary will be given its text.",
            None: f"#{seq} is no longer {'pinned' if current == 'pin' else 'excluded'}."}[new]
    screen.transcript.refresh_marks()
    screen.refresh_marks()
    screen.notify(what + after, title="Pin / exclude", timeout=5)


def commands(screen: SessionScreen) -> Iterator[PaletteCommand]:
    """Palette entries, with their keys so the palette teaches them."""
    yield PaletteCommand("Repair the selected summary", "Re-make it if it is a fallback, low-fidelity or misses a pin",
                         lambda: repair_selected(screen), "x")
    yield PaletteCommand("Repair the whole session", "One run re-making every summary that needs it",
                         lambda: repair_session(screen), "X")
    yield PaletteCommand("Measure fidelity", "What each summary kept of its sources' identifiers",
                         lambda: measure(screen), "M")
    yield PaletteCommand("Map colour: tier / fidelity", "Colour the coverage map by tier or by identifier retention",
                         lambda: toggle_colour(screen), "C")
    yield PaletteCommand("Pin the current episode", "Every summary covering it must carry it verbatim (again: undo)",
                         lambda: toggle_mark(screen, "pin"), "P")
    yield PaletteCommand("Exclude the current episode", "No summary is given its text (again: undo)",
                         lambda: toggle_mark(screen, "exclude"), "E")
