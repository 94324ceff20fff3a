"""Bounded whatever the server does: a server that ignores num_predict and answers twice the
prompt, and a model with a small context. Real runner, real client, fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hiermem_tui.compaction import Runner
from hiermem_tui.config import Policy
from hiermem_tui.store import Store, Summary
from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize.prompts import LEAF_HEADING, PRIOR_MAX_TOKENS
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import DEFAULT_CONTEXT, Targets, targets_for
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeModel, FakeOllama, longer_than_input

from ._engine_fixtures import T0, add_episodes
from ._invariants import check_invariants

DEFAULT = Policy()


def tier_targets(s: Summary, policy: Policy) -> Targets:
    """The targets the summariser had for ``s`` (they depend only on depth and source size)."""
    target = policy.leaf_target_tokens if s.depth == 0 else policy.condensed_target_tokens
    item = SourceItem("episode", "", s.source_tokens, T0, T0)
    return targets_for(SummaryRequest(s.depth, [item], target))


def prompt_tokens(tok: Tokenizer, body: dict) -> int:
    return sum(tok.count(m["content"]) for m in body["messages"])


@pytest.fixture
def store(tmp_path: Path, tokenizer: Tokenizer) -> Store:
    s = Store.open(tmp_path / "bounded.db", tokenizer=tokenizer)
    yield s
    s.close()


async def test_a_rambling_server_cannot_make_a_pass_run_away(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "s", 0, 200, words=120)
    with FakeOllama(honour_num_predict=False, responder=longer_than_input(2).text) as fake:  # type: ignore[arg-type]
        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
        runner = Runner(store, Summariser(backend, tokenizer), DEFAULT)
        try:
            run = await runner.compact("s", "full")
        finally:
            await backend.aclose()
        bodies = fake.chat_bodies
    assert run is not None and run.status == "done"
    made = store.dag.summaries("s")
    assert made and all(s.tokens <= getattr(tier_targets(s, DEFAULT), s.tier) for s in made)
    assert all(s.tokens < s.source_tokens for s in made)
    # nothing the server said was accepted as a summary: it only ever echoed the prompt
    assert {s.tier for s in made} == {"fallback"}
    assert set(run.rejections) <= {"cut_off", "echo", "loop", "not_shorter", "too_long"}
    # every prompt is bounded, so the whole pass is linear in the number of episodes: a leaf's by
    # its chunk, a condensation's by its sources (their key lines fill their targets) and the context
    biggest = max(prompt_tokens(tokenizer, b) for b in bodies)
    leaf_prompts = [prompt_tokens(tokenizer, b) for b in bodies if LEAF_HEADING in b["messages"][-1]["content"]]
    assert leaf_prompts and len(leaf_prompts) < len(bodies)
    # (an idle session's trivial last leftover, under a quarter of the budget, joins the chunk before it)
    assert max(leaf_prompts) <= DEFAULT.leaf_chunk_tokens * 5 // 4 + PRIOR_MAX_TOKENS + 600
    assert biggest <= DEFAULT_CONTEXT
    assert len(bodies) <= 2 * len(made) + 1  # two tiers a summary at most, and the brief's one call
    check_invariants(store, "s", fresh_tail=0)  # a session of 2025, idle: summarised to its end


async def test_a_small_context_shrinks_chunks_and_clips_condensed_input(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "s", 0, 120, words=120)
    small = FakeModel("tiny:1b", context_length=2048)
    policy = Policy(leaf_target_tokens=300, condensed_target_tokens=600, condense_fanout=4, fidelity_threshold=0.0)
    with FakeOllama(models=(small,), responder=lambda body: "The user and the assistant went through items.") as fake:
        backend = OllamaBackend(fake.url, "tiny:1b", tokenizer, timeout_s=30)
        backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
        runner = Runner(store, Summariser(backend, tokenizer), policy)
        try:
            run = await runner.compact("s", "full")
        finally:
            await backend.aclose()
        bodies = fake.chat_bodies
    assert run is not None and run.status == "done" and run.normal == run.summaries_created
    for body in bodies:
        opts = body["options"]
        assert opts["num_ctx"] <= 2048
        assert prompt_tokens(tokenizer, body) * 1.1 + opts["num_predict"] <= opts["num_ctx"], opts
    leaves = [s for s in store.dag.summaries("s") if s.depth == 0]
    assert runner.policy.leaf_chunk_tokens < policy.leaf_chunk_tokens  # shrunk to fit the context
    assert max(s.source_tokens for s in leaves) <= runner.policy.leaf_chunk_tokens
    assert any(s.depth >= 1 for s in store.dag.summaries("s"))


async def test_the_run_estimate_comes_from_the_models_measured_speed(store: Store, tokenizer: Tokenizer) -> None:
    from hiermem_tui.compaction import RunStarted

    add_episodes(store, "s", 0, 60, words=120)
    started: list[RunStarted] = []
    with FakeOllama(responder=lambda body: "The user and the assistant went through the items.") as fake:
        for measured in (False, True):
            backend = OllamaBackend(fake.url, "llama3.2", tokenizer)
            if measured:  # an earlier run measured this model on this host: 100 tok/s in, 10 tok/s out
                store.speeds.add("ollama", "llama3.2:latest", ModelSpeed(2, 2000, 20.0, 200, 20.0), backend.host)
            runner = Runner(store, Summariser(backend, tokenizer), DEFAULT,
                            on_event=lambda ev: started.append(ev) if isinstance(ev, RunStarted) else None)
            try:
                await runner.compact("s", "leaf")
            finally:
                await backend.aclose()
            # the next run starts from the same unsummarised state: supersede what this one made
            store.dag.supersede_all("s")
    first, second = started
    assert first.est_seconds is None  # never measured: no estimate rather than a guess
    assert second.est_seconds is not None and second.est_seconds > 0
    # the estimate is the measured speed applied to the planned inputs (prompt tokens ≈ source + overhead)
    assert second.planned >= 1 and second.est_seconds >= second.planned * (DEFAULT.leaf_chunk_tokens / 100) * 0.3
