"""Each rule that picks a brief's quote out of one message, alone: (text) → what it picks."""

from __future__ import annotations

import pytest

from hiermem_tui.summarize.brief_rules import (
    answer_gist,
    artifact_names,
    ask_of,
    listed_decisions,
    reason_after,
    solved,
)


@pytest.mark.parametrize(("text", "ask"), [
    ("told imani, we'll look at it in february.\n\none last thing: can you make me a savings table? markdown please",
     "one last thing: can you make me a savings table? markdown please"),
    ("reset worked, tests green again. oh no. how do i fix the remote without making things worse for her?",
     "how do i fix the remote without making things worse for her?"),
    ("write the decline email to dana", "write the decline email to dana"),
    ("the plan looks fine.\n\n```\nerror: x?\n```", "the plan looks fine."),  # a question inside code asks nothing
    ("deploy 3 is done. all green.", "deploy 3 is done. all green."),  # nothing asks: the whole message
])
def test_ask_of_quotes_a_request_from_its_asking_sentence(text: str, ask: str) -> None:
    assert ask_of(text) == ask


def test_answer_gist_is_what_presents_the_thing_made_and_its_bottom_line() -> None:
    answer = ("Nice, that's a clean result.\n\nHere's a paste-ready version. All figures are monthly.\n\n"
              "| Change | Before | After |\n|---|---|---|\n| NAT | $2,511 | $760 |\n| **Total** | $5,923 | $2,012 |")
    assert answer_gist(answer, "can you make a savings table") == ("Here's a paste-ready version. All figures are "
                                                                   "monthly. … Total | $5,923 | $2,012")


def test_answer_gist_passes_over_a_reaction_to_the_users_news() -> None:
    answer = ("Great result, and nice catch on the temp rule.\n\n"
              "Add a limiter: two pipes, 50 Mbit/s down and 10 Mbit/s up, shared by every guest.")
    news = "deleted the temp rule, reordered, all tests pass. can you add a limiter for the guest vlan?"
    gist = answer_gist(answer, "can you add a limiter for the guest vlan?", news)
    assert gist.startswith("Add a limiter: two pipes")


def test_answer_gist_keeps_a_first_paragraph_that_answers() -> None:
    answer = "Fixable. The key is to overwrite the remote only if it is still the broken commit.\n\n### 1. Check"
    assert answer_gist(answer, "how do i fix the remote?") == answer.split("\n")[0]


def test_listed_decisions_are_a_users_verdicts_with_their_reasons() -> None:
    text = ("ok decisions:\n- S3 gateway endpoint: yes, doing it tomorrow\n- single NAT: no, keeping 3. the cross AZ "
            "thing kills it\n- datadog: there's a ticket for that\n\nwhat should i watch?")
    assert listed_decisions(text) == ["S3 gateway endpoint: yes, doing it tomorrow",
                                      "single NAT: no, keeping 3. the cross AZ thing kills it"]
    assert listed_decisions("- NAT: no, keeping 3\n- other: maybe") == []  # one verdict is not a list of them


@pytest.mark.parametrize(("text", "said"), [
    ("reset worked, tests green again. oh no, one more thing", "reset worked, tests green again."),
    ("validate clean, plan says 2 to add.", "validate clean, plan says 2 to add."),
    ("that was it, works now 👍 last thing: how often?", "that was it, works now 👍 last thing: how often?"),
    ("still not working after the reset", ""),
    ("it worked for a minute then crashed", ""),
])
def test_solved_is_a_users_report_that_a_problem_is_gone(text: str, said: str) -> None:
    assert solved(text) == said


def test_reason_after_is_the_first_point_under_a_why_heading_else_a_because() -> None:
    headed = ("Go with db.r6g.xlarge, not large.\n\n## Why large is too tight\n\n- **Connection limit:** the peak of "
              "1,150 is ~70% of max_connections.\n- Memory: …")
    assert reason_after(headed) == "Connection limit: the peak of 1,150 is ~70% of max_connections."
    assert reason_after("Use Arduino. I'd pick it because you want control of the awake phase.") == (
        "I'd pick it because you want control of the awake phase.")
    assert reason_after("Use Arduino. It is fine.") == ""


def test_artifact_names_are_files_a_block_names_on_its_first_line() -> None:
    text = "Notes:\n\n```markdown\n# network-notes.md\nHome network\n```\n\n```rust\n// file: src/main.rs\nfn main() {}\n```\n```sh\n# install\n```"
    assert artifact_names(text) == ["network-notes.md", "src/main.rs"]


@pytest.mark.parametrize(("text", "did"), [
    ("Checked the inventory: replica_3 was deleted on March 24. Dropping.",
     "Checked the inventory: replica_3 was deleted on March 24. Dropping."),
    ("Went with option 1, compiles, tests pass.", "Went with option 1, compiles, tests pass."),
    ("should i drop the slot?", ""),
    ("pg_wal is 211G!", ""),
])
def test_acted_is_what_a_user_says_they_did(text: str, did: str) -> None:
    from hiermem_tui.summarize.brief_rules import acted
    assert acted(text) == did


def test_answer_gist_starts_at_the_sentence_that_presents_the_thing_made() -> None:
    answer = ("Great result, and nice catch on the temp rule. Here's the limiter first, then the notes file.\n\n"
              "### Guest limiter\n\n| Field | Pipe 1 |\n|---|---|\n| Bandwidth | 50 Mbit/s |")
    assert answer_gist(answer, "can you add a limiter?", "deleted the temp rule") == (
        "Here's the limiter first, then the notes file.")


def test_answer_gist_of_a_presenting_sentence_shows_the_first_line_of_what_it_presents() -> None:
    answer = "Here it is, ready to paste:\n\n---\n\n## Expo SDK 53: fix the iOS build\n\n**Why** the plugin went."
    assert answer_gist(answer, "can you write the PR description?") == (
        "Here it is, ready to paste: Expo SDK 53: fix the iOS build")
    code = "`metering/table_health.py`:\n\n```python\nREPORT_LOCK_KEY = 742_001\n```"
    assert answer_gist(code, "can you write that?") == "`metering/table_health.py`: REPORT_LOCK_KEY = 742_001"


def test_acted_is_not_a_deed_told_of_in_passing() -> None:
    from hiermem_tui.summarize.brief_rules import acted
    assert acted("This post is about why we deleted it, and what we page on instead.") == ""
    assert acted("we rolled back to 1.4.4 and it is up") == "we rolled back to 1.4.4 and it is up"


def test_answer_gist_looks_for_a_presenting_sentence_in_the_first_paragraph_only() -> None:
    answer = ('"Our CPU alert woke someone up twice a week for nothing."\n\nHere\'s what we page on now, and why.')
    assert answer_gist(answer, "and a one-line summary for the blog index?").startswith('"Our CPU alert')
    assert answer_gist("Good call: decided on purpose.\n\nHave a wonderful time!", "done deliberating") == (
        "Good call: decided on purpose.")


def test_answer_gist_takes_no_bottom_line_from_code() -> None:
    answer = "Here's v2 with all three changes.\n\n```bash\ntotal=0\nfor ds in family backups; do\n```"
    assert answer_gist(answer, "can you update the script?") == "Here's v2 with all three changes."
