"""One fidelity value and one write path (issue 22, item 3), through the fake Ollama server and
the real store: what the summariser returned for an answer is what the row holds and what
``check`` reports, whichever kind of run made it, and the answer is measured once."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import hiermem_tui.summarize.summariser as summariser_module
from hiermem_tui.compaction import Runner, RunEvent, SummaryStarted, SummaryWritten
from hiermem_tui.compaction.check import check_session
from hiermem_tui.config import Policy
from hiermem_tui.fidelity_value import MAX_STORED, Fidelity
from hiermem_tui.store import NewEpisode, Run, Store
from hiermem_tui.summarize import Answered, OllamaBackend, Summariser, SummaryRequest, SummaryResult
from hiermem_tui.summarize.types import EventCallback
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama

from ._engine_fixtures import T0

POLICY = Policy(idle_after=10 ** 9, fresh_tail=2, leaf_chunk_tokens=300, leaf_min_episodes=2, leaf_target_tokens=120,
                condense_fanout=2, condensed_target_tokens=120, fidelity_threshold=0.5)
COMPACTION = Path(__file__).resolve().parents[2] / "hiermem_tui" / "compaction"


class Recording(Summariser):
    """The real summariser, keeping what it returned (in the order it returned it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results: list[SummaryResult] = []

    async def answer(self, request: SummaryRequest, *, on_event: EventCallback | None = None) -> Answered:
        got = await super().answer(request, on_event=on_event)

        def finish(req: SummaryRequest) -> SummaryResult:
            res = got.finish(req)
            self.results.append(res)
            return res

        return Answered(got.request, finish)


def answer(body: dict[str, Any]) -> str:
    """A plain answer naming two of the many names every episode holds: it keeps few of them."""
    return "- The user listed build steps such as step_0_a and step_1_a and asked which ones ran."


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=("llama3.2:latest",), responder=answer) as server:
        yield server


def add_named_episodes(store: Store, sid: str, count: int) -> None:
    """Episodes naming 14 distinct snake_case names each: a leaf's sources hold more than
    ``MAX_STORED`` names, so what a row keeps is bounded."""
    store.sessions.upsert(sid, title="names", source="test", created_at=T0)
    store.episodes.append(sid, [
        NewEpisode(str(i), "user" if i % 2 == 0 else "assistant",
                   f"Episode {i} runs " + ", ".join(f"step_{i}_{c}" for c in "abcdefghijklmn") + ".",
                   T0 + timedelta(minutes=i))
        for i in range(count)
    ])


async def run_path(runner: Runner, store: Store, sid: str, path: str) -> Run | None:
    if path == "pass":
        return await runner.compact(sid, "full")
    first = await runner.compact(sid, "full")  # something to re-make
    assert first is not None and first.status == "done"
    runner.summariser.results.clear()  # type: ignore[attr-defined]
    if path == "resummarize":
        return await runner.remake.summary(store.dag.summaries(sid)[0].id)
    if path == "session":
        return await runner.remake.session(sid)
    return await runner.remake.repair(sid, 1.0)


@pytest.mark.parametrize("path", ["pass", "resummarize", "session", "repair"])
async def test_every_run_writes_the_summarisers_fidelity_whole(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama, path: str
) -> None:
    add_named_episodes(store, "s", 20)
    backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
    summariser = Recording(backend, tokenizer, retry_backoff_s=(0.0,))
    events: list[RunEvent] = []
    runner = Runner(store, summariser, POLICY)
    try:
        runner.on_event = events.append
        run = await run_path(runner, store, "s", path)
    finally:
        await backend.aclose()
    assert run is not None and run.status == "done", run
    mine = [e for e in events if getattr(e, "run_id", None) == run.id]
    written = [e for e in mine if isinstance(e, SummaryWritten)]
    results = summariser.results
    assert len(written) == len(results) == run.summaries_created >= 3
    briefs = [e for e in mine if isinstance(e, SummaryStarted) and e.what == "brief"]
    assert len([e for e in mine if isinstance(e, SummaryStarted)]) == len(written) + len(briefs)
    for ev, res in zip(written, results):  # one at a time (parallel 1): written in the order made
        stored = store.dag.get(ev.summary.id)
        assert stored is not None and res.fidelity is not None
        assert stored.fidelity == ev.summary.fidelity == res.fidelity  # the whole value, not figures copied
        assert stored.keywords == res.keywords and stored.tier == res.tier
    assert any(r.fidelity is not None and r.fidelity.identifiers > MAX_STORED for r in results)
    assert run.flagged == sum(r.fidelity is not None and r.fidelity.low(POLICY.fidelity_threshold) for r in results)
    # check reads the same value: the stored one, not a copy of its fields
    rows = check_session(store, "s")
    assert rows and all(type(r.fidelity) is Fidelity and r.fidelity == r.summary.fidelity for r in rows)


async def test_an_answer_is_measured_once(
    store: Store, tokenizer: Tokenizer, fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each accepted answer is measured against its sources once: the measure that judged it for
    invented names is the one its result carries (before, it was measured again when finishing)."""
    measured: list[str] = []
    real = summariser_module.measure_against

    def counting(text: str, *args: Any, **kwargs: Any) -> Fidelity:
        measured.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(summariser_module, "measure_against", counting)
    add_named_episodes(store, "s", 20)
    backend = OllamaBackend(fake.url, "llama3.2", tokenizer, timeout_s=30)
    summariser = Recording(backend, tokenizer, retry_backoff_s=(0.0,))
    try:
        run = await Runner(store, summariser, POLICY).compact("s", "full")
    finally:
        await backend.aclose()
    assert run is not None and run.status == "done" and run.summaries_created >= 4
    assert all(r.attempts == 1 and r.tier == "normal" for r in summariser.results)
    assert len(measured) == len(summariser.results)


def _imports(path: Path) -> set[str]:
    """Names of the compaction modules ``path`` imports anywhere: at the top, inside functions,
    under ``TYPE_CHECKING``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hiermem_tui.compaction."):
            out.add((node.module or "").split(".")[2])
    return out


def test_compaction_modules_import_no_cycle() -> None:
    """Runner and Remaker used to import each other (one of them under TYPE_CHECKING); no module
    of compaction/ reaches itself again through its imports, wherever they are written."""
    graph = {p.stem: _imports(p) - {"__init__"} for p in COMPACTION.glob("*.py") if p.stem != "__init__"}

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            m = todo.pop()
            if m not in seen and m in graph:
                seen.add(m)
                todo.extend(graph[m])
        return seen

    assert "runner" not in reach("remake") and "runner" not in reach("passes")
    assert [m for m in graph if m in reach(m)] == []


def test_only_the_executor_summarises_and_writes() -> None:
    """Passes, re-summarise and repair make and write through ``Executor.make`` / ``commit``:
    no other compaction module calls the summariser or writes summaries itself."""
    calls = {"summarise", "answer", "write", "write_unchanged", "set_fidelity"}
    for p in COMPACTION.glob("*.py"):
        found = {n.func.attr for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in calls}
        if p.stem == "executor":
            assert {"answer", "write", "write_unchanged"} <= found
        elif p.stem == "check":
            assert found <= {"set_fidelity"}  # check stores a measurement of an older summary
        else:
            assert not found, (p.name, found)
