"""Sectioned summaries: the schema's bounds, reading a (cut off) JSON answer, the Markdown it
becomes, and a sectioned summary through the summariser and the fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize.sections import layout_for, parse, render
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import targets_for
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
ANSWER = {
    "doing": "The user was fixing a CI job that failed with ModuleNotFoundError for foo.",
    "decisions": ["foo was added to install_requires in setup.cfg.", "foo is pinned to foo>=1.4."],
    "names": ["setup.cfg", "install_requires", "3f2a1b9"],
    "errors": ["ModuleNotFoundError for foo in CI: fixed by declaring the dependency."],
    "open_questions": [],
}
CHAT = [
    ("user", "CI fails with ModuleNotFoundError: No module named 'foo'. It passes locally on Python 3.11."),
    ("assistant", "CI installs from setup.cfg: add foo to install_requires there and rerun the job."),
    ("user", "Done, I edited setup.cfg and pushed commit 3f2a1b9. The pipeline is green now."),
    ("assistant", "Consider pinning foo>=1.4 since 1.3 had an import bug."),
] * 4


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=lambda body: json.dumps(ANSWER)) as server:
        yield server


def test_the_layout_bounds_a_full_answer_by_its_target(tok: Tokenizer) -> None:
    for target in (24, 120, 375, 750, 2000):
        layout = layout_for(target)
        full = {s: ["x" * layout.lengths[s]] * layout.items[s] for s in layout.items}
        full["doing"] = "y" * layout.lengths["doing"]
        text = render(full, layout)
        assert tok.count(text) <= max(target * 1.25, target + 40), (target, tok.count(text))
        assert layout.num_predict >= tok.count(json.dumps(full))  # the whole JSON fits its num_predict
        assert layout.items["names"] >= 3


def test_render_is_markdown_with_empty_sections_left_out() -> None:
    text = render(ANSWER)
    assert text.startswith("The user was fixing a CI job")
    assert "Decisions and changes:\n- foo was added to install_requires in setup.cfg." in text
    assert "Names: `setup.cfg`, `install_requires`, `3f2a1b9`" in text
    assert "Open questions" not in text and "{" not in text


def test_a_cut_off_answer_is_read_to_its_last_complete_item() -> None:
    raw = json.dumps(ANSWER)
    cut = raw[: raw.index("3f2a1b9") + 3]  # mid-string, inside the names list
    obj = parse(cut)
    assert obj is not None and obj["doing"] == ANSWER["doing"] and obj["names"] == ["setup.cfg", "install_requires"]
    assert parse("no JSON here") is None and parse('{"doing": "unterminated') is None


def test_an_item_stopped_at_its_length_is_cut_to_a_whole_word() -> None:
    layout = layout_for(200)
    limit = layout.lengths["decisions"]
    item = ("The user moved the cache directory to tmp_path and rewrote " * 10)[:limit]
    text = render({"decisions": [item]}, layout)
    assert text.endswith("…") and not text.endswith(" …") and len(text) < len("Decisions and changes:\n- ") + limit + 2


def test_an_item_stopped_a_few_characters_short_of_its_length_is_marked_cut() -> None:
    """Issue 19: "as well as a basic enviro" ended 3 characters before maxLength (the grammar's next
    token did not fit): it was stored cut mid-word without a mark."""
    layout = layout_for(200)
    limit = layout.lengths["decisions"]
    item = ("The assistant added a thermostat, a humidity probe as well as a basic environment logger " * 4)
    item = item[: limit - 3].rstrip()
    assert not item.endswith(("environment", "logger"))  # mid-word
    text = render({"decisions": [item]}, layout)
    assert text.endswith("…") and item[: len(text) - len("Decisions and changes:\n- ") - 1] in text
    whole = "The assistant added a thermostat."
    assert render({"decisions": [whole]}, layout).endswith(whole)


async def test_a_sectioned_summary_through_the_server(fake: FakeOllama, tok: Tokenizer) -> None:
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    items = [SourceItem("episode", t, tok.count(t), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), role=r)
             for i, (r, t) in enumerate(CHAT)]
    req = SummaryRequest(0, items, 1200)
    await backend.check()
    res = await Summariser(backend, tok, summary_format="sections").summarise(req)
    (body,) = fake.chat_bodies
    assert body["format"]["type"] == "object" and "names" in body["format"]["properties"]
    assert res.tier == "normal" and res.prompt_version == "leaf-v4+sections"
    assert res.text == render(ANSWER, layout_for(targets_for(req).normal)) and res.tokens <= targets_for(req).normal
    assert body["options"]["num_predict"] == layout_for(targets_for(req).normal).num_predict
    # an old server without structured outputs gets the plain prompt
    fake.version = "0.4.7"
    old = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    await old.check()
    fake.script(Reply("The user fixed CI by adding foo to install_requires in setup.cfg (commit 3f2a1b9)."))
    res = await Summariser(old, tok, summary_format="sections").summarise(req)
    assert "format" not in fake.chat_bodies[-1] and res.prompt_version == "leaf-v4"
    await backend.aclose()
    await old.aclose()


def test_plain_words_in_the_names_list_are_the_prompt_copied_back() -> None:
    """A real 1.5B answer listed the field's description as its names."""
    answer = {"doing": "The user refined the guide.",
              "names": ["file paths", "commands", "code identifiers", "vsla_tensor_t", "gemini", "git filter-branch",
                        "the Gemini draft", "parseConfig loader", "3f2a1b9"]}
    assert "Names: `vsla_tensor_t`, `gemini`, `git filter-branch`, `parseConfig loader`, `3f2a1b9`" in render(answer)
    assert "file paths" not in render(answer)
    assert "Names" not in render({"doing": "x", "names": ["file paths", "commands"]})
    assert "Names" not in render({"doing": "x", "names": ["file_paths", "code_identifiers", "dates and URLs",
                                                          "open_questions"]})


def test_sentences_in_the_names_list_are_not_names() -> None:
    """SmolLM2-135M filled the names list with sentences (one with an apostrophe) on the rig."""
    answer = {"doing": "The user compared two backends.",
              "names": ["I've made some decisions that have impacted my work.", "They decided to do something else",
                        "git commit -m \"fix the loader for empty input\"", "vsla_stack"]}
    names = render(answer).split("Names: ", 1)[1]
    assert names == "`git commit -m \"fix the loader for empty input\"`, `vsla_stack`"


def test_a_raw_newline_inside_a_string_is_still_json() -> None:
    raw = '{"doing": "The user fixed CI.", "decisions": ["foo was added\nto setup.cfg."], "names": ["foo"]}'
    assert parse(raw) == {"doing": "The user fixed CI.", "decisions": ["foo was added\nto setup.cfg."],
                          "names": ["foo"]}


async def _one_leaf(fake: FakeOllama, tok: Tokenizer, *answers: str) -> tuple[object, list[str]]:
    backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=10)
    backend.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    items = [SourceItem("episode", t, tok.count(t), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), role=r)
             for i, (r, t) in enumerate(CHAT)]
    await backend.check()
    for answer in answers:
        fake.script(Reply(answer))
    try:
        res = await Summariser(backend, tok, summary_format="sections").summarise(SummaryRequest(0, items, 1200))
    finally:
        await backend.aclose()
    return res, [r.reason for r in res.rejections]


async def test_unreadable_json_and_a_few_words_are_rejected_not_stored(fake: FakeOllama, tok: Tokenizer) -> None:
    """The two sectioned answers SmolLM2-135M got stored at a model tier before: its braces and
    quotes as the summary text, and "Decisions and changes: - changed"."""
    unreadable = '{ "doing": "The user was fixing CI" ,"decisions": ["foo was added" "names": [}'
    thin = json.dumps({"doing": "", "decisions": ["changed"], "names": ["decided", "changed"]})
    res, reasons = await _one_leaf(fake, tok, unreadable, thin)
    assert reasons == ["malformed", "thin"]
    assert res.tier == "fallback"  # type: ignore[attr-defined]
    assert "{" not in res.text and "changed" != res.text.strip()  # type: ignore[attr-defined]
    # a short answer that does say something is kept
    res, reasons = await _one_leaf(fake, tok, json.dumps({"doing": "The user fixed CI by adding foo to setup.cfg."}))
    assert reasons == [] and res.tier == "normal"  # type: ignore[attr-defined]


def test_items_that_copy_the_asks_own_field_descriptions_are_dropped() -> None:
    """Qwen 1.5B's condensed summary on the rig listed "what is still open or left to do"."""
    from hiermem_tui.summarize.prompts import SECTIONS_ASK
    from hiermem_tui.summarize.sections import without_copies

    answer = {"doing": "The user reviewed the VSLA guide.",
              "decisions": ["what was decided, changed or achieved", "The guide now defines vsla_stack."],
              "open_questions": ["what is still open or left to do", "Is the open question about left padding?"]}
    kept = without_copies(answer, SECTIONS_ASK)
    assert kept["decisions"] == ["The guide now defines vsla_stack."]
    assert kept["open_questions"] == ["Is the open question about left padding?"]
    assert "left to do" not in render(kept)
