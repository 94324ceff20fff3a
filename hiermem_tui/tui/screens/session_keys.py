"""What the session screen's keys do: move around it, jump, and hand work to other modules.

Why an object of its own: :mod:`session` holds what the screen *is* (its panes, how it loads
and how a selection flows to every view) and binds each key to one line here; these only read
that state and call it, or pass the screen to the modules that own a feature (runs, repair and
marks, search and reports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget
from textual.widgets import TabbedContent

from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens import session_tools
from hiermem_tui.tui.screens.run_launch import resummarize_selected, resummarize_whole, start_pass
from hiermem_tui.tui.screens.versions import open_versions

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


class SessionKeys:
    """The session screen's key handlers (``screen.keys``): pane focus, jumps, the chain
    picker and hand-offs."""

    def __init__(self, screen: SessionScreen) -> None:
        self._screen = screen

    def _panes(self) -> list[Widget]:
        screen = self._screen
        right: Widget = screen.transcript if self.transcript_shown else screen.detail
        return [screen.dag_tree, screen.map, right]

    @property
    def transcript_shown(self) -> bool:
        screen = self._screen
        return screen.query_one(TabbedContent).active == "tab-transcript"

    def focus_pane(self, delta: int) -> None:
        """Cycle focus tree → map → detail/transcript (skipping the tab strip)."""
        screen = self._screen
        panes = self._panes()
        focused = screen.focused
        index = next((i for i, w in enumerate(panes) if focused is not None and
                      (focused is w or w in focused.ancestors)), -1)
        panes[(index + delta) % len(panes)].focus()

    def toggle_view(self) -> None:
        screen = self._screen
        tabs = screen.query_one(TabbedContent)
        right_focused = screen.focused in (screen.detail, screen.transcript)
        tabs.active = "tab-detail" if self.transcript_shown else "tab-transcript"
        if right_focused:
            self._panes()[2].focus()

    def fallback(self, direction: int) -> None:
        """Jump to the next (``f``) or previous (``F``) fallback summary in coverage order."""
        screen = self._screen
        fallbacks = sorted((s for s in screen.spans if s.tier == "fallback"), key=lambda s: (s.first_seq, -s.depth))
        if not fallbacks:
            screen.notify("No fallback summaries in this session.", title="Fallbacks")
            return
        here = (-1, 1) if screen.selected is None else (
            screen.selected.first, -(screen.selected.summary.depth if screen.selected.summary else -1))
        order = [(s.first_seq, -s.depth) for s in fallbacks]
        if direction > 0:
            target = next((s for s, o in zip(fallbacks, order) if o > here), fallbacks[0])
        else:
            target = next((s for s, o in zip(reversed(fallbacks), reversed(order)) if o < here), fallbacks[-1])
        index = fallbacks.index(target) + 1
        if screen.dag_tree.reveal_summary(target.id):
            screen.notify(f"Fallback {index} of {len(fallbacks)}: d{target.depth} "
                          f"{fmt.seq_span(target.first_seq, target.last_seq)}", title="Fallbacks", timeout=2)

    def current_episode(self) -> int | None:
        """The episode the user is on: the transcript cursor, an episode node, or the detail's."""
        screen = self._screen
        if self.transcript_shown and screen.transcript.cursor is not None:
            return screen.transcript.cursor
        ref = screen.dag_tree.cursor_ref
        if ref is not None and ref.kind == "episode":
            return ref.first
        if screen.detail.key and screen.detail.key.startswith("e:"):
            return int(screen.detail.key[2:])
        return None

    def chain(self) -> None:
        """Show the summaries covering the current episode, leaf to top; pick one to jump to it."""
        screen = self._screen
        seq = self.current_episode()
        if seq is None:
            screen.notify("Select an episode first (in the transcript, or expand a leaf in the tree).",
                          title="Covering chain")
            return
        chain = screen.store.dag.covering_chain(screen.session_id, seq)
        screen.app.nav.covering_chain(seq, chain, screen.dag_tree.ref_year, screen.where(seq), self._chain_picked)

    def focus_summary(self, summary_id: str) -> bool:
        """Select an active summary in the tree and show its detail (a search hit, a run's summary)."""
        screen = self._screen
        if not screen.dag_tree.reveal_summary(summary_id):
            return False
        screen.query_one(TabbedContent).active = "tab-detail"
        screen.dag_tree.focus()
        return True

    def focus_episode(self, seq: int) -> bool:
        """Select what covers episode ``seq`` in the tree, then put the transcript cursor on it.

        The tree's highlight comes as a message and moves the transcript to the start of the
        range; the jump to ``seq`` waits for that message (``_pending_jump``) so it lands last.
        """
        screen = self._screen
        if not screen.dag_tree.reveal_seq(seq):
            return False
        ref = screen.dag_tree.cursor_ref
        screen.query_one(TabbedContent).active = "tab-transcript"
        if ref is not None and screen.selected is not None and screen.selected.key == ref.key:
            screen.transcript.jump_to(seq)
        elif ref is not None:
            screen.pending_jump = (ref.key, seq)
        screen.transcript.focus()
        return True

    def _chain_picked(self, summary_id: str | None) -> None:
        screen = self._screen
        if summary_id and screen.dag_tree.reveal_summary(summary_id):
            screen.dag_tree.focus()

    def toggle_scale(self) -> None:
        screen = self._screen
        if screen.session is not None and not screen.session.times_known and screen.map.scale == "episodes":
            screen.notify("No times: its source kept none, so the time axis cannot apply.", severity="warning",
                          timeout=5, markup=False)
            return
        screen.map.toggle_scale()
        screen.refresh_legend()

    def cancel_run(self) -> None:
        screen = self._screen
        if screen.app.runs.cancel():
            screen.notify("Cancelling: the model call is being aborted; finished summaries are kept.", timeout=3)

    def run(self, pass_: str) -> None:
        start_pass(self._screen, pass_)

    def resummarize(self) -> None:
        resummarize_selected(self._screen)

    def resummarize_session(self) -> None:
        resummarize_whole(self._screen)

    def versions(self) -> None:
        open_versions(self._screen)

    def repair(self) -> None:
        session_tools.repair_selected(self._screen)

    def repair_session(self) -> None:
        session_tools.repair_session(self._screen)

    def measure(self) -> None:
        session_tools.measure(self._screen)

    def toggle_colour(self) -> None:
        session_tools.toggle_colour(self._screen)

    def mark(self, mark: str) -> None:
        session_tools.toggle_mark(self._screen, mark)

    def find(self) -> None:
        screen = self._screen
        screen.app.nav.search(screen.session_id)

    def model_view(self) -> None:
        screen = self._screen
        screen.app.nav.context(screen.session_id)

    def stats(self) -> None:
        screen = self._screen
        screen.app.nav.stats(screen.session_id)

    def history(self) -> None:
        screen = self._screen
        screen.app.nav.history(screen.session_id)

