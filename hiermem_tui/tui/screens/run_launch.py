"""Starting runs from the screens: the run dialog, an optional confirmation, then the run.

The session screen's keys (``p`` / ``l`` / ``n``, ``R``, ``W``, ``x``, ``X``) and the sessions
list's ``p`` all come through ``app.runs.request``, so every run is chosen, confirmed where
it replaces summaries, backed up first when asked, and refused while another one goes, in one place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from rich.text import Text

from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.run_job import RunAction
from hiermem_tui.tui.screens.confirm import redo_confirm_text

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


def start_pass(screen: SessionScreen, pass_: str) -> None:
    """``l`` / ``n`` / ``p`` on the session screen: the dialog with that pass chosen."""
    session = screen.session
    subject = (session.title if session else "") or screen.session_id
    screen.app.runs.request(cast(RunAction, pass_), screen.session_id, subject=subject)


def resummarize_selected(screen: SessionScreen, *, why: str = "") -> None:
    """``R`` (and ``x``, with ``why`` it needs repair): a new version of the summary under the
    tree cursor (and its ancestors)."""
    ref = screen.dag_tree.cursor_ref
    s = screen.store.dag.get(ref.summary.id) if ref is not None and ref.summary is not None else None
    if s is None or ref is None or ref.kind != "summary":
        screen.notify("Select a summary in the tree first: R re-summarises it.", title="Re-summarise")
        return
    if s.status != "active":
        screen.notify("That summary is superseded; re-summarise the active one.", severity="warning")
        return
    ancestors = 0
    cur = s
    parent = screen.store.dag.get(cur.parent_id) if cur.parent_id else None
    while parent is not None:
        ancestors += 1
        parent = screen.store.dag.get(parent.parent_id) if parent.parent_id else None
    detail = Text(
        (f"{why} " if why else "") + f"Re-makes this depth-{s.depth} summary from its sources"
        + (f", then re-condenses the {ancestors} summar{'y' if ancestors == 1 else 'ies'} above it" if ancestors else "")
        + ". The current text is kept as a superseded version; when it is done you compare the two and keep "
          "or revert."
    )
    screen.app.runs.request("resummarize-summary", screen.session_id, summary_id=s.id,
                    subject=f"d{s.depth} {fmt.seq_span(s.first_seq, s.last_seq)}", detail=detail)


def resummarize_whole(screen: SessionScreen) -> None:
    """``W``: supersede every active summary, then a fresh full pass (after a confirmation)."""
    app = screen.app
    session = screen.session
    subject = (session.title if session else "") or screen.session_id
    detail = Text("Supersedes every active summary of this session (they are kept), then runs a fresh full pass. "
                  "You confirm after choosing the model.")
    app.runs.request("resummarize-session", screen.session_id, subject=subject, detail=detail,
                     confirm=lambda choice: redo_confirm_text(app, screen.session_id, choice.backend, choice.model))


def run_commands(screen: SessionScreen) -> Iterator[PaletteCommand]:
    """The session screen's palette entries for runs (with their keys, so the palette teaches them)."""
    yield PaletteCommand("Compact: full pass", "Leaves, then condensations until nothing is eligible",
                         lambda: screen.action_run("full"), "p")
    yield PaletteCommand("Compact: leaf pass", "Summarise unsummarised episodes outside the fresh tail",
                         lambda: screen.action_run("leaf"), "l")
    yield PaletteCommand("Compact: condensation pass", "Condense same-depth summaries into the next depth",
                         lambda: screen.action_run("condense"), "n")
    yield PaletteCommand("Re-summarise the selected summary", "A new version, compared with the old one",
                         screen.action_resummarize, "R")
    yield PaletteCommand("Re-summarise the whole session", "Supersede every summary and run a fresh full pass",
                         screen.action_resummarize_session, "W")
    yield PaletteCommand("Versions of the selected summary", "Browse superseded versions and restore one",
                         screen.action_versions, "v")
