"""Before a run: which pass, which backend and model, and what it will do.

Why a dialog and not a bare key: a run costs minutes of a local model, so the user sees the
plan ("≈ 6 summaries") and the model that will write them before anything starts. It is
still one key away — ``enter`` starts with the highlighted choice, which defaults to the
remembered one — and the model list comes from a fresh probe of every configured server (Ollama's
and OpenAI-compatible ones), with the loaded model marked, so picking another model needs no
typing. ``extractive`` is always offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Checkbox, Footer, OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.store.backup import default_backup_path
from hiermem_tui.textsafe import one_line
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import BacklogPlanReady, BackendProbed, PlanReady
from hiermem_tui.tui.run_job import ACTION_LABELS, PASSES, RunAction
from hiermem_tui.tui.screens.base import AppModal
from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.tui.widgets.ticks import TickBox

if TYPE_CHECKING:
    from hiermem_tui.backend_status import BackendStatus
    from hiermem_tui.compaction.backlog import Backlog
    from hiermem_tui.compaction.estimate import Speed
    from hiermem_tui.compaction.preview import PlannedSummary
    from hiermem_tui.tui.run_plans import EngineOption


PLAN_ROWS = 6
"""Planned summaries listed in the dialog (the rest are counted)."""
BACKUP_ACTIONS = ("repair", "resummarize-session")
"""Runs that replace summaries in bulk: their dialog offers to back the file up first."""
PASS_HELP = {
    "leaf": "summarise unsummarised episodes outside the fresh tail into leaves",
    "condense": "condense runs of same-depth summaries into the next depth",
    "full": "leaves, then condensations until nothing is eligible, then the brief",
    "repair": "re-make every fallback, low-fidelity or pin-missing summary, with its ancestors",
}
ORDERS = ("newest", "oldest", "largest")
"""The backlog's orders (``compaction/backlog.py``): newest activity first, oldest, most uncompacted tokens."""
THRESHOLDS: tuple[int | None, ...] = (None, 5_000, 20_000, 100_000)
"""The backlog's size thresholds ``t`` cycles through: every session, or only those over so many tokens."""


def planned_words(n: int, plan: Sequence[PlannedSummary]) -> str:
    """``4 summaries and the brief``: ``n`` planned, the session's brief among them said apart (it is not a
    summary of the tree)."""
    brief = any(item.kind == "brief" for item in plan)
    made = n - brief
    if not brief:
        return f"{made} summar{'y' if made == 1 else 'ies'}"
    return "the brief" if not made else f"{made} summar{'y' if made == 1 else 'ies'} and the brief"


@dataclass(frozen=True, slots=True)
class RunChoice:
    """What the dialog answers with."""

    action: RunAction
    backend: str
    model: str | None
    remember: bool = False
    backup: Path | None = None
    """Where to copy the database before the run starts (None: no backup)."""
    order: str = "newest"
    """The backlog's order (the backlog dialog only)."""
    if_over: int | None = None
    """The backlog: only sessions with more uncompacted tokens than this (None: every session)."""


def _option_text(opt: EngineOption, palette: fmt.Palette) -> Text:
    loaded = "loaded" in opt.note
    mark = "◆" if opt.backend == "extractive" else ("●" if loaded else "○")
    colour = palette.success if loaded else (palette.accent if opt.backend == "extractive" else palette.muted)
    name = "extractive" if opt.backend == "extractive" else (one_line(opt.model, 40) if opt.model else "ollama (default)")
    warn = "not installed" in opt.note
    return Text.assemble(
        (f"{mark} ", fmt.style(colour, bold=True)), (f"{name:<30}", fmt.style(palette.foreground, bold=True)), " ",
        (opt.note, fmt.style(palette.warning if warn else palette.muted, bold=warn)),
    )


class RunDialog(AppModal[RunChoice | None]):
    """Choose the pass (for compaction), the backend and the model; ``enter`` starts."""

    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Cancel", key_display="esc", id="run_dialog.cancel"),
        Binding("l", "set_pass('leaf')", "Leaf", show=False, id="run_dialog.set_pass.leaf"),
        Binding("n", "set_pass('condense')", "Condense", show=False, id="run_dialog.set_pass.condense"),
        Binding("p", "set_pass('full')", "Pass", key_display="l/n/p", id="run_dialog.set_pass.full"),
        Binding("m", "toggle_remember", "Remember", id="run_dialog.toggle_remember"),
        Binding("b", "toggle_backup", "Backup", id="run_dialog.toggle_backup"),
        Binding("o", "cycle_order", "Order", id="run_dialog.cycle_order"),
        Binding("t", "cycle_threshold", "Size", id="run_dialog.cycle_threshold"),
        Binding("enter", "start", "Start", id="run_dialog.start"),
    ]

    def __init__(self, action: RunAction, session_id: str, *, subject: str, detail: Text | str = "") -> None:
        super().__init__()
        self.action = action
        self.session_id = session_id
        self.subject = one_line(subject, 60)
        self.detail = detail if isinstance(detail, Text) else Text(detail)
        self.options: list[EngineOption] = []
        self.counts: dict[str, int] | None = None
        self.plans: dict[str, list[PlannedSummary]] = {}
        self.status: BackendStatus | None = None
        """The backend's first server, as last probed."""
        self.statuses: list[BackendStatus] = []
        """Every configured server, as last probed (the first is :attr:`status`)."""
        self.probing = False
        self.measuring = False
        """The highlighted model's speed is being measured (its times are a guess until then)."""
        self._auto_key: str | None = None
        self.pass_: RunAction = "full"
        """The backlog's pass (``action`` stays ``backlog``)."""
        self.order = ORDERS[0]
        self.if_over: int | None = None
        self.backlog: Backlog | None = None
        self._ticket = 0
        """The backlog's plan, for the order and size asked (None: being planned)."""


    @property
    def heading(self) -> str:
        return f"{ACTION_LABELS[self.action]} · {self.subject}"

    def compose(self) -> ComposeResult:
        with Vertical(id="run-panel", classes="dialog") as panel:
            panel.border_title = Content(self.heading)  # literal: the subject is a chat title
            panel.border_subtitle = "enter start · esc cancel"
            if self.action in PASSES or self.action == "backlog":
                yield Static(id="run-pass")
            yield Static(self.detail, id="run-detail")
            yield Static(id="run-plan")
            yield Static("Backend and model", classes="dialog-label")
            yield KeyedOptionList(id="run-engines")
            yield Static(id="run-backend-status")
            yield TickBox("Remember as the default backend and model  m", id="run-remember", compact=True)
            if self.action in BACKUP_ACTIONS:
                yield TickBox("Back up the file first (a copy beside it, named by the time)  b", id="run-backup",
                              compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel  esc", id="run-cancel", compact=True)
                yield Button("Start  enter", id="run-start", variant="primary", compact=True)
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "set_pass":
            return self.action in PASSES or self.action == "backlog"
        if action in ("cycle_order", "cycle_threshold"):
            return self.action == "backlog"
        if action == "toggle_backup":
            return self.action in BACKUP_ACTIONS
        return True

    def backup_path(self) -> Path:
        """Where the "back up first" box copies the file: beside it, named by the time of the start."""
        return default_backup_path(self.store.path)

    def on_mount(self) -> None:
        for widget in (*self.query(Checkbox), *self.query(Button)):
            widget.can_focus = False
        self.query_one("#run-detail").display = bool(self.detail.plain)
        self.status = self.app.backend_state
        self._fill_engines()
        self.query_one(OptionList).focus()
        self._show_plan()
        self._plan()
        self._probe()

    # ------------------------------------------------------------------ data
    def _plan(self) -> None:
        """Plan the run again in a worker (a newer plan cancels the older)."""
        self.app.store_worker(self, self._plan_here, group="run-plan", exclusive=True)

    def _plan_here(self) -> None:
        if self.action == "backlog":
            ticket = self._ticket
            plan = self.app.planner.backlog(self.order, self.pass_, self.if_over)  # type: ignore[arg-type]
            self.post_message(BacklogPlanReady(plan, ticket))
            return
        self.post_message(PlanReady(self.app.planner.preview(self.session_id)))

    def on_backlog_plan_ready(self, message: BacklogPlanReady) -> None:
        plan = message.plan
        if message.ticket != self._ticket:
            return  # an older plan, for another order, size or pass
        self.backlog = plan
        self.counts = {"backlog": plan.summaries}
        self._show_plan()

    def on_plan_ready(self, message: PlanReady) -> None:
        self.counts = message.preview.counts
        self.plans = message.preview.plans
        self._show_plan()

    @work(exclusive=True, group="run-probe", exit_on_error=False)
    async def _probe(self) -> None:
        self.probing = True
        self._show_status()
        statuses = await self.app.planner.probe()
        self.probing = False
        if statuses:
            self.app.post_message(BackendProbed(statuses[0]))
        self.statuses = statuses
        self.status = statuses[0] if statuses else None
        self._fill_engines()
        self._learn_speed()

    def _measurable(self, opt: EngineOption | None) -> bool:
        """A model the dialog may measure: the server answered and has it loaded, or it is the configured one
        (what ``backlog`` would measure): browsing the list never loads a model nobody chose."""
        status = self.status
        if (not self.app.planner.measures or opt is None or opt.backend != "ollama" or not opt.model or status is None
                or not status.reachable):
            return False
        return "loaded" in opt.note or "configured" in opt.note

    @work(exclusive=True, group="run-speed", exit_on_error=False)
    async def _learn_speed(self) -> None:
        """The highlighted model's speed measured when never measured (``RunPlanner.learn_speed``), so the times
        shown are those ``backlog`` prints, not a guess; the plan is shown again with them."""
        opt = self.chosen
        if not self._measurable(opt) or self.app.planner.knows_speed(opt):
            return
        self.measuring = True
        self._show_plan()
        try:
            await self.app.planner.learn_speed(opt)
        finally:
            self.measuring = False
        self._show_plan()

    def _fill_engines(self) -> None:
        picker = self.query_one(OptionList)
        # keep what the user highlighted; what we highlighted ourselves is re-decided, since the
        # default depends on whether Ollama answers (unknown until the probe is back)
        current = self.chosen
        if current is not None and current.key == self._auto_key:
            current = None
        self.options, auto = self.app.planner.engines(self.statuses or self.status)
        palette = fmt.Palette.from_app(self.app)
        picker.clear_options()
        picker.add_options([Option(_option_text(o, palette), id=o.key) for o in self.options])
        keys = [o.key for o in self.options]
        if current is not None and current.key in keys:
            picker.highlighted = keys.index(current.key)
        else:
            picker.highlighted = auto
            self._auto_key = keys[picker.highlighted] if keys else None
        self._show_status()

    @property
    def chosen(self) -> EngineOption | None:
        if not self.options or not self.is_mounted:
            return None
        index = self.query_one(OptionList).highlighted
        return self.options[index] if index is not None and 0 <= index < len(self.options) else None

    def _show_status(self) -> None:
        p = fmt.Palette.from_app(self.app)
        servers = self.app.settings.configured_servers()
        name = "Ollama" if not servers or servers[0].backend == "ollama" else "OpenAI-compatible server"
        host = servers[0].url if servers else self.app.settings.ollama_host
        more = f" and {len(servers) - 1} more" if len(servers) > 1 else ""
        text = Text()
        if self.probing and self.status is None:
            the = "" if name == "Ollama" else "the "
            text = Text(f"◌ asking {the}{name} at {host}{more} for its models…", style=fmt.style(p.muted))
        elif self.status is None:
            text = Text(f"○ {name} at {host} not checked yet", style=fmt.style(p.muted))
        else:
            for i, status in enumerate(self.statuses or [self.status]):
                if i:
                    text.append("\n")
                text.append_text(self._status_line(status, p, self.probing and i == 0))
        self.query_one("#run-backend-status", Static).update(text)

    @staticmethod
    def _status_line(status: BackendStatus, p: fmt.Palette, probing: bool) -> Text:
        if not status.reachable:
            return Text(f"▲ {status.describe()} — extractive still works", style=fmt.style(p.warning, bold=True))
        n = len(status.installed)
        counted = f"{n} installed" if status.kind == "ollama" else f"{n} served"
        return Text(f"● {status.describe()} · {counted}" + (" · re-checking…" if probing else ""),
                    style=fmt.style(p.success if status.ok else p.warning))

    def _show_passes(self) -> None:
        """``Pass  ○ leaf l  ○ condense n  ● full p``: our own text, so click actions are safe here."""
        parts: list[str | tuple[str, str] | Content] = [("Pass  ", "bold $text-accent")]
        chosen = self.pass_ if self.action == "backlog" else self.action
        for pass_, key in zip(PASSES, "lnp"):
            on_ = pass_ == chosen
            mark = ("● " if on_ else "○ ", "bold $text-success" if on_ else "$foreground-muted")
            name = Content.from_markup(f"[@click=screen.set_pass('{pass_}')]{pass_}[/]")
            parts += [mark, name.stylize("bold" if on_ else "$foreground"), (f" {key}    ", "$foreground-muted")]
        self.query_one("#run-pass", Static).update(Content.assemble(*parts))

    def _show_plan(self) -> None:
        if self.action in PASSES or self.action == "backlog":
            self._show_passes()
        if self.action == "backlog":
            self.query_one("#run-plan", Static).update(self._backlog_text())
            return
        p = fmt.Palette.from_app(self.app)
        text = Text()
        if self.action in PASS_HELP:
            text.append(PASS_HELP[self.action], style=fmt.style(p.muted))
            text.append("\n")
        if self.counts is None:
            text.append("planning…", style=fmt.style(p.muted))
        elif self.action in self.counts:
            n = self.counts[self.action]
            if n == 0 and self.action in PASSES:
                text.append("Nothing is due for this pass now.", style=fmt.style(p.warning, bold=True))
            elif n == 0 and self.action == "repair":
                text.append("Nothing needs repair: no fallback, no low-fidelity summary, no missing pin.",
                            style=fmt.style(p.warning, bold=True))
            else:
                verb = "re-make" if self.action == "repair" else "write"
                text.append(f"≈ {planned_words(n, self.plans.get(self.action, []))} to {verb}",
                            style=fmt.style(p.foreground, bold=True))
                text.append_text(self._plan_rows(p))
        self.query_one("#run-plan", Static).update(text)

    def _plan_rows(self, p: fmt.Palette) -> Text:
        """The dry-run plan of a pass, with times for the highlighted model (measured, or a guess that says so)."""
        plan = self.plans.get(self.action, [])
        if not plan:
            return Text()
        opt = self.chosen
        extractive = opt is not None and opt.backend == "extractive"
        speed, secs = self.app.planner.estimates(plan, opt)
        out = Text()
        if extractive:
            out.append(" · no model time (extractive)", style=fmt.style(p.muted))
        else:
            total = sum(secs)
            out.append(f" · about {fmt.duration(total)} ({self._speed_said(speed)})",
                       style=fmt.style(p.foreground if speed.measured else p.muted))
        for item, sec in list(zip(plan, secs))[:PLAN_ROWS]:
            when = "" if sec is None or extractive else f"  ~{fmt.duration(sec)}"
            where = "brief" if item.kind == "brief" else f"d{item.depth}"
            out.append(f"\n  {where:<5} {fmt.seq_span(item.first_seq, item.last_seq):<14}"
                       f"{fmt.tokens(item.source_tokens):>7} tok in{when}", style=fmt.style(p.muted))
        if len(plan) > PLAN_ROWS:
            out.append(f"\n  … and {len(plan) - PLAN_ROWS} more", style=fmt.style(p.muted))
        return out

    def _speed_said(self, speed: Speed) -> str:
        """Where the times come from; while the model is being measured, that (the figures a guess till then)."""
        return "a guess: measuring the model…" if self.measuring and not speed.measured else speed.describe()

    def _backlog_text(self) -> Text:
        """Sessions, summaries, tokens and time of the backlog, its order and size threshold."""
        p = fmt.Palette.from_app(self.app)
        muted, strong = fmt.style(p.muted), fmt.style(p.foreground, bold=True)
        text = Text()
        for label, values, current, key in (("Order  ", ORDERS, self.order, "o"),
                                            ("Size   ", THRESHOLDS, self.if_over, "t")):
            text.append(label, style=fmt.style(p.accent, bold=True))
            for value in values:
                name = value if isinstance(value, str) else ("every session" if value is None
                                                             else f"over {fmt.tokens(value)} tok")
                on_ = value == current
                text.append("● " if on_ else "○ ", style=fmt.style(p.success if on_ else p.muted, bold=on_))
                text.append(f"{name}   ", style=strong if on_ else muted)
            text.append(f"{key}\n", style=muted)
        plan = self.backlog
        if plan is None:
            text.append("planning every session…", style=muted)
            return text
        if not plan.summaries and not plan.briefs:
            text.append("Nothing is waiting: every session is up to date for this pass.",
                        style=fmt.style(p.warning, bold=True))
            return text
        opt = self.chosen
        made = [f"{plan.summaries:,} summar{'y' if plan.summaries == 1 else 'ies'}"] if plan.summaries else []
        made += [f"{plan.briefs:,} brief{'s' * (plan.briefs != 1)}"] if plan.briefs else []
        text.append(f"≈ {' and '.join(made)} in {len(plan.sessions):,} session{'s' * (len(plan.sessions) != 1)} · "
                    f"{fmt.tokens(plan.input_tokens)} tok in", style=strong)
        if opt is not None and opt.backend == "extractive":
            text.append(" · no model time (extractive)", style=muted)
        else:
            speed, secs = self.app.planner.backlog_estimate(plan, opt)
            text.append(f" · about {fmt.duration(secs)} ({self._speed_said(speed)})",
                        style=fmt.style(p.foreground) if speed.measured else muted)
        return text

    # ------------------------------------------------------------------ actions
    def action_cycle_order(self) -> None:
        self.order = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]
        self._replan()

    def action_cycle_threshold(self) -> None:
        self.if_over = THRESHOLDS[(THRESHOLDS.index(self.if_over) + 1) % len(THRESHOLDS)]
        self._replan()

    def _replan(self) -> None:
        self._ticket += 1
        self.backlog = None
        self._show_plan()
        self._plan()

    def action_set_pass(self, pass_: str) -> None:
        if self.action == "backlog":
            self.pass_ = cast(RunAction, pass_)
            self._replan()
            return
        if self.action not in PASSES:
            return
        self.action = cast(RunAction, pass_)
        self.query_one("#run-panel").border_title = Content(self.heading)
        self._show_plan()

    def action_toggle_remember(self) -> None:
        box = self.query_one("#run-remember", Checkbox)
        box.value = not box.value

    def action_toggle_backup(self) -> None:
        for box in self.query("#run-backup").results(Checkbox):
            box.value = not box.value

    def action_start(self) -> None:
        opt = self.chosen
        if opt is None:
            return
        backup = any(box.value for box in self.query("#run-backup").results(Checkbox))
        if self.action == "backlog" and self.backlog is None:
            return  # still planning
        action = self.pass_ if self.action == "backlog" else self.action
        self.dismiss(RunChoice(action, opt.backend, opt.model, self.query_one("#run-remember", Checkbox).value,
                               backup=self.backup_path() if backup else None, order=self.order, if_over=self.if_over))

    @on(OptionList.OptionSelected, "#run-engines")
    def _engine_selected(self) -> None:
        self.action_start()

    @on(OptionList.OptionHighlighted, "#run-engines")
    def _engine_highlighted(self) -> None:
        if self.counts is not None:
            self._show_plan()  # the time estimate is the highlighted model's
        if self.status is not None:
            self._learn_speed()

    @on(Button.Pressed, "#run-start")
    def _start_pressed(self) -> None:
        self.action_start()

    @on(Button.Pressed, "#run-cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)
