"""The runner through the fake Ollama server and the real client: tiers, a dying server,
cancellation, parallelism, re-summarising. Nothing of ours is mocked."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from hiermem_tui.compaction import (
    BriefWritten,
    CancelToken,
    RunEvent,
    RunFinished,
    RunStarted,
    SummaryAttempt,
    SummaryStarted,
    SummaryWritten,
)
from hiermem_tui.store import Store
from hiermem_tui.summarize import BackendUnavailable, ModelMissing
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import Drop, FakeOllama, Hang, Reply, closed_port_url, empty, longer_than_input

from ._engine_fixtures import SMALL, add_episodes, extractive_runner, ollama_runner
from ._invariants import check_invariants


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:0.5b")) as server:
        yield server


def tiers_in_order(store: Store, sid: str) -> list[tuple[int, str, str]]:
    return [(s.first_seq, s.tier, s.backend) for s in store.dag.summaries(sid) if s.depth == 0]


def leaves_by_tier(made: list, tier: str) -> list:
    return [s for s in made if s.depth == 0 and s.tier == tier]


async def test_full_pass_tiers_and_prior_summary(store: Store, tokenizer: Tokenizer, fake: FakeOllama) -> None:
    add_episodes(store, "s", 0, 30)
    fake.script(
        Reply("LEAF ONE: the user opened the task."),
        longer_than_input(), Reply("LEAF TWO terse."),  # normal rejected (the prompt echoed back) → aggressive
        empty(), empty(),                                 # both model tiers empty → fallback
    )
    events: list[RunEvent] = []
    runner, backend = ollama_runner(store, tokenizer, fake.url, events=events)
    chunks = runner.plan_leaf("s")
    assert len(chunks) >= 4
    try:
        run = await runner.compact("s", "full")
    finally:
        await backend.aclose()
    assert run is not None and run.status == "done" and run.error is None
    leaves = tiers_in_order(store, "s")
    assert [t for _, t, _ in leaves[:3]] == ["normal", "aggressive", "fallback"]
    assert leaves[2][2] == "extractive" and leaves[0][2] == "ollama"
    made = store.dag.summaries("s")
    assert (run.normal, run.aggressive, run.fallback) == (
        sum(s.tier == "normal" for s in made), sum(s.tier == "aggressive" for s in made), 1)
    assert len(leaves) == len(chunks) and run.summaries_created == len(made) > len(chunks)
    assert run.llm_seconds > 0 and run.wall_seconds >= run.llm_seconds * 0.5
    # continuity: leaf 2's prompt carries leaf 1's text; condensed prompts carry depth and times
    bodies = fake.chat_bodies
    assert "LEAF ONE" in bodies[1]["messages"][-1]["content"]
    assert all("num_ctx" in b["options"] for b in bodies)
    assert any("--- Part 1 of 2, " in b["messages"][-1]["content"] and "UTC" in b["messages"][-1]["content"]
               for b in bodies)
    # why the tiers fell is kept on the summaries and counted on the run
    assert [r["reason"] for r in leaves_by_tier(made, "aggressive")[0].rejections] == ["echo"]
    assert [r["reason"] for r in leaves_by_tier(made, "fallback")[0].rejections] == ["empty", "empty"]
    # a condensed summary whose 15-token input left it a 14-token target the default answer
    # overshot: clipped and kept (no second call for length)
    assert run.rejections == {"echo": 1, "empty": 2}
    assert any(s.trimmed == "clipped" and s.depth > 0 and s.tier == "normal" for s in made)
    # events: planned is exact for an undisturbed pass, counters tick, run finished
    started = [e for e in events if isinstance(e, RunStarted)]
    written = [e for e in events if isinstance(e, SummaryWritten)]
    assert started[0].planned == len(made) and [e.done for e in written] == list(range(1, len(made) + 1))
    assert written[-1].tiers.as_dict() == run.tiers and written[-1].tokens_per_s
    whats = [e.what for e in events if isinstance(e, SummaryStarted)]
    assert whats[0] == f"leaf #0–{chunks[0].last_seq}" and any(w.startswith("depth 1 over 2 summaries") for w in whats)
    assert any(isinstance(e, SummaryAttempt) and e.tier == "aggressive" for e in events)
    assert isinstance(events[-1], RunFinished) and events[-1].run == run
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_server_dying_mid_run_fails_the_run_without_fallbacks(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    add_episodes(store, "s", 0, 30)

    def on_event(ev: RunEvent) -> None:
        if isinstance(ev, SummaryWritten) and ev.done == 1:
            fake.stop()  # Ollama goes away after the first summary

    runner, backend = ollama_runner(store, tokenizer, fake.url)
    runner.on_event = on_event
    try:
        run = await runner.compact("s", "leaf")
    finally:
        await backend.aclose()
    assert run is not None and run.status == "failed"
    assert "not reachable" in (run.error or "") and "3 failed attempts" in (run.error or "")
    assert "\n" not in (run.error or "")
    assert run.summaries_created == 1 and run.fallback == 0
    assert [s.tier for s in store.dag.summaries("s")] == ["normal"]
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_dropped_connections_count_as_server_failures(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    add_episodes(store, "s", 0, 30)
    fake.script(Reply("First leaf."), Drop(), Drop(), Drop())
    runner, backend = ollama_runner(store, tokenizer, fake.url)
    try:
        run = await runner.compact("s", "leaf")
    finally:
        await backend.aclose()
    assert run is not None and run.status == "failed" and run.summaries_created == 1
    assert len(fake.chat_requests) == 4 and store.sessions.get("s").fallbacks == 0  # type: ignore[union-attr]


async def test_cancel_aborts_the_http_call_and_keeps_finished_work(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    add_episodes(store, "s", 0, 30)
    fake.script(Reply("First leaf."), Hang())
    cancel = CancelToken()
    events: list[RunEvent] = []
    runner, backend = ollama_runner(store, tokenizer, fake.url, cancel=cancel, events=events)

    def canceller() -> None:  # another thread, as the UI would be
        fake.wait_for_chats(2, timeout=10)
        cancel.cancel()

    t = threading.Thread(target=canceller)
    t.start()
    try:
        run = await runner.compact("s", "full")
    finally:
        t.join()
        await backend.aclose()
    assert run is not None and run.status == "cancelled"
    assert run.summaries_created == 1 and len(store.dag.summaries("s")) == 1
    hung = fake.chat_requests[1]
    assert hung.disconnected.wait(5), "the in-flight HTTP request was not aborted"
    assert len(fake.chat_requests) == 2  # nothing started after the cancel
    assert isinstance(events[-1], RunFinished) and events[-1].status == "cancelled"
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_cancel_before_start_records_a_cancelled_empty_run(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "s", 0, 30)
    cancel = CancelToken()
    cancel.cancel()
    run = await extractive_runner(store, tokenizer, cancel=cancel).compact("s")
    assert run is not None and run.status == "cancelled" and run.summaries_created == 0


async def test_parallel_sessions_overlap_up_to_the_limit(store: Store, tokenizer: Tokenizer, fake: FakeOllama) -> None:
    sids = [f"p{i}" for i in range(6)]
    for sid in sids:
        add_episodes(store, sid, 0, 10)  # one leaf each (SMALL: 6 eligible, 200-token budget)
    fake.script(*[Hang() for _ in range(3)])
    in_flight = peak = 0

    def on_event(ev: RunEvent) -> None:
        nonlocal in_flight, peak
        if isinstance(ev, SummaryStarted):
            in_flight += 1
            peak = max(peak, in_flight)
        elif isinstance(ev, (SummaryWritten, BriefWritten)):
            in_flight -= 1

    runner, backend = ollama_runner(store, tokenizer, fake.url, parallel=3)
    runner.on_event = on_event

    def releaser() -> None:
        fake.wait_for_chats(3, timeout=10)  # three requests hang at once: only parallel calls get here
        fake.release()

    t = threading.Thread(target=releaser)
    t.start()
    try:
        runs = await runner.compact_many(sids, "full")
    finally:
        t.join()
        await backend.aclose()
    assert [r.session_id for r in runs] == sids and all(r.status == "done" for r in runs)
    assert peak == 3
    for sid in sids:
        check_invariants(store, sid, fresh_tail=SMALL.fresh_tail)


async def test_condensation_groups_of_one_depth_run_concurrently(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    add_episodes(store, "s", 0, 40)
    assert (await extractive_runner(store, tokenizer).compact("s", "leaf")).status == "done"  # type: ignore[union-attr]
    leaves = [s for s in store.dag.spans("s") if s.depth == 0]
    assert len(leaves) >= 4
    fake.script(Hang(), Hang())
    runner, backend = ollama_runner(store, tokenizer, fake.url, parallel=4)

    def releaser() -> None:
        fake.wait_for_chats(2, timeout=10)
        fake.release()

    t = threading.Thread(target=releaser)
    t.start()
    try:
        run = await runner.compact("s", "condense")
    finally:
        t.join()
        await backend.aclose()
    assert run is not None and run.status == "done" and run.summaries_created >= 3
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_backend_not_ready_records_nothing(store: Store, tokenizer: Tokenizer, fake: FakeOllama) -> None:
    add_episodes(store, "s", 0, 30)
    runner, backend = ollama_runner(store, tokenizer, fake.url, model="nope:7b")
    with pytest.raises(ModelMissing, match="nope:7b"):
        await runner.compact_many(["s"], "full")
    await backend.aclose()
    runner, backend = ollama_runner(store, tokenizer, closed_port_url())
    with pytest.raises(BackendUnavailable, match="not reachable"):
        await runner.compact("s")
    await backend.aclose()
    assert store.runs.of_session("s") == [] and store.dag.summaries("s") == []


async def test_resummarize_summary_redoes_the_chain_in_one_commit(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    add_episodes(store, "s", 0, 30)
    assert (await extractive_runner(store, tokenizer).compact("s")).status == "done"  # type: ignore[union-attr]
    leaf = store.dag.summaries("s")[1]
    old_chain = store.dag.covering_chain("s", leaf.first_seq)
    assert leaf.depth == 0 and len(old_chain) >= 3
    texts = [f"REDONE LEVEL {i} of the chain." for i in range(len(old_chain))]
    fake.script(*[Reply(t) for t in texts])
    events: list[RunEvent] = []
    runner, backend = ollama_runner(store, tokenizer, fake.url, events=events)
    try:
        run = await runner.remake.summary(leaf.id)
    finally:
        await backend.aclose()
    assert run.status == "done" and run.kind == "resummarize" and run.target == leaf.id
    assert run.summaries_created == len(old_chain)
    chain = store.dag.covering_chain("s", leaf.first_seq)
    assert [s.content for s in chain] == texts
    assert [s.supersedes for s in chain] == [s.id for s in old_chain]
    assert all(store.dag.get(s.id).status == "superseded" for s in old_chain)  # type: ignore[union-attr]
    for i in range(1, len(texts)):  # each ancestor was condensed with its new child's text
        assert texts[i - 1] in fake.chat_bodies[i]["messages"][-1]["content"]
    # nothing was committed until every text existed: all writes come after the last start
    kinds = [type(e).__name__ for e in events if isinstance(e, (SummaryStarted, SummaryWritten))]
    assert kinds == ["SummaryStarted"] * len(texts) + ["SummaryWritten"] * len(texts)
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_cancelled_resummarize_writes_nothing(store: Store, tokenizer: Tokenizer, fake: FakeOllama) -> None:
    add_episodes(store, "s", 0, 30)
    assert (await extractive_runner(store, tokenizer).compact("s")).status == "done"  # type: ignore[union-attr]
    before = store.dag.summaries("s")
    leaf = before[0]
    fake.script(Reply("New leaf."), Hang())
    cancel = CancelToken()
    runner, backend = ollama_runner(store, tokenizer, fake.url, cancel=cancel)
    t = threading.Thread(target=lambda: (fake.wait_for_chats(2, timeout=10), cancel.cancel()))
    t.start()
    try:
        run = await runner.remake.summary(leaf.id)
    finally:
        t.join()
        await backend.aclose()
    assert run.status == "cancelled" and run.summaries_created == 0
    assert store.dag.summaries("s") == before
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_resummarize_session_with_another_model(store: Store, tokenizer: Tokenizer, fake: FakeOllama) -> None:
    add_episodes(store, "s", 0, 30)
    runner, backend = ollama_runner(store, tokenizer, fake.url, model="llama3.2")
    first = await runner.compact("s")
    await backend.aclose()
    runner, backend = ollama_runner(store, tokenizer, fake.url, model="qwen2.5:0.5b")
    try:
        redo = await runner.remake.session("s")
    finally:
        await backend.aclose()
    assert first is not None and first.status == redo.status == "done" and redo.model == "qwen2.5:0.5b"
    active = store.dag.summaries("s")
    assert active and all(s.model == "qwen2.5:0.5b" and s.run_id == redo.id for s in active)
    old = [s for s in store.dag.summaries("s", status="superseded")]
    assert len(old) == first.summaries_created and all(s.model == "llama3.2:latest" for s in old)
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)
    assert store.dag.revert_run(redo.id) == len(old)  # the old DAG comes back
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_incremental_pass_only_summarises_new_material(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "s", 0, 30)
    runner = extractive_runner(store, tokenizer)
    await runner.compact("s", "leaf")
    before = {s.id for s in store.dag.summaries("s")}
    add_episodes(store, "s", 30, 20)
    run = await runner.compact("s", "leaf")
    new = [s for s in store.dag.summaries("s") if s.id not in before]
    assert run is not None and run.summaries_created == len(new) > 0
    assert min(s.first_seq for s in new) > max(s.last_seq for s in store.dag.summaries("s") if s.id in before)
    assert runner.plan_leaf("s") == []
    check_invariants(store, "s", fresh_tail=SMALL.fresh_tail)


async def test_cancel_during_parallel_sessions_stops_the_job(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    sids = ["a", "b", "c", "d"]
    for sid in sids:
        add_episodes(store, sid, 0, 10)
    fake.script(Hang(), Hang())
    cancel = CancelToken()
    runner, backend = ollama_runner(store, tokenizer, fake.url, parallel=2, cancel=cancel)
    t = threading.Thread(target=lambda: (fake.wait_for_chats(2, timeout=10), cancel.cancel()))
    t.start()
    try:
        runs = await runner.compact_many(sids, "full")
    finally:
        t.join()
        await backend.aclose()
    assert [(r.session_id, r.status) for r in runs] == [("a", "cancelled"), ("b", "cancelled")]
    assert all(r.disconnected.wait(5) for r in fake.chat_requests)
    assert store.runs.of_session("c") == [] and store.runs.of_session("d") == []  # never started


async def test_cancelling_the_awaiting_task_records_the_run_as_cancelled(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama
) -> None:
    """A TUI worker being cancelled (not the token) still leaves a finished run record."""
    add_episodes(store, "s", 0, 30)
    fake.script(Hang())
    runner, backend = ollama_runner(store, tokenizer, fake.url)
    task = asyncio.create_task(runner.compact("s"))
    await fake.await_chats(1, timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await backend.aclose()
    assert [r.status for r in store.runs.of_session("s")] == ["cancelled"]
    assert fake.chat_requests[0].disconnected.wait(5)
