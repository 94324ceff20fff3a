"""Each title check on its own (``summarize/titles.py``): what it passes on, cleans or refuses; and the
list runs them in order, stopping at the first refusal."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hiermem_tui.summarize import notes, titles
from hiermem_tui.summarize.keylines import HEAD
from hiermem_tui.summarize.prompts import Prompt
from hiermem_tui.summarize.titles import Draft, Refusal, TitleContext
from hiermem_tui.summarize.types import Generation, SourceItem

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
LINES = ("- user: Dynamic-Dimension Algebra: Two Semiring Constructions\n"
         "- assistant: The result is not commutative.")


def src(role: str, text: str) -> SourceItem:
    return SourceItem("episode", text, len(text.split()), T0, T0, role=role)


def ctx(*items: SourceItem, opened_by: str = "user", done: str = "stop", thinking: int | None = None,
        lines: str = LINES, frame: str = "What is this log about? Write only the title.") -> TitleContext:
    items = items or (src("user", "Please review the semiring paper draft for me."),)
    part = notes.Part(1, 1, tuple(items), opened_by, 40, lines)
    gen = Generation("", 10, 10, 1.0, done, thinking_tokens=thinking)
    return TitleContext(part, gen, Prompt("system", "prompt", "v", 0.0, 56, ask="What is this log about?"), frame,
                        tuple(items), True)


def check(name: str) -> titles.TitleCheck:
    return next(c for c in titles.TITLE_CHECKS if c.name == name)


def draft(text: str) -> Draft:
    return Draft(text, text)


def test_copies_the_frame() -> None:
    judge = check("copies the frame").judge
    assert isinstance(judge(draft("This is part 2 of 3. Backups"), ctx()), Refusal)
    assert isinstance(judge(draft("user: please fix the backup"), ctx()), Refusal)
    assert judge(draft("Fixing the nightly backup"), ctx()) == draft("Fixing the nightly backup")


def test_makes_a_silent_user_speak() -> None:
    judge = check("makes a silent user speak").judge
    silent = ctx(src("assistant", "I read the log."), opened_by="continued")
    assert judge(draft("The user asked about the log."), silent) == Refusal(
        "misattributed", "only makes the user speak, who says nothing in this part")
    assert judge(draft("Reading the build log. The user asked about it."), silent).text == "Reading the build log."  # type: ignore[union-attr]
    assert judge(draft("The user asked about the log."), ctx()) == draft("The user asked about the log.")


def test_names_the_prompts_material() -> None:
    judge = check("names the prompt's material").judge
    assert judge(draft("BOM v2 Report"), ctx()) == Draft("BOM v2 Report", "BOM v2")
    assert isinstance(judge(draft("Merge of Reports"), ctx()), Refusal)
    in_chat = ctx(src("user", "Write the quarterly report for the board."))
    assert judge(draft("Quarterly Report"), in_chat) == draft("Quarterly Report")


def test_is_about_the_prompt_or_its_code() -> None:
    judge = check("is about the prompt, or its code").judge
    assert isinstance(judge(draft("The report is about a paper"), ctx()), Refusal)
    assert isinstance(judge(draft("#define VSLA_ENABLE_CUDA 1"), ctx()), Refusal)
    assert isinstance(judge(draft("Please write only the title now"), ctx()), Refusal)  # a run of the frame
    assert judge(draft("Semiring paper review"), ctx()) == draft("Semiring paper review")


def test_breaks_a_content_rule() -> None:
    judge = check("breaks a content rule").judge
    assert judge(draft(""), ctx()) == Refusal("empty", "")
    assert judge(draft(""), ctx(thinking=40)) == Refusal("thinking_only", "40 tokens of thinking, no answer")
    assert isinstance(judge(draft("Sure! Here's the next step for you"), ctx()), Refusal)
    assert judge(draft("Semiring paper review"), ctx()) == draft("Semiring paper review")


def test_ends_unfinished() -> None:
    judge = check("ends unfinished").judge
    text = "Semiring paper review. Then the proofs of the"
    assert judge(draft(text), ctx(done="length")).text == "Semiring paper review."  # type: ignore[union-attr]
    assert judge(draft(text), ctx()) == draft(text)


def test_misquotes_a_line_it_read() -> None:
    judge = check("misquotes a line it read").judge
    assert judge(draft("The result is commutative"), ctx()).text == "The result is not commutative."  # type: ignore[union-attr]
    assert judge(draft("Dynamic-Dimension Algebra: Semiring Constructions"), ctx()) == draft(
        "Dynamic-Dimension Algebra: Semiring Constructions")


def test_the_checks_run_in_order_and_stop_at_the_first_refusal() -> None:
    assert [c.name for c in titles.TITLE_CHECKS] == [
        "copies the frame", "makes a silent user speak", "names the prompt's material",
        "is about the prompt, or its code", "breaks a content rule", "ends unfinished", "misquotes a line it read"]
    # cleaned by one check, judged by the next: "Report" dropped, then the misquote replaced
    assert titles.judge(draft("Report: The result is commutative"), ctx()) == Draft(
        "Report: The result is commutative", "The result is not commutative.")
    assert titles.judge(draft("This is part 1 of 1. The result is commutative"), ctx()).reason == "echo"  # type: ignore[union-attr]


@pytest.mark.parametrize("title", ["Fixing the nightly backup", "Semiring paper: Model A and Model B"])
def test_a_good_title_passes_every_check_unchanged(title: str) -> None:
    assert titles.judge(draft(title), ctx(lines=f"{HEAD}\n- user: something else entirely here")) == draft(title)
