"""The bundled demo's model summaries: recorded answers, replayed with no model (``demo/replay.py``).

The demo database is built from the shipped ``model_answers.json``: the model's summaries are the
active ones (backend and model saying they were recorded, and by whom), the extractive pass's are
kept as their superseded versions, and a call that was never recorded falls back, never made up.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.demo import bundled_demo_path
from hiermem_tui.demo.replay import REPLAY_BACKEND, Recording, ReplayBackend, answer_key, answers_path, prompt_versions
from hiermem_tui.demo_db import _fingerprint, build_demo_db, shaping_modules
from hiermem_tui.store import Store, Summary
from hiermem_tui.summarize import Generation, ModelError, SourceItem, Summariser, SummaryRequest
from hiermem_tui.tokens import Tokenizer

RERECORD = "the prompts changed since the recording: re-run scripts/make_demo_answers.py (assets/demo/README.md)"


def _summaries(db: Path) -> dict[str, list[Summary]]:
    store = Store.open(db, readonly=True)
    try:
        return {s.id: store.dag.summaries(s.id, status=None) for s in store.sessions.each() if s.summaries}
    finally:
        store.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Summary]]:
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    return _summaries(build_demo_db(db, Tokenizer()))


def _recording(answers: dict[str, list[dict[str, object]]] | None = None) -> Recording:
    return Recording(model="some-model:1b", recorded_at="2026-01-01", app_version="0", summary_format="notes",
                     prompt_versions=prompt_versions(), context_limit=32768, answers=answers or {})


def test_the_shipped_answers_say_who_answered_and_to_which_prompts() -> None:
    rec = Recording.load(answers_path())
    assert rec.model and rec.answers and rec.summary_format == "notes"
    datetime.strptime(rec.recorded_at, "%Y-%m-%d")
    assert rec.prompt_versions == prompt_versions(), RERECORD
    assert all(len(key) == 64 and gens and isinstance(gens[0]["text"], str) for key, gens in rec.answers.items())


def test_the_demo_opens_on_the_model_summaries_with_the_extractive_ones_kept(demo: dict[str, list[Summary]]) -> None:
    model = Recording.load(answers_path()).model
    assert len(demo) >= 6
    for sid, rows in demo.items():
        active = [s for s in rows if s.status == "active"]
        old = [s for s in rows if s.status == "superseded"]
        missed = [r for s in active for r in s.rejections if "no recorded answer" in str(r.get("detail", ""))]
        assert not missed, f"{sid}: {RERECORD}"
        made = [s for s in active if s.backend == REPLAY_BACKEND]
        assert made and all(s.model == model for s in made), sid
        # anything else is the summariser's own honest fallback to a rejected answer, never a stand-in
        assert all(s.backend == "extractive" and s.tier == "fallback" for s in active if s not in made), sid
        assert old and all(s.backend == "extractive" and s.model is None for s in old), sid
        assert Counter((s.depth, s.first_seq, s.last_seq) for s in old) == Counter(
            (s.depth, s.first_seq, s.last_seq) for s in active), sid


async def test_a_call_never_recorded_is_a_model_error_and_a_recorded_one_is_answered_in_turn(tmp_path: Path) -> None:
    key = answer_key("sys", "prompt", 0.0, 40, None)
    first, second = Generation("First.", 10, 2, 1.5, "stop"), Generation("Second.", 10, 2, 1.0, "stop")
    rec = _recording()
    rec.add(key, first)
    rec.add(key, second)
    path = tmp_path / "answers.json"
    path.write_text(rec.dumps(), encoding="utf-8")
    json.loads(path.read_text(encoding="utf-8"))  # what it writes is plain JSON
    backend = ReplayBackend(Recording.load(path))
    got = [await backend.generate("sys", "prompt", temperature=0.0, num_predict=40) for _ in range(3)]
    assert got == [first, second, second]
    with pytest.raises(ModelError, match="no recorded answer"):
        await backend.generate("sys", "another prompt", temperature=0.0, num_predict=40)
    assert backend.missed == 1 and backend.name == REPLAY_BACKEND and backend.model == "some-model:1b"


async def test_a_prompt_not_recorded_falls_back_to_the_extractive_digest(tokenizer: Tokenizer) -> None:
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    words = "We moved the retry budget to the config file and the flaky test passed fifty runs in a row."
    sources = [SourceItem("episode", f"{words} Step {i}.", 30, t, t, role="user" if i % 2 else "assistant",
                          label=f"#{i}") for i in range(8)]
    res = await Summariser(ReplayBackend(_recording()), tokenizer, summary_format="notes").summarise(
        SummaryRequest(0, sources, 400))
    assert res.tier == "fallback" and res.backend == "extractive" and res.model is None and res.text
    assert any("no recorded answer" in note for note in res.notes)


def test_a_demo_built_with_no_matching_answers_still_opens_on_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(_recording({"0" * 64: [{"text": "Never asked."}]}).dumps(), encoding="utf-8")
    rows = _summaries(build_demo_db(tmp_path / "demo.db", Tokenizer(), answers=path))
    active = [s for ss in rows.values() for s in ss if s.status == "active"]
    assert active and all(s.backend == "extractive" and s.tier == "fallback" for s in active)
    assert all(s.content != "Never asked." for s in active)


def test_the_cached_demo_is_rebuilt_when_the_answers_or_the_prompts_change(tmp_path: Path) -> None:
    here = Path(__file__).resolve().parents[2] / "hiermem_tui"
    hashed = {m.relative_to(here).as_posix() for m in shaping_modules()}
    assert {"summarize/prompts.py", "summarize/notes.py", "summarize/keylines/select.py", "summarize/text.py", "summarize/summariser.py",
            "summarize/acceptance.py", "demo/replay.py", "compaction/runner.py", "store/schema.py"} <= hashed
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_recording().dumps(), encoding="utf-8")
    b.write_text(_recording({"1" * 64: [{"text": "x"}]}).dumps(), encoding="utf-8")
    source = bundled_demo_path()
    assert _fingerprint(source, a) != _fingerprint(source, b)
    assert _fingerprint(source, a) == _fingerprint(source, a)
