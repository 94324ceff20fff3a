"""How long compaction will take: the one estimator the footer, the CLI's progress line,
``compact --dry-run``, ``backlog`` and the run dialog all use (issues 20, 38).

An estimate has two halves:

* **before a run**, a :class:`Speed` of the model: what earlier runs measured of it
  (``model_speed``), else what one short measuring call showed (:func:`measure`, after a call that
  lets a cold model load), else — the server out of reach — a guess from the model's size, which
  says it is one. Never "unknown". A speed is the model's own pace (prompt and answer tokens a
  second, loads apart) and what each call waits beyond it: a queued or remote host reports tiny
  durations for calls that take seconds, and the wall clock counts them. :class:`Shape` says what
  each planned summary asks of the model in the summary format (:class:`Estimator` times it): in
  ``notes``, the default, one call a summary over its key lines (a leaf's, a condensed summary's
  outline) for a short title, and one call a session brief; in ``plain`` and ``sections`` one call
  over the whole material for an answer of the target's size.
* **during a run**, the run's own pace corrects it: the seconds the finished summaries really took
  (a model's load apart) over what they were estimated to take scales what is left (:class:`Pace`
  for one session's run). A backlog keeps that pace for each kind of call apart (:class:`KindPace`:
  a leaf, a condensed summary, a brief read and write different amounts, and a refused answer asked
  again costs one kind more calls than another); a kind not seen yet goes at the run's pace per
  model call, as the plan foresees one call for it.

Speeds are measured per host (``model_speed``'s key has the host). With several Ollama hosts
sharing a job (``hosts.py``), each takes the next summary when it is free, so the work is shared:
each host's throughput is its ``parallel`` slots over its own time for the work, and the job
takes the work over the sum of the live hosts' throughputs (:meth:`Estimator.shared`). Slots
count relative to the first host's: a host's slots share its one model, and one host's estimate
is the per-call model time it always was — one host gives exactly the one-host figures.

Nothing here imports the summariser or the backends; the measuring call takes a backend.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..config import Policy
from ..summarize.prompts import leaf_lines_budget
from ..summarize.speed import ModelSpeed
from ..summarize.summariser import CONDENSED_SHARE, MIN_TARGET, SOURCE_FRACTION
from ..summarize.types import Generation

BRIEF_DEPTH = -1
"""The depth a plan gives a session's brief (it is made from the session's episodes, not a level of the DAG)."""
BRIEF_SOURCE_TOKENS = 350
"""What a brief's call reads, as a plan shows it: its chosen lines, at most a brief's size, and the ask."""
BRIEF_PROMPT_TOKENS = 200
"""What a brief's call has the model read anew (the brief's material and ask; the system text is the leaves'
and the server keeps it): a median 195 of our tokens over the demo data and the shared samples (26 briefs)."""
BRIEF_ANSWER_TOKENS = 45
"""What a brief's call writes: a title and an about line (Qwen2.5-Coder-1.5B on the rig: 40–55 tokens)."""
NOTES_PROMPT_TOKENS = 60
"""What a ``notes`` call has the model read besides the key lines: the template's words around them and the
ask (the system text is the same for every call of a depth, and the server keeps it): 654 tokens of ours for a
median leaf whose lines take 613, over the demo data and the shared samples."""
TITLE_TOKENS = 16
"""What a ``notes`` call writes: a title of at most twelve words (``notes.LEAF_ASK``; 8–20 tokens on the rig)."""
LINES_FILL = 0.97
"""The share of its budget a summary's key lines take (0.92–1.00 for 109 leaves of real chats)."""
PROMPT_OVERHEAD = 400
"""Tokens a ``plain`` or ``sections`` prompt adds around its material (instructions, role prefixes, a leaf's
previous summary clipped)."""
GUESS_PARAMS_B = 3.0
"""The size assumed for a model whose size is unknown (a small local model)."""
GUESS_PROMPT_TPS_PER_B = 120.0
"""A CPU reads about this many prompt tokens a second for each billion fewer parameters (1.5B: 80 tok/s)."""
GUESS_OUTPUT_TPS_PER_B = 18.0
"""… and writes about this many (1.5B: 12 tok/s)."""
GUESS_CALL_S = 1.0
"""What a call waits beyond its model's time before a measurement shows it (HTTP, the chat template)."""
MEASURE_TIMEOUT_S = 90.0
"""The measuring call's limit, model load included."""

Basis = Literal["measured", "probe", "guess", "none"]
Kind = Literal["leaf", "condensed", "brief"]
KINDS: tuple[Kind, ...] = ("leaf", "condensed", "brief")


def kind_of(depth: int) -> Kind:
    """The kind of call a planned summary of ``depth`` is (a brief's depth is :data:`BRIEF_DEPTH`)."""
    return "brief" if depth == BRIEF_DEPTH else "leaf" if depth == 0 else "condensed"


def params_billions(model: str | None, parameter_size: str | None = None) -> float | None:
    """A model's size in billions of parameters, from ``/api/show``'s ``parameter_size``
    (``"1.5B"``, ``"494.03M"``) or its name (``qwen2.5:1.5b``, ``llama3.2:3b-instruct``)."""
    if parameter_size:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([BbMm])\s*", parameter_size)
        if m:
            return float(m.group(1)) / (1000 if m.group(2) in "Mm" else 1)
    if model:
        tag = model.split(":", 1)[1] if ":" in model else model
        m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)([bm])(?![a-z])", tag.lower())
        if m:
            return float(m.group(1)) / (1000 if m.group(2) == "m" else 1)
    return None


@dataclass(frozen=True, slots=True)
class Speed:
    """What an estimate assumes of a model: prompt and output tokens a second, the seconds a call waits
    beyond them (``call_s``: a queue, a remote host, HTTP), and where those came from (``basis``)."""

    prompt_tps: float
    output_tps: float
    call_s: float
    basis: Basis
    calls: int = 0
    """Calls the measurement stands on (0 for a guess)."""
    params_b: float | None = None
    """The model size a guess was made from."""

    @property
    def measured(self) -> bool:
        return self.basis in ("measured", "probe")

    @classmethod
    def of(cls, ms: ModelSpeed, basis: Basis = "measured") -> Speed:
        """The speed the sums ``ms`` measured: the model's pace and the wait a call (the wall clock's)."""
        call = ms.wait_per_call if ms.calls else GUESS_CALL_S
        return cls(ms.prompt_tps, ms.output_tps, call, basis, ms.calls)

    @classmethod
    def guess(cls, model: str | None, parameter_size: str | None = None) -> Speed:
        size = params_billions(model, parameter_size) or GUESS_PARAMS_B
        size = max(0.1, size)
        return cls(GUESS_PROMPT_TPS_PER_B / size, GUESS_OUTPUT_TPS_PER_B / size, GUESS_CALL_S, "guess",
                   params_b=size)

    @classmethod
    def none(cls) -> Speed:
        """The extractive backend: no model, no model time."""
        return cls(0.0, 0.0, 0.0, "none")

    def call_seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        if self.basis == "none":
            return 0.0
        return self.call_s + prompt_tokens / self.prompt_tps + output_tokens / self.output_tps

    def describe(self) -> str:
        """For people: where the figures come from."""
        rates = f"{self.prompt_tps:.0f} tok/s in, {self.output_tps:.0f} tok/s out"
        if self.measured and self.call_s >= 0.05:
            rates += f", {self.call_s:.1f} s a call waiting"
        if self.basis == "measured":
            return f"{rates}, measured over {self.calls} call{'s' * (self.calls != 1)}"
        if self.basis == "probe":
            return f"{rates}, from one short measuring call"
        if self.basis == "guess":
            return f"a guess from the model's size ({self.params_b:g}B; {rates}): not measured yet"
        return "no model time (extractive)"

    def as_json(self) -> dict[str, Any]:
        """``backlog --json``'s ``speed``."""
        return {"prompt_tps": round(self.prompt_tps, 1), "output_tps": round(self.output_tps, 1),
                "call_s": round(self.call_s, 3), "measured": self.measured}


class SpeedSource(Protocol):
    """What the estimator reads measured speeds from (``store.speeds``)."""

    def get(self, backend: str, model: str | None, host: str | None = None) -> ModelSpeed: ...


def known_speed(speeds: SpeedSource, backend: str, model: str | None, host: str | None = None) -> Speed | None:
    """What earlier runs measured of ``model`` on ``host`` (``x`` and ``x:latest`` are one model;
    a speed measured without a host stands for any host); None: never."""
    if backend == "extractive":
        return Speed.none()
    if not model:
        return None
    for name in dict.fromkeys((model, model if ":" in model else f"{model}:latest")):
        ms = speeds.get(backend, name, host)
        if ms.measured:
            return Speed.of(ms)
    return None


def speed_offline(speeds: SpeedSource, backend: str, model: str | None, host: str | None = None) -> Speed:
    """The measured speed, else a guess from the model's size (no call made)."""
    return known_speed(speeds, backend, model, host) or Speed.guess(model)


@dataclass(frozen=True, slots=True)
class HostSpeed:
    """One live host of a job as the estimate sees it: its speed of the model and its slots."""

    host: str
    speed: Speed
    parallel: int = 1


def describe_hosts(hosts: Sequence[HostSpeed]) -> str:
    """For people: where the figures come from (each host's, when several share the work)."""
    if len(hosts) == 1:
        return hosts[0].speed.describe()
    return f"shared among {len(hosts)} hosts: " + "; ".join(f"{h.host}: {h.speed.describe()}" for h in hosts)


class MeasuringBackend(Protocol):
    """What :func:`measure` needs of a backend: a check, and calls whose answers carry their figures."""

    model: str | None

    async def check(self) -> None: ...

    async def generate(self, system: str, prompt: str, *, temperature: float, num_predict: int) -> Generation: ...


MEASURE_TEXT = (
    "The user asked why the nightly build failed. The assistant read the log, found that the test "
    "runner timed out while fetching a fixture from the network, and proposed caching the fixture "
    "in the repository. The user agreed, the assistant changed tests/conftest.py to read the cached "
    "copy, and the build passed on the next run. They decided to keep the network test behind a flag. "
)


WARM_SYSTEM = "Answer with one word."
WARM_PROMPT = "Say ready."
"""The call :func:`measure` makes first, to load (or wake) the model: its time is not a measurement."""


async def measure(backend: MeasuringBackend, *, timeout_s: float = MEASURE_TIMEOUT_S) -> ModelSpeed | None:
    """A never-used model's speed, from one short call (a few hundred tokens in, 32 out) made after a
    one-token call that lets the model load: a cold model's first call pays its load (Ollama says how long;
    another server only takes longer), and a speed is the warm model's. None when the server cannot be asked
    (the caller then guesses). The backend is not closed."""
    try:
        async with asyncio.timeout(timeout_s):
            await backend.check()
            await backend.generate(WARM_SYSTEM, WARM_PROMPT, temperature=0.0, num_predict=1)
            prompt = "Summarise in one sentence:\n\n" + MEASURE_TEXT * 3
            gen = await backend.generate("You summarise conversations in one sentence.", prompt,
                                         temperature=0.0, num_predict=32)
    except Exception:  # unreachable, missing model, a timeout: the caller guesses and says so
        return None
    got = ModelSpeed.of_call(gen, gen.prompt_tokens)
    return got if got.measured else None


def normal_target(policy: Policy, depth: int, source_tokens: int) -> int:
    """A summary's normal-tier target, as the summariser sets it (``summariser.targets_for``): a leaf at most a
    quarter of its sources, a condensed summary half of them, neither above its depth's target."""
    if depth == 0:
        target = min(policy.leaf_target_tokens, max(MIN_TARGET, source_tokens // SOURCE_FRACTION))
    else:
        target = min(policy.condensed_target_tokens,
                     max(MIN_TARGET, source_tokens * CONDENSED_SHARE[0] // CONDENSED_SHARE[1]))
    return max(1, source_tokens - 1) if target >= source_tokens else target


def expected_size(policy: Policy, depth: int, source_tokens: int) -> int:
    """The size a planned summary of ``depth`` over ``source_tokens`` is expected to have (what a plan gives the
    summaries above it); a brief (``BRIEF_DEPTH``) is a title and an about line."""
    if depth == BRIEF_DEPTH:
        return BRIEF_ANSWER_TOKENS
    target = policy.leaf_target_tokens if depth == 0 else policy.condensed_target_tokens
    return max(1, min(target, max(MIN_TARGET, source_tokens // SOURCE_FRACTION), max(1, source_tokens - 1)))


@dataclass(frozen=True, slots=True)
class Shape:
    """What a summary format asks of the model for one planned summary: the tokens its call has the model read
    anew and the tokens it writes (one call a summary in every format; a retry is not foreseen).

    * ``notes`` (the default): the key lines, which fill their budget (its target less a title's,
      ``prompts.leaf_lines_budget``: :data:`LINES_FILL`), the words around them and the ask; the answer a title;
    * ``plain`` and ``sections``: the whole material and the instructions; the answer as long as the target;
    * a brief, in any format: its material and ask; the answer a title and an about line."""

    policy: Policy
    summary_format: str = "notes"

    def call(self, depth: int, source_tokens: int) -> tuple[int, int]:
        """(prompt tokens, answer tokens) of the call that makes a summary of ``depth`` over ``source_tokens``."""
        if depth == BRIEF_DEPTH:
            return BRIEF_PROMPT_TOKENS, BRIEF_ANSWER_TOKENS
        if self.summary_format == "notes":
            target = normal_target(self.policy, depth, source_tokens)
            lines = min(source_tokens, int(leaf_lines_budget(target) * LINES_FILL))
            return NOTES_PROMPT_TOKENS + lines, TITLE_TOKENS
        return source_tokens + PROMPT_OVERHEAD, expected_size(self.policy, depth, source_tokens)


class Estimator:
    """Seconds of model time per planned summary, at one :class:`Speed`, for one summary format;
    made with :meth:`shared`, the time of the work shared among several hosts (module docstring)."""

    def __init__(self, speed: Speed, policy: Policy, summary_format: str = "notes") -> None:
        self.speed = speed
        """The first host's speed (what ``backlog --json``'s ``speed`` shows)."""
        self.policy = policy
        self.shape = Shape(policy, summary_format)
        self.hosts: tuple[HostSpeed, ...] = ()
        """Two or more live hosts sharing the work; empty: one host, at :attr:`speed`."""

    @classmethod
    def shared(cls, hosts: Sequence[HostSpeed], policy: Policy, summary_format: str = "notes") -> Estimator:
        """The estimator of a job whose live ``hosts`` (the first first) share its work."""
        est = cls(hosts[0].speed, policy, summary_format)
        if len(hosts) > 1:
            est.hosts = tuple(hosts)
        return est

    def _share(self, alone: Sequence[float]) -> float:
        """The time of work that takes ``alone[i]`` seconds on host ``i`` by itself, shared."""
        first = max(1, self.hosts[0].parallel)
        rate = sum(max(1, h.parallel) / first / t for h, t in zip(self.hosts, alone, strict=True) if t > 0)
        return 1.0 / rate if rate > 0 else 0.0

    def _seconds_at(self, speed: Speed, depth: int, source_tokens: int) -> float:
        return speed.call_seconds(*self.shape.call(depth, source_tokens))

    def seconds(self, depth: int, source_tokens: int) -> float:
        """One summary of ``depth`` over ``source_tokens``."""
        if self.hosts:
            return self._share([self._seconds_at(h.speed, depth, source_tokens) for h in self.hosts])
        return self._seconds_at(self.speed, depth, source_tokens)

    def total(self, items: Iterable[tuple[int, int]]) -> float:
        """The sum over ``(depth, source_tokens)`` pairs (shared among the hosts as one piece of work)."""
        if self.hosts:
            work = Work()
            for d, t in items:
                work.add(self.shape, d, t)
            return self.of(work)
        return sum(self.seconds(d, t) for d, t in items)

    def _of_at(self, s: Speed, work: Work) -> float:
        if s.basis == "none" or not work.summaries:
            return 0.0
        return work.summaries * s.call_s + work.prompt / s.prompt_tps + work.output / s.output_tps

    def of(self, work: Work) -> float:
        """:meth:`total` of the summaries ``work`` sums up (the estimate is linear in them)."""
        if self.hosts:
            return self._share([self._of_at(h.speed, work) for h in self.hosts])
        return self._of_at(self.speed, work)


@dataclass(slots=True)
class Work:
    """Summaries summed as the estimate sees them: how many (a call each), their prompts' and their answers'
    expected tokens. A backlog re-times what is left at a new speed from these three numbers."""

    summaries: int = 0
    prompt: int = 0
    output: int = 0

    def add(self, shape: Shape, depth: int, source_tokens: int, times: int = 1) -> None:
        """A summary of ``depth`` over ``source_tokens``, ``times`` over (its call made again after a refused
        answer; -1 takes one away)."""
        prompt, output = shape.call(depth, source_tokens)
        self.summaries += times
        self.prompt += times * prompt
        self.output += times * output


@dataclass(slots=True)
class Pace:
    """The run's own pace: seconds the finished summaries took against their estimate."""

    est_done: float = 0.0
    spent: float = 0.0

    def add(self, estimated: float, took: float) -> None:
        self.est_done += estimated
        self.spent += took

    @property
    def ratio(self) -> float:
        """Seconds taken over seconds estimated, once a summary has finished (1 before). No prior
        is mixed in: a guessed speed can be 50x off (a GPU, a fake server), and weighing it in kept
        the time left that far off for many summaries (bench_backlog.py (c))."""
        if self.est_done <= 0 or self.spent <= 0:
            return 1.0
        return self.spent / self.est_done

    def left(self, estimated_left: float, in_flight: float = 0.0, current: float = 0.0) -> float:
        """What is left: ``estimated_left`` (the summary in flight included, whose estimate is
        ``current``) at this run's pace, less what the one in flight has run for already (never
        below the rest without it)."""
        scaled = estimated_left * self.ratio
        rest = max(0.0, estimated_left - current) * self.ratio
        return max(rest, scaled - in_flight)


class KindPace:
    """A backlog run's own pace, kind by kind (:data:`KINDS`): the seconds the finished summaries of a kind took
    over their estimate scales what is left of that kind. A kind not finished yet goes at the run's pace per
    model call (all seconds spent over the estimate of every call the finished summaries made): the plan foresees
    one call a summary, and a kind whose answers were refused and asked again (a leaf's title) says nothing of
    how often another kind's are. Estimates are taken at the estimator's speed of the moment (it is measured as
    the run goes), from the :class:`Work` kept here."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.done: dict[Kind, Work] = {k: Work() for k in KINDS}
        self.spent: dict[Kind, float] = dict.fromkeys(KINDS, 0.0)
        self.called = Work()
        """Every call the finished summaries made, each at its summary's estimate."""
        self.first: Kind | None = None

    def add(self, depth: int, source_tokens: int, took: float, calls: int = 1, loaded: float = 0.0) -> None:
        """A summary of ``depth`` finished ``took`` seconds after the one before, after ``calls`` model calls,
        with ``loaded`` seconds of model loads seen in between (no part of a pace). A load longer than ``took``
        was not paid in it (the first call of a server that does not report its load is judged by the next
        call): it comes off the first kind finished, whose first call paid it."""
        kind = kind_of(depth)
        self.first = self.first or kind
        self.done[kind].add(self.shape, depth, source_tokens)
        self.called.add(self.shape, depth, source_tokens, times=calls)
        if loaded <= took:
            self.spent[kind] += took - loaded
        else:
            self.spent[kind] += took
            self.spent[self.first] = max(0.0, self.spent[self.first] - loaded)

    def per_call(self, est: Estimator) -> float:
        """Seconds taken over seconds estimated, per model call made (1 before any)."""
        return Pace(est.of(self.called), sum(self.spent.values())).ratio

    def ratio(self, est: Estimator, kind: Kind) -> float:
        """Seconds taken over seconds estimated for ``kind``: its own once one of it took time, else :meth:`per_call`."""
        estimated, spent = est.of(self.done[kind]), self.spent[kind]
        if estimated > 0 and spent > 0:
            return spent / estimated
        return self.per_call(est)

    def left(self, est: Estimator, rest: Mapping[Kind, Work], in_flight: float = 0.0, current: float = 0.0) -> float:
        """``rest`` (what is left of each kind) at this run's pace, kind by kind, less what the summary in
        flight (estimated ``current``, at the average pace of what is left) has run for already (never below
        the rest without it)."""
        estimated = scaled = 0.0
        for kind in KINDS:
            left = max(0.0, est.of(rest[kind]))
            estimated += left
            scaled += left * self.ratio(est, kind)
        if estimated <= 0:
            return 0.0
        without = scaled * max(0.0, estimated - current) / estimated
        return max(without, scaled - in_flight)


def seconds_left(est_total: float | None, planned: int, done: int, spent: float, in_flight: float) -> float | None:
    """A single run's time left (the footer): ``est_total`` for ``planned`` summaries, ``done``
    of which took ``spent`` seconds; the current one has run ``in_flight``. None: nothing left,
    or neither an estimate nor a finished summary to go by."""
    if planned <= done:
        return None
    if est_total is None:
        if not done:
            return None
        per = spent / done
        return max(per * (planned - done - 1), per * (planned - done) - in_flight)
    per = est_total / planned
    pace = Pace(per * done, spent)
    return pace.left(per * (planned - done), in_flight, per)
