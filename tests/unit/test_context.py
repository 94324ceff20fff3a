"""The context view: roots plus the raw tail, each episode exactly once, the newest part under a budget."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import timedelta
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hiermem_tui.config import Policy
from hiermem_tui.context import ContextItem, build_context, fit_budget, render_context
from hiermem_tui.store import NewEpisode, Store, StoreError
from hiermem_tui.tokens import Tokenizer

from ._engine_fixtures import SMALL, T0, add_episodes, extractive_runner
from .test_properties import policies


def covered(items: tuple[ContextItem, ...] | list[ContextItem]) -> list[int]:
    """Every episode seq the items stand for, in item order (repeats kept)."""
    return [seq for i in items for seq in range(i.first_seq, i.last_seq + 1)]


def test_roots_and_tail_cover_every_episode_once_in_order(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 40)
    asyncio.run(extractive_runner(store, tokenizer).compact("a"))
    view = build_context(store, "a")
    assert covered(view.items) == list(range(40))
    tops = {s.id for s in store.dag.top("a")}
    assert {i.id for i in view.items if i.kind == "summary"} == tops and tops
    tail = [i for i in view.items if i.kind == "episode"]
    assert [i.first_seq for i in tail] == list(range(40 - len(tail), 40)) and len(tail) >= SMALL.fresh_tail
    assert view.total_tokens == sum(i.tokens for i in view.items) and view.complete
    session = store.sessions.get("a")
    assert session is not None and view.total_tokens == session.uncompacted_tokens


def test_json_has_exactly_the_contract_keys(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 20)
    asyncio.run(extractive_runner(store, tokenizer).compact("a"))
    data = build_context(store, "a", 10_000).as_json()
    assert set(data) == {"session", "budget", "total_tokens", "items"}
    assert data["session"] == "a" and data["budget"] == 10_000
    for item in data["items"]:
        assert set(item) == {"kind", "id", "depth", "first_seq", "last_seq", "tokens",  # the contract's
                             "clipped", "full_tokens"}  # and what was added to it
        assert item["clipped"] is False and item["full_tokens"] == item["tokens"]
        assert (item["depth"] is None) == (item["kind"] == "episode")
        if item["kind"] == "episode":
            assert item["first_seq"] == item["last_seq"]
    assert data["total_tokens"] == sum(i["tokens"] for i in data["items"])


def test_a_small_budget_keeps_the_newest_part_that_fits(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 40)
    asyncio.run(extractive_runner(store, tokenizer).compact("a"))
    full = build_context(store, "a").items
    tail_tokens = sum(i.tokens for i in full[-3:])
    view = build_context(store, "a", tail_tokens + full[-4].tokens - 1)
    assert view.items == full[-3:]  # the fourth-newest would not fit: it and everything older are out
    assert view.left_out == full[:-3]
    assert view.total_tokens == tail_tokens and view.left_out_tokens == sum(i.tokens for i in full[:-3])
    assert build_context(store, "a", 0).items == ()


def test_a_budget_smaller_than_the_newest_message_gives_its_head_clipped(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 6)
    long = " ".join(f"word{i} of the pasted log, line {i}." for i in range(900))  # ~11k tokens
    store.episodes.append("a", [NewEpisode("big", "assistant", long, T0 + timedelta(hours=1))])
    full = build_context(store, "a").items
    view = build_context(store, "a", 800)
    assert len(view.items) == 1 and view.left_out == full[:-1]  # the newest alone; everything older left out
    item = view.items[0]
    assert item.id == full[-1].id == "a/big" and item.clipped
    assert 700 < item.tokens <= 800 == view.budget and view.total_tokens == item.tokens
    assert item.full_tokens == full[-1].tokens == tokenizer.count(long)
    assert item.as_json() | {"tokens": 0} == full[-1].as_json() | {"tokens": 0, "clipped": True,
                                                                   "full_tokens": item.full_tokens}
    head = long[: item.clip_chars]
    assert long.startswith(head) and long[len(head)] == " " and tokenizer.count(head) == item.tokens  # a whole word
    text = "".join(render_context(store, view))
    assert f"· the first {item.tokens} of {item.full_tokens} tokens (clipped to the budget)\n{head}…\n" in text
    assert build_context(store, "a", 1).items[0].tokens == 1  # any budget that holds a token gets something
    assert build_context(store, "a", 0).items == ()  # a budget of 0 asks for nothing


def test_no_hole_in_the_middle_even_if_an_older_item_would_fit() -> None:
    items = [ContextItem("summary", "big-old", 1, 0, 9, 5, "t", "t", tier="normal"),
             ContextItem("summary", "huge", 1, 10, 19, 500, "t", "t", tier="normal"),
             ContextItem("episode", "e", None, 20, 20, 10, "t", "t", role="user")]
    kept, left = fit_budget(items, 100)
    assert [i.id for i in kept] == ["e"] and [i.id for i in left] == ["big-old", "huge"]


def test_render_gives_headers_and_exact_texts_in_order(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 20)
    asyncio.run(extractive_runner(store, tokenizer).compact("a"))
    view = build_context(store, "a")
    text = "".join(render_context(store, view))
    assert text.startswith(f"# Context of session a: {len(view.items)} items, {view.total_tokens:,} tokens")
    position = 0
    for item in view.items:
        body = (store.dag.get(item.id).content if item.kind == "summary"  # type: ignore[union-attr]
                else store.episodes.at("a", item.first_seq).content)  # type: ignore[union-attr]
        found = text.index(body, position)
        assert found > position
        position = found + len(body)


def test_unknown_session_and_negative_budget_are_refused(store: Store) -> None:
    with pytest.raises(StoreError):
        build_context(store, "nope")
    add_episodes(store, "a", 0, 2)
    with pytest.raises(ValueError):
        build_context(store, "a", -1)


steps = st.lists(st.tuples(st.integers(0, 15), st.sampled_from(["leaf", "condense", "full", "resummarize", "none"])),
                 min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies, plan=steps, budget=st.one_of(st.none(), st.integers(0, 40), st.integers(0, 3000)))
def test_property_every_episode_exactly_once_and_the_budget_keeps_a_newest_suffix(
    tokenizer: Tokenizer, policy: Policy, plan: list[tuple[int, str]], budget: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "c.db", tokenizer=tokenizer)
        try:
            runner = extractive_runner(store, tokenizer, policy)
            total = 0
            for count, step in plan:
                add_episodes(store, "s", total, count, words=5 + count)
                total += count
                if step == "resummarize" and store.dag.summaries("s"):
                    asyncio.run(runner.remake.summary(store.dag.summaries("s")[total % len(store.dag.summaries("s"))].id))
                elif step in ("leaf", "condense", "full"):
                    asyncio.run(runner.compact("s", step))  # type: ignore[arg-type]
            if store.sessions.get("s") is None:
                store.sessions.upsert("s", title="s", source="test", created_at=T0)
            full = build_context(store, "s")
            assert covered(full.items) == list(range(total))  # each episode exactly once, in order
            view = build_context(store, "s", budget)
            whole = [replace(i, tokens=i.full_tokens, full_tokens=None, clip_chars=None) if i.clipped else i
                     for i in view.items]
            assert list(view.left_out) + whole == list(full.items)  # a split, no reordering
            if budget is not None:
                assert view.total_tokens <= budget
                if any(i.clipped for i in view.items):  # only the newest, alone, when it is too big itself
                    assert len(view.items) == 1 and full.items[-1].tokens > budget > 0
                elif view.left_out:  # maximal: the next older item would not have fitted
                    assert view.total_tokens + view.left_out[-1].tokens > budget
                assert bool(view.items) == bool(full.items and budget)  # never empty but for a budget of 0
            else:
                assert view.complete
        finally:
            store.close()
