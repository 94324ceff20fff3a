"""A model that writes (``summarize/writes.py``) through the fake server: a leaf is one call showing its key lines
and its stretch, the answer is the summary; an invented name or number is refused, retried once on the same prefix
at the aggressive tier, and a leaf refused twice is its key lines (``fallback``); the ask is never stored; the
first person and a silent user made to speak are refused; a condensed summary is written from its sources; the
way is the override, else the model's measured one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from hiermem_tui.summarize import OllamaBackend, Summariser, writes
from hiermem_tui.summarize.keylines import EXTRACTIVE_VERSION, QUOTES_VERSION
from hiermem_tui.summarize.prompts import KEY_LINES_HEADING, LEAF_NOTES_SUFFIX
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply
from tests.unit.test_notes import FILLER, T0, asked, items, tok  # noqa: F401 (tok: a fixture)

FAITHFUL = ("CI failed with ModuleNotFoundError for foo while it passed locally on Python 3.11; the assistant had foo "
            "added to install_requires in setup.cfg. Because version 1.3 had broken the importer, foo was pinned to "
            "foo>=1.4, and the stretch ends with README.md documenting the requirement under Installation.")
INVENTED_NUMBER = FAITHFUL.replace("Python 3.11", "Python 3.12")
INVENTED_NAME = FAITHFUL.replace("setup.cfg", "pyproject.toml")


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=lambda body: FAITHFUL) as server:
        yield server


async def summarise(fake: FakeOllama, tok: Tokenizer, req: SummaryRequest, *, way: str = "writes",
                    ways: dict[str, str] | None = None) -> Any:
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    await backend.check()
    try:
        return await Summariser(backend, tok, summary_format="notes", summary_way=way, ways=ways).summarise(req)
    finally:
        await backend.aclose()


async def test_a_written_leaf_is_one_call_showing_its_key_lines_and_its_stretch(fake: FakeOllama,
                                                                                tok: Tokenizer) -> None:
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    body = asked(fake.chat_bodies[0])
    assert len(fake.chat_bodies) == 1
    assert KEY_LINES_HEADING in body and "<key_lines>\n- user: CI fails with ModuleNotFoundError" in body
    assert "step by step" in body.split("<conversation>")[1]  # the stretch itself, not only its key lines
    assert body.index("</key_lines>") < body.index("<conversation>") < body.index(writes.LEAF_ASK.split("{")[0])
    assert res.text == FAITHFUL and res.tier == "normal" and res.prompt_version == "leaf-v4" + writes.WRITES_SUFFIX
    assert res.backend == "ollama" and not res.rejections and res.fidelity.novel == ()


async def test_an_invented_number_is_refused_and_retried_on_the_same_prefix(fake: FakeOllama,
                                                                            tok: Tokenizer) -> None:
    fake.script(Reply(INVENTED_NUMBER))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    first, retry = (asked(b) for b in fake.chat_bodies)
    assert retry.startswith(first.split(writes.LEAF_ASK.split("{")[0])[0]) and retry != first
    assert "named things the log does not name" in retry  # the retry is told why
    assert [(r.tier, r.reason) for r in res.rejections] == [("normal", "invented")]
    assert "'3.12'" in res.rejections[0].detail
    assert res.tier == "aggressive" and res.text == FAITHFUL
    assert res.prompt_version == "leaf-v4+aggressive" + writes.WRITES_SUFFIX


async def test_a_leaf_refused_twice_is_its_key_lines_at_the_fallback_tier(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply(INVENTED_NAME), Reply(INVENTED_NUMBER))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert [r.reason for r in res.rejections] == ["invented", "invented"] and len(res.calls) == 2
    assert res.tier == "fallback" and res.prompt_version == EXTRACTIVE_VERSION and res.backend == "extractive"
    assert res.text.startswith("- user: CI fails with ModuleNotFoundError")  # the chat's key lines
    assert "pyproject.toml" not in res.text and "3.12" not in res.text


@pytest.mark.parametrize(("answer", "reason"), [
    # the ask written back
    (writes.LEAF_ASK.replace("{words}", "90") + "\n" + writes.LEAF_ASK.replace("{words}", "90"), "echo"),
    # the key lines' block copied
    ("<key_lines>\n- user: CI fails with ModuleNotFoundError\n</key_lines>", "echo"),
    # the model takes the assistant's place
    ("Sure! Here's the next step: rerun the job and tell me what you see.", "continues_chat"),
    ("We pinned foo>=1.4 in setup.cfg because 1.3 broke the importer.", "continues_chat"),
    ("You should pin foo>=1.4 in setup.cfg, since 1.3 broke the importer.", "continues_chat"),
])
async def test_what_a_written_summary_may_not_be_is_never_stored(fake: FakeOllama, tok: Tokenizer, answer: str,
                                                                  reason: str) -> None:
    fake.script(Reply(answer), Reply(answer))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert res.rejections[0].reason == reason and len(res.rejections) == 2
    assert res.tier == "fallback" and answer not in res.text


async def test_words_in_quotation_marks_must_be_the_chats(fake: FakeOllama, tok: Tokenizer) -> None:
    """SmolLM2 on the calibration pack: 'The user asked: "What's the plan for the 13th night of the trip?"'."""
    fake.script(Reply('The user asked: "What is the plan for fixing the importer?" and foo was pinned to foo>=1.4.'))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert [(r.reason, "quotes words no source holds" in r.detail) for r in res.rejections] == [("invented", True)]
    assert res.text == FAITHFUL
    quoted = 'The user asked "Should I pin foo?" and foo was pinned to foo>=1.4 since 1.3 broke the importer.'
    assert writes.misquotes(quoted, items(tok)) is None  # the chat's own words may be quoted


async def test_a_user_who_says_nothing_is_not_made_to_speak(fake: FakeOllama, tok: Tokenizer) -> None:
    agent = [("assistant", "[Bash] command: pytest -q tests/test_io.py"),
             ("tool", "3 failed, 41 passed in 2.31s\nFAILED tests/test_io.py::test_read_bom"),
             ("assistant", "The three failures all come from read_csv ignoring the BOM; utf-8-sig fixes it. " + FILLER),
             ("tool", "44 passed in 2.02s")]
    fake.script(Reply("The user asked why tests/test_io.py failed, and the assistant fixed read_csv with utf-8-sig."),
                Reply("The assistant ran pytest on tests/test_io.py, traced the failures to read_csv ignoring the "
                      "BOM, fixed it with utf-8-sig, and the tests passed."))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok, agent), 1200))
    assert [r.reason for r in res.rejections] == ["misattributed"] and res.tier == "aggressive"


async def test_a_condensed_summary_is_written_from_its_sources(fake: FakeOllama, tok: Tokenizer) -> None:
    leaves = [FAITHFUL, "Later the user added a changelog entry for foo>=1.4 in CHANGELOG.md. " + FILLER * 2]
    sources = [SourceItem("summary", t, tok.count(t), T0 + timedelta(hours=i), T0 + timedelta(hours=i, minutes=30),
                          depth=0, label=f"s{i}") for i, t in enumerate(leaves)]
    res = await summarise(fake, tok, SummaryRequest(1, sources, 900))
    body = asked(fake.chat_bodies[0])
    assert "<summaries>" in body and "CHANGELOG.md" in body and writes.MERGE_ASK.split("{")[0] in body
    assert "<key_lines>" not in body
    assert res.tier == "normal" and res.prompt_version == "condensed-v3" + writes.WRITES_SUFFIX


@pytest.mark.parametrize(("way", "ways", "writes_it"), [
    ("measured", {"llama3.2:latest": "writes"}, True),
    ("measured", {"llama3.2": "writes"}, True),  # x and x:latest are one model
    ("measured", {"other:7b": "writes"}, False),  # never measured: titles
    ("titles", {"llama3.2:latest": "writes"}, False),  # the override wins
    ("writes", {}, True),
])
async def test_the_way_is_the_override_else_the_models_measured_one(fake: FakeOllama, tok: Tokenizer, way: str,
                                                                    ways: dict[str, str], writes_it: bool) -> None:
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200), way=way, ways=ways)
    assert res.prompt_version.endswith(writes.WRITES_SUFFIX) is writes_it
    if not writes_it:
        assert LEAF_NOTES_SUFFIX + QUOTES_VERSION in res.prompt_version
