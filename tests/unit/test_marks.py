"""Pinned and excluded episodes (issue 9.5): stored, undoable, honoured by every pass and by a
re-summarise, verified by ``check`` — through the real runner, client and fake server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.compaction.check import check_session
from hiermem_tui.config import Policy
from hiermem_tui.store import Store, StoreError
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama

from ._engine_fixtures import add_episodes, ollama_runner
from ._invariants import check_invariants

POLICY = Policy(idle_after=10 ** 9, fresh_tail=4, leaf_chunk_tokens=300, leaf_min_episodes=2, leaf_target_tokens=120,
                condense_fanout=2, condensed_target_tokens=200, fidelity_threshold=0.0)
SECRET = "Episode 3 of s starts here"  # the start of episode 3's text (see _engine_fixtures.episode_text)
ANSWER = "The user and the assistant went through the episodes."


@pytest.fixture
def store(tmp_path: Path, tokenizer: Tokenizer) -> Store:
    s = Store.open(tmp_path / "marks.db", tokenizer=tokenizer)
    add_episodes(s, "s", 0, 30)
    yield s
    s.close()


def test_marks_are_stored_replaced_and_undone(store: Store) -> None:
    store.marks.set("s", 3, "exclude")
    store.marks.set("s", 7, "pin")
    assert store.marks.of("s") == {3: "exclude", 7: "pin"}
    store.marks.set("s", 3, "pin")  # a new mark replaces the old one
    assert store.marks.of("s", 0, 5) == {3: "pin"}
    store.marks.set("s", 3, None)
    assert store.marks.of("s") == {7: "pin"}
    assert [(seq, mark) for seq, mark, _ in store.marks.marked("s")] == [(7, "pin")]
    with pytest.raises(StoreError, match="no episode #99"):
        store.marks.set("s", 99, "pin")


async def test_excluded_text_never_reaches_a_model_and_pins_are_carried_verbatim(
    store: Store, tokenizer: Tokenizer
) -> None:
    store.marks.set("s", 3, "exclude")
    store.marks.set("s", 8, "pin")
    pinned = store.episodes.at("s", 8)
    assert pinned is not None
    with FakeOllama(responder=lambda body: ANSWER) as fake:
        runner, backend = ollama_runner(store, tokenizer, fake.url, POLICY)
        try:
            run = await runner.compact("s", "full")
        finally:
            await backend.aclose()
        sent = [m["content"] for b in fake.chat_bodies for m in b["messages"]]
    assert run is not None and run.status == "done"
    assert sent and not any(SECRET in text for text in sent)
    covering = [s for s in store.dag.summaries("s") if s.first_seq <= 8 <= s.last_seq]
    assert len(covering) >= 2  # the leaf and at least one condensed summary above it
    for s in covering:
        assert pinned.content in s.content and s.content.index(pinned.content) > s.content.index("Pinned")
        assert s.content.count(pinned.content) == 1 and s.fid_pins_missing == ()
    assert all(SECRET not in s.content for s in store.dag.summaries("s"))
    check_invariants(store, "s", fresh_tail=POLICY.fresh_tail)


async def test_check_finds_a_pin_set_after_the_fact_and_repair_carries_it(
    store: Store, tokenizer: Tokenizer, tmp_path: Path
) -> None:
    with FakeOllama(responder=lambda body: ANSWER) as fake:
        runner, backend = ollama_runner(store, tokenizer, fake.url, POLICY)
        try:
            await runner.compact("s", "leaf")
            store.marks.set("s", 5, "pin")
            rows = [r for r in check_session(store, "s") if r.pins_missing]
            assert [r.pins_missing for r in rows] == [("#5",)] and rows[0].needs_repair(0.0)
            run = await runner.remake.repair("s", 0.0)
        finally:
            await backend.aclose()
    assert run is not None and run.kind == "repair" and run.summaries_created == 1
    ep = store.episodes.at("s", 5)
    assert ep is not None
    leaf = next(s for s in store.dag.summaries("s") if s.first_seq <= 5 <= s.last_seq)
    assert ep.content in leaf.content and not [r for r in check_session(store, "s") if r.pins_missing]
    out = io.StringIO()
    main(["check", "--db", str(store.path), "--session", "s", "--below", "0", "--json"], stdout=out)
    assert json.loads(out.getvalue()) == []  # no fallback, no missing pin


async def test_a_chunk_with_every_episode_excluded_is_summarised_without_a_model(
    store: Store, tokenizer: Tokenizer
) -> None:
    for seq in range(0, 12):
        store.marks.set("s", seq, "exclude")
    with FakeOllama(responder=lambda body: ANSWER) as fake:
        runner, backend = ollama_runner(store, tokenizer, fake.url, POLICY)
        try:
            await runner.compact("s", "leaf")
        finally:
            await backend.aclose()
        sent = [m["content"] for b in fake.chat_bodies for m in b["messages"]]
    inside = [s for s in store.dag.summaries("s") if s.last_seq <= 11]
    assert inside and all(s.content.startswith("(The episodes here are excluded") and s.backend == "extractive"
                          for s in inside)
    assert not any(f"Episode {i} of s" in text for text in sent for i in range(12))
