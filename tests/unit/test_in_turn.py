"""The model never waits on the app (issue 38 item 4), on fast servers too: within a pass, a summary whose request
does not depend on the one before (a ``notes`` leaf, a condensation of the same round) is asked as soon as the
calls of the one before are over, and that one is finished and committed while the model answers. Summaries are
still committed in order, and one answered before a cancel or a failure is kept. Against the fake Ollama server;
every wait is on the server's log or the run's events, never on time."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

from hiermem_tui.commands.common import CliContext
from hiermem_tui.commands.compact import Reporter
from hiermem_tui.compaction import CancelToken, Runner, RunEvent, SummaryWritten
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import Drop, FakeOllama, Hang, Reply

from ._engine_fixtures import SMALL, add_episodes

SID = "turn-38"


def titles(n: int) -> list[Reply]:
    return [Reply(f"Leaf title number {i}.") for i in range(n)]


async def test_the_next_leaf_is_asked_before_the_one_before_is_written(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """When the first leaf is written, the second leaf's call is already on its way to the server (before, it was
    asked only after the first was finished, measured and committed: the model waited on all of that)."""
    with Store.open(tmp_path / "turn.db", tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, SID, 0, 14, words=24)
        asked_by_then: list[int] = []

        def on_event(ev: RunEvent) -> None:
            if isinstance(ev, SummaryWritten) and not asked_by_then:
                try:  # blocks the run's loop: only a request already written can arrive
                    asked_by_then.append(len(fake.wait_for_chats(2, timeout=5)))
                except TimeoutError:
                    asked_by_then.append(len(fake.chat_requests))

        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        runner = Runner(store, Summariser(backend, tokenizer, summary_format="notes"), SMALL, on_event=on_event)
        try:
            await runner.check()
            chunks = runner.plan_leaf(SID)
            assert len(chunks) >= 3
            fake.script(*titles(len(chunks)))
            run = await runner.compact(SID, "leaf")
        finally:
            await backend.aclose()
        assert run is not None and run.status == "done" and run.summaries_created == len(chunks)
        assert asked_by_then == [2]
        leaves = store.dag.summaries(SID)
        assert [s.first_seq for s in leaves] == [c.first_seq for c in chunks]  # committed in order
        assert [s.content.splitlines()[0] for s in leaves] == [f"Leaf title number {i}." for i in range(len(chunks))]


class TtyIO(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_progress_line_keeps_the_call_in_flight_when_the_leaf_before_is_written(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """The second leaf is written after the third leaf's call has begun (and said it reads its prompt): the
    CLI's progress line counts it and still says what the call in flight is doing (it read "2/…" and nothing
    else, as between calls, until the hanging call's first token)."""
    with Store.open(tmp_path / "line.db", tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, SID, 0, 14, words=24)
        err = TtyIO()
        reporter = Reporter(CliContext(Settings(db_path=tmp_path / "line.db"), stderr=err), json_mode=True)
        second = asyncio.Event()

        def on_event(ev: RunEvent) -> None:
            reporter(ev)
            if isinstance(ev, SummaryWritten) and ev.done == 2:
                second.set()

        token = CancelToken()
        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        runner = Runner(store, Summariser(backend, tokenizer, summary_format="notes"), SMALL, on_event=on_event,
                        cancel=token)
        try:
            await runner.check()
            fake.script(*titles(2), Hang())
            task = asyncio.ensure_future(runner.compact(SID, "leaf"))
            await second.wait()
            await fake.await_chats(3, timeout=30)
            line = err.getvalue().rsplit("\r", 1)[-1]
            token.cancel()
            run = await task
        finally:
            await backend.aclose()
        assert run is not None and run.summaries_created == 2
        assert re.search(r"\] 2/\d+ .* leaf #\d+–\d+  reading the prompt", line), line


async def test_a_cancel_while_the_next_call_runs_keeps_the_leaf_answered_before(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with Store.open(tmp_path / "cancel.db", tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, SID, 0, 14, words=24)
        token = CancelToken()
        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        runner = Runner(store, Summariser(backend, tokenizer, summary_format="notes"), SMALL, cancel=token)
        try:
            await runner.check()
            fake.script(Reply("The first leaf title."), Hang())
            task = asyncio.ensure_future(runner.compact(SID, "leaf"))
            await fake.await_chats(2, timeout=30)  # the second leaf's call hangs
            token.cancel()
            run = await task
        finally:
            await backend.aclose()
        assert run is not None and run.status == "cancelled" and run.summaries_created == 1
        leaves = store.dag.summaries(SID)
        assert len(leaves) == 1 and leaves[0].content.startswith("The first leaf title.")


async def test_a_server_lost_on_the_next_call_keeps_the_leaf_answered_before(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with Store.open(tmp_path / "lost.db", tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, SID, 0, 14, words=24)
        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        summariser = Summariser(backend, tokenizer, summary_format="notes", retry_backoff_s=(0.0,))
        runner = Runner(store, summariser, SMALL)
        try:
            await runner.check()
            fake.script(Reply("The first leaf title."), Drop(), Drop(), Drop())
            run = await runner.compact(SID, "leaf")
        finally:
            await backend.aclose()
        assert run is not None and run.status == "failed" and run.summaries_created == 1
        assert [s.content.splitlines()[0] for s in store.dag.summaries(SID)] == ["The first leaf title."]


async def test_a_backend_says_when_a_chat_request_is_on_the_wire(tokenizer: Tokenizer) -> None:
    with FakeOllama() as fake:
        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        try:
            written = asyncio.Event()
            backend.calls.when_written(written.set)
            await backend.check()  # its requests are not chat calls
            assert not written.is_set()
            fake.script(Hang(then=Reply("Late answer.")))
            call = asyncio.ensure_future(backend.generate("system", "prompt", temperature=0.0, num_predict=20))
            await written.wait()  # while the call still hangs on the server
            assert not call.done()
            await fake.await_chats(1, timeout=30)  # the server holds it: now it can be let go
            fake.release()
            assert (await call).text == "Late answer."
        finally:
            await backend.aclose()


async def test_a_rounds_next_condensation_is_asked_before_the_one_before_is_written(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    with Store.open(tmp_path / "round.db", tokenizer=tokenizer) as store, FakeOllama() as fake:
        add_episodes(store, SID, 0, 40, words=24)
        before: list[int] = []
        asked_by_then: list[int] = []

        def on_event(ev: RunEvent) -> None:
            if isinstance(ev, SummaryWritten) and not asked_by_then:  # the first condensation took one call
                try:
                    asked_by_then.append(len(fake.wait_for_chats(before[0] + 2, timeout=5)) - before[0])
                except TimeoutError:
                    asked_by_then.append(len(fake.chat_requests) - before[0])

        backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
        summariser = Summariser(backend, tokenizer, summary_format="notes")
        try:
            leaves = await Runner(store, summariser, SMALL).compact(SID, "leaf")
            assert leaves is not None and leaves.summaries_created >= 4  # two groups of two at least
            before.append(len(fake.chat_requests))
            fake.script(*[Reply(f"Condensed title {i}.") for i in range(16)])
            run = await Runner(store, summariser, SMALL, on_event=on_event).compact(SID, "condense")
        finally:
            await backend.aclose()
        assert run is not None and run.status == "done" and run.summaries_created >= 2
        assert asked_by_then == [2]
        first = store.dag.summaries(SID)
        assert any(s.depth == 1 and s.content.startswith("Condensed title 0.") for s in first)
