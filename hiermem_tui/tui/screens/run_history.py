"""Run history: every compaction run, newest first; what one made; why one stopped.

Why two lists: the question is usually "what happened in that run" — a failed one says why
(``runs.error``), a finished one lists the summaries it wrote, and each of those opens in the
tree (or, superseded since, in its versions). Runs come a page at a time
(:func:`hiermem_tui.run_history.list_runs`, keyset on the ``runs_started`` index), so a file
with years of runs opens as fast as a new one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.run_history import PASS_LABELS, MadeSummary, RunPage, duration, list_runs, run_summaries, why
from hiermem_tui.store import Run
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.words import engine_label
from hiermem_tui.tui.screens.report import ReportScreen
from hiermem_tui.tui.screens.stats import STATUS_STYLE

PAGE = 200
MAX_MADE = 1000
MORE = "more"


@dataclass(frozen=True, slots=True)
class History:
    page: RunPage
    titles: dict[str, str]


class RunHistoryScreen(ReportScreen):
    """Runs of one session (from its screen) or of the whole file (from the sessions list)."""

    HEADING = "Run history"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="run_history.back"),
        Binding("tab", "switch_list", "Runs ↔ summaries", priority=True, key_display="tab", id="run_history.switch_list"),
        Binding("r", "reload", "Refresh", show=False, id="run_history.reload"),
    ]

    def __init__(self, session_id: str | None = None) -> None:
        super().__init__(session_id)
        self.limit = PAGE
        self.runs: list[Run] = []
        self.made: list[MadeSummary] = []
        self.titles: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        with Horizontal(id="history-body"):
            yield KeyedOptionList(id="history-runs", classes="pane")
            with Vertical(id="history-right"):
                yield Static(id="history-detail", classes="pane")
                yield KeyedOptionList(id="history-made", classes="pane")
        yield Static(id="history-empty", classes="note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#history-runs").border_title = "Runs, newest first"
        self.query_one("#history-detail").border_title = "Run"
        self.query_one("#history-made").border_title = "Summaries it made"
        self.query_one("#history-empty").display = False
        self.query_one("#history-runs").focus()
        self.load()

    def fetch(self) -> object:
        page = list_runs(self.store, self.session_id, limit=self.limit)
        titles = {}
        for sid in {r.session_id for r in page.runs}:
            s = self.store.sessions.get(sid)
            titles[sid] = s.title if s is not None and s.title else sid
        return History(page, titles)

    def show(self, data: object) -> None:
        assert isinstance(data, History)
        runs = self.query_one("#history-runs", OptionList)
        keep = runs.highlighted
        self.runs = list(data.page.runs)
        self.titles = data.titles
        empty = not self.runs
        self.query_one("#history-body").display = not empty
        self.query_one("#history-empty").display = empty
        if empty:
            self.query_one("#history-empty", Static).update(Text(
                "No runs yet. Compact a session to start one: p in the sessions list or in a session."))
            return
        p = fmt.Palette.from_app(self.app)
        year = self.app.clock().year
        when = [fmt.timestamp(r.started_at, ref_year=year) for r in self.runs]
        width = max(13, *(len(w) + 1 for w in when))  # a run of another year adds its year: every row aligned
        runs.clear_options()
        runs.add_options([Option(self._row(r, f"{w:<{width}}", p), id=r.id) for r, w in zip(self.runs, when)])
        if data.page.more:
            runs.add_option(Option(Text(f"… older runs: enter loads {PAGE} more", style=fmt.style(p.muted,
                                                                                                 italic=True)), id=MORE))
        runs.highlighted = min(keep or 0, len(self.runs) - 1)

    def _row(self, r: Run, when: str, p: fmt.Palette) -> Text:
        colour = getattr(p, STATUS_STYLE.get(r.status, "muted"))
        took = duration(r)
        row = Text.assemble(
            (when, fmt.style(p.muted)),
            (f"{r.status:<12}", fmt.style(colour, bold=True)),
            (f"{PASS_LABELS.get(r.kind, r.kind):<13}", fmt.style(p.foreground)),
            (f"{fmt.duration(took) if took is not None else '…':>8}", fmt.style(p.foreground)),
            (f"{r.summaries_created:>5} made", fmt.style(p.foreground, bold=True)),
        )
        if r.fallback:
            row.append(f" ▲{r.fallback}", style=fmt.style(p.warning, bold=True))
        if self.session_id is None:  # the whole file: which session, on a line of its own
            row.append(f"\n  {one_line(self.titles.get(r.session_id, r.session_id), 70)}", style=fmt.style(p.muted))
        return row

    # ------------------------------------------------------------------ one run
    @on(OptionList.OptionHighlighted, "#history-runs")
    def _run_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.runs):
            self._show_run(self.runs[event.option_index])

    @on(OptionList.OptionSelected, "#history-runs")
    def _run_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == MORE:
            self.limit += PAGE
            self.load()
        elif self.made:
            self.query_one("#history-made").focus()

    def _show_run(self, r: Run) -> None:
        p = fmt.Palette.from_app(self.app)
        muted, fg = fmt.style(p.muted), fmt.style(p.foreground)
        colour = getattr(p, STATUS_STYLE.get(r.status, "muted"))
        took = duration(r)
        planned = f" of {r.planned} planned" if r.planned is not None else ""
        detail = Text.assemble(
            (f"{PASS_LABELS.get(r.kind, r.kind)} ", fmt.style(p.foreground, bold=True)),
            (r.status, fmt.style(colour, bold=True)), ("  ", muted), (one_line(r.id, 40), muted),
            ("\nsession  ", muted), (one_line(self.titles.get(r.session_id, r.session_id), 80), fg),
            ("\nengine   ", muted), (engine_label(r.backend, r.model), fg),
            ("\nstarted  ", muted), (fmt.timestamp(r.started_at, ref_year=self.app.clock().year, seconds=True), fg),
            (" · took ", muted), (fmt.duration(took) if took is not None else "still running", fg),
            (" · model ", muted), (fmt.duration(r.llm_seconds), fg),
            ("\nmade     ", muted), (f"{r.summaries_created}{planned}", fmt.style(p.foreground, bold=True)),
            (" · normal ", muted), (str(r.normal), fmt.style(p.primary, bold=True)),
            (" · aggressive ", muted), (str(r.aggressive), fmt.style(p.aggressive, bold=True)),
            (" · fallback ", muted), (str(r.fallback), fmt.style(p.warning if r.fallback else p.foreground, bold=True)),
            (" · flagged ", muted), (str(r.flagged), fmt.style(p.warning if r.flagged else p.foreground, bold=True)),
        )
        if r.rejections:
            detail.append("\nrejected ", style=muted)
            detail.append(", ".join(f"{one_line(k, 30)} ×{v}" for k, v in sorted(r.rejections.items())), style=fg)
        reason = why(r)
        if reason:
            detail.append("\nwhy      ", style=muted)
            detail.append(one_line(reason, 400), style=fmt.style(p.error if r.status == "failed" else p.warning,
                                                                  bold=True))
        self.query_one("#history-detail", Static).update(detail)
        self.made = run_summaries(self.store, r.id)[:MAX_MADE]
        made = self.query_one("#history-made", OptionList)
        made.clear_options()
        made.add_options([Option(self._made_row(m, p)) for m in self.made])
        if not self.made:
            made.add_option(Option(Text("This run wrote no summaries.", style=muted), disabled=True))
        made.border_subtitle = (f"first {MAX_MADE:,} of {r.summaries_created:,}" if r.summaries_created > MAX_MADE
                                else "enter: show in the tree" if self.made else None)

    def _made_row(self, m: MadeSummary, p: fmt.Palette) -> Text:
        s = m.span
        row = Text.assemble(fmt.depth_chip(s.depth, p, s.tier), " ", fmt.tier_badge(s.tier, p), " ",
                            (fmt.seq_span(s.first_seq, s.last_seq), fmt.style(p.foreground, bold=True)),
                            (f"  {fmt.tokens(s.tokens)} tok", fmt.style(p.foreground)))
        if not m.active:
            row.append("  superseded since", style=fmt.style(p.muted, italic=True))
        return row

    @on(OptionList.OptionSelected, "#history-made")
    async def _made_selected(self, event: OptionList.OptionSelected) -> None:
        runs = self.query_one("#history-runs", OptionList)
        if runs.highlighted is None or not (0 <= event.option_index < len(self.made)):
            return
        run = self.runs[runs.highlighted]
        m = self.made[event.option_index]
        await self.app.nav.show_in_session(run.session_id, summary_id=m.span.id, seq=m.span.first_seq,
                              versions=not m.active)

    def action_switch_list(self) -> None:
        runs, made = self.query_one("#history-runs"), self.query_one("#history-made")
        (runs if made.has_focus else made).focus()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Runs ↔ summaries it made", "Switch between the two lists", self.action_switch_list,
                             "tab")
        yield PaletteCommand("Refresh run history", "Read the runs again", self.action_reload, "r")
        yield PaletteCommand("Back", "Close the run history", self.action_back, "esc")
