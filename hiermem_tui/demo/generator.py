"""The demo's session stream: how many episodes each session gets, when, and in what turn order.

Why a module of its own: this is the part that must stay fast and streaming at a million
episodes (:func:`_episodes` is the hot loop) and the part that fixes the output for a seed;
what the messages say comes from :mod:`.compose` and :mod:`.topics`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from hiermem_tui.importers.base import ParsedEpisode, ParsedSession

from .compose import Pools, build_pools, fill, pick
from .topic import GENERIC_SYSTEM
from .topics import TOPICS

DEFAULT_START = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
"""Default reference time: sessions start over the months before it. Fixed so output is reproducible."""

SPAN_DAYS = 120
"""Session start days are spread over this many days before ``start``."""

SOURCE = "demo"

_SIGMA = 1.25  # lognormal spread of session sizes: most sessions short, a few long
_MEAN_W = 2.718281828459045 ** (_SIGMA * _SIGMA / 2)  # mean of lognormvariate(0, _SIGMA)
_STEPS = tuple(timedelta(seconds=s) for s in range(1024))  # gaps under ~17 min, built once (immutable)


def _counts(rng: random.Random, sessions: int, episodes: int) -> Iterator[int]:
    """Episode counts per session, lazily, summing to exactly ``episodes``.

    Each session takes a lognormal share of what is left, scaled by how many sessions remain;
    the last takes the rest. Memory is O(1) in ``sessions``.
    """
    floor = 2 if episodes >= 2 * sessions else 1
    extra = episodes - floor * sessions
    for left in range(sessions, 0, -1):
        if left == 1:
            take = extra
        else:
            take = min(extra, int(extra * rng.lognormvariate(0.0, _SIGMA) / (left * _MEAN_W) + 0.5))
        extra -= take
        yield floor + take


def _episodes(rng: random.Random, pools: Pools, count: int, began: datetime) -> list[ParsedEpisode]:
    """``count`` episodes: maybe a system prompt, then user/assistant turns with some tool output.

    This is the hot loop (a million iterations for a big demo): locals only, one ``random()``
    per decision, whole pre-composed messages.
    """
    rnd = rng.random
    users, openers, answers, tools, pastes = pools.users, pools.openers, pools.answers, pools.tools, pools.pastes
    nu, no, na, nt, npaste = len(users), len(openers), len(answers), len(tools), len(pastes)
    tool_p = pools.topic.tool_rate if nt else 0.0
    eps: list[ParsedEpisode] = []
    append = eps.append
    t = began
    if count >= 3 and rnd() < 0.12:
        append(ParsedEpisode("system", pools.topic.system if rnd() < 0.7 else GENERIC_SYSTEM, t))
    role = "user"
    text = pools.openings[int(rnd() * len(pools.openings))]
    opening = True
    step = _STEPS
    for _ in range(count - len(eps)):
        if role == "user":
            r = rnd()
            if opening:
                opening = False
                gap = int(r * 30)  # text is the opening message chosen above
            else:
                # Usually minutes after the answer; now and then hours or days later.
                gap = 7200 + int(rnd() * 259200) if r < 0.035 else 25 + int(r * 600)
                text = users[int(rnd() * nu)]
            if rnd() < 0.02:
                text = f"{text}\n\n```\n{pastes[int(rnd() * npaste)]}\n```"
            nxt = "assistant"
        elif role == "assistant":
            gap = 4 + int(rnd() * 80)
            text = openers[int(rnd() * no)] + answers[int(rnd() * na)]
            nxt = "tool" if rnd() < tool_p else "user"
        else:
            gap = 2 + int(rnd() * 40)
            text = tools[int(rnd() * nt)]
            nxt = "assistant"
        t = t + (step[gap] if gap < 1024 else timedelta(seconds=gap))
        append(ParsedEpisode(role, text, t))
        role = nxt
    return eps


def generate(
    sessions: int, episodes: int, seed: int, *, start: datetime | None = None
) -> Iterator[ParsedSession]:
    """Yield ``sessions`` synthetic sessions holding exactly ``episodes`` episodes in total.

    Session ids are ``demo:<seed>:<n>`` (n from 1). Sessions start on days spread over the
    ``SPAN_DAYS`` before ``start`` (default ``DEFAULT_START``), in order. Raises ``ValueError``
    at call time for counts that cannot be honoured (negative, or fewer episodes than sessions).
    """
    if sessions < 0 or episodes < 0:
        raise ValueError("--sessions and --episodes must not be negative")
    if sessions == 0 and episodes:
        raise ValueError(f"--episodes ({episodes}) needs at least one session (--sessions)")
    if episodes < sessions:
        raise ValueError(f"--episodes ({episodes}) must be at least --sessions ({sessions}): every session needs one")
    if start is None:
        start = DEFAULT_START
    elif start.tzinfo is None:
        start = start.replace(tzinfo=timezone.utc)
    return _stream(random.Random(seed), sessions, episodes, seed, start.astimezone(timezone.utc))


def _stream(rng: random.Random, sessions: int, episodes: int, seed: int, start: datetime) -> Iterator[ParsedSession]:
    """The lazy part of ``generate`` (separate so bad arguments raise before iteration starts)."""
    if sessions == 0:
        return
    pools: dict[tuple[str, str], Pools] = {}  # at most sum(len(topic.things)) entries
    origin = (start - timedelta(days=SPAN_DAYS)).replace(hour=0, minute=0, second=0, microsecond=0)
    day_step = SPAN_DAYS / sessions
    for n, count in enumerate(_counts(rng, sessions, episodes), start=1):
        topic = pick(rng, TOPICS)
        thing = pick(rng, topic.things)
        pool = pools.get((topic.name, thing))
        if pool is None:
            pool = pools[(topic.name, thing)] = build_pools(rng, topic, thing)
        day = int((n - 1 + rng.random()) * day_step)
        began = origin + timedelta(days=day, seconds=int(7 * 3600 + rng.random() * 14 * 3600))
        title = fill(rng, topic, thing, pick(rng, topic.titles))
        eps = _episodes(rng, pool, count, began)
        yield ParsedSession(
            id=f"demo:{seed}:{n}",
            title=title[:1].upper() + title[1:],
            source=SOURCE,
            episodes=eps,
            created_at=eps[0].created_at,
            metadata={"generator": "hiermem_tui.demo", "seed": seed, "topic": topic.name},
        )
