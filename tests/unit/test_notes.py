"""Summaries made in parts (``summary_format = "notes"``, issue 19) through the fake server: a leaf is
one call, its title asked of the key lines it shows; a condensed summary one call per source, in
order; a bad title retried with the same prefix; a part that fails twice has no title; the ask
echoed back is never stored at a model tier; no previous summary is shown."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize import notes, titles
from hiermem_tui.summarize.keylines import QUOTES_VERSION
from hiermem_tui.summarize.prompts import EXTRACTIVE_VERSION, LEAF_NOTES_SUFFIX
from hiermem_tui.summarize.keylines import HEAD, split
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
FILLER = ("It walks through the reasoning step by step, with the commands to run and what each one prints, "
          "so the user can follow it on their own machine without guessing. ")
CHAT = [
    ("user", "CI fails with ModuleNotFoundError: No module named 'foo'. It passes locally on Python 3.11."),
    ("assistant", "CI installs from setup.cfg, so add foo to install_requires there and rerun the job. " + FILLER * 5),
    ("user", "Should I pin foo? Version 1.3 broke our importer last month."),
    ("assistant", "Yes: pin foo>=1.4 in setup.cfg, since 1.3 had the import bug you saw. " + FILLER * 5),
    ("user", "Please also document the new requirement in README.md under Installation."),
    ("assistant", "I added a line to README.md under Installation that says foo>=1.4 is required. " + FILLER * 5),
]
TITLE = "Pinning foo>=1.4 in setup.cfg and README.md"
NOTES = {
    1: "CI failed on a missing foo, which went into install_requires in setup.cfg.",
    2: "foo was pinned to foo>=1.4 after 1.3 broke the importer.",
    3: "README.md documents that foo>=1.4 is required.",
}
_PART = re.compile(r"This is part (\d+) of (\d+)")
LEAVES = ["- CI failed with ModuleNotFoundError for foo; foo went into install_requires in setup.cfg. " * 3,
          "- foo was pinned to foo>=1.4 because 1.3 broke the importer. " * 3,
          "- README.md now says under Installation that foo>=1.4 is required. " * 3]


def part_of(body: dict[str, Any]) -> tuple[int, int]:
    m = _PART.search(body["messages"][-1]["content"])
    assert m is not None, "every condensed notes prompt says which part it is"
    return int(m.group(1)), int(m.group(2))


def answer(body: dict[str, Any]) -> str:
    """A condensed source's title by its part, a leaf's title."""
    if _PART.search(body["messages"][-1]["content"]):
        return NOTES[part_of(body)[0]]
    return TITLE


def asked(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=answer) as server:
        yield server


def items(tok: Tokenizer, chat: list[tuple[str, str]] = CHAT) -> list[SourceItem]:
    return [SourceItem("episode", t, tok.count(t), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), role=r,
                       label=f"#{i}") for i, (r, t) in enumerate(chat)]


async def summarise(fake: FakeOllama, tok: Tokenizer, req: SummaryRequest) -> Any:
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    await backend.check()
    try:
        return await Summariser(backend, tok, summary_format="notes").summarise(req)
    finally:
        await backend.aclose()


def summaries(tok: Tokenizer) -> list[SourceItem]:
    return [SourceItem("summary", t, tok.count(t), T0 + timedelta(hours=i), T0 + timedelta(hours=i, minutes=30),
                       depth=0, label=f"s{i}") for i, t in enumerate(LEAVES)]


def test_a_leaf_is_one_part_of_all_its_sources_and_its_key_lines(tok: Tokenizer) -> None:
    parts = notes.parts_for(items(tok), 0, "- user: CI fails")
    assert len(parts) == 1 and (parts[0].index, parts[0].count) == (1, 1)
    assert [s.label for s in parts[0].items] == [f"#{i}" for i in range(6)]
    assert parts[0].opened_by == "user" and parts[0].lines == "- user: CI fails"
    assert parts[0].target == notes.GIST_TOKENS
    assert [(p.opened_by, len(p.items)) for p in notes.parts_for(summaries(tok), 1)] == [("summary", 3)]


async def test_a_leaf_in_notes_is_one_call_titling_the_key_lines_it_shows(fake: FakeOllama, tok: Tokenizer) -> None:
    req = SummaryRequest(0, items(tok), 1200, prior_summary="- The user set up the project with Poetry.")
    res = await summarise(fake, tok, req)
    bodies = fake.chat_bodies
    assert len(bodies) == 1 and asked(bodies[0]).endswith(notes.LEAF_ASK)
    gist, lines = split(res.text)
    assert gist == TITLE and lines.startswith("- user: CI fails with ModuleNotFoundError: No module named 'foo'.")
    # the model read key lines the summary shows (which fill what the short title left, in order), not the
    # chat's filler, nor the previous summary; the user's error is quoted once, not once more per sentence
    conversation = asked(bodies[0]).split("<conversation>\n")[1].split("\n</conversation>")[0]
    read, shown = conversation.splitlines(), lines.splitlines()
    assert read and set(read) <= set(shown) and [x for x in shown if x in read] == read
    assert lines.count("No module named 'foo'") == 1
    assert "step by step" not in asked(bodies[0])
    assert all("Poetry" not in m["content"] for m in bodies[0]["messages"])
    assert res.tier == "normal" and res.prompt_version.endswith(LEAF_NOTES_SUFFIX + QUOTES_VERSION)
    assert res.attempts == 1 and len(res.calls) == 1 and not res.rejections
    assert res.output_tokens == res.calls[0].eval_count
    assert tok.count(res.text) <= 1200


async def test_a_bad_title_is_retried_on_the_same_prefix(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply(""))  # the first answer is empty
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    first, retry = (asked(b) for b in fake.chat_bodies)
    prefix = first.split(notes.LEAF_ASK)[0]
    assert retry.startswith(prefix) and retry != first
    assert fake.chat_bodies[0]["messages"][0] == fake.chat_bodies[1]["messages"][0]
    # the server reused its cache: the retry evaluated only the ask
    assert res.calls[1].prompt_eval_count is not None and res.calls[0].prompt_eval_count is not None
    assert res.calls[1].prompt_eval_count < res.calls[0].prompt_eval_count / 3
    assert [r.reason for r in res.rejections] == ["empty"] and res.tier == "aggressive"
    assert split(res.text)[0] == TITLE


FILLER_LINES = "".join(f"\n  - tool: step {k} of the build log printed its usual long line of compiler flags"
                       for k in range(6))
QUOTING = [f"{NOTES[i + 1]}\n{HEAD}\n- user: {q}\n  - {a}{FILLER_LINES}" for i, (q, a) in enumerate([
    ("CI fails with ModuleNotFoundError: No module named 'foo'.", "foo goes into install_requires in setup.cfg."),
    ("Should I pin foo?", "Pin foo>=1.4, since 1.3 broke the importer."),
    ("Document it please.", "README.md now says under Installation that foo>=1.4 is required.")])]
"""Three leaves as the app makes them: a title, then the chat's lines."""


def quoting(tok: Tokenizer) -> list[SourceItem]:
    return [SourceItem("summary", t, tok.count(t), T0 + timedelta(hours=i), T0 + timedelta(hours=i, minutes=30),
                       depth=0, label=f"s{i}", span=(10 * i, 10 * i + 9)) for i, t in enumerate(QUOTING)]


async def test_a_condensed_summary_whose_title_fails_twice_is_its_outline_and_says_fallback(
        fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply(""), Reply(""))
    res = await summarise(fake, tok, SummaryRequest(1, quoting(tok), 900))
    assert res.tier == "fallback" and len(res.calls) == 2 and res.backend == "extractive"
    heads = [ln for ln in res.text.splitlines() if ln.startswith("- #")]
    assert heads == [f"- #0–9: {NOTES[1]}", f"- #10–19: {NOTES[2]}", f"- #20–29: {NOTES[3]}"]


async def test_a_leaf_whose_title_fails_twice_is_its_digest(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply(""), Reply(""))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert res.tier == "fallback" and res.prompt_version == EXTRACTIVE_VERSION and res.backend == "extractive"
    assert len(res.calls) == 2 and all(c.discarded for c in res.calls)


async def test_a_server_that_echoes_the_prompt_tail_is_never_stored_at_a_model_tier(tok: Tokenizer) -> None:
    """Issue 19: the ask itself was stored as a normal summary by a server that ignored the request."""
    def echo(body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])[-600:]

    with FakeOllama(responder=echo) as server:
        res = await summarise(server, tok, SummaryRequest(0, items(tok), 1200))
    assert res.tier == "fallback" and "This is part" not in res.text and "sentences" not in res.text
    assert {r.reason for r in res.rejections} == {"echo"}


async def test_an_invented_name_in_a_title_is_rejected(fake: FakeOllama, tok: Tokenizer) -> None:
    fake.script(Reply("Pinning foo in poetry.lock with `assign_priority_group` and tabPrioritizer.py"))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert "invented" in [r.reason for r in res.rejections]
    assert "assign_priority_group" not in res.text and "tabPrioritizer" not in res.text


PAPER = [("user", "N-Tensor Dynamics: A Novel Framework for Multidimensional Tensor Operations\n"
                  "We introduce three operations on tensors and prove their group properties. Is this novel?"),
         ("assistant", "Each of the three operations closely parallels well-established techniques in numerical "
                       "analysis, so the package is a creative synthesis rather than a new framework. " + FILLER * 6)]


@pytest.mark.parametrize(("title", "kept"), [
    ("Tensorial Dynamics: A Novel Framework for Multidimensional Tensor Operations",  # a word changed
     "N-Tensor Dynamics: A Novel Framework for Multidimensional Tensor Operations"),
    ("N-Tensor Dynamics: A Novel Framework for Multidimensional Tensor Operations and Applications",  # one added
     "N-Tensor Dynamics: A Novel Framework for Multidimensional Tensor Operations…"),
])
async def test_a_title_writing_back_a_line_with_its_words_changed_is_the_chats_line(
        fake: FakeOllama, tok: Tokenizer, title: str, kept: str) -> None:
    """The held-out chats' only false titles (stop 33) were a paper's title with a word changed or a word
    added: a line of the chat written back wrong. Asked again, the model wrote it back wrong again, so the
    chat's own line is the title (with "…" where the model ran on past it), in the one call made."""
    fake.script(Reply(title))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok, PAPER), 1200))
    assert split(res.text)[0] == kept
    assert res.tier == "normal" and not res.rejections and len(res.calls) == 1


def test_a_title_leaving_words_out_of_a_line_is_its_own() -> None:
    lines = "- user: Dynamic-Dimension Algebra: Two Semiring Constructions\n- user: The result is not commutative."
    part = notes.Part(1, 1, (), "user", notes.GIST_TOKENS, lines)
    assert titles.requoted("Dynamic-Dimension Algebra: Semiring Constructions", part) is None
    assert titles.requoted("Dynamic-Dimension Algebra: Two Semiring Constructions", part) is None
    assert titles.requoted("Fixing the build of the semiring library", part) is None
    # leaving out a "not" says the opposite
    assert titles.requoted("The result is commutative", part) == "The result is not commutative."
    # a short title that shares most of a line's words but adds its own is a title, not a misquote
    guide = notes.Part(1, 1, (), "user", notes.GIST_TOKENS, "- user: VSLA: Mathematical & C Implementation Guide (PhD Review)")
    assert titles.requoted("VSLA C Backend Implementation Guide", guide) is None


async def test_a_condensed_summary_is_an_outline_of_every_source_in_order_titled_once(tok: Tokenizer) -> None:
    """Condensed summaries restated their first source only; titled a source at a time, a condensed summary cost
    a call per source. It is one call, titling the outline: every source's range, title and lines, in order."""
    with FakeOllama(responder=lambda body: TITLE) as server:
        res = await summarise(server, tok, SummaryRequest(1, quoting(tok), 900))
        bodies = server.chat_bodies
    assert len(bodies) == 1 and asked(bodies[0]).endswith(notes.TITLE_ASK)
    material = asked(bodies[0])
    at = [material.index(f"#{10 * i}–{10 * i + 9}: {NOTES[i + 1]}") for i in range(3)]
    assert at == sorted(at)  # every source, in order
    title, outline = split(res.text)
    assert title == TITLE and res.tier == "normal"
    heads = [ln for ln in outline.splitlines() if ln.startswith("- #")]
    assert heads == [f"- #0–9: {NOTES[1]}", f"- #10–19: {NOTES[2]}", f"- #20–29: {NOTES[3]}"]
    assert "  - user: Should I pin foo?" in outline.splitlines()  # each source's lines under its heading
    assert tok.count(res.text) <= sum(s.tokens for s in quoting(tok)) // 2 + 1  # at least twice shorter


@pytest.mark.parametrize("answer", [
    "This is part 2 of 3. The user asked how to pin foo and the assistant said foo>=1.4.",
    "(2025-03-01 09:01 UTC)\nuser: Should I pin foo? Version 1.3 broke our importer last month.",
    "- assistant: Yes: pin foo>=1.4 in setup.cfg, since 1.3 had the import bug you saw.",
    "[TodoWrite] todos: [1, 2, 3, 4, 5, 6, 7, 8] [TodoWrite] todos: [1, 2, 3,",
    "This part continues earlier work: the assistant pinned foo>=1.4.",
    "This is part 2 of the chat.",
    "The report is part 1 of 4.",
    "The report is about the thing asked about, worked on, and found to decide what went wrong.",
    "The report is about the chat log to report on, and it's a bit of a long one.",
    "Your previous summary was not usable.",
    "The report is part of a longer conversation, and the summary was not applicable.",
    "The report is: document.addonsEnabled = true; ``` The user cannot edit tabs right now.",
    '#define VSLA_ENABLE_CUDA #include "vsla.h" #ifdef VSLA_ENABLE_CUDA',
    "Report on Chat Log Part 3",
    "Merge of Reports",
    "Merge of Logs",
    "What is this part of the log about? Pinning foo.",
    "What is this log about? Pinning foo.",
    "Your previous title for this log was not usable. Pinning foo.",
    "This log contains a report about the performance of a CUDA-based GPU-GPU architecture.",
    "Your summary is too long and contains multiple sentences.",
    "Your previous summary was not only unnecessary but also unclear.",  # SmolLM2, held-out chats (stop 33)
    'document.write("Your summary is not available in any browser.");',
    "document.write(` <h1>Durban-Designer: Update to use Durban-Designer as author</h1>`);",
])
async def test_a_note_holding_the_prompts_frame_is_an_echo(fake: FakeOllama, tok: Tokenizer, answer: str) -> None:
    """SmolLM2-135M on the rig: notes opening with "This is part 2 of 3.", a log line, a tool call as
    the prompt shows it, the ask's own lead, or a run of the prompt's wording ("the thing asked about,
    worked on", "chat log to report on", the retry's "not usable") were kept at a model tier."""
    fake.script(Reply(answer))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
    assert [r.reason for r in res.rejections] == ["echo"] and res.tier == "aggressive"
    assert split(res.text)[0] == TITLE


async def test_a_title_naming_its_part_a_report_loses_the_word_unless_the_chat_uses_it(
        fake: FakeOllama, tok: Tokenizer) -> None:
    """The prompt asks for a report on a chat log and Qwen titled parts so ("BOM v2 Report", "Report on the
    import failure …"): the word is the prompt's, not the chat's, and is left out without asking again."""
    for said, kept in (("Missing foo Module in CI Report", "Missing foo Module in CI"),
                       ("Report on the foo>=1.4 pin.", "foo>=1.4 pin."),
                       ("Reports: README.md Installation", "README.md Installation")):
        fake.script(Reply(said))
        res = await summarise(fake, tok, SummaryRequest(0, items(tok), 1200))
        assert split(res.text)[0] == kept and res.tier == "normal" and not res.rejections and len(res.calls) == 1
    chat = [(r, t.replace("README.md", "the weekly report")) for r, t in CHAT]
    fake.script(Reply("Weekly report update"))
    res = await summarise(fake, tok, SummaryRequest(0, items(tok, chat), 1200))
    assert split(res.text)[0] == "Weekly report update"
