"""Thinking models (qwen3, deepseek-r1, gpt-oss) through the fake server that thinks: ``think``
is sent as the model allows, thinking never becomes a summary, and a pass stays at model tiers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.compaction import make_runner
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize.ollama_backend import THINK_HEADROOM, think_value
from hiermem_tui.summarize.prompts import answer_budget
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import targets_for
from hiermem_tui.summarize.types import SourceItem, StreamProgress, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeModel, FakeOllama, Reply

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
ANSWER = ("The user asked why tests/test_io.py failed with PermissionError on /tmp/cache. The assistant "
          "suggested setting CACHE_DIR and the user confirmed pytest passed.")
CHAT = [
    ("user", "tests/test_io.py fails with PermissionError when it writes /tmp/cache on the CI runner; locally it "
             "passes. The runner is shared with other jobs and the directory belongs to another user there."),
    ("assistant", "Set CACHE_DIR to a temporary directory made by the test itself (tmp_path) instead of the "
                  "shared /tmp/cache, so every run gets a directory it owns and nothing leaks between jobs."),
    ("user", "Done: CACHE_DIR now comes from tmp_path and pytest passes on the runner and on my laptop."),
    ("assistant", "Good. Keep the fixture in conftest.py so every test that touches the cache uses it."),
] * 3
QWEN3 = FakeModel("qwen3:4b", thinking=True)
GPT_OSS = FakeModel("gpt-oss:20b", thinking=True, think_values=["low", "medium", "high"], think_words=300)
OLD_SERVER = FakeModel("deepseek-r1:8b", thinking=True, ignores_think=True, think_words=200)


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2", QWEN3, GPT_OSS, OLD_SERVER], responder=lambda body: ANSWER) as server:
        yield server


def request(tok: Tokenizer) -> SummaryRequest:
    items = [SourceItem("episode", text, tok.count(text), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i),
                        role=role, label=f"#{i}") for i, (role, text) in enumerate(CHAT)]
    return SummaryRequest(0, items, 1200)


def backend(fake: FakeOllama, model: str, tok: Tokenizer) -> OllamaBackend:
    b = OllamaBackend(fake.url, model, tok, timeout_s=10)
    b.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    return b


def test_think_value_follows_what_the_model_takes() -> None:
    assert think_value(["completion"], None, "llama3.2") is None  # not a thinking model: send nothing
    assert think_value(["completion", "thinking"], None, "qwen3:4b") is False
    assert think_value(["thinking"], None, "gpt-oss:20b") == "low"  # an older server: gpt-oss cannot be off
    assert think_value(["thinking"], ["low", "medium", "high"], "my-model") == "low"
    assert think_value(["thinking"], [True, False], "gpt-oss:20b") is False
    assert think_value(["thinking"], [True], "x") is True


async def test_a_model_that_can_stop_thinking_is_told_to(fake: FakeOllama, tok: Tokenizer) -> None:
    b = backend(fake, "qwen3:4b", tok)
    res = await Summariser(b, tok).summarise(request(tok))
    (body,) = fake.chat_bodies
    assert body["think"] is False and res.tier == "normal" and res.text == ANSWER
    assert body["options"]["num_predict"] == answer_budget(targets_for(request(tok)).normal)  # no headroom needed
    plain = backend(fake, "llama3.2", tok)
    await Summariser(plain, tok).summarise(request(tok))
    assert "think" not in fake.chat_bodies[-1]  # Ollama refuses think for a model that does not think
    await b.aclose()
    await plain.aclose()


async def test_gpt_oss_thinks_low_with_headroom_and_its_thinking_is_not_the_summary(
    fake: FakeOllama, tok: Tokenizer
) -> None:
    b = backend(fake, "gpt-oss:20b", tok)
    seen: list[StreamProgress] = []
    fake.script(Reply(ANSWER, thinking="I should list the path and the error first. " * 30))
    gen = await b.generate("system", "prompt", temperature=0.2, num_predict=200, on_chunk=seen.append)
    body = fake.chat_bodies[-1]
    assert body["think"] == "low" and body["options"]["num_predict"] == 200 + THINK_HEADROOM["low"]
    assert gen.text == ANSWER and gen.thinking_tokens > 200 and "should list" not in gen.text
    phases = [p.phase for p in seen]
    assert phases[0] == "prompt" and "thinking" in phases and phases[-1] == "writing"
    assert phases.index("thinking") < phases.index("writing")
    assert max(p.thinking_tokens for p in seen) == gen.thinking_tokens
    await b.aclose()


async def test_only_thinking_is_rejected_and_the_retry_gets_room_to_think(fake: FakeOllama, tok: Tokenizer) -> None:
    """An older server thinks whatever it is told: the first answer budget is spent thinking
    (no answer: ``thinking_only``), and the retry is given the thinking it saw as headroom."""
    b = backend(fake, "deepseek-r1:8b", tok)
    res = await Summariser(b, tok).summarise(request(tok))
    first, second = fake.chat_bodies
    assert first["think"] is False  # asked not to; this server does not listen
    assert [r.reason for r in res.rejections] == ["thinking_only"] and res.tier == "aggressive"
    t = targets_for(request(tok))
    assert first["options"]["num_predict"] == answer_budget(t.normal)
    assert second["options"]["num_predict"] >= answer_budget(t.aggressive) + THINK_HEADROOM["low"]  # room to think
    assert res.text == ANSWER and res.trimmed is None and "hmm" not in res.text
    await b.aclose()


async def test_a_full_pass_against_a_thinking_server_stays_at_model_tiers(tmp_path: Path) -> None:
    """The issue-13 measurement (14 of 14 leaves fallback against a thinking server), now:
    every leaf and condensation at a model tier, think sent on every call, no thinking stored."""
    model = FakeModel("gpt-oss:20b", thinking=True, think_values=["low", "medium", "high"], think_words=400)

    def answer(body: dict) -> str:  # a different report for each chunk, as a model gives
        size = len(body["messages"][1]["content"])
        return f"In this part ({size} characters of log) the user fixed PermissionError in tests/test_io.py."

    with FakeOllama(models=[model], responder=answer) as fake, Store.open(tmp_path / "t.db") as store:
        store.sessions.upsert("s", title="thinking", source="test", created_at=T0)
        store.episodes.append("s", [NewEpisode(str(i), role, text, T0 + timedelta(minutes=i))
                                    for i, (role, text) in enumerate(CHAT * 6)])
        policy = Policy(idle_after=10 ** 9, fresh_tail=4, leaf_chunk_tokens=300, leaf_target_tokens=200, condense_fanout=3)
        settings = Settings(db_path=store.path, ollama_host=fake.url, model="gpt-oss:20b", policy=policy)
        runner = make_runner(store, settings)
        try:
            run = await runner.compact("s", "full")
        finally:
            await runner.summariser.backend.aclose()
        summaries = store.dag.summaries("s")
        assert run is not None and run.status == "done" and run.summaries_created == len(summaries) >= 8
        assert run.fallback <= 0.1 * run.summaries_created and run.rejections == {}
        assert all(b.get("think") == "low" for b in fake.chat_bodies)
        assert not any("hmm" in s.content for s in store.dag.summaries("s", status=None))
