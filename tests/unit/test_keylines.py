"""The chat's key lines (``summarize/keylines``): what a reader asks of a stretch of chat, in the
chat's own words — never a word the chat did not say, never over budget, in chat order, the
user's words before anything else; carried up to condensed summaries; and through the fake
server, a notes summary is the model's one-sentence gist per part followed by them."""

from __future__ import annotations

import json

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hiermem_tui.summarize import Summariser, keylines, notes, steps
from hiermem_tui.summarize.text import sentences
from hiermem_tui.summarize.keylines import QUOTES_VERSION
from hiermem_tui.summarize.extractive import ExtractiveBackend
from hiermem_tui.summarize.prompts import EXTRACTIVE_VERSION
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama

from .test_notes import summarise

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
TODO = json.dumps({"todos": [{"id": "1", "content": "Find where VSLA_BACKEND_CUDA is defined", "status": "pending"},
                             {"id": "2", "content": "Fix the enum clash", "status": "pending"}]})
AGENT = [
    ("user", "<command-name>/clear</command-name>"),
    ("user", "The GPU tests stopped compiling. Find the root cause rather than patching the test."),
    ("assistant", f"I'll start with the failing test.\n\n[tool_use TodoWrite] {TODO}"),
    ("tool", "Todos have been modified successfully. Ensure that you continue to use the todo list."),
    ("assistant", '[tool_use Bash] {"command": "make test", "description": "Build and run the tests"}'),
    ("tool", "cc -c tests/test_gpu.c\n" + "from .errors import DurationError\n" * 3
     + "tests/test_gpu.c:18:20: error: 'VSLA_BACKEND_CUDA' undeclared (first use in this function)\n"
     + "=" * 40 + "\n1 error generated, 0 passed"),
    ("assistant", '[tool_use Grep] {"pattern": "VSLA_BACKEND_CUDA", "path": "include"}'),
    ("tool", "No matches found"),
    ("assistant", "The root cause is that vsla_backend_t is a struct in vsla_backend.h while the tests expect an "
                  "enum, so the constant was never declared anywhere. I would rename the struct rather than "
                  "define the enum twice. That keeps one meaning per name across the 14 source files."),
    ("user", "[Request interrupted by user]"),
]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


def items(tok: Tokenizer, chat: list[tuple[str, str]] = AGENT) -> list[SourceItem]:
    return [SourceItem("episode", t, tok.count(t), T0 + timedelta(minutes=i), T0 + timedelta(minutes=i), role=r,
                       label=f"#{i}") for i, (r, t) in enumerate(chat)]


def quotes(text: str) -> list[str]:
    """The lines a summary quotes, as "who: words" (an answer's line under its request says no speaker)."""
    return [f"{who}: {words}" for who, words in keylines.quoted(text)]


def squash(text: str) -> str:
    return " ".join(text.split())


def said_in_chat(line: tuple[str, str], chat: list[tuple[str, str]]) -> bool:
    """A quoted line's words occur in the chat (a clipped line up to its "…"; a to-do list item by
    item; a tool call as the readable call line the app shows)."""
    who, words = line
    pieces = words.removesuffix("…").split("; ") if who == "assistant planned" else [words.removesuffix("…")]
    if who == "assistant did":
        return words.startswith(("[Bash] command: make test", "[Grep] "))
    whole = squash(" ".join(t for _, t in chat))
    return all(squash(p) in whole for p in pieces)


def test_every_line_is_the_chats_own_words_in_order_and_within_budget(tok: Tokenizer) -> None:
    for budget in (40, 90, 400):
        text = keylines.key_lines(items(tok), budget, tok)
        lines = keylines.quoted(text)
        assert lines and len(lines) == len(text.splitlines()) and tok.count(text) <= budget
        assert all(said_in_chat(ln, AGENT) for ln in lines), text
    full = keylines.quoted(keylines.key_lines(items(tok), 400, tok))
    order = [next(i for i, (_, t) in enumerate(AGENT) if squash(words[:30].removesuffix("…")) in squash(t))
             for who, words in full if who not in ("assistant did", "assistant planned")]
    assert order == sorted(order)


def test_what_a_reader_asks_is_there_and_the_noise_is_not(tok: Tokenizer) -> None:
    text = keylines.key_lines(items(tok), 400, tok)
    assert "- user: The GPU tests stopped compiling." in text
    assert "error: 'VSLA_BACKEND_CUDA' undeclared" in text          # the error, from the tool's output
    assert "- tool: No matches found" in text                           # what the search answered
    assert "- tool: 1 error generated, 0 passed" in text                # the tally at the end of a long output
    assert "- assistant planned: Find where VSLA_BACKEND_CUDA is defined; Fix the enum clash" in text
    assert "[Bash] command: make test" in text
    assert "rename the struct rather than define the enum twice" in text
    # markup, interruptions, tool banners, code lines and rules are not the chat's say
    for noise in ("/clear", "Request interrupted", "Todos have been modified", "from .errors", "====", "{\""):
        assert noise not in text, noise


def test_lines_kept_from_a_smaller_budget_stay_and_the_larger_only_adds(tok: Tokenizer) -> None:
    """A leaf's title is asked of its key lines in its target less a title's; the summary shows them and
    what more fits. Picked afresh, some larger budgets trade a line for a longer one (so the title could
    name a line the summary does not show); kept first, they only add."""
    src = items(tok)
    traded = 0
    for small in range(60, 400, 10):
        read = keylines.key_lines(src, small, tok).splitlines()
        afresh = keylines.key_lines(src, small + 30, tok).splitlines()
        shown = keylines.key_lines(src, small + 30, tok, keep="\n".join(read)).splitlines()
        traded += not set(read) <= set(afresh)
        assert set(read) <= set(shown) and [x for x in shown if x in read] == read
        assert tok.count("\n".join(shown)) <= small + 30
    assert traded  # the case this guards against happens in this chat


OUTLINE = [
    ("user", "update the outline with the page budget"),
    ("assistant", "The outline has a page budget.\n\n## Where We Stand: Community Emissions 2019–2023\n\n"
                  "- Where We Stand: Community Emissions 2019–2023 (3 p)\n- Buildings and Energy (2 p)\n\n"
                  "Outline updated with the page budget."),
    ("assistant", '[tool_use Bash] {"command": "uv run pytest -q"}'),
    ("tool", "4 failed, 23 passed in 0.12s"),
    ("assistant", '[tool_use Bash] {"command": "uv run pytest -q --tb=short"}'),
    ("tool", "27 passed in 0.12s"),
]


def test_a_sentence_is_quoted_once_even_inside_a_longer_line(tok: Tokenizer) -> None:
    """A heading and the outline line that repeats it with more ("… (3 p)") were both quoted: a line's
    budget spent on words the reader had. The longer one stays; two commands that share a start are two
    runs, both kept."""
    src = items(tok, OUTLINE)
    text = keylines.key_lines(src, 400, tok)
    assert text.count("Where We Stand: Community Emissions 2019–2023") == 1
    assert any(x.startswith("assistant: Where We Stand: Community Emissions 2019–2023 (3 p)") for x in quotes(text))
    assert "[Bash] command: uv run pytest -q\n" in text and "[Bash] command: uv run pytest -q --tb=short" in text
    # a line a title was read from stays as it was read: the longer one does not take its place
    heading = "- assistant: Where We Stand: Community Emissions 2019–2023"
    shown = quotes(keylines.key_lines(src, 400, tok, keep=heading))
    assert heading[2:] in shown and not any("(3 p)" in x for x in shown)


CANVAS = json.dumps({"name": "Semiring Paper (Revised)", "type": "document", "content": (
    "# Semiring Foundations\n\nWe formalise two semiring structures on padded vectors. Model A uses discrete "
    "convolution and is isomorphic to the polynomial ring R[x]. Model B uses the Kronecker product.\n\n"
    "## New in this revision\n\n- a proof that the l1 completion of Model A is the power-series ring R[[x]];\n"
    "- the prime-ideal spectrum of Model B via the Lazard correspondence.")})
CANVAS_EDIT = json.dumps({"updates": [{"pattern": "## References.*", "multiple": False,
                                       "replacement": "## References\n\nGolan 1999 gives the semiring background."}]})
CANVAS_NOTE = json.dumps({"comments": [{"pattern": "Model B", "comment": "State the lexicographic order Model B uses."}]})
CANVAS_CHAT = [
    ("user", "Rewrite this paper based on the peer review."),
    ("assistant", f"[call canmore.create_textdoc] {CANVAS}"),
    ("tool", "Successfully created text document 'Semiring Paper (Revised)' which will be referenced in all future "
             "messages with the unique identifier textdoc_id: '68498f59e120'"),
    ("user", "add the references you left out"),
    ("assistant", f"[call canmore.update_textdoc] {CANVAS_EDIT}"),
    ("user", "anything else to fix?"),
    ("assistant", f"[call canmore.comment_textdoc] {CANVAS_NOTE}"),
]


def test_what_the_assistant_wrote_into_a_canvas_is_quoted_as_what_it_said(tok: Tokenizer) -> None:
    """A ChatGPT answer given as a canvas is one tool call: its prose was empty, and a 4,000-token revised
    paper was summarised as the call's first line (78 tokens of a 1,000-token target). The document's
    sentences, an update's replacement and a comment are the assistant's words; another tool's file content
    is not."""
    text = keylines.key_lines(items(tok, CANVAS_CHAT), 400, tok)
    assert "assistant: Model A uses discrete convolution and is isomorphic to the polynomial ring R[x]." in quotes(text)
    assert "Lazard correspondence" in text and "Golan 1999 gives the semiring background." in text
    assert "assistant: State the lexicographic order Model B uses." in quotes(text)  # a comment on the document
    assert tok.count(text) <= 400
    write = json.dumps({"file_path": "/src/model.py", "content": "Model A uses discrete convolution here."})
    agent = items(tok, [("user", "write the model"), ("assistant", f"[tool_use Write] {write}")])
    assert "- assistant: Model A uses" not in keylines.key_lines(agent, 400, tok)


def test_a_canvas_edit_is_one_short_line_of_what_it_rewrote_not_its_pattern(tok: Tokenizer) -> None:
    """Shown as its arguments, an update was its regex pattern and its replacement's first 300 characters
    again, clipped: four such lines took 360 of a 530-token summary. What it did is a line; what it wrote
    is quoted as the assistant's words (key lines v8)."""
    edit = json.dumps({"updates": [{"pattern": "## 10\\. Shrinking[\\s\\S]*## 11", "replacement":
                                    "## 10. Shrinking to Minimal Representative\nDefault policy: no automatic "
                                    "shrink inside hot operations; the caller invokes vsla_shrink."}]})
    chat = [("user", "go on with the rest of the guide"), ("assistant", f"[call canmore.update_textdoc] {edit}")]
    text = keylines.key_lines(items(tok, chat), 400, tok)
    assert "assistant did: [canmore.update_textdoc] rewrote: 10. Shrinking to Minimal Representative" in quotes(text)
    assert "pattern" not in text and "[\\s\\S]" not in text
    assert "assistant: Default policy: no automatic shrink inside hot operations; the caller invokes vsla_shrink." in quotes(text)
    created = steps.document_edit(f"[call canmore.create_textdoc] {CANVAS}")
    assert created == "[canmore.create_textdoc] name: Semiring Paper (Revised)"
    assert steps.document_edit(f"[call canmore.comment_textdoc] {CANVAS_NOTE}") == "[canmore.comment_textdoc] 1 comment"
    assert steps.document_edit('[tool_use Bash] {"command": "make"}') is None


def paper(sections: int) -> str:
    """A pasted paper of ``sections`` numbered sections, each opening with a sentence naming its number."""
    body = []
    for n in range(1, sections + 1):
        body.append(f"{n}. Section Title Number {n}")
        body.append(f"Section {n} states its own result, which a reader would ask about later.")
        body += [f"Further detail {k} of section {n} goes on at some length without saying much new." for k in range(4)]
    return "\n".join(body)


def test_a_long_document_is_read_by_its_outline_not_its_first_sections(tok: Tokenizer) -> None:
    """Taken in order, a pasted paper filled the summary with its first sections ("stops at section 2.2")
    and what its later sections said went unanswered. Its headings and each section's first sentence come
    before the rest, shown in the document's order."""
    chat = [("user", "Validate this proof please.\n\n" + paper(12))]
    text = keylines.key_lines(items(tok, chat), 520, tok)
    lines = text.splitlines()
    for n in (1, 6, 12):
        assert f"- user: {n}. Section Title Number {n}" in lines
        assert f"- user: Section {n} states its own result, which a reader would ask about later." in lines
    assert lines.index("- user: 12. Section Title Number 12") > lines.index("- user: Section 6 states its own "
                                                                              "result, which a reader would ask about later.")
    assert tok.count(text) <= 520
    assert "Further detail 3 of section 12" not in text  # the rest comes after the outline
    # the same sentences without headings are not a document: taken in order, as before
    flat = [("user", "Validate this proof please.\n\n" + "\n".join(x for x in paper(12).splitlines()
                                                                     if not x[0].isdigit()))]
    assert "Section 12 states" not in keylines.key_lines(items(tok, flat), 520, tok)


def test_a_documents_outline_does_not_crowd_out_what_the_user_says_next(tok: Tokenizer) -> None:
    """A review pasted in one message and the user's decision in the next: the outline of the first comes
    after every message's own words (a v9 draft put it before them and the decision was lost)."""
    chat = [("user", "Here is the round 3 review.\n\n" + paper(20)),
            ("assistant", "Thanks, the review raises the backend selection question first."),
            ("user", "ok. I would much prefer MIT licence alternatives where possible. We can roll several "
                     "backends as needed. Because the interface is identical we can run the same tests everywhere.")]
    text = keylines.key_lines(items(tok, chat), 300, tok)
    assert "Because the interface is identical we can run the same tests everywhere." in text
    assert "- user: 2. Section Title Number 2" in text


def test_a_sentence_is_not_cut_at_an_abbreviation_and_citation_markers_are_left_out(tok: Tokenizer) -> None:
    """"Carry a single motivating task (e.g." and "dynamically resizing CNN filters) through §1–§6." were two
    quoted lines, each unreadable alone; ChatGPT's citation markers and a pasted "[cite_start]" are markup."""
    assert sentences("Carry one task (e.g. resizing CNN filters) through §1–§6. Compare A vs. B here.") == [
        "Carry one task (e.g. resizing CNN filters) through §1–§6.", "Compare A vs. B here."]
    cited = "Apple's critique is right on target \ue200cite\ue202turn0news37\ue201. [cite_start]Define it [cite: 7]."
    assert sentences(cited) == ["Apple's critique is right on target.", "Define it."]


def test_what_a_section_headed_next_steps_says_comes_before_the_rest_of_an_answer(tok: Tokenizer) -> None:
    """A review's "## Highest-Impact Next Steps" is what a reader asks of it; its items are taken with the
    answer's specifics, not after every other sentence."""
    answer = ("Below is a checkpoint review of the v2 draft against the checklist I sent earlier.\n\n"
              + "".join(f"The draft covers point {n} of the list adequately and needs no further change here.\n"
                        for n in range(30))
              + "## Highest-Impact Next Steps\n\nRun a first benchmark of vector add against zero-pad BLAS.\n"
                "Insert the diagram of two vectors promoted then added.\n")
    chat = [("user", "How is this v2?"), ("assistant", answer), ("user", "What should the repo include?")]
    text = keylines.key_lines(items(tok, chat), 120, tok)
    assert "Run a first benchmark of vector add against zero-pad BLAS." in text
    assert "Insert the diagram of two vectors promoted then added." in text


def test_a_small_budget_keeps_the_users_words_first(tok: Tokenizer) -> None:
    text = keylines.key_lines(items(tok), 30, tok)
    assert text.startswith("- user: The GPU tests stopped compiling.")
    assert "No matches found" not in text  # a tool's answer is a later level


def test_condensed_key_lines_carry_the_quoted_lines_of_their_sources(tok: Tokenizer) -> None:
    leaf_a = "- The user asked for the root cause.\n" + keylines.HEAD + "\n- user: Find the root cause.\n- tool: No matches found"
    leaf_b = "- user: rename it then\n- assistant: Renamed vsla_backend_t to vsla_backend_ops_t in 14 files."
    plain = "The model wrote this without quoting anything."
    src = [SourceItem("summary", t, tok.count(t), T0, T0, depth=0, label=f"s{i}")
           for i, t in enumerate((leaf_a, leaf_b, plain))]
    text = keylines.key_lines(src, 200, tok)
    assert quotes(text) == ["user: Find the root cause.", "tool: No matches found", "user: rename it then",
                            "assistant: Renamed vsla_backend_t to vsla_backend_ops_t in 14 files."]
    assert text.splitlines()[0] == "- The user asked for the root cause."  # a source's title heads its lines
    assert keylines.key_lines(src[2:], 200, tok) == ""
    # on a tight budget every source's first line comes before any source's second: not the first only
    assert quotes(keylines.key_lines(src, 30, tok)) == ["user: Find the root cause.", "user: rename it then"]


def test_code_in_an_answer_is_not_quoted_as_what_was_said(tok: Tokenizer) -> None:
    chat = [("user", "Add a --from flag to logslice please."),
            ("assistant", "Here is the flag, parsed with clap so a bad time is an error before any file is read.\n\n"
                          "```rust\n/// Start of the window (inclusive), e.g. 10:02\n#[arg(long)]\nfrom: String,\n```\n\n"
                          "It takes 10:02 or 2024-05-01T10:02 and rejects anything else with exit code 2.")]
    text = keylines.key_lines(items(tok, chat), 400, tok)
    assert "rejects anything else with exit code 2" in text and "parsed with clap" in text
    assert "Start of the window" not in text and "#[arg" not in text


def test_condensed_key_lines_put_what_was_decided_before_the_rest(tok: Tokenizer) -> None:
    leaf = ("- user: Which radio should the cameras use?\n- assistant: The SX1262 draws 5.3 mA in receive at 915 MHz.\n"
            "- assistant: Go with the E22-900M22S instead of the RFM95W: same chip family, better range.")
    src = [SourceItem("summary", leaf, tok.count(leaf), T0, T0, depth=0, label="s0")]
    lines = quotes(keylines.key_lines(src, 40, tok))
    assert lines == ["user: Which radio should the cameras use?",
                     "assistant: Go with the E22-900M22S instead of the RFM95W: same chip family, better range."]


def test_condensed_key_lines_give_each_source_its_share_before_one_sources_pasted_log(tok: Tokenizer) -> None:
    log = "\n".join(f"- user: E ({10452 + k}) trailcam: FB-OVF" for k in range(12))
    leaf_a = "- user: ok breadboarded cam #1 on the bench.\n" + log
    leaf_b = ("- user: 166 is ok but can we get it down.\n- assistant: Paint it brown and it disappears on a tree.\n"
              "- user: ok the box swap yes, but the panasonic pir stays where it is.\n- assistant: Order 3 E22-900M22S modules for phase 1.")
    src = [SourceItem("summary", t, tok.count(t), T0, T0, depth=0, label=f"s{i}") for i, t in enumerate((leaf_a, leaf_b))]
    lines = quotes(keylines.key_lines(src, 90, tok))
    # the second leaf's decision in the user's words is there, though the first leaf has twelve more user lines
    assert "user: ok the box swap yes, but the panasonic pir stays where it is." in lines
    assert sum("trailcam:" in ln for ln in lines) < 12
    # shown in the order the sources said them: the first leaf's lines, then the second's, each in order
    assert lines[0] == "user: ok breadboarded cam #1 on the bench."
    b = [ln for ln in lines if "trailcam" not in ln and "breadboarded" not in ln]
    assert lines[-len(b):] == b and b[0] == "user: 166 is ok but can we get it down."
    assert b.index("user: ok the box swap yes, but the panasonic pir stays where it is.") > 0


def test_an_error_the_user_pasted_comes_with_their_words_before_the_answers(tok: Tokenizer) -> None:
    answer = ("Rules are a table keyed by domain, read on every click because the worker is stopped after 30 "
              "seconds. The options page writes them with saveRule and the worker reads them with getRules. "
              "Reload the extension once and the new permission shows up on the details page.")
    chat = [("user", "i want custom names and colours per domain."), ("assistant", answer),
            ("user", "i wrote a script that turns my bookmark folders into rules. calling saveRule in a loop and now:"
                     "\n\n```\nUncaught (in promise) Error: QUOTA_BYTES_PER_ITEM quota exceeded\n"
                     "    at async saveRule (lib/rules.js:9:3)\n```"),
            ("assistant", answer.replace("Rules", "Sync storage").replace("Reload", "Switch to local storage, reload")),
            ("user", "ok go local, ill export and import a json file between the two machines."), ("assistant", answer)]
    lines = keylines.key_lines(items(tok, chat), 110, tok).splitlines()
    # the error is what the user said in that message: it is there though the answers' conclusions do not all fit
    assert "- user: Uncaught (in promise) Error: QUOTA_BYTES_PER_ITEM quota exceeded" in lines
    assert lines[:3] == ["- user: i want custom names and colours per domain.",
                         "- user: i wrote a script that turns my bookmark folders into rules.",
                         "- user: calling saveRule in a loop and now:"]


def test_a_long_tool_output_is_quoted_by_its_first_line_of_words(tok: Tokenizer) -> None:
    header = "/**\n * @file vsla_core.h\n * @brief Backend selection for the VSLA library\n */\n"
    chat = [("user", "Read vsla_core.h and tell me whether it defines the backend enum."),
            ("assistant", '[tool_use Read] {"file_path": "/src/vsla_core.h"}'),
            ("tool", header + "typedef enum { VSLA_BACKEND_CPU = 0 } vsla_backend_kind;\n" * 12),
            ("tool", "Found 5 files\n/a.c\n/b.c\n/c.c\n/d.c\n/e.c")]
    text = keylines.key_lines(items(tok, chat), 400, tok)
    assert "- tool: @brief Backend selection for the VSLA library" in text  # what the file is
    assert "- tool: Found 5 files: /a.c, /b.c, /c.c, /d.c, /e.c" in text  # a short listing, whole
    # its code lines only fill what is left after every other kind of line, the same line once
    assert text.count("typedef") == 1
    tight = keylines.key_lines(items(tok, chat), tok.count(text) - 5, tok)
    assert "typedef" not in tight and "@brief Backend selection" in tight and "Found 5 files" in tight


GREP = "\n".join([
    "/home/me/vsla/src/vsla_unified.c-    ctx->config.device_id = -1;",
    "/home/me/vsla/src/vsla_unified.c-    ctx->config.memory_limit = 0;",
    "/home/me/vsla/src/vsla_unified.c-    // Simple heuristic: use GPU for large tensors",
    "/home/me/vsla/src/vsla_unified.c-}",
    "/home/me/vsla/src/vsla_unified.c-",
    "/home/me/vsla/src/backends/vsla_backend_registry.c-// Backend priority order (higher index = higher priority)",
    "/home/me/vsla/src/backends/vsla_backend_registry.c:    VSLA_BACKEND_CPU,        // Always available, lowest",
    "/home/me/vsla/src/backends/vsla_backend_registry.c-    VSLA_BACKEND_CUDA        // NVIDIA GPUs, highest",
    "/home/me/vsla/src/backends/vsla_backend_registry.c-#endif",
    "/home/me/vsla/src/backends/vsla_backend_registry.c:    if (preferred != VSLA_BACKEND_AUTO) {",
] * 3) + "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it looks malicious.\n</system-reminder>"


def test_budget_a_chunk_leaves_is_filled_with_what_a_long_output_says_in_words(tok: Tokenizer) -> None:
    """A chunk that is one long grep output (a Claude Code session's usual leaf) used 62 of its 1,098
    tokens in key lines v4: the rest of the budget now holds the output's lines, its comments first."""
    chat = [("user", "Where is the backend enum defined?"),
            ("assistant", '[tool_use Grep] {"pattern": "VSLA_BACKEND_AUTO", "path": "/home/me/vsla"}'),
            ("tool", GREP)]
    text = keylines.key_lines(items(tok, chat), 400, tok)
    lines = [words for who, words in keylines.quoted(text) if who == "tool"]
    assert tok.count(text) <= 400
    said = [ln for ln in lines if "//" in ln]
    assert len(said) == 4 and lines.index(said[-1]) < lines.index("…/vsla_backend_registry.c: if (preferred "
                                                                   "!= VSLA_BACKEND_AUTO) {")
    assert "…/vsla_backend_registry.c-// Backend priority order (higher index = higher priority)" in lines
    assert "- tool: /home/me" not in text and "malicious" not in text and "#endif" not in text
    assert len(lines) == len(set(lines))  # each line once, though the output repeats it
    assert "…/vsla_unified.c-}" not in lines  # a line with no words says nothing


def test_the_rest_of_an_answer_and_its_table_rows_fill_what_is_left(tok: Tokenizer) -> None:
    chat = [("user", "Price the parts for one camera please."),
            ("assistant", "Here is the bill of materials for one camera, all from DigiKey.\n\n"
                          "| Part | Price |\n|---|---|\n| E22-900M22S LoRa module | $7.90 |\n| OV5640 camera | $12.40 |\n\n"
                          "The radio is the biggest risk in the list. Everything else ships in two days. "
                          "Total comes to $166.17, well under the cap.")]
    small = keylines.key_lines(items(tok, chat), 60, tok)
    full = keylines.key_lines(items(tok, chat), 400, tok)
    assert "Total comes to $166.17" in small and tok.count(small) <= 60
    assert "  - Part | Price; E22-900M22S LoRa module | $7.90; OV5640 camera | $12.40" in full.splitlines()
    assert "---" not in full and "  - Everything else ships in two days." in full.splitlines()


async def test_the_extractive_backend_writes_key_lines_and_falls_back_to_first_and_last(tok: Tokenizer) -> None:
    summariser = Summariser(ExtractiveBackend(tok), tok)
    res = await summariser.summarise(SummaryRequest(0, items(tok), 300))
    assert res.prompt_version == EXTRACTIVE_VERSION and res.tier == "normal"
    assert "- user: The GPU tests stopped compiling." in res.text and "No matches found" in res.text
    plain = "The model wrote this without quoting anything. It has two sentences and more words than a few."
    src = [SourceItem("summary", plain * 4, tok.count(plain * 4), T0, T0, depth=0, label="s0"),
           SourceItem("summary", plain * 4, tok.count(plain * 4), T0, T0, depth=0, label="s1")]
    res = await summariser.summarise(SummaryRequest(1, src, 300))
    assert res.text.startswith("- The model wrote this")  # first and last sentence, as before key lines


# ---------------------------------------------------------------- through the fake server
GIST = "The user asked for the root cause of the GPU test failure. The assistant then ran make test. It also grepped."


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    def answer(body: dict[str, Any]) -> str:
        assert body["messages"][-1]["content"].endswith(notes.LEAF_ASK)
        return GIST
    with FakeOllama(responder=answer) as server:
        yield server


async def test_a_notes_summary_is_the_models_gist_then_the_chats_words(fake: FakeOllama, tok: Tokenizer) -> None:
    res = await summarise(fake, tok, SummaryRequest(0, items(tok), 400))
    gist, _, lines = res.text.partition("\n" + keylines.HEAD + "\n")
    assert res.tier == "normal" and res.prompt_version.endswith(QUOTES_VERSION)
    # one sentence is kept, whatever the model wrote on after it
    assert gist == GIST.split(". ")[0] + "."
    assert "ran make test" not in gist
    assert lines.startswith("- user: The GPU tests stopped compiling.")
    assert all(said_in_chat(ln, AGENT) for ln in keylines.quoted(lines))
    # the leaf is asked for a title, with an answer budget for one, not a share of the whole target, and
    # nothing is pointed out after the material (names pointed out were tied together wrongly)
    asks = [b["messages"][-1]["content"].rsplit("\n\n", 1)[-1] for b in fake.chat_bodies]
    assert asks == [notes.LEAF_ASK] and "a title of at most twelve words" in asks[0]
    assert not any("VSLA_BACKEND_CUDA" in a or "Names and numbers" in a for a in asks)
    assert all(b["options"]["num_predict"] <= 60 for b in fake.chat_bodies)
    assert all(b["options"]["temperature"] == 0 for b in fake.chat_bodies)  # titles are asked greedily
    # the figures say what the model did: measured on its gist, so a name it did not write is lost
    assert "VSLA_BACKEND_CUDA" not in gist
    assert res.fidelity is not None and "VSLA_BACKEND_CUDA" in res.fidelity.lost


@pytest.mark.parametrize(("answer", "kept"), [
    ('Title: "LiFePO4 vs. Li-ion for a Cold Trail Camera"', "LiFePO4 vs. Li-ion for a Cold Trail Camera"),
    ("**Fixing the tomli import in config.py**", "Fixing the tomli import in config.py"),
    ("Part 2 of 3: Choosing 915 MHz. The assistant then explained the sync word.", "Choosing 915 MHz."),
])
def test_what_is_kept_of_a_parts_answer_is_its_title(answer: str, kept: str) -> None:
    assert notes.gist(answer) == kept


def test_an_outline_keeps_the_lines_read_for_its_title_though_its_sources_quote_unequally(tok: Tokenizer) -> None:
    """A condensed summary's lines are picked twice (for its title, then in what the title left): sources
    quoting three lines and one made the second pick walk past the shorter source's levels."""
    long = "Long source\n" + keylines.HEAD + "\n- user: first thing\n  - second thing said here\n  - third one"
    short = "Short source\n" + keylines.HEAD + "\n- user: only line of the short source"
    src = [SourceItem("summary", t, tok.count(t), T0, T0, depth=0, label=f"s{i}", span=(i * 5, i * 5 + 4))
           for i, t in enumerate((short, long))]
    read = keylines.key_lines(src, 40, tok)
    shown = keylines.key_lines(src, 200, tok, keep=read)
    assert set(quotes(read)) <= set(quotes(shown)) and "- #0–4: Short source" in shown.splitlines()


def test_a_stretch_ending_in_the_users_thanks_is_not_said_to_be_unanswered(tok: Tokenizer) -> None:
    """Readers found "(not answered in this stretch)" under a closing "thanks, that's it": nothing was asked."""
    chat = [("user", "How do I rotate the backup keys every month?"),
            ("assistant", "Run restic key add with the new password, then restic key remove for the old key id."),
            ("user", "perfect, will do all of that. thanks for all the help")]
    text = keylines.key_lines(items(tok, chat), 200, tok)
    assert keylines.UNANSWERED not in text and "restic key add" in text
    asked = keylines.key_lines(items(tok, chat[:1] + chat[2:] + [("user", "and the ssh keys, how often?")]), 200, tok)
    assert asked.splitlines()[-2:] == ["- user: and the ssh keys, how often?", f"  - {keylines.UNANSWERED}"]
