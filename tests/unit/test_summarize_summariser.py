"""The three tiers of ARCHITECTURE §4 and the connection-failure policy, through the fake server
with the real ollama client (nothing of ours is mocked)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from hiermem_tui.summarize import (
    ModelError,
    ModelMissing,
    OllamaBackend,
    RunAborted,
    Summariser,
    SummaryEvent,
    extractive_digest,
)
from hiermem_tui.summarize.prompts import EXTRACTIVE_VERSION
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import targets_for
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import (
    Drop,
    Fail,
    FakeOllama,
    Hang,
    Reply,
    StreamError,
    closed_port_url,
    empty,
    free_port,
)

T0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)
MESSAGES = [
    ("user", "Our CI fails with ModuleNotFoundError: No module named 'foo'. Locally everything passes, on Python "
             "3.11 and 3.12 alike. The failing job is called build-and-test and it started failing this morning "
             "after we merged the packaging change. I have no idea why CI would differ from my laptop here."),
    ("assistant", "CI installs the package from setup.cfg, so add foo to install_requires there, then rerun the "
                  "job. Your laptop has foo installed by hand, which is why it passes locally. If the job caches "
                  "the virtual environment, clear that cache too, otherwise the old environment is reused."),
    ("user", "Done, I edited setup.cfg and pushed commit 3f2a1b9. The pipeline is green now and the job took about "
             "four minutes, same as before. Should I do anything else about the dependency?"),
    ("assistant", "Great. Consider pinning foo>=1.4 since 1.3 had the import bug we saw yesterday; add it to "
                  "install_requires with that lower bound and mention it in the changelog."),
    ("user", "Thanks, that makes sense. I will add the lower bound now and write a short note in the changelog "
             "so that the others on the team know why the build was red this morning and what changed."),
    ("assistant", "Sounds good. It is also worth adding a small smoke test that imports the package in a clean "
                  "environment, so a missing dependency shows up before a merge rather than after it."),
]
# keeps every identifier of MESSAGES, well under the leaf target
SHORT = ("CI job build-and-test failed: ModuleNotFoundError for foo (Python 3.11, 3.12). Fix: foo added to "
         "install_requires in setup.cfg; commit 3f2a1b9 is green. Pin foo>=1.4 (1.3 was buggy).")
# a faithful report, much longer than any target here (and the server's cap cuts a 3× copy)
LONG_REPORT = " ".join(
    f"{who} {what}." for who, what in [
        ("The user", "reported that CI failed with ModuleNotFoundError for foo"), ("Locally", "everything passed"),
        ("The job build-and-test", "started failing after the packaging change was merged"),
        ("The assistant", "explained that CI installs the package from setup.cfg"),
        ("Foo", "had been installed by hand on the laptop, which hid the problem"),
        ("The assistant", "advised adding foo to install_requires and clearing the cached environment"),
        ("The user", "edited setup.cfg and pushed commit 3f2a1b9"), ("The pipeline", "went green in four minutes"),
        ("The assistant", "recommended pinning foo>=1.4 because 1.3 had an import bug"),
        ("The user", "agreed to add the lower bound and a changelog note"),
        ("The assistant", "also suggested a smoke test that imports the package in a clean environment"),
        ("That test", "would catch a missing dependency before a merge"),
    ] * 2
)
# within the aggressive target
TERSE = "- foo added to install_requires in setup.cfg fixed CI (ModuleNotFoundError)\n- pin foo>=1.4"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=lambda body: SHORT) as server:
        yield server


def fast(backend: OllamaBackend) -> OllamaBackend:
    """A backend whose model is known to be fast, so its per-call timeout is ~timeout_s."""
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    return backend


@pytest.fixture
async def backend(fake: FakeOllama, tok: Tokenizer) -> AsyncIterator[OllamaBackend]:
    b = fast(OllamaBackend(fake.url, "llama3.2", tok, timeout_s=5))
    yield b
    await b.aclose()


class Sleeps:
    """A zero-delay, recording stand-in for asyncio.sleep (backoff is injectable)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def leaf(tok: Tokenizer, target: int = 80) -> SummaryRequest:
    items = [
        SourceItem("episode", text, tok.count(text), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i),
                   role=role, label=f"#{i}")
        for i, (role, text) in enumerate(MESSAGES)
    ]
    return SummaryRequest(0, items, target, prior_summary="Earlier the user set up the repository.")


async def test_normal_accepted(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Reply(SHORT, prompt_eval_count=512, eval_count=14))
    req = leaf(tok)
    res = await Summariser(backend, tok).summarise(req)
    assert (res.tier, res.backend, res.model, res.prompt_version) == ("normal", "ollama", "llama3.2", "leaf-v4")
    assert res.text == SHORT and res.tokens == tok.count(SHORT) and res.trimmed is None
    assert res.source_tokens == sum(tok.count(t) for _, t in MESSAGES) == req.source_tokens
    assert (res.input_tokens, res.output_tokens, res.attempts) == (512, 14, 1)
    assert 0 < res.llm_seconds <= res.duration_s and res.notes == () and res.rejections == ()
    assert res.fidelity is not None and res.fidelity.retention == 1.0 and res.keywords == ()
    assert [c.outcome for c in res.calls] == ["accepted"] and res.discarded_seconds == 0


@pytest.mark.parametrize(
    ("first", "why"),
    [
        (empty(), "empty answer"),
        (Reply("   \n\t "), "empty answer"),
        (Fail(400, "invalid option"), "HTTP 400"),  # not a server error: no second try (see below)
        (StreamError(), "mid-answer"),
    ],
)
async def test_normal_rejected_goes_aggressive(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer, first: object, why: str
) -> None:
    fake.script(first, Reply(TERSE))  # type: ignore[arg-type]
    res = await Summariser(backend, tok).summarise(leaf(tok))
    assert res.tier == "aggressive" and res.text == TERSE and res.backend == "ollama"
    assert res.prompt_version == "leaf-v4+aggressive" and res.attempts == 2
    assert why in res.notes[0] and res.rejections[0].tier == "normal"
    temps = [b["options"]["temperature"] for b in fake.chat_bodies]
    assert temps == [0.2, 0.1]
    assert [c.outcome for c in res.calls][-1] == "accepted" and res.calls[0].discarded


@pytest.mark.parametrize(
    "first",
    [Reply(LONG_REPORT), Reply(LONG_REPORT * 3)],
)
async def test_a_long_or_cut_off_answer_is_clipped_and_kept(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer, first: object
) -> None:
    """Length alone never costs a second model call: the answer is clipped at a boundary and kept."""
    fake.script(first)  # type: ignore[arg-type]
    req = leaf(tok)
    res = await Summariser(backend, tok).summarise(req)
    target = targets_for(req).normal
    assert res.tier == "normal" and res.attempts == 1 and res.rejections == ()
    assert res.trimmed == "clipped" and 0 < res.tokens <= target
    assert fake.chat_bodies[0]["options"]["num_predict"] <= target * 1.1 + 16


async def test_aggressive_clips_an_over_long_answer_to_its_target(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer
) -> None:
    fake.script(empty(), Reply(LONG_REPORT))
    req = leaf(tok)
    res = await Summariser(backend, tok).summarise(req)
    target = targets_for(req).aggressive
    assert res.tier == "aggressive" and 0 < res.tokens <= target and res.trimmed == "clipped"
    assert res.text.endswith(".") and LONG_REPORT.startswith(res.text)  # cut at a sentence boundary


@pytest.mark.parametrize("second", [Fail(400, "invalid option"), empty(), Reply("\n")])
async def test_both_fail_gives_fallback(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer, second: object
) -> None:
    fake.script(Fail(400, "invalid option"), second)  # type: ignore[arg-type]
    req = leaf(tok)
    res = await Summariser(backend, tok).summarise(req)
    assert (res.tier, res.backend, res.model, res.prompt_version) == ("fallback", "extractive", None, EXTRACTIVE_VERSION)
    digest = extractive_digest(replace(req, target_tokens=targets_for(req).fallback), tok)
    assert res.text == digest and res.tokens <= targets_for(req).fallback
    # the digest kept too few identifiers: the lost ones are its keywords, not part of its text
    assert res.fidelity is not None and res.fidelity.retention < 1.0
    assert res.keywords and res.keywords == res.fidelity.lost[: len(res.keywords)]
    assert not any(k in res.text for k in res.keywords) and "Also mentioned" not in res.text
    assert res.attempts == 2 and len(res.notes) == 2


async def test_without_fallback_both_failing_raises(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Fail(), Fail(), Fail(), Fail())  # each tier's call, and its one retry after the 500
    with pytest.raises(ModelError, match="no acceptable summary"):
        await Summariser(backend, tok, extractive_fallback=False).summarise(leaf(tok))


async def test_hang_past_timeout_moves_to_next_tier(fake: FakeOllama, tok: Tokenizer) -> None:
    slow = fast(OllamaBackend(fake.url, "llama3.2", tok, timeout_s=0.3))
    fake.script(Hang(), Reply(SHORT))
    res = await Summariser(slow, tok).summarise(leaf(tok))
    assert res.tier == "aggressive" and "timed out after 0.3" in res.notes[0]
    assert await asyncio.to_thread(fake.chat_requests[0].disconnected.wait, 5)
    await slow.aclose()


async def test_refused_connection_retries_then_aborts(tok: Tokenizer) -> None:
    url = closed_port_url()
    down = OllamaBackend(url, "llama3.2", tok)
    sleeps = Sleeps()
    s = Summariser(down, tok, sleep=sleeps)
    with pytest.raises(RunAborted) as err:
        await s.summarise(leaf(tok))
    assert sleeps.delays == [0.5, 1.0]
    assert str(err.value).startswith(f"Ollama is not reachable at {url} (connection refused)")
    assert "gave up after 3 failed attempts" in str(err.value)
    await down.aclose()


async def test_dropped_stream_is_a_connection_failure(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Drop(after_chunks=3), Reply(SHORT))
    sleeps = Sleeps()
    s = Summariser(backend, tok, sleep=sleeps)
    events: list[SummaryEvent] = []
    res = await s.summarise(leaf(tok), on_event=events.append)
    assert res.tier == "normal" and res.attempts == 2 and sleeps.delays == [0.5]
    assert s.connection_failures == 0  # the success reset the count
    assert [e.kind for e in events if e.kind != "progress"] == ["attempt", "retry", "attempt"]
    assert "connection lost mid-answer" in next(e.message for e in events if e.kind == "retry")
    fake.script(Drop(after_chunks=1), Drop(), Drop(after_chunks=2))
    with pytest.raises(RunAborted):
        await s.summarise(leaf(tok))
    assert sleeps.delays == [0.5, 0.5, 1.0]


async def test_model_errors_break_a_run_of_connection_failures(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer
) -> None:
    fake.script(Drop(), Drop(), Fail(400, "invalid option"), Drop(), Drop(), Reply(SHORT))
    res = await Summariser(backend, tok, sleep=Sleeps()).summarise(leaf(tok))
    assert res.tier == "aggressive" and res.attempts == 6


async def test_flaky_server_recovers(tok: Tokenizer) -> None:
    port = free_port()
    backend = OllamaBackend(f"http://127.0.0.1:{port}", "llama3.2", tok)
    started: list[FakeOllama] = []

    async def start_server_then_continue(delay: float) -> None:
        if not started:
            started.append(FakeOllama(port=port, responder=lambda body: SHORT).start())

    try:
        res = await Summariser(backend, tok, sleep=start_server_then_continue).summarise(leaf(tok))
        assert res.tier == "normal" and res.attempts == 2 and len(started[0].chat_requests) == 1
    finally:
        await backend.aclose()
        for server in started:
            server.stop()


async def test_missing_model_propagates_instead_of_falling_back(fake: FakeOllama, tok: Tokenizer) -> None:
    gone = OllamaBackend(fake.url, "removed-model", tok)
    with pytest.raises(ModelMissing, match="removed-model"):
        await Summariser(gone, tok).summarise(leaf(tok))
    await gone.aclose()


async def test_cancel_mid_call_aborts_request(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Hang())
    task = asyncio.create_task(Summariser(backend, tok).summarise(leaf(tok)))
    (rec,) = await fake.await_chats(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(rec.disconnected.wait, 5)
    assert len(fake.chat_requests) == 1  # no next tier after a cancel


async def test_http_500_makes_the_same_call_once_more_before_the_next_tier(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer
) -> None:
    """Issue 21 item 10: a 500 (a crashed runner, often transient) is retried once with the very same
    request, so the server's prompt cache serves it; a second 500 moves on to the next tier."""
    fake.script(Fail(), Reply(TERSE))
    events: list[SummaryEvent] = []
    res = await Summariser(backend, tok).summarise(leaf(tok), on_event=events.append)
    assert res.tier == "normal" and res.text == TERSE and res.attempts == 2
    first, again = fake.chat_bodies
    assert again == first
    assert [e.kind for e in events if e.kind != "progress"] == ["attempt", "retry", "attempt"]
    fake.script(Fail(503, "server busy"), Fail(), Reply(TERSE))
    res = await Summariser(backend, tok).summarise(leaf(tok))
    assert res.tier == "aggressive" and res.attempts == 3
    assert [b["options"]["temperature"] for b in fake.chat_bodies[2:]] == [0.2, 0.2, 0.1]


async def test_progress_events(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Fail(400, "invalid option"), Reply("one two three four"))
    events: list[SummaryEvent] = []
    await Summariser(backend, tok).summarise(leaf(tok), on_event=events.append)
    assert [(e.kind, e.tier) for e in events if e.kind == "attempt"] == [("attempt", "normal"), ("attempt", "aggressive")]
    progress = [e for e in events if e.kind == "progress"]
    # the failed call reported its start (reading the prompt) before it failed
    assert [e.chunks for e in progress] == [0, 0, 1, 2, 3, 4] and progress[1].phase == "prompt"
    assert all(e.phase == "writing" for e in progress[2:])
    assert all(e.left_s is not None and e.left_s >= 0 for e in progress)


async def test_condensed_request_uses_depth_prompt(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    texts = [f"Leaf A{i}: the user configured CI, fixed setup.cfg and re-ran the build job twice." for i in range(6)]
    texts += [f"Leaf B{i}: the user pinned foo>=1.4 after review and the assistant agreed to it." for i in range(6)]
    items = [SourceItem("summary", " ".join(texts[:6]), tok.count(" ".join(texts[:6])), T0, T0 + timedelta(hours=1),
                        depth=0),
             SourceItem("summary", " ".join(texts[6:]), tok.count(" ".join(texts[6:])), T0 + timedelta(hours=1),
                        T0 + timedelta(hours=2), depth=0)]
    fake.script(Reply("The user configured CI, fixed setup.cfg and pinned foo>=1.4 after review."))
    res = await Summariser(backend, tok).summarise(SummaryRequest(1, items, 40))
    assert res.prompt_version == "condensed-v3" and res.tier == "normal"
    sent = fake.chat_bodies[0]["messages"][1]["content"]
    assert "--- Part 1 of 2, 2025-01-02 10:00 UTC to 2025-01-02 11:00 UTC ---" in sent
