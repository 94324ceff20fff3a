"""The model never waits on the app (issue 38 item 4): while the model answers one summary's call, the next
summary's request is worked out (its messages' lines, its key lines, its first prompt), and while it answers a
pass's last call, the session's brief material is read; what a run writes is the same either way. Against the
fake Ollama server, whose calls here hang until released; every wait is on the server's log or on what the app
has worked out, never on time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from hiermem_tui.compaction import Runner
from hiermem_tui.compaction.requests import leaf_request
from hiermem_tui.store import Store
from hiermem_tui.summarize import OllamaBackend, Summariser, keylines
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Hang, Reply

from ._engine_fixtures import SMALL, add_episodes


def lines_kept(role: str | None, text: str) -> bool:
    """Whether a message's lines were worked out already (``keylines.role_lines`` keeps them)."""
    kept = keylines._KEPT.get(role or "")
    return kept is not None and kept.get(text) is not None


async def until(holds: Callable[[], bool], deadline: float = 30.0) -> None:
    """Let the run go on until ``holds()`` (a generous deadline for a busy machine; the condition, not time)."""
    end = time.monotonic() + deadline
    while not holds():
        assert time.monotonic() < end, "the condition never held"
        await asyncio.sleep(0.01)


async def test_the_next_leaf_and_the_brief_are_read_while_the_model_answers(tmp_path: Path, tokenizer: Tokenizer) -> None:
    with Store.open(tmp_path / "ahead.db", tokenizer=tokenizer) as store:
        add_episodes(store, "ahead-38", 0, 14, words=24)
        with FakeOllama() as fake:
            backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
            runner = Runner(store, Summariser(backend, tokenizer, summary_format="notes"), SMALL)
            try:
                await runner.check()
                chunks = runner.plan_leaf("ahead-38")
                assert len(chunks) >= 2
                fake.script(Hang(then=Reply("First leaf title.")), *[Reply("A leaf title.")] * (len(chunks) - 2),
                            Hang(then=Reply("Last leaf title.")))
                second = leaf_request(store, "ahead-38", chunks[1].first_seq, chunks[1].last_seq,
                                      SMALL.leaf_target_tokens)
                tail = [ep for ep in store.episodes.each("ahead-38") if ep.seq > chunks[-1].last_seq]
                assert tail and not any(lines_kept(s.role, s.text) for s in second.sources)
                run = asyncio.ensure_future(runner.compact("ahead-38", "full"))
                await fake.await_chats(1, timeout=30)  # the first leaf's call hangs: the second leaf is read meanwhile
                await until(lambda: all(lines_kept(s.role, s.text) for s in second.sources))
                assert len(fake.chat_requests) == 1 and not any(lines_kept(e.role, e.content) for e in tail)
                fake.release()
                await fake.await_chats(len(chunks), timeout=30)  # the last leaf's call: the brief's material is read meanwhile
                await until(lambda: all(lines_kept(e.role, e.content) for e in tail))
                fake.release()
                done = await run
            finally:
                await backend.aclose()
        assert done.status == "done" and done.summaries_created >= len(chunks)
        brief = store.briefs.active("ahead-38")
        assert brief is not None and brief.last_seq == tail[-1].seq
