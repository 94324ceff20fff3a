"""Stats: what compaction bought, for one session or the whole file, with bars where they say more.

Why bars per depth and stacked bars for tiers and compression: the questions are "how much
smaller is it now", "how deep does the tree go, and how much text sits at each level", "how
much did the model fail" — proportions, which a bar answers at a glance and a column of
numbers does not. The numbers stay next to the bars. Figures come from
:func:`hiermem_tui.stats.compute_stats` (aggregates and indexes, fast on a million episodes),
in a worker.

The doctor pane shows the file's last doctor result (kept in the file, whoever ran it) and ``d``
runs the doctor again in a thread worker, its progress coming back as
:class:`~hiermem_tui.tui.messages.DoctorProgress` messages. It only checks: repairs are
``hiermem-tui doctor --fix``, which backs the file up first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from hiermem_tui.stats import Stats, compute_stats
from hiermem_tui.store.health import CheckCancelled, DoctorRecord, doctor_record
from hiermem_tui.store.health_session import MAX_NAMED
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import DoctorDone, DoctorProgress
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.report import ReportScreen
from hiermem_tui.words import counted

BAR = 40
STATUS_STYLE = {"done": "success", "running": "primary", "cancelled": "muted", "failed": "error",
                "interrupted": "warning", "budget": "accent", "paused": "accent", "moved": "accent"}
"""The palette colour of each run status; the ways a run stops early without failing share one."""


def bar(fraction: float, width: int = BAR) -> str:
    """``fraction`` of ``width`` cells in eighths (▏▎▍▌▋▊▉█), never empty for a non-zero share."""
    cells = max(0.0, min(1.0, fraction)) * width
    full = int(cells)
    eighths = int((cells - full) * 8)
    out = "█" * full + ("▏▎▍▌▋▊▉"[eighths - 1] if eighths else "")
    return out or ("▏" if fraction > 0 else "")


def stacked(counts: list[int], width: int = BAR) -> list[int]:
    """Whole cells per part of a stacked bar: proportional, every non-zero part at least one cell."""
    total = sum(counts)
    if total == 0:
        return [0] * len(counts)
    exact = [c * width / total for c in counts]
    cells = [max(1, int(x)) if c else 0 for c, x in zip(counts, exact)]
    order = sorted(range(len(counts)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    for i in order:
        if sum(cells) >= width:
            break
        if counts[i]:
            cells[i] += 1
    while sum(cells) > width:
        cells[cells.index(max(cells))] -= 1
    return cells


PHASES = {"pages": "checking pages (SQLite)", "sessions": "checking sessions", "search": "checking the search index",
          "runs": "checking runs"}


@dataclass(frozen=True, slots=True)
class StatsView:
    """What the worker reads: the figures, and the file's last doctor result."""

    stats: Stats
    doctor: DoctorRecord | None


class StatsScreen(ReportScreen):
    """Sizes and compression, summaries per depth and tier, fidelity, model time, runs; the doctor."""

    HEADING = "Stats"
    BINDINGS = [Binding("d", "doctor", "Doctor", id="stats.doctor")]

    def __init__(self, session_id: str | None = None, *, run_doctor: bool = False) -> None:
        super().__init__(session_id)
        self.run_doctor = run_doctor
        self.doctor: DoctorRecord | None = None
        self.doctor_error: str | None = None
        self.doctor_progress: tuple[str, int, int] | None = None
        """(phase, done, total) while the doctor runs; None when it does not."""
        self._doctor_ticket = 0
        self._doctor_started = 0.0

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        with VerticalScroll(id="stats-scroll"):
            yield Static(Text("Counting…"), id="stats-figures", classes="pane")
            yield Static(id="stats-depths", classes="pane")
            yield Static(id="stats-runs", classes="pane")
            yield Static(id="stats-doctor", classes="pane")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#stats-figures").border_title = "Size and compression"
        self.query_one("#stats-depths").border_title = "Summaries per depth"
        self.query_one("#stats-runs").border_title = "Model time and runs"
        doctor = self.query_one("#stats-doctor")
        doctor.border_title = "Doctor · the whole file"
        doctor.border_subtitle = "d check now"
        self.query_one("#stats-depths").display = False
        self.query_one("#stats-runs").display = False
        doctor.display = False
        self.query_one("#stats-scroll").focus()
        self.load()
        if self.run_doctor:
            self.action_doctor()

    def fetch(self) -> object:
        stats = compute_stats(self.store, self.session_id, threshold=self.settings.policy.fidelity_threshold)
        return StatsView(stats, self.store.health.last())

    def show(self, data: object) -> None:
        assert isinstance(data, StatsView)
        if self.doctor_progress is None:  # a check going on is newer than what was kept
            self.doctor = data.doctor
        self._show_doctor()
        self._show_stats(data.stats)

    def _show_stats(self, data: Stats) -> None:
        p = fmt.Palette.from_app(self.app)
        figures = self.query_one("#stats-figures", Static)
        if data.sessions == 0:
            figures.update(Text("No sessions yet. Import chat history with  hiermem-tui import PATH  "
                                "(or try  hiermem-tui --demo).", style=fmt.style(p.muted)))
            return
        figures.update(self._figures(data, p))
        depths = self.query_one("#stats-depths", Static)
        depths.display = True
        depths.update(self._depths(data, p))
        runs = self.query_one("#stats-runs", Static)
        runs.display = True
        runs.update(self._runs(data, p))

    # ------------------------------------------------------------------ sections
    def _figures(self, s: Stats, p: fmt.Palette) -> Text:
        fg, muted = fmt.style(p.foreground, bold=True), fmt.style(p.muted)
        out = Text()
        if s.session_id is None:
            out.append(f"{counted(s.sessions, 'session')} · ", style=fg)
        out.append(f"{counted(s.episodes, 'episode')} · {fmt.percent(s.coverage)} under a summary\n\n", style=fg)
        scale = max(s.raw_tokens, 1)
        comp = "–" if s.compression is None else f"{s.compression:.1f}×"
        out.append(f"{'raw':<11}", style=muted)
        out.append(f"{bar(s.raw_tokens / scale):<{BAR}} ", style=fmt.style(p.muted))
        out.append(f"{fmt.tokens(s.raw_tokens)} tok\n", style=fg)
        out.append(f"{'model sees':<11}", style=muted)
        out.append(f"{bar(s.model_tokens / scale):<{BAR}} ", style=fmt.style(p.primary))
        out.append(f"{fmt.tokens(s.model_tokens)} tok", style=fg)
        out.append(f"   compression {comp}\n", style=fmt.style(p.success if (s.compression or 0) > 1 else p.muted,
                                                                   bold=True))
        out.append("\n")
        out.append(f"{'tiers':<11}", style=muted)
        tiers = ("normal", "aggressive", "fallback")
        for tier, cells in zip(tiers, stacked([s.by_tier.get(t, 0) for t in tiers])):
            out.append("█" * cells, style=fmt.style(p.tier_color(tier)))
        out.append("\n" + " " * 11, style=muted)
        for tier in ("normal", "aggressive", "fallback"):
            out.append(f"{tier} {s.by_tier.get(tier, 0):,}   ", style=fmt.style(p.tier_color(tier), bold=True))
        out.append(f"\n{'fidelity':<11}", style=muted)
        low = fmt.style(p.warning if s.low_fidelity else p.foreground, bold=True)
        out.append(f"{s.low_fidelity:,} keep under {fmt.percent(s.threshold)} of their key names", style=low)
        out.append(f" · {s.measured:,} measured · {s.unmeasured:,} not measured", style=muted)
        if s.min_retention is not None:
            out.append(f" · lowest {fmt.percent(s.min_retention)}", style=muted)
        out.append(f"\n{'versions':<11}", style=muted)
        out.append(f"{s.active:,} active · {s.superseded:,} superseded", style=fmt.style(p.foreground))
        return out

    def _depths(self, s: Stats, p: fmt.Palette) -> Text:
        muted = fmt.style(p.muted)
        if not s.by_depth:
            where = "press p in the session" if s.session_id else "open a session and press p"
            return Text(f"No summaries yet: {where} to compact.", style=muted)
        out = Text()
        out.append(f"{'':<6}{'summaries':<{BAR + 9}}{'tokens (share of all summary text)'}\n", style=muted)
        most = max(d.count for d in s.by_depth)
        tokens = max(sum(d.tokens for d in s.by_depth), 1)
        for d in reversed(s.by_depth):  # the top of the tree first, as it is drawn
            out.append_text(fmt.depth_chip(d.depth, p))
            out.append("  ")
            out.append(f"{bar(d.count / most, BAR // 2):<{BAR // 2}}", style=fmt.style(p.primary))
            out.append(f" {d.count:>7,}   ", style=fmt.style(p.foreground, bold=True))
            out.append(f"{bar(d.tokens / tokens, BAR // 2):<{BAR // 2}}", style=fmt.style(p.accent))
            ratio = f" · {d.tokens / d.source_tokens:.0%} of their input" if d.source_tokens else ""
            out.append(f" {fmt.tokens(d.tokens)} tok{ratio}\n", style=muted)
        return out

    def _runs(self, s: Stats, p: fmt.Palette) -> Text:
        muted = fmt.style(p.muted)
        out = Text()
        out.append(f"{fmt.duration(s.llm_seconds)} waiting on models · {fmt.duration(s.wall_seconds)} of runs\n",
                   style=fmt.style(p.foreground, bold=True))
        for e in s.engines:
            name = e.backend + (f" · {one_line(e.model, 40)}" if e.model else "")
            out.append(f"  {name:<40}", style=fmt.style(p.foreground))
            out.append(f"{counted(e.runs, 'run', width=5):<10} {counted(e.summaries, 'summary', width=8):<18} "
                       f"{fmt.duration(e.llm_seconds):>10}\n", style=muted)
        out.append("\n")
        if not s.runs:
            out.append("No runs yet.", style=muted)
            return out
        for status, n in s.runs_by_status.items():
            if n:
                colour = getattr(p, STATUS_STYLE.get(status, "muted"))
                out.append(f"  {status} {n:,}  ", style=fmt.style(colour, bold=True))
        return out

    # ------------------------------------------------------------------ the doctor
    def action_doctor(self) -> None:
        """Check the whole file in a worker (reads only; keeps the result in the file)."""
        if self.doctor_progress is not None:
            self.notify("The doctor is checking the file already.", timeout=2)
            return
        self._doctor_ticket += 1
        self._doctor_started = time.monotonic()
        self.doctor_progress = ("pages", 0, 0)
        self.doctor_error = None
        self._show_doctor()
        ticket = self._doctor_ticket
        self.app.store_worker(self, lambda: self._doctor(ticket), group="doctor", exclusive=True)

    def _doctor(self, ticket: int) -> None:
        """In a store worker: the checks, stopped at the next step when the screen closes or the app quits."""
        worker = get_current_worker()
        store = self.store

        def progress(phase: str, done: int, total: int) -> None:
            if worker.is_cancelled:  # the screen closed or the app quits: stop where the check is
                raise CheckCancelled
            self.post_message(DoctorProgress(ticket, phase, done, total))

        try:
            report = store.health.check(on_progress=progress)
            record = doctor_record(report) if store.readonly else store.health.record(report)
        except CheckCancelled:
            return
        except Exception as exc:  # any failure must end the "checking…" line with a reason
            self.post_message(DoctorDone(ticket, None, one_line(str(exc) or type(exc).__name__, 200)))
            return
        self.post_message(DoctorDone(ticket, record))

    def on_doctor_progress(self, message: DoctorProgress) -> None:
        message.stop()
        if message.ticket == self._doctor_ticket and self.doctor_progress is not None:
            self.doctor_progress = (message.phase, message.done, message.total)
            self._show_doctor()

    def on_doctor_done(self, message: DoctorDone) -> None:
        message.stop()
        if message.ticket != self._doctor_ticket:
            return
        self.doctor_progress = None
        self.doctor_error = message.error
        if message.record is not None:
            self.doctor = message.record
            rec = message.record
            if rec.ok:
                self.notify("The file is healthy.", title="Doctor", timeout=3)
            else:
                self.notify(f"{rec.problems:,} problem{'s' if rec.problems != 1 else ''} found "
                            f"({rec.fixable:,} fixable).", title="Doctor", severity="warning", timeout=4)
        self._show_doctor()

    def _show_doctor(self) -> None:
        pane = self.query_one("#stats-doctor", Static)
        pane.display = True
        pane.update(self._doctor_text(fmt.Palette.from_app(self.app)))

    def _doctor_text(self, p: fmt.Palette) -> Text:
        fg, muted = fmt.style(p.foreground, bold=True), fmt.style(p.muted)
        out = Text()
        if self.doctor_progress is not None:
            phase, done, total = self.doctor_progress
            label = PHASES.get(phase, phase)
            if total:
                out.append(f"{label} ", style=fg)
                out.append(f"{bar(done / total, BAR // 2):<{BAR // 2}}", style=fmt.style(p.primary))
                out.append(f" {fmt.percent(done / total)} · {done:,} of {total:,}", style=muted)
            else:
                out.append(f"{label}… {fmt.duration(time.monotonic() - self._doctor_started)}", style=fg)
            return out
        if self.doctor_error is not None:
            out.append(f"▲ the doctor could not finish: {self.doctor_error}\n", style=fmt.style(p.error, bold=True))
        rec = self.doctor
        if rec is None:
            out.append("Not checked yet. d checks the whole file: SQLite's own check, every summary's edges, "
                       "coverage and links, the stored counts, the search index, runs left running.", style=muted)
            return out
        when = fmt.timestamp(rec.at, ref_year=self.app.clock().year)
        scope = (f" · checked {when} in {fmt.duration(rec.seconds)}" + (" (full)" if rec.full else "")
                 + (f" · after --fix repaired {rec.fixed:,}" if rec.fixed else ""))
        if rec.ok:
            out.append("✓ healthy", style=fmt.style(p.success, bold=True))
            out.append(scope, style=muted)
            return out
        out.append(f"▲ {rec.problems:,} problem{'s' if rec.problems != 1 else ''}", style=fmt.style(p.warning, bold=True))
        out.append(f" ({rec.fixable:,} fixable)", style=fg)
        out.append(scope + "\n", style=muted)
        out.append("  " + "  ".join(f"{kind} ×{n:,}" for kind, n in sorted(rec.kinds.items())) + "\n", style=fg)
        for problem in rec.first:
            where = f"session {one_line(problem.session, 30)}" if problem.session is not None else "file"
            ids = f"{', '.join(one_line(i, 24) for i in problem.ids[:2])}: " if problem.ids else ""
            out.append(f"  {problem.kind:<17}", style=fmt.style(p.warning if problem.fixable else p.error))
            out.append(f" {'fixable' if problem.fixable else '':<7}", style=muted)
            out.append(f"  {where}  {ids}{one_line(problem.detail, 90)}\n", style=fmt.style(p.foreground))
        if rec.problems > MAX_NAMED:
            out.append(f"  … and {rec.problems - MAX_NAMED:,} more\n", style=muted)
        out.append("hiermem-tui doctor lists them all; hiermem-tui doctor --fix repairs the fixable ones "
                   "after a backup.", style=muted)
        return out

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Doctor: check the whole file", "SQLite's own check, the DAG invariants, the counts, "
                             "the search index, runs left running", self.action_doctor, "d")
        yield PaletteCommand("Refresh stats", "Count again", self.action_reload, "r")
        yield PaletteCommand("Back", "Close the stats", self.action_back, "esc")
