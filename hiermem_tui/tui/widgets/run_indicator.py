"""The live "Summarising…" line: spinner, what is being made, progress, tok/s, tier counters.

Why it watches the app instead of receiving messages: a run outlives screens (start it on
the sessions list, open the session, go back); every screen composes its own indicator and
each one draws the app's ``run_state``. Only the spinner ticks on a timer, and only while
a run is going, so an idle app does no work for it.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import ProgressBar, Static

from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.run_job import RunProgress
from hiermem_tui.words import engine_label
from hiermem_tui.tui.app_base import AppBase

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_INTERVAL_S = 0.1
COUNTDOWN_FRAMES = 10
"""The figures (the ~time left) are redrawn every this many spinner frames: the estimate counts
down between the model's progress reports, which do not come while it reads the prompt."""


def phase_text(state: RunProgress) -> str:
    if state.phase == "checking":
        return "Checking the backend…"
    if state.phase == "cancelling":
        return "Cancelling…"
    return "Summarising…"


def figures_text(state: RunProgress, palette: fmt.Palette, tokens_per_s: float | None,
                 left: float | None = None) -> Text:
    """``2/5 · writing · 120 tok · 11 tok/s · ~1 m left · ■ 1 normal …``: the model call streaming
    now (its phase, tokens and own pace) when there is one, else the run's tok/s; fallbacks in the
    warning colour."""
    muted = fmt.style(palette.muted)
    text = Text()
    text.append(f"{state.done}/{state.planned}" if state.planned else f"{state.done}",
                style=fmt.style(palette.foreground, bold=True))
    if state.call is not None:
        text.append(" · ", style=muted)
        text.append(state.call.label(), style=fmt.style(palette.accent if state.call.phase == "thinking"
                                                        else palette.foreground))
    if tokens_per_s is not None and state.call is None:  # between calls only: a call says its own pace,
        # and while the model reads a prompt no token is being written (the run's figure read 3–4 tok/s there)
        text.append(" · ", style=muted)
        text.append(f"{tokens_per_s:.0f} tok/s", style=fmt.style(palette.foreground))
    if left is not None:
        text.append(" · ", style=muted)
        text.append(f"~{fmt.duration(left)} left", style=fmt.style(palette.foreground))
    text.append("  ")
    for tier, count in (("normal", state.tiers.normal), ("aggressive", state.tiers.aggressive),
                        ("fallback", state.tiers.fallback)):
        colour = palette.tier_color(tier)
        loud = tier == "fallback" and count > 0
        text.append("■ ", style=fmt.style(colour))
        text.append(str(count), style=fmt.style(colour if loud else palette.foreground, bold=True))
        text.append(f" {tier} ", style=fmt.style(palette.warning, bold=True) if loud else muted)
    if state.tiers.flagged:
        text.append("⚑ ", style=fmt.style(palette.warning))
        text.append(str(state.tiers.flagged), style=fmt.style(palette.warning, bold=True))
        text.append(" flagged ", style=fmt.style(palette.warning, bold=True))
    text.rstrip()
    return text


class RunIndicator(Horizontal):
    """Hidden while idle; one line while a run goes. :meth:`freeze` pins the spinner and tok/s (snapshots)."""

    DEFAULT_CSS = """
    RunIndicator {
        height: 1;
        width: 1fr;
        background: $panel;
        padding: 0 1;
        display: none;
        &.-active { display: block; }
        & > #run-spin { width: 2; color: $text-accent; text-style: bold; }
        & > #run-phase { width: auto; text-wrap: nowrap; text-style: bold; }
        & > #run-label { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
        & > ProgressBar { width: auto; margin: 0 1; }
        & > ProgressBar Bar { width: 8; }
        & > #run-figures { width: auto; text-wrap: nowrap; }
        &.-cancelling > #run-spin { color: $text-warning; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._frame = 0
        self._frozen: tuple[int, float | None] | None = None
        self._timer: Timer | None = None
        self._figures_width = -1
        self._palette: fmt.Palette | None = None
        self.plain = ""
        """The text shown now (tests read it)."""

    app = getters.app(AppBase)

    def compose(self) -> ComposeResult:
        yield Static(id="run-spin")
        yield Static(id="run-phase")  # its own cell, as wide as the word: "Summarising…" is never cut
        yield Static(id="run-label")
        yield ProgressBar(total=1, show_eta=False, show_percentage=False, id="run-progress")
        yield Static(id="run-figures")

    def on_mount(self) -> None:
        self._timer = self.set_interval(SPIN_INTERVAL_S, self._spin, pause=True)
        self.watch(self.app, "run_state", self._show, init=True)
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self._palette = None
        self._show(self.app.run_state)

    @property
    def palette(self) -> fmt.Palette:
        """The theme's colours, resolved once per theme (resolving costs ~1 ms; runs update often)."""
        if self._palette is None:
            self._palette = fmt.Palette.from_app(self.app)
        return self._palette

    def freeze(self, frame: int = 0, tokens_per_s: float | None = None) -> None:
        """Pin the spinner frame and the tok/s figure, so a snapshot of a run is the same every time."""
        self._frozen = (frame, tokens_per_s)
        self._frame = frame
        self._show(self.app.run_state)

    def _spin(self) -> None:
        if self._frozen is None:
            self._frame = (self._frame + 1) % len(SPINNER)
            # layout=False: a fixed-size cell; a layout pass would re-render the whole screen 10×/s
            self.query_one("#run-spin", Static).update(SPINNER[self._frame], layout=False)
            if self._frame % COUNTDOWN_FRAMES == 0:
                self._show(self.app.run_state)

    def _show(self, state: RunProgress | None) -> None:
        active = state is not None
        self.set_class(active, "-active")
        if self._timer is not None:
            if active and self._frozen is None:
                self._timer.resume()
            else:
                self._timer.pause()
        if state is None:
            self.plain = ""
            return
        palette = self.palette
        self.set_class(state.phase == "cancelling", "-cancelling")
        phase = Text(phase_text(state), style=fmt.style(palette.warning if state.phase == "cancelling"
                                                         else palette.foreground, bold=True))
        label = Text()
        if state.what:
            label.append(f" {one_line(state.what, 80)}", style=fmt.style(palette.foreground))
        if state.attempt:
            label.append(f" · {state.attempt}", style=fmt.style(palette.aggressive))
        model = state.model or state.job.settings.model
        # ":latest" is what Ollama means by a bare name: one line has no room to spell it
        engine = engine_label(state.job.settings.backend, model.removesuffix(":latest") if model else None)
        label.append(f"  {state.job.label.lower()} · {engine}", style=fmt.style(palette.muted))
        tokens_per_s = self._frozen[1] if self._frozen is not None else state.tokens_per_s
        left = None if self._frozen is not None else state.seconds_left(time.monotonic())
        figures = figures_text(state, palette, tokens_per_s, left)
        self.query_one("#run-spin", Static).update(SPINNER[self._frame % len(SPINNER)], layout=False)
        phase_cell = self.query_one("#run-phase", Static)
        phase_cell.update(phase, layout=phase.cell_len != phase_cell.size.width)
        self.query_one("#run-label", Static).update(label, layout=False)  # 1fr wide: its size never depends on it
        width = figures.cell_len
        self.query_one("#run-figures", Static).update(figures, layout=width != self._figures_width)
        self._figures_width = width
        self.query_one(ProgressBar).update(total=max(state.planned, 1), progress=state.done)
        self.plain = f"{SPINNER[self._frame % len(SPINNER)]} {phase.plain}{label.plain}  {figures.plain}"
