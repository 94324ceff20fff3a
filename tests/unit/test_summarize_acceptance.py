"""Acceptance rules, each with a scripted answer shaped like one a real small model gave
(SmolLM2-135M on real chats with code), through the fake server and the real client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone

import pytest

from hiermem_tui.summarize import OllamaBackend, Summariser
from hiermem_tui.summarize.acceptance import (
    find_ask_copy, find_continuation, find_echo, find_loop, judge_text, strip_preamble,
)
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.summariser import targets_for
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

T0 = datetime(2025, 7, 21, 18, 0, tzinfo=timezone.utc)
CHAT = [
    ("user", "The sort in utils/sorting.py is too slow for 50000 items. Can you look at quick_sort and tell me "
             "why it degrades? It is called from `build_index` on every request and the p95 latency is 840 ms."),
    ("assistant", "quick_sort always picks the first element as pivot, so already-sorted input hits the O(n^2) "
                  "worst case. Switch to a median-of-three pivot or just call sorted(), which is Timsort and "
                  "handles runs well. I would also cache the result of build_index between requests."),
    ("user", "I replaced quick_sort with sorted() in utils/sorting.py and added functools.lru_cache on "
             "build_index. p95 went from 840 ms to 95 ms. Should I keep the old function around?"),
    ("assistant", "Delete it: nothing else imports it (grep finds only the one call site). Add a regression test "
                  "that sorts 50000 already-sorted items so the slow path cannot come back unnoticed."),
] * 4
PRIOR = "Earlier the user profiled the API and found build_index was the hot spot."
GOOD = ("The user asked why quick_sort in utils/sorting.py was slow for 50000 items (p95 840 ms, called from "
        "build_index). The assistant explained the first-element pivot hits O(n^2) on sorted input. The user "
        "switched to sorted() and functools.lru_cache on build_index: p95 fell to 95 ms.")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=lambda body: GOOD) as server:
        yield server


@pytest.fixture
async def backend(fake: FakeOllama, tok: Tokenizer) -> AsyncIterator[OllamaBackend]:
    b = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=5)
    b.speed = ModelSpeed(1, 10**6, 0.001, 10**6, 0.001)
    yield b
    await b.aclose()


def request(tok: Tokenizer, target: int = 400) -> SummaryRequest:
    items = [SourceItem("episode", text, tok.count(text), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i),
                        role=role, label=f"#{i}") for i, (role, text) in enumerate(CHAT)]
    return SummaryRequest(0, items, target, prior_summary=PRIOR)


async def first_rejection(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer, answer: str) -> tuple[str, str]:
    """Script ``answer`` for the normal tier (a good one follows); return the rejection."""
    fake.script(Reply(answer), Reply(GOOD))
    res = await Summariser(backend, tok).summarise(request(tok))
    assert res.tier == "aggressive" and res.text == GOOD, res.notes
    (rej,) = res.rejections
    return rej.reason, rej.detail


async def test_a_good_summary_passes_every_rule(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    res = await Summariser(backend, tok).summarise(request(tok))
    assert (res.tier, res.text, res.rejections) == ("normal", GOOD, ())
    assert res.fidelity is not None and res.fidelity.retention >= 0.8 and res.fidelity.novel == ()
    assert res.fidelity.key_retention == 1.0


async def test_a_repeated_paragraph_is_a_loop(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    para = ("The user is working on the sorting code and wants it to be faster for large inputs, and the "
            "assistant explains how the pivot choice matters for the running time of the algorithm.")
    reason, detail = await first_rejection(fake, backend, tok, f"{para}\n\n{para}\n\n{para}")
    assert reason == "loop" and "repeated 3 times" in detail


async def test_a_usage_text_repeating_its_lines_is_a_loop(tok: Tokenizer) -> None:
    line = "\t[--continue-backwards-in-each-step, --continue-all] [--continue-further-than-one-step]"
    assert find_loop("usage: git filter-branch\n" + "\n".join([line] * 12)) is not None


async def test_the_prior_summary_block_echoed_back(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    reason, detail = await first_rejection(
        fake, backend, tok, f"<previous_summary>\n{PRIOR}\n</previous_summary>\nThe user sped up the sort.")
    assert reason == "echo" and "previous_summary" in detail


async def test_transcript_lines_echoed_back(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    answer = f"[2025-07-21 18:02 UTC] user: {CHAT[2][1]}\n[2025-07-21 18:03 UTC] assistant: {CHAT[3][1]}"
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "echo" and "transcript line" in detail


def test_a_role_line_is_an_echo_only_when_copied() -> None:
    sources = [text for _, text in CHAT]
    assert find_echo("User: asked why quick_sort was slow and switched to sorted().", None, sources) is None
    assert find_echo(f"user: {CHAT[0][1]}", None, sources) is not None


async def test_continuing_the_chat_with_new_code(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    answer = ("def sortArray(arr):\n    if len(arr) <= 1:\n        return arr\n    pivot = arr[len(arr) // 2]\n"
              "    return sortArray([x for x in arr if x < pivot]) + [pivot]\n\n"
              "This implementation is more efficient than the previous one.")
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "continues_chat" and "code that is in no source" in detail


async def test_unfenced_statements_in_no_source(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    """A real SmolLM2 answer accepted at the aggressive tier (benchmark, 2026-12-01): two lines of
    a JavaScript test file for a C library's chat, no fence, no indentation."""
    answer = "const {expect} = require('chai');\n\ndescribe(\"VLAS-10\", () => {"
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "continues_chat" and "require('chai')" in detail
    quoted = "The user ran `make test`; it failed twice.\nThey fixed the include path and the build passed."
    assert find_continuation(quoted, [text for _, text in CHAT]) is None  # a semicolon in prose is not code
    listed = "- moved the cache (it was slow);\n- renamed the flag;\n- kept the old API."
    assert find_continuation(listed, [text for _, text in CHAT]) is None  # nor a list that ends items with ;


async def test_a_chat_reply_opener(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    reason, detail = await first_rejection(
        fake, backend, tok, "Sure! To make it faster, replace quick_sort with sorted() and let me know how it goes.")
    assert reason == "continues_chat" and "Sure" in detail


def test_quoting_code_from_the_sources_is_not_writing_code() -> None:
    sources = ["Here is the fix:\n```python\ndef median_of_three(a, lo, hi):\n    mid = (lo + hi) // 2\n```"]
    summary = ("The assistant proposed:\n```python\ndef median_of_three(a, lo, hi):\n    mid = (lo + hi) // 2\n```")
    assert find_continuation(summary, sources) is None


async def test_a_preamble_is_stripped_not_fatal(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    fake.script(Reply(f"Here's a summary of the conversation:\n\n{GOOD}"))
    res = await Summariser(backend, tok).summarise(request(tok))
    assert (res.tier, res.text) == ("normal", GOOD)
    assert strip_preamble(f"**Summary:**\n{GOOD}") == GOOD
    assert strip_preamble(f"Sure, here is a brief summary of the chat:\n{GOOD}") == GOOD
    assert strip_preamble(GOOD) == GOOD


async def test_a_tag_only_line_is_stripped(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    """A real SmolLM2 leaf (benchmark, 2026-12-01) opened with ``[system-reminder]`` on a line of its own."""
    fake.script(Reply(f"[system-reminder]\n{GOOD}\n</analysis>"))
    res = await Summariser(backend, tok).summarise(request(tok))
    assert (res.tier, res.text) == ("normal", GOOD)
    kept = "The hook printed [system-reminder] blocks into every tool result."
    assert strip_preamble(kept) == kept  # a tag inside a sentence is content


async def test_invented_identifiers(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    answer = ("The user derived alpha_k = beta_j * gamma_i and Theta_ij over VSLA_MAX_RANK with the kernel "
              "conv_stride_ij and the tensor omega_ijk = TensorProd(x).")
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "invented" and "in no source" in detail


async def test_cut_off_at_the_normal_tier_is_clipped_and_kept(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer
) -> None:
    """A usable answer the server cut off at ``num_predict`` is kept, clipped at a boundary: no
    second call (issue 13: five of ten real leaves had been regenerated for this alone)."""
    long = " ".join(f"Step {i}: the user {verb} utils/sorting.py {how}." for i, (verb, how) in enumerate(
        [("profiled", "with cProfile"), ("rewrote", "around sorted()"), ("benchmarked", "on 50000 items"),
         ("cached", "with functools.lru_cache"), ("tested", "against sorted input")] * 40))
    fake.script(Reply(long))
    res = await Summariser(backend, tok).summarise(request(tok))
    assert (res.tier, res.attempts, res.rejections, res.trimmed) == ("normal", 1, (), "clipped")
    assert res.tokens <= targets_for(request(tok)).normal and res.text.endswith(".") and long.startswith(res.text)


async def test_the_target_scales_with_the_input(tok: Tokenizer) -> None:
    req = request(tok, target=1200)
    t = targets_for(req)
    assert t.normal == req.source_tokens // 4 < 1200 and t.aggressive == t.normal // 2
    tiny = SummaryRequest(0, [SourceItem("episode", "ok", 1, T0, T0, role="user")], 1200)
    assert targets_for(tiny).normal < 1 + 1  # never longer than the input


async def test_a_condensed_target_is_half_its_sources(tok: Tokenizer) -> None:
    def summaries(*sizes: int) -> list[SourceItem]:
        return [SourceItem("summary", "x", n, T0, T0, depth=0, label=f"s{i}") for i, n in enumerate(sizes)]

    # an outline at least twice shorter than what it stands for: four 600-token leaves, 1,200 tokens
    assert targets_for(SummaryRequest(1, summaries(600, 600, 600, 600), 2000)).normal == 1200
    assert targets_for(SummaryRequest(1, summaries(100, 1000), 2000)).normal == 550  # not its largest source
    assert targets_for(SummaryRequest(1, summaries(1500, 1500, 1500, 1500), 2000)).normal == 2000  # the depth's cap


async def test_a_lossy_answer_is_kept_with_its_lost_names_as_keywords(
    fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer
) -> None:
    """No fidelity retry (a second full call for a CPU user) and no "Also mentioned" line in the
    text: the names the answer lost are its keywords, and its fidelity is the model's own."""
    fake.script(Reply("The user made the sort faster."))
    req = request(tok)
    res = await Summariser(backend, tok).summarise(req)
    assert (res.tier, res.text, res.attempts, res.rejections) == ("normal", "The user made the sort faster.", 1, ())
    assert "utils/sorting.py" in res.keywords and "build_index" in res.keywords
    assert res.fidelity is not None and res.fidelity.kept == 0 and res.fidelity.key_kept == 0
    assert res.fidelity.key == min(res.key_target, res.fidelity.identifiers) > 0
    assert len(fake.chat_bodies) == 1


async def test_an_invented_link_is_rejected(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    """A real SmolLM2 answer (names changed): a made-up report link, accepted before as normal."""
    answer = ("The report is here: [report_detail.html](https://github.com/someone/sort-suite/blob/master/"
              "reports/report_detail.html). The user switched quick_sort to sorted() in utils/sorting.py.")
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "invented" and "https://github.com/someone" in detail


async def test_copying_the_log_is_an_echo(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    """A real SmolLM2 answer shape: a chunk of the log (here a tool result) copied back as the summary."""
    reason, detail = await first_rejection(fake, backend, tok, CHAT[1][1] + " " + CHAT[3][1])
    assert reason == "echo" and "copied from the log" in detail


async def test_a_copied_tool_call_is_an_echo(fake: FakeOllama, backend: OllamaBackend, tok: Tokenizer) -> None:
    answer = '<pre>\n[tool_use TodoWrite] {"todos": [{"id": "1", "content": "Profile build_index."}]}\n</tool_use TodoWrite>'
    reason, detail = await first_rejection(fake, backend, tok, answer)
    assert reason == "echo" and "tool_use" in detail


def test_one_sentence_restating_the_key_line_is_not_an_echo() -> None:
    """A terse summary that reuses its source's key clause (name, path, number) is a report.

    Found by the benchmark's own test: a 17-word summary sharing half its 6-word runs with the
    source's one instruction was judged "copied from the log" and pushed down a tier.
    """
    source = ("Edit `parse_config` in src/app/config.py and set retries to 42. The build log shows three warnings "
              "about unused imports in the test helpers, and the release notes still mention the old retry count.")
    answer = "The user and the assistant changed `parse_config` in src/app/config.py and set retries to 42."
    assert find_echo(answer, None, [source]) is None
    assert find_echo(source, None, [source]) is not None  # the log itself still is


def test_the_prompts_own_headings_echoed_back_are_an_echo() -> None:
    """An over-long answer that repeats the prompt, clipped to the aggressive target, can be
    nothing but the context block's heading: scaffolding, not a summary."""
    for answer in ("Earlier in the same chat (context only, already reported, do not repeat it)…",
                   "Chat log to report on:\nuser: hello", "Reports to merge, oldest first:\n- one"):
        assert find_echo(answer, None, ["hello there, a source"]) is not None, answer


def test_a_summary_in_the_writers_own_voice_continues_the_chat() -> None:
    """SmolLM2-135M's sectioned leaf on the rig: content-free, narrated by "I"."""
    smol = ("The user was doing a lot of things, and I'm happy to report that they made some decisions.\n\n"
            "Errors and fixes:\n- The user faced some errors and I'm happy to say that they've resolved them.")
    assert find_continuation(smol, []) == "speaks in the first person (\"I'm\", 2 times)"
    # the user's own words, quoted or in code, and a single slip are not the writer's voice
    assert find_continuation('The user wrote "I am stuck, I was told to use X" and ran `I have`.', []) is None
    assert find_continuation("The user said I'm moving the parser to src/parse.py.", []) is None


def test_restating_the_previous_summary_is_an_echo_whatever_its_words() -> None:
    """Issue 19: in a chat that stays on one topic every word of a copied sentence is also in the
    new chunk, so the old "supported by the chunk" exemption let 4 of 4 copied leaves through.
    Near-copies count too (a word changed, a clip marker kept)."""
    prior = ("The user revised the guide for vsla_tensor_t and its strides. "
             "The assistant added overflow checks to every allocation. The user asked for a changelog […]")
    chunk = ["Revision 3 of the guide: vsla_tensor_t keeps shape and strides; every allocation now has "
             "overflow checks, and the assistant added a section on thread safety and a changelog."]
    copied = ("The user revised the guide for vsla_tensor_t and its strides.\n"
              "The assistant added the overflow checks to every allocation.\n"
              "The user asked for a changelog […]")
    assert find_echo(copied, prior, chunk) == "3 of its 3 statements copy the previous summary"
    own = ("Revision 3 keeps shape and strides in vsla_tensor_t. A section on thread safety was written.\n"
           "The changelog now lists the overflow checks.")
    assert find_echo(own, prior, chunk) is None
    # one restated opening line among the chunk's own report is a report, not an echo
    assert find_echo("The user revised the guide for vsla_tensor_t and its strides. " + own, prior, chunk) is None


def test_an_answer_holding_the_request_is_an_echo() -> None:
    """A server that ignores ``format`` and answers the prompt's tail, SmolLM2 writing the
    questions back, and a names list made of the request's own words."""
    ask = ("Write the report now as a JSON object with these fields:\n"
           "- \"doing\": one or two sentences on what the user was doing and why;\n"
           "- \"names\": every file path, command, function, type, constant, version and number from the log "
           "that matters, each copied exactly as written (at most 9);\n"
           "Use an empty list for a field with nothing to report. About 300 words in all.")
    tail = ask[-600:]
    assert find_ask_copy(tail, ask) is not None
    assert find_ask_copy("Names: file paths, commands, function, type, constant, version, number\n"
                         "- \"doing\": one or two sentences on what the user was doing and why", ask) is not None
    good = ("The user moved the parser into src/parse.py and fixed the import of tomllib.\n"
            "Names: `src/parse.py`, `tomllib`, `3.11`")
    assert find_ask_copy(good, ask) is None
    # judge_text reports it as an echo, before any other rule
    assert judge_text(tail, prior=None, sources=["user: hello"], ask=ask) == ("echo", find_ask_copy(tail, ask))
