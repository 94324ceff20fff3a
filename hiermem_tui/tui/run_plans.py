"""Before a run: what it would make, which engines could make it and how fast, and which summaries
need repair. The run dialog and the session screen ask :class:`RunPlanner` (``app.planner``).

Why an object the app owns: these answers come from the engine (the planner, the fidelity check,
the servers' probe), and screens and widgets do not import the engine (a test holds them to it:
importing the engine's package loads the runner, the summariser and the Ollama client). The app's
layer does, so screens reach it through ``self.app.planner`` as they reach runs through
``self.app.runs``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hiermem_tui.backend_status import BackendStatus, probe_server
from hiermem_tui.compaction import PassKind, Runner, planner
from hiermem_tui.compaction.backlog import Backlog, Order, plan_backlog
from hiermem_tui.compaction.check import check_session, pins_missing, repair_targets, repair_trees
from hiermem_tui.compaction.estimate import Estimator, Speed
from hiermem_tui.compaction.job import host_speeds, offline_estimator
from hiermem_tui.compaction.preview import PlannedSummary, plan_pass
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Session, Store
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


def engine_options(statuses: BackendStatus | Sequence[BackendStatus] | None, settings: Settings) -> list[EngineOption]:
    """extractive, then every server's models (each probed server's, the backend's kind first: an Ollama
    server's installed models, loaded ones first; an OpenAI-compatible server's served ones), then the
    configured model if no server has it."""
    found = [statuses] if isinstance(statuses, BackendStatus) else list(statuses or [])
    opts = [EngineOption("extractive", None, "built in · no model · deterministic")]
    seen: set[str] = set()
    for status in found:
        for opt in _server_options(status, settings, several=len(found) > 1):
            if opt.key not in seen:
                seen.add(opt.key)
                opts.append(opt)
    kind = settings.backend if settings.backend != "extractive" else "ollama"
    if settings.model and not any(o.backend == kind and o.model and match_model(settings.model, [o.model])
                                  for o in opts):
        first = next((s for s in found if s.kind == kind), None)
        missing = "not installed" if kind == "ollama" else "not served"
        note = missing if first is not None and first.reachable else "configured · not checked"
        opts.append(EngineOption(kind, settings.model, note))
    if kind == "ollama" and not settings.model and not any(o.backend == "ollama" for o in opts):
        opts.append(EngineOption("ollama", None, "whichever model Ollama has loaded"))
    return opts


def _server_options(status: BackendStatus, settings: Settings, *, several: bool) -> list[EngineOption]:
    """The picker's lines for one probed server's models (its host named when several were probed)."""
    installed = list(status.installed) if status.reachable else []
    loaded = list(status.loaded)
    ordered = sorted(installed, key=lambda m: match_model(m, loaded) is None)
    where = [f"{status.kind} {urlsplit(status.host).netloc or status.host}"] if several else []
    out = []
    for name in ordered:
        notes = ["loaded" if match_model(name, loaded) else ""]
        if settings.model and settings.backend in (status.kind, "extractive") and match_model(settings.model, [name]):
            notes.append("configured")
        out.append(EngineOption(status.kind, name, " · ".join(n for n in notes + where if n)))
    return out


def default_index(options: list[EngineOption], settings: Settings,
                  status: BackendStatus | Sequence[BackendStatus] | None = None) -> int:
    """The remembered choice: extractive, the configured model, else the first of the backend's kind (loaded
    first) — but extractive while the backend's first server is known to be unreachable, so enter still works."""
    first = status if isinstance(status, BackendStatus) else next(iter(status or []), None)
    if settings.backend == "extractive" or (first is not None and not first.reachable):
        return 0
    for i, opt in enumerate(options):
        if opt.backend == settings.backend and settings.model and opt.model and match_model(settings.model,
                                                                                             [opt.model]):
            return i
    return next((i for i, opt in enumerate(options) if opt.backend == settings.backend), 0)


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

    def __init__(self, app: AppBase, *, measure: bool = True) -> None:
        self.app = app
        self.measures = measure
        """Whether :meth:`learn_speed` may make calls (``make_app``'s ``measure_speed``)."""

    def fresh_tail(self, session: Session) -> int:
        """The episodes a leaf pass leaves raw in ``session`` now: the policy's fresh tail, or none for an idle
        session (``planner.idle``, judged at the app's clock), whose summaries cover it to its end."""
        policy = self.app.settings.policy
        return 0 if planner.idle(session, policy, self.app.clock().timestamp()) else policy.fresh_tail

    def preview(self, session_id: str) -> PlanPreview:
        """Every action's plan for the session (from a worker thread: it reads the whole DAG)."""
        return plan_preview(self.app.store, self.app.settings.policy, session_id)

    def engines(self, statuses: BackendStatus | Sequence[BackendStatus] | None) -> tuple[list[EngineOption], int]:
        """The model picker's lines and the one to highlight first (the remembered choice)."""
        settings = self.app.settings
        options = [replace(o, note=" · ".join(n for n in (o.note, way_of(self.app.store, settings, o.model)) if n))
                   if o.backend != "extractive" and o.model else o for o in engine_options(statuses, settings)]
        return options, default_index(options, settings, statuses)

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

    def knows_speed(self, opt: EngineOption | None) -> bool:
        """Whether the estimates for ``opt`` stand on a measured speed (else a guess from the model's size)."""
        return opt is None or opt.backend == "extractive" or engine_estimator(
            self.app.store, self.app.settings, opt).speed.measured

    async def learn_speed(self, opt: EngineOption | None) -> bool:
        """Measure ``opt``'s model as ``backlog`` does before it estimates (a call that lets the model load, then
        one short call), on each host whose speed of it is unknown, and keep it in the file: the dialog's times
        are then the CLI's. True when a speed was learnt."""
        if not self.measures or opt is None or opt.backend == "extractive" or not opt.model or self.knows_speed(opt):
            return False
        store = self.app.store
        if store.readonly:
            return False
        engine = replace(self.app.settings, backend=opt.backend, model=opt.model)
        speeds = await host_speeds(store, engine, store.tokenizer)
        return any(h.speed.measured for h in speeds.hosts)

    async def probe(self) -> list[BackendStatus]:
        """Ask every configured server (Ollama's and OpenAI-compatible ones, the backend's kind first) for
        its models now, at once (the dialog's own, fresh probe)."""
        settings = self.app.settings
        kind = settings.backend if settings.backend != "extractive" else "ollama"
        return list(await asyncio.gather(*(probe_server(s, settings.model if s.backend == kind else None)
                                           for s in settings.configured_servers())))

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
