"""The backlog: every summary due across the file, in an order, and its progress (issue 20).

What is due is planned a session at a time from pages of the sessions table
(``store.sessions.backlog_page``, keyset paged, pre-filtered on the aggregates the store keeps),
so a file of 10k sessions and 1M episodes is never in memory: the plan keeps, per session, only
its counts and the ``(depth, source tokens)`` of each summary it would make (what the estimator
needs to re-time it once the model's real speed is known).

Orders: ``newest`` activity first (the default: what the user is working on), ``oldest``, or
``largest`` (most uncompacted tokens) first. A session's place is decided once, when the plan is
made; the runner re-plans each session when it comes to it, so whatever another process wrote in
between is not made twice, and a second ``compact --all`` after a stopped one resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..config import Policy
from ..store import Session, Store, iso
from .estimate import BRIEF_DEPTH, BRIEF_SOURCE_TOKENS, KINDS, Estimator, Kind, KindPace, Speed, Work, kind_of
from .preview import plan_pass
from .runner import PassKind
from .select import passes_triggers

Order = Literal["newest", "oldest", "largest"]
ORDERS: tuple[Order, ...] = ("newest", "oldest", "largest")
PAGE = 500
"""Sessions read a page at a time."""


def due_sessions(store: Store, policy: Policy, order: Order, pass_: PassKind, *, if_over: int | None = None,
                 min_new: int | None = None) -> Iterator[Session]:
    """Sessions that may have a summary due for ``pass_``, in ``order`` (a superset: the plan decides)."""
    tail = policy.fresh_tail if pass_ in ("leaf", "full") else None
    fanout = policy.condense_fanout if pass_ in ("condense", "full") else None
    idle_before = iso(datetime.now(timezone.utc) - timedelta(seconds=policy.idle_after))
    after: tuple[Any, str] | None = None
    while True:
        page, after = store.sessions.backlog_page(order, fresh_tail=tail, fanout=fanout, if_over=if_over,
                                                  after=after, limit=PAGE, idle_before=idle_before,
                                                  briefs=pass_ == "full")
        for s in page:
            if min_new is None or passes_triggers(s, min_new=min_new):
                yield s
        if after is None:
            return


@dataclass(frozen=True, slots=True)
class BacklogSession:
    """One session's share of the backlog."""

    id: str
    title: str
    items: tuple[tuple[int, int], ...]
    """``(depth, source_tokens)`` of each summary due, in the order they would be made (the session's brief
    last, at ``BRIEF_DEPTH``)."""
    est_seconds: float

    @property
    def summaries(self) -> int:
        return sum(d != BRIEF_DEPTH for d, _ in self.items)

    @property
    def briefs(self) -> int:
        return sum(d == BRIEF_DEPTH for d, _ in self.items)

    @property
    def input_tokens(self) -> int:
        return sum(t for d, t in self.items if d != BRIEF_DEPTH)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summaries": self.summaries, "input_tokens": self.input_tokens,
                "est_seconds": round(self.est_seconds, 1), "briefs": self.briefs}


@dataclass(frozen=True, slots=True)
class Backlog:
    """What ``compact --all`` would do, in order: ``backlog --json`` (ARCHITECTURE §6)."""

    order: Order
    pass_: PassKind
    model: str | None
    speed: Speed
    sessions: tuple[BacklogSession, ...]

    @property
    def summaries(self) -> int:
        return sum(s.summaries for s in self.sessions)

    @property
    def briefs(self) -> int:
        return sum(s.briefs for s in self.sessions)

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.sessions)

    @property
    def est_seconds(self) -> float:
        return sum(s.est_seconds for s in self.sessions)

    def timed(self, estimator: Estimator, model: str | None) -> Backlog:
        """The same plan re-timed (the model's real speed is known once its server answered)."""
        sessions = tuple(replace(s, est_seconds=estimator.total(s.items)) for s in self.sessions)
        return replace(self, speed=estimator.speed, model=model or self.model, sessions=sessions)

    def as_json(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "model": self.model,
            "speed": self.speed.as_json(),
            "summaries": self.summaries,
            "input_tokens": self.input_tokens,
            "est_seconds": round(self.est_seconds, 1),
            "briefs": self.briefs,
            "sessions": [s.as_json() for s in self.sessions],
        }


def plan_backlog(store: Store, policy: Policy, estimator: Estimator, *, order: Order = "newest",
                 pass_: PassKind = "full", if_over: int | None = None, min_new: int | None = None,
                 model: str | None = None) -> Backlog:
    """Every summary due across the file for ``pass_``, session by session in ``order``."""
    out: list[BacklogSession] = []
    for s in due_sessions(store, policy, order, pass_, if_over=if_over, min_new=min_new):
        plan = plan_pass(store, policy, s.id, pass_, episodes=s.episodes)
        if not plan:
            continue
        items = tuple((p.depth, p.source_tokens) for p in plan)
        out.append(BacklogSession(s.id, s.title, items, estimator.total(items)))
    return Backlog(order, pass_, model, estimator.speed, tuple(out))


# ---------------------------------------------------------------- progress of a backlog run
@dataclass(frozen=True, slots=True)
class BacklogProgress:
    """Where a backlog run stands: sessions and summaries done of planned, and the time left
    (the plan's estimate at the run's own pace)."""

    sessions_done: int
    sessions: int
    summaries_done: int
    summaries: int
    left_s: float | None
    elapsed_s: float


EndReason = Literal["done", "budget", "paused", "cancelled", "failed"]


@dataclass(frozen=True, slots=True)
class BacklogEnded:
    """The backlog run stopped: ``reason`` is ``done`` (nothing left of the plan), ``budget``
    (its time was spent: what was in flight finished and was kept), ``paused`` (stopped after the
    call in flight), ``cancelled`` or ``failed``."""

    reason: EndReason
    progress: BacklogProgress


BacklogEvent = BacklogProgress | BacklogEnded


class BacklogTracker:
    """Counts a backlog run's sessions and summaries and times what is left: the plan's summaries (the briefs
    too) not made yet, at the plan's sizes, at the model's speed as now known (``estimator()``: measured once the
    first calls are in, where the plan may have started from a guess), scaled by the run's own pace, kind by kind
    (:class:`~.estimate.KindPace`): the seconds from one summary done to the next (so several at once share
    them), less the model's loads (``loads()``: the seconds of loads seen so far in the job), over the plan's
    estimate of the summaries made, and the model calls each made (:meth:`called`, counted per run).

    The plan is followed session by session: a summary made is the next planned one of its kind in its session,
    taken off what is left and timed as the plan has it (a condensed summary's real sources are not the plan's
    guess of them: were its own size taken off, the difference would stay behind as time left, and a pace measured
    at its own size would not be the pace of the plan's sizes left), and a session finished takes off whatever
    of its plan it did not make. A summary told without its session, or beyond its session's plan, is timed at
    its own size; only the first is taken off what is left."""

    def __init__(self, backlog: Backlog, estimator: Callable[[], Estimator], started: float, *,
                 loads: Callable[[], float] | None = None) -> None:
        self.backlog = backlog
        self.estimator = estimator
        self.shape = estimator().shape
        self.started = started
        self.sessions_done = 0
        self.summaries_done = 0
        self.last_done_at = started
        self._loads = loads or (lambda: 0.0)
        self._loads_before = self._loads()
        self.loaded = 0.0
        """Seconds of model loads until the last summary done (no part of the run's pace)."""
        self.planned = Work()
        self.left: dict[Kind, Work] = {k: Work() for k in KINDS}
        """What is left of the plan, kind by kind."""
        self._waiting: dict[str, dict[Kind, list[tuple[int, int]]]] = {}
        """Each session's planned summaries not made yet, kind by kind, the next last."""
        for s in backlog.sessions:
            waiting = self._waiting.setdefault(s.id, {k: [] for k in KINDS})
            for depth, tokens in reversed(s.items):
                self.planned.add(self.shape, depth, tokens)
                self.left[kind_of(depth)].add(self.shape, depth, tokens)
                waiting[kind_of(depth)].append((depth, tokens))
        self.done = Work()
        self.pace = KindPace(self.shape)
        self._calls: dict[tuple[str, object], int] = {}
        """Model calls made so far for each summary being made, by (run, which summary): a run makes the next
        summary's calls before the one before is written (``Executor.make_in_turn``)."""

    def called(self, run_id: str, summary: object = None) -> None:
        """A model call was made for ``summary`` (its span, or None: the one run ``run_id`` is making)."""
        key = (run_id, summary)
        self._calls[key] = self._calls.get(key, 0) + 1

    def written(self, depth: int, source_tokens: int, now: float, run_id: str | None = None,
                session_id: str | None = None, summary: object = None) -> None:
        """A summary was written in ``session_id``; by ``run_id``, after the calls :meth:`called` counted for it
        (``summary``: its span as the calls were counted under; without ``run_id``: one call)."""
        self.summaries_done += 1
        calls = 1 if run_id is None else self._calls.pop((run_id, summary), 0)
        self._done(depth, source_tokens, now, calls, session_id)

    def brief_written(self, now: float, run_id: str | None = None, session_id: str | None = None) -> None:
        """A session's brief was made (its one call is in the plan; it is not a summary)."""
        if run_id is not None:
            for key in [k for k in self._calls if k[0] == run_id]:
                del self._calls[key]
        self._done(BRIEF_DEPTH, BRIEF_SOURCE_TOKENS, now, 1, session_id)

    def _done(self, depth: int, source_tokens: int, now: float, calls: int, session_id: str | None) -> None:
        self.done.add(self.shape, depth, source_tokens)
        kind, item, take = kind_of(depth), (depth, source_tokens), session_id is None
        waiting = self._waiting.get(session_id, {}).get(kind) if session_id is not None else None
        if waiting:
            item, take = waiting.pop(), True
        if take:
            self.left[kind].add(self.shape, *item, -1)
        loaded = max(0.0, self._loads() - self._loads_before)
        self.pace.add(*item, now - self.last_done_at, calls, loaded - self.loaded)
        self.last_done_at = now
        self.loaded = loaded

    def finished_session(self, session_id: str | None = None) -> None:
        """A session's run ended: whatever of its plan it did not make is no longer left."""
        self.sessions_done += 1
        if session_id is None:
            return
        for kind, waiting in self._waiting.pop(session_id, {}).items():
            for item in waiting:
                self.left[kind].add(self.shape, *item, -1)

    def progress(self, now: float) -> BacklogProgress:
        b = self.backlog
        planned = max(b.summaries, self.summaries_done)
        left: float | None = None
        if sum(w.summaries for w in self.left.values()) > 0:  # the plan's briefs too
            est = self.estimator()
            calls = self.planned.summaries
            per = est.of(self.planned) / calls if calls else 0.0
            left = self.pace.left(est, self.left, now - self.last_done_at, per)
        return BacklogProgress(self.sessions_done, len(b.sessions), self.summaries_done, planned, left,
                               now - self.started)
