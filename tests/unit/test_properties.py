"""Property tests: random sessions, random sequences of operations, every invariant after each step.

Operations: appending episodes, leaf / condense / full passes (sequential or parallel over
sessions), re-summarising a random active summary, re-summarising a whole session, and
reverting a random run. All with the extractive backend, so every example is deterministic
and fast; the Ollama path is covered by test_runner.py.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hiermem_tui.compaction import Runner
from hiermem_tui.config import Policy
from hiermem_tui.store import NewEpisode, Store, StoreError
from hiermem_tui.tokens import Tokenizer

from ._engine_fixtures import T0, add_episodes, extractive_runner
from ._engine_fixtures import IN_USE
from ._invariants import check_invariants

SESSIONS = ("alpha", "beta")

policies = st.builds(
    Policy,
    fresh_tail=st.integers(0, 5),
    idle_after=st.sampled_from([1, IN_USE]),  # the sessions' times are of 2025: 1 s makes them idle
    leaf_chunk_tokens=st.integers(30, 400),
    leaf_min_episodes=st.integers(1, 5),
    leaf_target_tokens=st.integers(20, 80),
    condense_fanout=st.integers(2, 4),
    condensed_target_tokens=st.integers(20, 120),
)

contents = st.one_of(
    st.integers(1, 60).map(lambda n: " ".join(f"Word{i} is here." if i % 5 == 0 else f"w{i}" for i in range(n))),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=200),  # untrusted, odd text
)
episode = st.tuples(st.sampled_from(["user", "assistant", "tool", "system"]), contents, st.one_of(st.none(), st.integers(0, 500)))
session_ix = st.integers(0, len(SESSIONS) - 1)
operations = st.one_of(
    st.tuples(st.just("append"), session_ix, st.lists(episode, min_size=1, max_size=14)),
    st.tuples(st.sampled_from(["leaf", "condense", "full"]), session_ix, st.booleans()),
    st.tuples(st.just("resummarize"), session_ix, st.integers(0, 10_000)),
    st.tuples(st.just("resummarize-session"), session_ix, st.none()),
    st.tuples(st.just("revert"), session_ix, st.none()),
    st.tuples(st.just("all"), st.integers(1, 3), st.sampled_from(["leaf", "condense", "full"])),
)


class Model:
    """What the test did, to compare the file against."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.episodes: dict[str, dict[int, tuple[str, str, str]]] = {s: {} for s in SESSIONS}
        self.known: dict[str, set[str]] = {s: set() for s in SESSIONS}
        self.next_key = 0

    def append(self, sid: str, eps: list[tuple[str, str, int | None]]) -> None:
        before = len(self.episodes[sid])
        new = []
        for role, content, minute in eps:
            self.next_key += 1
            when = None if minute is None else T0 + timedelta(minutes=minute)
            new.append(NewEpisode(f"k{self.next_key}", role, content, when))
        self.store.episodes.append(sid, new)
        stored = self.store.episodes.range(sid, before, before + len(eps) - 1)
        assert [(e.role, e.content) for e in stored] == [(r, c) for r, c, _ in eps]
        for e in stored:
            self.episodes[sid][e.seq] = (e.role, e.content, e.created_at)

    def check(self, policy: Policy) -> None:
        for sid in SESSIONS:
            check_invariants(self.store, sid, fresh_tail=policy.fresh_tail if policy.idle_after == IN_USE else 0,
                             episodes=self.episodes[sid],
                             known_summaries=self.known[sid])
            self.known[sid] |= {r[0] for r in self.store.db.conn.execute("SELECT id FROM summaries WHERE session_id = ?", (sid,))}


def apply(op: tuple[Any, ...], model: Model, runner: Runner, par_runner: Runner) -> None:
    kind = op[0]
    store = model.store
    if kind == "append":
        model.append(SESSIONS[op[1]], op[2])
        return
    if kind == "all":
        runs = asyncio.run(par_runner.compact_many(SESSIONS, op[2], skip_idle=True))
        assert all(r.status == "done" for r in runs), [r.error for r in runs]
        return
    sid = SESSIONS[op[1]]
    if kind in ("leaf", "condense", "full"):
        run = asyncio.run((par_runner if op[2] else runner).compact(sid, kind))
        assert run is not None and run.status == "done", run
        if kind != "leaf":  # a condensation leaves no full group behind
            from hiermem_tui.compaction.planner import plan_condense

            assert plan_condense(store.dag.spans(sid), runner.policy.condense_fanout) == []
        if kind != "condense":  # a leaf pass leaves no eligible chunk behind
            assert runner.plan_leaf(sid) == []
    elif kind == "resummarize":
        active = store.dag.summaries(sid)
        if not active:
            return
        target = active[op[2] % len(active)]
        before_tops = len(store.dag.top(sid))
        run = asyncio.run(runner.remake.summary(target.id))
        assert run.status == "done", run
        new = store.dag.get(target.id)
        assert new is not None and new.status == "superseded" and new.superseded_by is not None
        replacement = store.dag.get(new.superseded_by)
        assert replacement is not None and replacement.status == "active"
        assert (replacement.first_seq, replacement.last_seq, replacement.depth) == (target.first_seq, target.last_seq, target.depth)
        # every ancestor was redone: the chain from the new version reaches a top made by this run
        chain = store.dag.covering_chain(sid, target.first_seq)
        assert chain[-1].run_id == run.id and len(store.dag.top(sid)) == before_tops
    elif kind == "resummarize-session":
        run = asyncio.run(runner.remake.session(sid))
        assert run.status == "done", run
        assert all(s.run_id == run.id for s in store.dag.summaries(sid))
    elif kind == "revert":
        # revert any run, newest or older, plain pass or re-summarise: it either undoes the
        # run consistently or refuses (nothing to revert, built upon, replaced since)
        runs = store.runs.of_session(sid)
        if not runs:
            return
        try:
            store.dag.revert_run(runs[-1 - (len(runs) > 1 and len(store.dag.summaries(sid)) % 2)].id)
        except StoreError:
            pass  # refused (nothing to revert, or built upon): must have changed nothing


# HIERMEM_PROP_EXAMPLES raises the count for a longer hunt (the default keeps the suite quick)
@settings(max_examples=int(os.environ.get("HIERMEM_PROP_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies, ops=st.lists(operations, min_size=1, max_size=14))
def test_every_invariant_holds_after_every_operation(tokenizer: Tokenizer, policy: Policy, ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "p.db", tokenizer=tokenizer)
        try:
            for sid in SESSIONS:
                store.sessions.upsert(sid, title=sid, source="test", created_at=T0)
            model = Model(store)
            model.append("alpha", [("user", f"Opening message {i}. Details follow here.", i) for i in range(12)])
            runner = extractive_runner(store, tokenizer, policy)
            par_runner = extractive_runner(store, tokenizer, policy, parallel=3)
            model.check(policy)
            for op in ops:
                apply(op, model, runner, par_runner)
                model.check(policy)
        finally:
            store.close()


def test_reverting_a_plain_pass_keeps_parent_links(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 30)
    runner = extractive_runner(store, tokenizer)
    asyncio.run(runner.compact("a"))
    add_episodes(store, "a", 30, 30)
    second = asyncio.run(runner.compact("a"))
    assert second is not None
    store.dag.revert_run(second.id)  # its condensed summaries had adopted the first run's tops
    check_invariants(store, "a", fresh_tail=4)


def test_reverting_an_older_resummarize_is_refused_or_consistent(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 30)
    runner = extractive_runner(store, tokenizer)
    asyncio.run(runner.compact("a"))
    top = store.dag.top("a")[0]
    older = asyncio.run(runner.remake.summary(top.id))
    asyncio.run(runner.remake.session("a"))
    try:
        store.dag.revert_run(older.id)
    except StoreError:
        pass
    check_invariants(store, "a", fresh_tail=4)
