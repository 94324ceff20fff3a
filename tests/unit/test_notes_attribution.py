"""Who speaks is the chat's, not the model's (issue 19): in a leaf's part where no user says
anything, the model's sentences that make a user speak are dropped — the 1.5B model's commonest
false statement ("The user asked about select_best_backend" for a grep result). Through the fake
server: such a sentence is never stored, and a note made only of them is retried."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hiermem_tui.summarize import OllamaBackend, Summariser, notes, titles
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.keylines import split
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
FILLER = ("The output goes on with the compiler's include search path, each directory it tried and the flags it "
          "was given, line after line, as a build log does. ")
AGENT = [
    ("user", "The CI build fails since this morning; find the cause and fix it please."),
    ("assistant", "Let me read the build log first to find the step that fails. " + FILLER * 3),
    ("tool", "error: foo.h: No such file or directory " + FILLER * 4),
    ("assistant", "The build fails because the foo headers are not installed in the image, so I add libfoo-dev "
                  "to the Dockerfile now. " + FILLER * 3),
    ("tool", "Dockerfile updated: RUN apt-get install -y libfoo-dev " + FILLER * 4),
]


def src(role: str, text: str, tok: Tokenizer | None = None, i: int = 0) -> SourceItem:
    n = tok.count(text) if tok else len(text.split())
    return SourceItem("episode", text, n, T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), role=role,
                      label=f"#{i}")


def part(*items: SourceItem, opened_by: str = "continued") -> notes.Part:
    return notes.Part(1, 1, tuple(items), opened_by, 200)


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


def agent(tok: Tokenizer) -> list[SourceItem]:
    return [src(r, t, tok, i) for i, (r, t) in enumerate(AGENT)]


def test_a_leaf_where_no_user_speaks_carries_on_earlier_work(tok: Tokenizer) -> None:
    assert [(p.opened_by, notes.spoke(p)) for p in notes.parts_for(agent(tok), 0)] == [("user", True)]
    assert [(p.opened_by, notes.spoke(p)) for p in notes.parts_for(agent(tok)[1:], 0)] == [("continued", False)]


def test_markup_and_interruptions_are_not_the_users_words() -> None:
    p = part(src("user", "<command-name>/exit</command-name> <command-message>exit</command-message>"),
             src("user", "[Request interrupted by user]"), src("assistant", "Stopped."))
    assert not notes.spoke(p)
    assert notes.said(src("user", "[image image/png] Cool but the name is still wrong")) == \
        "Cool but the name is still wrong"


def test_where_no_user_speaks_the_sentences_that_make_one_speak_go() -> None:
    p = part(src("assistant", "Let me grep."), src("tool", "src/a.c: select_best_backend()"))
    note = ("The user asked about the select_best_backend function. The assistant searched src/ and found it in "
            "src/a.c. The user's request was then answered.")
    assert titles.unheard(p, note) == "The assistant searched src/ and found it in src/a.c."
    assert titles.unheard(p, "The user asked about it.") == ""


def test_where_a_user_speaks_or_in_a_condensed_summary_the_note_is_kept_whole() -> None:
    note = "The user asked to pin foo. The assistant pinned foo>=1.4 in setup.cfg."
    assert titles.unheard(part(src("user", "Pin foo to 1.4 please."), opened_by="user"), note) == note
    assert titles.unheard(part(src("assistant", "- The user asked for x."), opened_by="summary"), note) == note


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


async def summarise(fake: FakeOllama, tok: Tokenizer) -> Any:
    """A leaf of the agent's work after the user's message: no user speaks in it."""
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    await backend.check()
    try:
        return await Summariser(backend, tok, summary_format="notes").summarise(SummaryRequest(0, agent(tok)[1:], 1200))
    finally:
        await backend.aclose()


async def test_a_user_made_to_speak_in_an_agents_part_is_not_stored(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply("The user asked why foo.h was missing. The assistant found that libfoo-dev was not installed "
                      "and added it to the Dockerfile."))
    res = await summarise(fake, tok)
    assert res.tier == "normal" and not res.rejections
    assert split(res.text)[0] == "The assistant found that libfoo-dev was not installed and added it to the Dockerfile."


async def test_a_note_that_only_makes_a_user_speak_is_retried(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply("The user asked the assistant to add libfoo-dev."),
                Reply("The assistant added libfoo-dev to the Dockerfile."))
    res = await summarise(fake, tok)
    assert [r.reason for r in res.rejections] == ["misattributed"] and res.tier == "aggressive"
    assert split(res.text)[0] == "The assistant added libfoo-dev to the Dockerfile."
    assert "the user says nothing in this part" in fake.chat_bodies[1]["messages"][-1]["content"]
