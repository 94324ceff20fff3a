"""Before a run: what it would make, which engines could make it and how fast, and which summaries
need repair. The run dialog and the session screen ask :class:`RunPlanner` (``app.planner``).

Why an object the app owns: these answers come from the engine (the planner, the fidelity check,
the Ollama probe), and screens and widgets do not import the engine (a test holds them to it:
importing the engine's package loads the runner, the summariser and the Ollama client). The app's
layer does, so screens reach it through ``self.app.planner`` as they reach runs through
``self.app.runs``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hiermem_tui.backend_status import BackendStatus, probe_backend
from hiermem_tui.compaction import PassKind, Runner, planner
from hiermem_tui.compaction.backlog import Backlog, Order, plan_backlog
from hiermem_tui.compaction.check import check_session, pins_missing, repair_targets, repair_trees
from hiermem_tui.compaction.estimate import Estimator, Speed
from hiermem_tui.compaction.job import offline_estimator
from hiermem_tui.compaction.preview import PlannedSummary, plan_pass
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import ExtractiveBackend, Summariser
from hiermem_tui.summarize.ollama_backend import match_model
from hiermem_tui.tui import format as fmt

if TYPE_CHECKING:
    from hiermem_tui.tui.app_base import AppBase


@dataclass(frozen=True, slots=True)
class EngineOption:
    """One line of the model picker: a backend, a model (None: Ollama's loaded one), a note."""

    backend: str
    model: str | None
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.model or ''}"


@dataclass(frozen=True, slots=True)
class PlanPreview:
    """What each action would make now (the dry-run plan), read in a worker."""

    plans: dict[str, list[PlannedSummary]]
    counts: dict[str, int]


def engine_options(status: BackendStatus | None, settings: Settings) -> list[EngineOption]:
    """extractive, then every installed model (loaded ones first), then the configured one if it is not installed."""
    opts = [EngineOption("extractive", None, "built in · no model · deterministic")]
    installed = list(status.installed) if status is not None and status.reachable else []
    loaded = list(status.loaded) if status is not None else []
    ordered = sorted(installed, key=lambda m: match_model(m, loaded) is None)
    for name in ordered:
        notes = ["loaded" if match_model(name, loaded) else ""]
        if settings.model and match_model(settings.model, [name]):
            notes.append("configured")
        opts.append(EngineOption("ollama", name, " · ".join(n for n in notes if n)))
    if settings.model and not (installed and match_model(settings.model, installed)):
        note = "not installed" if installed or (status is not None and status.reachable) else "configured · not checked"
        opts.append(EngineOption("ollama", settings.model, note))
    if not installed and not settings.model:
        opts.append(EngineOption("ollama", None, "whichever model Ollama has loaded"))
    return opts


def default_index(options: list[EngineOption], settings: Settings, status: BackendStatus | None = None) -> int:
    """The remembered choice: extractive, the configured model, else the first Ollama one (loaded
    first) — but extractive while Ollama is known to be unreachable, so enter still works."""
    if settings.backend == "extractive" or (status is not None and not status.reachable):
        return 0
    for i, opt in enumerate(options):
        if opt.backend == "ollama" and settings.model and opt.model and match_model(settings.model, [opt.model]):
            return i
    return next((i for i, opt in enumerate(options) if opt.backend == "ollama"), 0)


def way_of(store: Store, settings: Settings, model: str | None, *, scores: bool = False) -> str:
    """How ``model`` summarises, in a few words: ``writes`` or ``titles``, and why — set for every model in the
    settings, calibrated (``scores``: the shares of the probes each way answered), or not calibrated yet."""
    if settings.summary_way != "measured":
        return f"{settings.summary_way}, set for every model"
    measured = store.ways.get(model)
    if measured is None:
        return "titles, not calibrated"
    if not scores:
        return f"{measured.way}, calibrated"
    return f"{measured.way}: titles {measured.titles_score:.0%}, writes {measured.writes_score:.0%}"


def plan_preview(store: Store, policy: Policy, session_id: str) -> PlanPreview:
    """The passes' plans (as ``compact --dry-run`` prints them) and the other actions' counts."""
    tok = store.tokenizer
    runner = Runner(store, Summariser(ExtractiveBackend(tok), tok), policy)
    passes: tuple[PassKind, ...] = ("leaf", "condense", "full")
    plans: dict[str, list[PlannedSummary]] = {p: plan_pass(store, policy, session_id, p) for p in passes}
    repair = repair_trees(store, repair_targets(store, session_id, policy.fidelity_threshold))
    counts = {p: len(plan) for p, plan in plans.items()}
    counts["resummarize-session"] = planner.count_full([], runner.planner.session_leaves(session_id),
                                                       policy.condense_fanout)
    counts["repair"] = sum(map(len, repair))
    return PlanPreview(plans, counts)


def engine_estimator(store: Store, settings: Settings, opt: EngineOption | None) -> Estimator:
    """The highlighted model's estimator: what earlier runs measured of it on each host, else a
    guess from its size (never unknown), the work shared among the hosts (``compaction/estimate.py``)."""
    if opt is None:
        return Estimator(Speed.guess(None), settings.policy, settings.summary_format)
    return offline_estimator(store, settings, (opt.backend, opt.model))


class RunPlanner:
    """The engine's answers before a run, for the screens (owned by the app as ``app.planner``)."""

    def __init__(self, app: AppBase) -> None:
        self.app = app

    def preview(self, session_id: str) -> PlanPreview:
        """Every action's plan for the session (from a worker thread: it reads the whole DAG)."""
        return plan_preview(self.app.store, self.app.settings.policy, session_id)

    def engines(self, status: BackendStatus | None) -> tuple[list[EngineOption], int]:
        """The model picker's lines and the one to highlight first (the remembered choice)."""
        settings = self.app.settings
        options = [replace(o, note=" · ".join(n for n in (o.note, way_of(self.app.store, settings, o.model)) if n))
                   if o.backend != "extractive" and o.model else o for o in engine_options(status, settings)]
        return options, default_index(options, settings, status)

    def way(self, model: str | None) -> str:
        """How ``model`` summarises, with the scores it was calibrated on (the settings screen)."""
        return way_of(self.app.store, self.app.settings, model, scores=True)

    def estimates(self, plan: list[PlannedSummary], opt: EngineOption | None) -> tuple[Speed, list[float]]:
        """The speed of ``opt``'s model (measured, else a guess that says so) and each planned
        summary's seconds, from the one estimator (``compaction/estimate.py``)."""
        estimator = engine_estimator(self.app.store, self.app.settings, opt)
        return estimator.speed, [estimator.seconds(item.depth, item.source_tokens) for item in plan]

    def backlog(self, order: Order, pass_: PassKind, if_over: int | None) -> Backlog:
        """Every summary due across the file (from a worker thread: it reads every session's plan)."""
        store, settings = self.app.store, self.app.settings
        estimator = offline_estimator(store, settings)
        return plan_backlog(store, settings.policy, estimator, order=order, pass_=pass_, if_over=if_over,
                            model=settings.model)

    def backlog_estimate(self, plan: Backlog, opt: EngineOption | None) -> tuple[Speed, float]:
        """The speed of ``opt``'s model and the backlog's model time at it (the one estimator)."""
        estimator = engine_estimator(self.app.store, self.app.settings, opt)
        return estimator.speed, sum(estimator.total(s.items) for s in plan.sessions)

    async def probe(self) -> BackendStatus:
        """Ask the configured Ollama server for its models now (the dialog's own, fresh probe)."""
        settings = self.app.settings
        return await probe_backend(settings.ollama_host, settings.model)

    def repair_reason(self, summary_id: str) -> str | None:
        """Why a repair run would re-make the summary, in words (None: it would not)."""
        store = self.app.store
        s = store.dag.get(summary_id)
        if s is None:
            return None
        if s.tier == "fallback":
            return "it is a fallback (made without the model)"
        threshold = self.app.settings.policy.fidelity_threshold
        figure = s.key_retention
        if figure is not None and figure < threshold:
            return f"it keeps {fmt.percent(figure)} of its sources' key names"
        missing = pins_missing(store, s)
        if missing:
            return f"it does not carry pinned episode{'s' * (len(missing) > 1)} {', '.join(missing)}"
        return None

    def measure(self, session_id: str) -> tuple[int, int]:
        """Measure every summary of the session not measured yet (from a worker thread): how many
        were checked and how many keep under the fidelity threshold of their key names."""
        threshold = self.app.settings.policy.fidelity_threshold
        rows = check_session(self.app.store, session_id)
        return len(rows), sum(r.fidelity.low(threshold) for r in rows)
