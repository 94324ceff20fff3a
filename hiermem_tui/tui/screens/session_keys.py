"""The session screen's keys that move around it or hand work to other modules.

Why a mixin of its own: :mod:`session` holds what the screen *is* (its panes, how it loads
and how a selection flows to every view); the keys here only read that state and call it,
or pass the screen to the modules that own a feature (runs, repair and marks, search and
reports). Keeping them apart keeps both files readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.widget import Widget
from textual.widgets import TabbedContent

from hiermem_tui.tui import find
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens import session_tools
from hiermem_tui.tui.screens.run_launch import resummarize_selected, resummarize_whole, start_pass
from hiermem_tui.tui.screens.versions import open_versions
from hiermem_tui.tui.widgets.detail_pane import ChainPicker

if TYPE_CHECKING:
    from hiermem_tui.tui.screens.session import SessionScreen


class SessionKeysMixin:
    """Mixed into :class:`SessionScreen`: pane focus, jumps, the chain picker and hand-offs."""

    @property
    def _screen(self) -> SessionScreen:
        return cast("SessionScreen", self)

    def _panes(self) -> list[Widget]:
        screen = self._screen
        right: Widget = screen.transcript if screen._transcript_shown else screen.detail
        return [screen.tree, screen.map, right]

    @property
    def _transcript_shown(self) -> bool:
        screen = self._screen
        return screen.query_one(TabbedContent).active == "tab-transcript"

    def action_focus_pane(self, delta: int) -> None:
        """Cycle focus tree → map → detail/transcript (skipping the tab strip)."""
        screen = self._screen
        panes = screen._panes()
        focused = screen.focused
        index = next((i for i, w in enumerate(panes) if focused is not None and
                      (focused is w or w in focused.ancestors)), -1)
        panes[(index + delta) % len(panes)].focus()

    def action_toggle_view(self) -> None:
        screen = self._screen
        tabs = screen.query_one(TabbedContent)
        right_focused = screen.focused in (screen.detail, screen.transcript)
        tabs.active = "tab-detail" if screen._transcript_shown else "tab-transcript"
        if right_focused:
            screen._panes()[2].focus()

    def action_fallback(self, direction: int) -> None:
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
        if screen.tree.reveal_summary(target.id):
            screen.notify(f"Fallback {index} of {len(fallbacks)}: d{target.depth} "
                          f"{fmt.seq_span(target.first_seq, target.last_seq)}", title="Fallbacks", timeout=2)

    def current_episode(self) -> int | None:
        """The episode the user is on: the transcript cursor, an episode node, or the detail's."""
        screen = self._screen
        return screen._current_episode()

    def _current_episode(self) -> int | None:
        screen = self._screen
        if screen._transcript_shown and screen.transcript.cursor is not None:
            return screen.transcript.cursor
        ref = screen.tree.cursor_ref
        if ref is not None and ref.kind == "episode":
            return ref.first
        if screen.detail.key and screen.detail.key.startswith("e:"):
            return int(screen.detail.key[2:])
        return None

    def action_chain(self) -> None:
        """Show the summaries covering the current episode, leaf to top; pick one to jump to it."""
        screen = self._screen
        seq = screen._current_episode()
        if seq is None:
            screen.notify("Select an episode first (in the transcript, or expand a leaf in the tree).",
                          title="Covering chain")
            return
        chain = screen.store.dag.covering_chain(screen.session_id, seq)
        picker = ChainPicker(seq, chain, fmt.Palette.from_app(screen.app), screen.tree.ref_year, screen._where(seq))
        screen.app.push_screen(picker, callback=screen._chain_picked)

    def focus_summary(self, summary_id: str) -> bool:
        """Select an active summary in the tree and show its detail (a search hit, a run's summary)."""
        screen = self._screen
        if not screen.tree.reveal_summary(summary_id):
            return False
        screen.query_one(TabbedContent).active = "tab-detail"
        screen.tree.focus()
        return True

    def focus_episode(self, seq: int) -> bool:
        """Select what covers episode ``seq`` in the tree, then put the transcript cursor on it.

        The tree's highlight comes as a message and moves the transcript to the start of the
        range; the jump to ``seq`` waits for that message (``_pending_jump``) so it lands last.
        """
        screen = self._screen
        if not screen.tree.reveal_seq(seq):
            return False
        ref = screen.tree.cursor_ref
        screen.query_one(TabbedContent).active = "tab-transcript"
        if ref is not None and screen.selected is not None and screen.selected.key == ref.key:
            screen.transcript.jump_to(seq)
        elif ref is not None:
            screen._pending_jump = (ref.key, seq)
        screen.transcript.focus()
        return True

    def _chain_picked(self, summary_id: str | None) -> None:
        screen = self._screen
        if summary_id and screen.tree.reveal_summary(summary_id):
            screen.tree.focus()

    def action_toggle_scale(self) -> None:
        screen = self._screen
        screen.map.toggle_scale()
        screen._legend()

    def action_cancel_run(self) -> None:
        screen = self._screen
        if screen.app.cancel_run():  # type: ignore[attr-defined]
            screen.notify("Cancelling: the model call is being aborted; finished summaries are kept.", timeout=3)

    def action_run(self, pass_: str) -> None:
        start_pass(self._screen, pass_)

    def action_resummarize(self) -> None:
        resummarize_selected(self._screen)

    def action_resummarize_session(self) -> None:
        resummarize_whole(self._screen)

    def action_versions(self) -> None:
        open_versions(self._screen)

    def action_repair(self) -> None:
        session_tools.repair_selected(self._screen)

    def action_repair_session(self) -> None:
        session_tools.repair_session(self._screen)

    def action_measure(self) -> None:
        session_tools.measure(self._screen)

    def action_toggle_colour(self) -> None:
        session_tools.toggle_colour(self._screen)

    def action_mark(self, mark: str) -> None:
        session_tools.toggle_mark(self._screen, mark)

    def action_find(self) -> None:
        screen = self._screen
        find.open_search(screen.app, screen.session_id)

    def action_model_view(self) -> None:
        screen = self._screen
        find.open_context(screen.app, screen.session_id)

    def action_stats(self) -> None:
        screen = self._screen
        find.open_stats(screen.app, screen.session_id)

    def action_history(self) -> None:
        screen = self._screen
        find.open_history(screen.app, screen.session_id)

