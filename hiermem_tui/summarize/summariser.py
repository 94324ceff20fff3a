"""The three-tier summariser of ARCHITECTURE §4 (docs/ARCHITECTURE.md): normal → aggressive → fallback.

It never fails because of the *model*: an answer that is empty, only thinking, looping,
echoing the prompt, continuing the chat or inventing identifiers is *rejected* (the reason is
kept, see ``acceptance.py``) and the next tier is tried; the last tier is the deterministic
extractive digest. It does fail when the *server* goes away: connection failures are retried
with backoff, and after ``max_connection_failures`` in a row the run is aborted (RunAborted)
instead of quietly filling the store with fallbacks. A missing model (ModelMissing) propagates.

A model's answer costs a CPU user minutes, so none is thrown away for its length:

* targets scale with the input: normal = min(the depth's target, ¼ of the source tokens,
  at least ``MIN_TARGET``), aggressive = half of that, fallback = the normal target;
* the model is asked in bullets and words (or in sections whose schema bounds each list and
  string), and ``num_predict`` is the target plus a small margin;
* an answer that passes the content rules but runs past its target, or that the server cut
  off, is clipped at a sentence or bullet boundary and kept, recorded as ``clipped``; a second
  model call is made only when the content rules fail (or the call gave nothing);
* the aggressive retry shares the normal call's system prompt, previous summary and material
  (the material is fitted once, for the larger budget), so the server's prompt cache serves
  all but the last lines;
* every prompt fits the model's context with its ``num_predict`` and any thinking headroom;
* pinned episodes are appended verbatim after the text and do not count against the target.

Fidelity (``fidelity.py``): the accepted text — the model's own words — is measured against
its sources, and the names it lost (most important first) become the summary's *keywords*:
stored beside the text, shown and searchable, never appended to it, so retention stays a
figure about the model and the next condensation is given only what the model wrote.
"""

from __future__ import annotations

import asyncio
import functools
import time
from datetime import datetime, timezone
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from hiermem_tui.summarize import acceptance, keylines, notes, sections, titles, writes
from hiermem_tui.summarize import brief as brief_
from hiermem_tui.summarize import brief_writes
from hiermem_tui.summarize import prompts as prompts_
from hiermem_tui.summarize.keylines import EXTRACTIVE_VERSION, QUOTES_VERSION
from hiermem_tui.summarize.extractive import clip_to, extractive_digest
from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.summarize.fidelity import key_count, keywords_for, measure, read_sources
from hiermem_tui.summarize.prompts import (
    NORMAL_TEMPERATURE,
    RETRY_HINTS,
    SECTIONS_ASK,
    Prompt,
    PromptSet,
    answer_budget,
    build_part_prompt,
    build_prompt,
    fmt_time,
    leaf_lines_budget,
    num_predict_for,
    uses_sections,
)
from hiermem_tui.summarize.speed import CallClock, ModelSpeed
from hiermem_tui.summarize.types import (
    Backend,
    BackendUnavailable,
    CallRecord,
    EventCallback,
    Generation,
    ModelError,
    Rejection,
    RunAborted,
    ServerError,
    SourceItem,
    StreamProgress,
    SummaryEvent,
    SummaryRequest,
    SummaryResult,
    Tier,
    BriefResult,
)
from hiermem_tui.summarize.text import boundaries, drop_unfinished
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.words import counted

Sleep = Callable[[float], Awaitable[None]]
MIN_TARGET = 24
"""No normal target is smaller than this (tiny inputs still get a readable sentence)."""
SOURCE_FRACTION = 4
"""A summary's target is at most 1/SOURCE_FRACTION of its source tokens."""
QUOTE_SHARE = 3
"""A model's titles are followed by the chat's key lines (``keylines``) in what the titles left of the
target, at least 1/QUOTE_SHARE of it (so a summary stays under 4/3 of its target, well under its input)."""
CONDENSED_SHARE = (1, 2)
"""A condensed summary's target, as a fraction of its sources' tokens (then capped by the depth's target,
``condensed_target_tokens``): an outline at least twice shorter than what it stands for."""
DEFAULT_CONTEXT = 8192
"""Assumed context of a model that does not report one."""
CONTEXT_SLACK = 64
PROMPT_MARGIN = 1.10  # the model's tokenizer may need more tokens than cl100k
PIN_HEADER = "Pinned (kept verbatim):"
ALL_EXCLUDED = "(The episodes here are excluded from summaries by the user.)"
CLIPPED = "clipped"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
TIERS_ORDER: dict[str, int] = {"normal": 0, "aggressive": 1, "fallback": 2}


@dataclass(frozen=True, slots=True)
class Targets:
    """Token targets of one summary, per tier (the text before any pinned block)."""

    normal: int
    aggressive: int
    fallback: int


def targets_for(request: SummaryRequest, pinned_tokens: int = 0) -> Targets:
    """See the module docstring: scaled with the input, never above the depth's target. A condensed
    summary's target is ``CONDENSED_SHARE`` of its sources."""
    source = max(1, request.source_tokens - pinned_tokens)
    normal = min(request.target_tokens, max(MIN_TARGET, source // SOURCE_FRACTION))
    if request.depth > 0:
        normal = min(request.target_tokens, max(MIN_TARGET, source * CONDENSED_SHARE[0] // CONDENSED_SHARE[1]))
    if normal >= source:
        normal = max(1, source - 1)
    aggressive = max(1, min(normal, max(12, normal // 2)))
    return Targets(normal, aggressive, normal)


def clip_at_boundary(text: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    """``text`` within ``max_tokens``, cut after the last whole sentence or line that fits
    (or at a word, marked with …, when that would drop more than half)."""
    if tokenizer.count(text) <= max_tokens:
        return text
    cut = clip_to(text, max_tokens, tokenizer)
    ends = boundaries(cut)
    if ends and ends[-1] >= len(cut) // 2:
        return cut[: ends[-1] + 1].strip()
    space = cut.rfind(" ")
    short = (cut[:space] if space > len(cut) // 2 else cut).rstrip(" ,;:")
    return clip_to(short + "…", max_tokens, tokenizer)


def pinned_block(request: SummaryRequest) -> str:
    """The verbatim pinned episodes, one per paragraph, labelled with seq and role."""
    if not request.pinned:
        return ""
    parts = [f"{p.label} {p.role or 'unknown'}: {p.text}" for p in request.pinned]
    return PIN_HEADER + "\n" + "\n".join(parts)


def strip_pinned(text: str) -> str:
    """A summary's own text, without its pinned block (a condensed prompt re-adds pins itself)."""
    at = text.find("\n\n" + PIN_HEADER + "\n")
    if at >= 0:
        return text[:at]
    return "" if text.startswith(PIN_HEADER + "\n") else text


def measure_against(text: str, sources: Sequence[SourceItem], *, key: int | None = None, context: str = "") -> Fidelity:
    """``text`` measured against what a summariser was given; the sources' times (as the
    prompt shows them) and ``context`` (a leaf's previous summary, which its prompt shows) may
    be quoted without counting as invented. ``key``: how many key names it is judged on
    (default: by the length of ``text``)."""
    known = " ".join(f"{fmt_time(s.start_at)} {fmt_time(s.end_at)}" for s in sources)
    return measure(text, source_pairs(sources), known=f"{known}\n{context}", key=key)


def source_pairs(sources: Sequence[SourceItem]) -> tuple[tuple[str, bool], ...]:
    """``(text, is_tool_output)`` of each source: what fidelity reads (and caches by)."""
    return tuple((s.text, s.role == "tool") for s in sources)


@dataclass(slots=True)
class _Attempts:
    """Book-keeping for one summarise() call."""

    calls: int = 0
    llm_seconds: float = 0.0
    rejections: list[Rejection] = field(default_factory=list)
    records: list[CallRecord] = field(default_factory=list)

    def reject(self, tier: str, reason: str, detail: str = "", gen: Generation | None = None) -> None:
        seconds = gen.seconds if gen is not None else 0.0
        self.rejections.append(Rejection(tier, reason, detail or acceptance.REASONS.get(reason, reason), seconds))
        if gen is not None and self.records:
            self.records[-1] = replace(self.records[-1], outcome=reason)


@dataclass(slots=True)
class _Accepted:
    text: str
    gen: Generation
    prompt: Prompt
    trimmed: str | None
    fidelity: Fidelity | None = None
    """The text measured when it was judged (None: measured when the summary is finished)."""


Tail = Callable[[SummaryRequest], tuple[str, Tier, int, str, "_Accepted | None"]]
"""What is left of a summary once its calls are over: (text, tier, target, prompt version, the accepted answer)
for the request it is finished with."""


@dataclass(frozen=True, slots=True)
class Answered:
    """A summary whose model calls are over (:meth:`Summariser.answer`); :meth:`finish` works out the rest."""

    request: SummaryRequest
    _finish: Callable[[SummaryRequest], SummaryResult]

    def finish(self, request: SummaryRequest | None = None) -> SummaryResult:
        """The summary. ``request``: the same sources with the previous leaf as the store has it now (a leaf
        answered while the one before it was still being finished); by default the request it was asked of."""
        return self._finish(self.request if request is None else request)


class Summariser:
    """Makes one summary at a time; safe to share between concurrent tasks of one run.

    The consecutive-connection-failure counter is shared by every call on this instance
    (parallel summaries hitting a dead server add up) and is reset by any answer from the
    server, successful or a model error: both prove the server is reachable.

    ``sections``: ask for sectioned answers (a JSON schema as Ollama's ``format``) when the
    backend's server supports structured outputs and the prompt template places ``{ask}``.
    """

    def __init__(
        self,
        backend: Backend,
        tokenizer: Tokenizer,
        *,
        extractive_fallback: bool = True,
        max_connection_failures: int = 3,
        retry_backoff_s: Sequence[float] = (0.5, 1, 2),
        sleep: Sleep = asyncio.sleep,
        prompts: PromptSet | None = None,
        summary_format: str = "plain",
        ways: dict[str, str] | None = None,
        summary_way: str = "measured",
    ) -> None:
        self.backend = backend
        self.tokenizer = tokenizer
        self.extractive_fallback = extractive_fallback
        self.max_connection_failures = max(1, max_connection_failures)
        self.retry_backoff_s = tuple(retry_backoff_s) or (0.0,)
        self.prompts = prompts or PromptSet()
        self.summary_format = summary_format
        """``notes`` (a summary made in parts, one call each: ``notes.py``), ``sections`` or ``plain``."""
        self.sections = self.summary_format == "sections"
        self.ways = dict(ways or {})
        """How each model summarises in ``notes`` as measured (model → ``titles`` or ``writes``: ``calibrate.py``)."""
        self.summary_way = summary_way
        """``measured`` (each model as ``ways`` says), or ``titles`` / ``writes`` for every model."""
        self._sleep = sleep
        self._connection_failures = 0

    @property
    def connection_failures(self) -> int:
        """Connection failures in a row so far (0 after any answer from the server)."""
        return self._connection_failures

    @property
    def use_notes(self) -> bool:
        """Summaries made in parts now: asked for, and the templates place the material and the ask."""
        return self.summary_format == "notes" and all(
            uses_sections(self.prompts.get(d, a)) for d in (0, 1) for a in (False, True))

    @property
    def way(self) -> str:
        """How the model summarises in ``notes``: ``writes`` (the model writes the summary, ``writes.py``) or
        ``titles`` (a title over the chat's key lines): the override, else as the model was measured."""
        if self.summary_way in writes.WAYS:
            return self.summary_way
        return writes.way_of(self.ways, self.backend.model)

    @property
    def shows_prior(self) -> bool:
        """A leaf's prompt shows the previous leaf's text (``plain`` and ``sections`` from a model): a leaf is
        asked only once the one before it is finished."""
        return not self.use_notes and self.backend.name != "extractive"

    @property
    def use_sections(self) -> bool:
        """Sectioned answers now: asked for, and the server takes a schema."""
        return self.sections and bool(getattr(self.backend, "structured", False))

    # ------------------------------------------------------------------ budgets
    def context_limit(self) -> int:
        return getattr(self.backend, "context_limit", None) or DEFAULT_CONTEXT

    def thinking_headroom(self) -> int:
        headroom = getattr(self.backend, "thinking_headroom", None)
        return int(headroom()) if callable(headroom) else 0

    def max_prompt_tokens(self, num_predict: int) -> int:
        """Prompt tokens (ours) that fit the model's context with ``num_predict`` (and the
        backend's thinking headroom) to spare."""
        answer = num_predict + self.thinking_headroom()
        return max(64, int((self.context_limit() - answer - CONTEXT_SLACK) / PROMPT_MARGIN))

    # ------------------------------------------------------------------ ahead of a call
    async def prepare(self, request: SummaryRequest) -> None:
        """Work out, while the model answers another call, what :meth:`summarise` of ``request`` needs before its
        first call: each message's lines, the sources' names (fidelity's), the key lines and the first prompt,
        counted and encoded as the backend will. Nothing is decided here and nothing is returned: each of those is
        kept where it is worked out (``kept.py``, the tokenizer, ``fidelity.read_sources``) and found there when
        the summary is made, so the next request is ready when the current answer ends. In small steps, so an
        answer that arrives meanwhile waits for one step at most."""
        if not request.sources or self.backend.name == "extractive":
            return
        for i, source in enumerate(request.sources):
            if self.use_notes and request.depth == 0:
                keylines.message_lines(source, i)
            else:  # a plain or sectioned prompt shows the previous summary (not known yet): its sources, counted
                self.tokenizer.count(source.text)
            await asyncio.sleep(0)
        read_sources(source_pairs(request.sources))
        if not self.use_notes:
            return
        await asyncio.sleep(0)
        pins = pinned_block(request)
        t = targets_for(request, self.tokenizer.count(pins) if pins else 0)
        lines = keylines.key_lines(request.sources, leaf_lines_budget(t.normal), self.tokenizer)
        parts = notes.parts_for(request.sources, request.depth, lines)
        if not parts:
            return
        prompt = build_part_prompt(request.depth, parts[0], prompts=self.prompts, tokenizer=self.tokenizer)
        await asyncio.sleep(0)
        ready = getattr(self.backend, "prepare", None)
        if callable(ready):
            ready(prompt.system, prompt.prompt)
        else:
            self.tokenizer.count(prompt.system)
            self.tokenizer.count(prompt.prompt)

    # ------------------------------------------------------------------ the tiers
    async def summarise(self, request: SummaryRequest, *, on_event: EventCallback | None = None) -> SummaryResult:
        """One summary for ``request``, by the first tier that gives an acceptable answer.

        Raises RunAborted (server gone), ModelMissing (model gone), or ModelError only
        when ``extractive_fallback`` is off and both model tiers failed.
        """
        return (await self.answer(request, on_event=on_event)).finish()

    async def answer(self, request: SummaryRequest, *, on_event: EventCallback | None = None) -> Answered:
        """:meth:`summarise` up to its last model call: every call and every check that decides whether another
        call is made (the tiers, the title and content checks, the invented names). What is left, worked out
        without the model (the summary's text, its key lines, its fidelity, its figures), is
        :meth:`Answered.finish`: a caller may have the model answer another summary meanwhile. Raises as
        :meth:`summarise` does."""
        started = time.monotonic()
        state = _Attempts()
        pins = pinned_block(request)
        t = targets_for(request, self.tokenizer.count(pins) if pins else 0)

        def finishing(text: str, tier: Tier, target: int, version: str, got: _Accepted | None) -> Answered:
            return self._answered(request, started, lambda req: (text, tier, target, version, got), pins, state)

        if not request.sources:  # every episode here is excluded: nothing may be given to a model
            return finishing(ALL_EXCLUDED, "normal", t.normal, EXTRACTIVE_VERSION, None)
        if self.backend.name == "extractive":
            def digest(req: SummaryRequest) -> tuple[str, Tier, int, str, _Accepted | None]:
                text = self._digest(req, t.normal)
                shorter: Tier = "normal" if self.tokenizer.count(text) < req.source_tokens else "fallback"
                if shorter == "fallback":
                    state.reject("normal", "not_shorter", "the extractive digest is not shorter than its input")
                return text, shorter, t.normal, EXTRACTIVE_VERSION, None
            return self._answered(request, started, digest, pins, state)
        if self.use_notes and self.way == "writes":
            return self._answered(request, started, await self._written(request, t, state, on_event), pins, state)
        if self.use_notes:
            return self._answered(request, started, await self._in_parts(request, t, state, on_event), pins, state)
        # one material for both tiers: fitted for the larger answer budget
        max_prompt = self.max_prompt_tokens(num_predict_for(t.normal, sections=self.use_sections))
        tiers: tuple[tuple[Tier, int], ...] = (("normal", t.normal), ("aggressive", t.aggressive))
        for tier, target in tiers:
            why = state.rejections[-1].reason if state.rejections else None
            got = await self._attempt(request, tier, target, max_prompt, state, on_event, why)
            if got is not None:
                return finishing(got.text, tier, target, got.prompt.version, got)
        return self._answered(request, started, self._fallback(t, state), pins, state)

    def _fallback(self, t: Targets, state: _Attempts) -> Tail:
        """The extractive digest at the fallback tier, once the model tiers gave nothing acceptable (raises
        ModelError instead when ``extractive_fallback`` is off)."""
        if not self.extractive_fallback:
            raise ModelError("no acceptable summary from the model: " + "; ".join(self._notes(state)))
        return lambda req: (self._digest(req, t.fallback), "fallback", t.fallback, EXTRACTIVE_VERSION, None)

    def _answered(self, request: SummaryRequest, started: float, tail: Tail, pins: str, state: _Attempts) -> Answered:
        """What :meth:`answer` hands back: the calls are over; ``tail`` works out the text to keep. Its seconds
        are the calls' and the finishing's, not the time it waited to be finished."""
        spent = time.monotonic() - started

        def finish(req: SummaryRequest) -> SummaryResult:
            began = time.monotonic()
            text, tier, target, version, got = tail(req)
            return self._finish(text, tier, target, version, got, req, pins, began - spent, state)

        return Answered(request, finish)

    async def _in_parts(self, request: SummaryRequest, t: Targets, state: _Attempts,
                        on_event: EventCallback | None) -> Tail:
        """A summary made in parts (``notes.py``: one, titled from its key lines — a condensed summary's the
        outline of its sources): a call for its title, judged by the title checks and retried once at the
        aggressive tier (same system text and material: the prompt cache serves them), else it has no title
        and is its extractive digest. Its text is the title, then the key lines (the tail, once the calls are
        over)."""
        leaf_lines = keylines.key_lines(request.sources, leaf_lines_budget(t.normal), self.tokenizer)
        parts = notes.parts_for(request.sources, request.depth, leaf_lines)
        texts: list[str] = []
        worst: Tier = "normal"
        gens: list[Generation] = []
        version = ""
        for part in parts:
            text, tier, gen, version = await self._part(request, part, state, on_event)
            if gen is not None:
                gens.append(gen)
            if TIERS_ORDER[tier] > TIERS_ORDER[worst]:
                worst = tier
            texts.append(notes.gist(text))
        if not gens:  # every part fell back: the digest of the whole, as any fallback
            return lambda req: (self._digest(req, t.fallback), "fallback", t.fallback, EXTRACTIVE_VERSION, None)

        def finish(req: SummaryRequest) -> tuple[str, Tier, int, str, _Accepted | None]:
            text, trimmed = notes.join(texts), None
            if self.tokenizer.count(text) > t.normal:
                text, trimmed = clip_at_boundary(text, t.normal, self.tokenizer), CLIPPED
            total = Generation(text, sum(g.prompt_eval_count or 0 for g in gens), sum(g.eval_count or 0 for g in gens),
                               sum(g.seconds for g in gens), prompt_tokens=sum(g.prompt_tokens or 0 for g in gens))
            # the lines fill what the titles left: a leaf's title (~15 tokens) leaves more than the 40 it may take,
            # so its lines are those the model read and a line or two more
            budget = max(t.normal - self.tokenizer.count(text), t.normal // QUOTE_SHARE)
            lines = keylines.key_lines(req.sources, budget, self.tokenizer, keep=leaf_lines)
            kept = version
            if lines:
                text, kept = f"{text}\n{keylines.HEAD}\n{lines}", version + QUOTES_VERSION
            # kept and lost names are the summary's, as a reader gets it (a title cannot hold a leaf's key names:
            # measured on titles alone, every summary was flagged and shown as "leaving out" names its lines hold)
            fid = measure_against(text, req.sources, key=key_count(t.normal))
            got = _Accepted(text, total, Prompt("", "", kept, NORMAL_TEMPERATURE, 0), trimmed, fid)
            return text, worst, t.normal, kept, got

        return finish

    async def _written(self, request: SummaryRequest, t: Targets, state: _Attempts,
                       on_event: EventCallback | None) -> Tail:
        """A summary the model writes (``writes.py``): a leaf from its key lines and its stretch, a condensed
        summary from its sources; refused for what it says (``writes.judge``) or for a name or number in no
        source (``writes.invented``), asked again once at the aggressive tier on the same prefix, else the
        extractive digest (the key lines) at the fallback tier."""
        lines = keylines.key_lines(request.sources, leaf_lines_budget(t.normal), self.tokenizer) \
            if request.depth == 0 else ""
        shown = writes.shown(request, lines, t.normal, prompts=self.prompts, tokenizer=self.tokenizer,
                             max_prompt_tokens=self.max_prompt_tokens(answer_budget(t.normal)))
        tiers: tuple[tuple[Tier, int], ...] = (("normal", t.normal), ("aggressive", t.aggressive))
        for tier, target in tiers:
            aggressive = tier == "aggressive"
            why = RETRY_HINTS.get(state.rejections[-1].reason, "") if aggressive and state.rejections else ""
            prompt = writes.build(request, shown, lines, target, aggressive=aggressive, why=why, prompts=self.prompts)
            try:
                gen = await self._call(prompt, tier, target, state, on_event)
            except ModelError as exc:
                state.reject(tier, "error", str(exc))
                continue
            text = acceptance.strip_preamble(gen.text)
            broken = writes.judge(text, gen, prompt, request.sources, request.depth)
            if broken is not None:
                state.reject(tier, broken[0], broken[1], gen)
                continue
            made_up = writes.invented(measure_against(text, request.sources), request.sources)
            if made_up is not None:  # judged on the whole answer: clipping it would not make it faithful
                state.reject(tier, "invented", made_up, gen)
                continue
            return functools.partial(self._written_tail, text, gen, prompt, tier, target)
        return self._fallback(t, state)

    def _written_tail(self, text: str, gen: Generation, prompt: Prompt, tier: Tier, target: int,
                      req: SummaryRequest) -> tuple[str, Tier, int, str, _Accepted | None]:
        """A written summary's accepted answer, clipped to its target and measured."""
        trimmed = None
        if gen.done_reason == "length":
            text, trimmed = drop_unfinished(text), CLIPPED
        if self.tokenizer.count(text) > target:
            text, trimmed = clip_at_boundary(text, target, self.tokenizer), CLIPPED
        fid = measure_against(text, req.sources, key=key_count(target))
        return text, tier, target, prompt.version, _Accepted(text, gen, prompt, trimmed, fid)

    async def _part(self, request: SummaryRequest, part: notes.Part, state: _Attempts,
                    on_event: EventCallback | None) -> tuple[str, Tier, Generation | None, str]:
        """One part's title: (text, tier, the accepted answer or None, prompt version); "" at fallback."""
        def tagged(ev: SummaryEvent) -> None:
            if on_event is not None:
                on_event(replace(ev, part=part.index, parts=part.count))

        version = ""
        for aggressive in (False, True):
            tier: Tier = "aggressive" if aggressive else "normal"
            why = RETRY_HINTS.get(state.rejections[-1].reason, "") if aggressive and state.rejections else ""
            prompt = build_part_prompt(request.depth, part, aggressive=aggressive, why=why, prompts=self.prompts,
                                       tokenizer=self.tokenizer)
            version = prompt.version
            try:
                gen = await self._call(prompt, tier, part.target, state, tagged if on_event else None)
            except ModelError as exc:
                state.reject(tier, "error", f"part {part.index}: {exc}")
                continue
            raw = acceptance.strip_preamble(gen.text)
            where = f"part {part.index}: "
            ctx = titles.TitleContext(part, gen, prompt, self._frame(request.depth, aggressive), part.items,
                                      request.depth == 0)
            verdict = titles.judge(titles.Draft(raw, notes.note_text(raw)), ctx)
            if isinstance(verdict, titles.Refusal):
                state.reject(tier, verdict.reason, where + verdict.detail if verdict.detail else where.rstrip(": "), gen)
                continue
            text = verdict.text
            if await self._measured(text, gen, tier, request, state, "", where) is None:
                continue
            return text, tier, gen, version
        return "", "fallback", None, version  # no title: the part's key lines speak for it

    async def brief(self, material: brief_.Material, *, on_event: EventCallback | None = None) -> BriefResult:
        """A session's brief (``brief.py``): the model writes its title and one-line about in one call, judged
        by the title checks; what a model cannot write faithfully (or the extractive backend) leaves the about
        line to the chat's first request and the title empty (tier ``fallback``; ``normal`` for extractive)."""
        state = _Attempts()
        title, about = "", ""
        tier: Tier = "fallback"
        version = brief_.BRIEF_VERSION
        if self.backend.name != "extractive" and material.first_request is not None and self.way == "writes":
            written = await self._written_brief(material, state, on_event)
            if written is not None:
                return written
        elif self.backend.name != "extractive" and material.first_request is not None:
            lines = brief_.material_text(material, self.tokenizer)
            said = SourceItem("episode", lines, 0, _EPOCH, _EPOCH, role="user")
            part = notes.Part(1, 1, (said,), "user", brief_.ANSWER_TOKENS, lines)
            template = self.prompts.get(0, False)
            prompt = Prompt(template.system, f"{prompts_.BRIEF_HEADING}\n<chat>\n{lines}\n</chat>\n\n{brief_.ASK}",
                            version, prompts_.TITLE_TEMPERATURE, answer_budget(brief_.ANSWER_TOKENS), ask=brief_.ASK)
            try:
                gen = await self._call(prompt, "normal", brief_.ANSWER_TOKENS, state, on_event)
            except ModelError as exc:
                state.reject("normal", "error", f"brief: {exc}")
            else:
                title, about = self._brief_fields(gen, prompt, part, state)
                if about:
                    tier = "normal"
                else:
                    title = ""  # an answer whose about line is refused is not trusted for its title either
        elif self.backend.name == "extractive":
            tier = "normal"
        text = brief_.render(material, f"About: {about}" if about else "", self.tokenizer)
        made_by = self.backend.name if tier == "normal" and about else "extractive"
        return BriefResult(text, title, about or brief_.about_line(text), tier, made_by,
                           self.backend.model if made_by != "extractive" else None, version, self.tokenizer.count(text),
                           state.llm_seconds, tuple(state.rejections))

    async def _written_brief(self, material: brief_.Material, state: _Attempts,
                             on_event: EventCallback | None) -> BriefResult | None:
        """A brief the model writes whole (``brief_writes.py``), in one call; None when the call fails or its
        answer is refused (recorded in ``state``)."""
        sources = brief_writes.sources_of(material, self.tokenizer)
        template = self.prompts.get(1, False)
        budget = answer_budget(brief_.BRIEF_TOKENS)
        prompt = brief_writes.build(template.system, sources, self.max_prompt_tokens(budget), self.tokenizer)
        try:
            gen = await self._call(prompt, "normal", brief_.BRIEF_TOKENS, state, on_event)
        except ModelError as exc:
            state.reject("normal", "error", f"brief: {exc}")
            return None
        written = brief_writes.judge(gen, prompt, sources)
        if written.reason:
            state.reject("normal", written.reason, written.detail, gen)
            return None
        text = written.text(self.tokenizer)
        return BriefResult(text, written.title, written.about, "normal", self.backend.name, self.backend.model,
                           prompt.version, self.tokenizer.count(text), state.llm_seconds, tuple(state.rejections))

    def _brief_fields(self, gen: Generation, prompt: Prompt, part: notes.Part, state: _Attempts) -> tuple[str, str]:
        """The (title, about) of a brief's answer that pass the title checks and name nothing the chat does not
        ("" for a field that does not)."""
        title, about = brief_.answer_fields(acceptance.strip_preamble(gen.text))
        frame = " ".join((prompt.system, brief_.ASK))
        ctx = titles.TitleContext(part, gen, prompt, frame, part.items, True)
        kept = []
        for name, value in (("title", title), ("about", about)):
            verdict = titles.judge(titles.Draft(value, value), ctx) if value else titles.Refusal("empty", "")
            if value and brief_.laid_out(value):
                verdict = titles.Refusal("frame", "the brief's own layout written back")
            if isinstance(verdict, titles.Refusal):
                detail = f"brief {name}: {verdict.detail}" if verdict.detail else f"brief {name}"
                state.reject("normal", verdict.reason, detail, gen)
                kept.append("")
                continue
            fid = measure(verdict.text, ((part.lines, False),))
            invented = acceptance.find_invented(fid.novel, fid.kept)
            if invented:
                state.reject("normal", "invented", f"brief {name}: {invented}", gen)
                kept.append("")
                continue
            value = notes.gist(verdict.text) if name == "title" else brief_.about_sentence(verdict.text)
            if not value:
                state.reject("normal", "thin", f"brief {name}: says too little ({verdict.text!r})", gen)
            kept.append(value)
        return kept[0], kept[1]

    def _frame(self, depth: int, aggressive: bool) -> str:
        """The prompt's own wording for a part of this depth and tier (system text, template, every ask): a
        title may not write back a run of it (``acceptance.frame_copy``)."""
        template = self.prompts.get(depth, aggressive)
        return " ".join((template.system, template.instruction, *notes.ASKS))

    def _digest(self, request: SummaryRequest, target: int) -> str:
        return extractive_digest(replace(request, target_tokens=target), self.tokenizer)

    async def _attempt(
        self, request: SummaryRequest, tier: Tier, target: int, max_prompt: int, state: _Attempts,
        on_event: EventCallback | None, why: str | None = None,
    ) -> _Accepted | None:
        """One model call and every content rule; None (with the rejection recorded) if refused.
        An answer past its target, or cut off, is clipped and kept (see the module docstring)."""
        prompt = build_prompt(
            request, aggressive=tier == "aggressive", target=target, prompts=self.prompts, tokenizer=self.tokenizer,
            max_prompt_tokens=max_prompt, sections=self.use_sections, why=why,
        )
        try:
            gen = await self._call(prompt, tier, target, state, on_event)
        except ModelError as exc:
            state.reject(tier, "error", str(exc))
            return None
        text, unusable = self._answer_text(gen.text, prompt)
        if unusable is not None:
            state.reject(tier, *unusable, gen=gen)
            return None
        if not self._passes(text, gen, prompt, tier, request.sources, request, state):
            return None
        trimmed = None
        if gen.done_reason == "length":  # stopped mid-sentence: keep what is whole
            text, trimmed = drop_unfinished(text), CLIPPED
        if self.tokenizer.count(text) > target:
            text, trimmed = clip_at_boundary(text, target, self.tokenizer), CLIPPED
        fid = await self._measured(text, gen, tier, request, state, request.prior_summary or "", key=key_count(target))
        if fid is None:
            return None
        return _Accepted(text, gen, prompt, trimmed, fid)

    def _passes(self, text: str, gen: Generation, prompt: Prompt, tier: Tier, shown: Sequence[SourceItem],
                request: SummaryRequest, state: _Attempts) -> bool:
        """The content rules on an answer's text (``shown``: the sources its prompt showed); a refusal is
        recorded on ``state``."""
        shown_prior = request.prior_summary if prompt.shows_prior else None
        broken = acceptance.judge_answer(text, thinking_tokens=gen.thinking_tokens, prior=shown_prior,
                                         sources=[s.text for s in shown], leaf=request.depth == 0, ask=prompt.ask)
        if broken is not None:
            state.reject(tier, broken[0], broken[1], gen)
            return False
        return True

    async def _measured(self, text: str, gen: Generation, tier: Tier, request: SummaryRequest, state: _Attempts,
                        context: str, where: str = "", *, key: int | None = None) -> Fidelity | None:
        """``text`` measured against the whole request's sources (whose names are read once: a note
        may name what a neighbouring part holds), or None when it names more things that are in no
        source (nor in ``context``, what else its prompt showed) than it keeps, recorded as a
        refusal. ``key``: how many key names it is judged on (see ``measure_against``)."""
        fid = measure_against(text, request.sources, key=key, context=context)
        invented = acceptance.find_invented(fid.novel, fid.kept)
        if invented:
            state.reject(tier, "invented", where + invented, gen)
            return None
        return fid

    @staticmethod
    def _answer_text(raw: str, prompt: Prompt) -> tuple[str, tuple[str, str] | None]:
        """The summary text of an answer, or why it cannot be one. A sectioned answer is
        rendered to Markdown; one that starts as JSON but cannot be read is ``malformed`` (its
        braces and quotes must never become a summary), one that says next to nothing is
        ``thin``. An answer that is not JSON at all, from a server that ignored the schema, is
        taken as plain text. A preamble and tag-only lines are stripped."""
        if prompt.format is not None:
            obj = sections.parse(raw)
            if obj is not None:
                obj = sections.without_copies(obj, SECTIONS_ASK)
                raw = sections.render(obj, prompt.layout)
                words = sections.prose_words(obj)
                if raw and words < sections.MIN_PROSE_WORDS:  # nothing at all is "empty", below
                    return "", ("thin", f"{words} word{'s' * (words != 1)} besides names")
            elif raw.lstrip().startswith(("{", "[")):
                return "", ("malformed", "a JSON answer that cannot be read, even cut back to its last whole item")
        return acceptance.strip_preamble(raw), None

    def _finish(
        self, text: str, tier: Tier, target: int, version: str, got: _Accepted | None,
        request: SummaryRequest, pins: str, started: float, state: _Attempts,
    ) -> SummaryResult:
        key = key_count(target)
        fid = got.fidelity if got is not None and got.fidelity is not None else measure_against(
            text, request.sources, key=key, context=request.prior_summary or "")  # an answer is measured once
        body_tokens = self.tokenizer.count(text)
        if pins:
            text = f"{text}\n\n{pins}" if text.strip() else pins
        tokens = self.tokenizer.count(text) if pins else body_tokens
        if got is not None:
            input_tokens = got.gen.prompt_eval_count
            if input_tokens is None:  # counted only when needed: ~0.4 ms for a 3k-token prompt
                input_tokens = got.gen.prompt_tokens or (
                    self.tokenizer.count(got.prompt.system) + self.tokenizer.count(got.prompt.prompt))
            output_tokens = got.gen.eval_count if got.gen.eval_count is not None else body_tokens
        else:
            input_tokens, output_tokens = request.source_tokens, body_tokens
        missing = tuple(p.label for p in request.pinned if p.text not in text)
        return SummaryResult(
            text=text,
            tier=tier,
            backend=self.backend.name if got is not None else "extractive",
            model=self.backend.model if got is not None else None,
            prompt_version=version,
            tokens=tokens,
            source_tokens=request.source_tokens,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            duration_s=time.monotonic() - started,
            llm_seconds=state.llm_seconds,
            attempts=state.calls,
            notes=tuple(self._notes(state)),
            rejections=tuple(state.rejections),
            fidelity=fid.bounded(),
            keywords=keywords_for(fid) if text != ALL_EXCLUDED else (),
            trimmed=got.trimmed if got is not None else None,
            pins_missing=missing,
            calls=tuple(state.records),
            key_target=key,
        )

    @staticmethod
    def _notes(state: _Attempts) -> list[str]:
        return [f"{r.tier}: {acceptance.REASONS.get(r.reason, r.reason)} — {r.detail}" for r in state.rejections]

    # ------------------------------------------------------------------ the server
    def _backoff(self, failures: int) -> float:
        return float(self.retry_backoff_s[min(failures, len(self.retry_backoff_s)) - 1])

    def _clock(self, prompt: Prompt, target: int) -> CallClock:
        speed = getattr(self.backend, "speed", None)
        prompt_tokens = self.tokenizer.count(prompt.system) + self.tokenizer.count(prompt.prompt)
        return CallClock(speed if isinstance(speed, ModelSpeed) else ModelSpeed(), prompt_tokens,
                         min(target, prompt.num_predict), prompt.num_predict, self.thinking_headroom())

    async def _call(
        self, prompt: Prompt, tier: Tier, target: int, state: _Attempts, on_event: EventCallback | None
    ) -> Generation:
        """One model call, retried while the server is unreachable (see class docstring), and once
        after an HTTP 5xx (a crashed runner is often back at once): the same prompt again, so the
        server's prompt cache serves it, before the caller moves to the next tier."""
        server_errors = 0
        while True:
            state.calls += 1
            attempt = state.calls
            kwargs: dict[str, object] = {"temperature": prompt.temperature, "num_predict": prompt.num_predict}
            if prompt.format is not None:
                kwargs["format"] = prompt.format
            if on_event is not None:
                on_event(SummaryEvent("attempt", tier, attempt))
                clock = self._clock(prompt, target)

                def progress(p: StreamProgress, tier: Tier = tier, attempt: int = attempt,
                             clock: CallClock = clock) -> None:
                    on_event(SummaryEvent("progress", tier, attempt, chunks=p.tokens, phase=p.phase,
                                          thinking_tokens=p.thinking_tokens, tokens_per_s=clock.pace(p),
                                          left_s=clock.left(p)))

                kwargs["on_chunk"] = progress
            began = time.monotonic()
            try:
                gen = await self.backend.generate(prompt.system, prompt.prompt, **kwargs)  # type: ignore[arg-type]
            except BackendUnavailable as exc:
                state.llm_seconds += time.monotonic() - began
                self._connection_failures += 1
                if self._connection_failures >= self.max_connection_failures:
                    tries = counted(self._connection_failures, "failed attempt")
                    raise RunAborted(f"{exc} (gave up after {tries})", exc) from exc
                if on_event is not None:
                    on_event(SummaryEvent("retry", tier, attempt, message=str(exc)))
                await self._sleep(self._backoff(self._connection_failures))
                continue
            except ModelError as exc:
                seconds = time.monotonic() - began
                state.llm_seconds += seconds
                state.records.append(CallRecord(tier, "error", seconds, 0, None, None))
                self._connection_failures = 0
                if isinstance(exc, ServerError) and server_errors == 0:
                    server_errors += 1
                    if on_event is not None:
                        on_event(SummaryEvent("retry", tier, attempt, message=str(exc)))
                    continue
                raise
            except BaseException:  # cancelled, ModelMissing, bugs: still account the time
                state.llm_seconds += time.monotonic() - began
                raise
            state.llm_seconds += time.monotonic() - began
            self._connection_failures = 0
            state.records.append(CallRecord(tier, "accepted", gen.seconds, gen.prompt_tokens, gen.prompt_eval_count,
                                            gen.eval_count, gen.thinking_tokens, gen.fresh_prompt_tokens))
            return gen
