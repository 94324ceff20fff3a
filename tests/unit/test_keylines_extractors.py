"""Each role's extractor on its own: (role, text) → the lines it offers, by kind. Every kind an extractor
makes has a row here, so a rule switched off fails its row."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hiermem_tui.summarize import keylines
from hiermem_tui.summarize.keylines import assistant, carried, document, tool, user
from hiermem_tui.summarize.keylines.kinds import EXTRACTIVE_VERSION, PRIORITY, QUOTES_VERSION, Kind, Line
from hiermem_tui.summarize.types import SourceItem

NOW = datetime(2025, 3, 1, tzinfo=timezone.utc)


def of(found: list[Line], kind: Kind) -> list[str]:
    return [ln.words for ln in found if ln.kind is kind]


USER_ROWS = [
    ("The nightly backup job fails since Monday. It writes to /mnt/backup. We moved the NAS to a new rack. "
     "Then the mount changed. Please check it. Also the cron file. And the logs too. Maybe the disk. Or the network.",
     {Kind.USER_OPENING: ["The nightly backup job fails since Monday.", "It writes to /mnt/backup."],
      Kind.USER_MORE: ["We moved the NAS to a new rack.", "Then the mount changed.", "Please check it.",
                       "Also the cron file.", "And the logs too.", "Maybe the disk."],
      Kind.REST: ["Or the network."], Kind.DECIDING: []}),
    ("calling saveRule in a loop and now:\nError: QUOTA_BYTES_PER_ITEM quota exceeded",
     {Kind.USER_PASTED_ERROR: ["Error: QUOTA_BYTES_PER_ITEM quota exceeded"]}),
    ("Thanks, that works. Looks good to me. Let's go with Postgres 16 then, and keep the dump.",
     {Kind.DECIDING: ["Let's go with Postgres 16 then, and keep the dump."]}),
    ("Here is my plan.\n## Summary\nWe ship the beta on the first of May to all ten customers.",
     {Kind.USER_CONCLUDING: ["We ship the beta on the first of May to all ten customers."]}),
    ("<command-name>/clear</command-name>", {Kind.USER_OPENING: []}),
    ("[image: screenshot.png] what does this error mean here", {Kind.USER_OPENING: ["what does this error mean here"]}),
]


@pytest.mark.parametrize(("text", "expected"), USER_ROWS)
def test_the_user_extractor(text: str, expected: dict[Kind, list[str]]) -> None:
    found = user.lines(text, 3)
    for kind, words in expected.items():
        assert of(found, kind) == words, kind
    assert all(ln.who == "user" and ln.place[0] == 3 for ln in found)
    assert [ln.place for ln in found if ln.kind is Kind.USER_OPENING] == sorted(
        ln.place for ln in found if ln.kind is Kind.USER_OPENING)  # where each begins in the message


ANSWER = ("The backup fails because the mount point moved. Use `mount -a` after editing /etc/fstab line 12. "
          "I would rather than patching cron, fix the unit. Restart it with systemctl restart backup. "
          "That should fix the nightly run for good.\n\n| Disk | Size |\n|---|---|\n| sda | 4 TB |\n\n"
          "```bash\nsudo systemctl restart backup.service --now\n```")
NEXT_STEPS = ("Here is the plan in short form for you today.\n\n## Next steps\n\n"
              "- Move the settings into the new file before Friday at noon.\n"
              "- Run the migration script against staging first please.\n\nThat is all we need for the release.")
MANY_SPECIFICS = "Here are the seven parts you asked for, with prices.\n" + "\n".join(
    f"Part number {n} costs {n * 3} dollars in the shop." for n in range(1, 8)) + "\nThat is the whole list for now."

ASSISTANT_ROWS = [
    (ANSWER, {
        Kind.ANSWER_ENDS: ["The backup fails because the mount point moved.", "That should fix the nightly run for good."],
        Kind.DECIDING: ["I would rather than patching cron, fix the unit."],
        Kind.SPECIFIC: ["Use `mount -a` after editing /etc/fstab line 12."],
        Kind.ANSWER_OPENING: ["The backup fails because the mount point moved."],
        Kind.LIST: ["Disk | Size; sda | 4 TB"],
        Kind.CODE: ["sudo systemctl restart backup.service --now"] and ["[bash] sudo systemctl restart backup.service --now"],
        Kind.REST: ["The backup fails because the mount point moved.", "Use `mount -a` after editing /etc/fstab line 12.",
                    "I would rather than patching cron, fix the unit.", "Restart it with systemctl restart backup.",
                    "That should fix the nightly run for good."],
    }),
    (NEXT_STEPS, {
        Kind.CONCLUDING: ["Move the settings into the new file before Friday at noon.",
                          "Run the migration script against staging first please.", "That is all we need for the release."],
        Kind.SPECIFIC: [],
    }),
    (MANY_SPECIFICS, {
        Kind.SPECIFIC: [f"Part number {n} costs {n * 3} dollars in the shop." for n in range(1, 6)],
        Kind.SPECIFIC_MORE: [f"Part number {n} costs {n * 3} dollars in the shop." for n in (6, 7)],
    }),
    ('[tool_use TodoWrite] {"todos": [{"content": "Read the log"}, {"content": "Fix the mount"}]}',
     {Kind.AGENT_ACTION: ["Read the log; Fix the mount"]}),
    ('Let me look at the recent history first.\n[tool_use Bash] {"command": "git log --oneline -5", "description": "recent commits"}',
     {Kind.AGENT_ACTION: ["[Bash] command: git log --oneline -5; description: recent commits"],
      Kind.ANSWER_ENDS: ["Let me look at the recent history first."]}),
    ('[tool_use canmore.create_textdoc] {"name": "Budget plan", "type": "document", "content": '
     '"The budget for the pilot is 12,000 dollars over six months."}',
     {Kind.AGENT_ACTION: ["[canmore.create_textdoc] name: Budget plan"],
      Kind.ANSWER_ENDS: ["The budget for the pilot is 12,000 dollars over six months."]}),
]


@pytest.mark.parametrize(("text", "expected"), ASSISTANT_ROWS)
def test_the_assistant_extractor(text: str, expected: dict[Kind, list[str]]) -> None:
    found = assistant.lines(text, 2)
    for kind, words in expected.items():
        assert of(found, kind) == words, kind
    assert "sudo systemctl restart backup.service --now" not in [ln.words for ln in found]  # fenced code is not said


def test_the_concluding_section_beyond_the_first_few_is_concluding_more() -> None:
    text = "Here is the plan for the week ahead of us.\n## Next steps\n" + "\n".join(
        f"- Step {w} of the plan is to call the {w} team today." for w in "abcdefg")
    found = assistant.lines(text, 0)
    assert len(of(found, Kind.CONCLUDING)) == assistant.SPECIFICS
    assert of(found, Kind.CONCLUDING_MORE) == ["Step f of the plan is to call the f team today.",
                                               "Step g of the plan is to call the g team today."]


TOOL_ROWS = [
    ("Traceback (most recent call last):\n  File \"a.py\", line 3\nValueError: invalid literal for int() with base 10",
     {Kind.TOOL_ERROR: ["ValueError: invalid literal for int() with base 10", "Traceback (most recent call last):"]}),
    ("No matches found", {Kind.TOOL_RESULT: ["No matches found"], Kind.TOOL_ERROR: []}),
    ("Found 2 files\n/home/me/src/a.c\n/home/me/src/b.c", {Kind.TOOL_RESULT: ["Found 2 files: /home/me/src/a.c, /home/me/src/b.c"]}),
    ("collecting tests now\n" + "x = 1\n" * 8 + "23 passed in 0.12s", {Kind.TOOL_RESULT: ["23 passed in 0.12s"]}),
    ("/* @brief Core definitions and constants for the VSLA library */\n" + "int a;\n" * 10,
     {Kind.TOOL_OPENING: ["@brief Core definitions and constants for the VSLA library */"],
      Kind.OUTPUT_SAID: ["/* @brief Core definitions and constants for the VSLA library */"]}),
    ("\n".join(f"// the handler number {n} reads the queue" for n in range(15)) + "\nint main_loop_value;\n" * 7,
     {Kind.OUTPUT_SAID: [f"// the handler number {n} reads the queue" for n in range(tool.OUTPUT_LINES)],
      Kind.REST: [f"// the handler number {n} reads the queue" for n in range(tool.OUTPUT_LINES, 15)]
      + ["int main_loop_value;"] * 7}),
    ("Todos have been modified successfully", {Kind.TOOL_RESULT: [], Kind.TOOL_OPENING: []}),
    ("read <system-reminder>consider whether it looks malicious, error</system-reminder>ok",
     {Kind.TOOL_ERROR: [], Kind.TOOL_RESULT: ["read ok"]}),
]


@pytest.mark.parametrize(("text", "expected"), TOOL_ROWS)
def test_the_tool_extractor(text: str, expected: dict[Kind, list[str]]) -> None:
    found = tool.lines(text, 5)
    for kind, words in expected.items():
        assert of(found, kind) == words, kind


def test_a_grep_hit_is_shown_without_its_directory() -> None:
    assert tool.line("/home/me/vsla/src/backend.c:12:    // pick the backend") == "…/backend.c:12: // pick the backend"


PAPER = "\n".join(
    [f"## {n}. Section about topic {n}\n" + " ".join(f"Sentence {k} of section {n} says something long enough here."
                                                    for k in range(1, 7)) for n in range(1, 5)]
    + ["## Next steps\nWe submit the paper to the journal in June of this year."])


def test_the_document_extractor_reads_an_outline_then_a_section_at_a_time() -> None:
    doc = document.Document(PAPER, 6)
    assert doc.is_document
    found = document.outline(doc, "user", lambda words: (0, PAPER.find(words[:20])))
    outline = of(found, Kind.OUTLINE)
    assert outline[:5] == [f"{n}. Section about topic {n}" for n in range(1, 5)] + ["Next steps"]
    assert "We submit the paper to the journal in June of this year." in outline  # what a concluding section says
    assert "Sentence 1 of section 3 says something long enough here." in outline  # each section's first
    rest = of(found, Kind.REST)
    assert rest[:4] == [f"Sentence 2 of section {n} says something long enough here." for n in range(1, 5)]
    assert all(ln.place[1] >= 0 for ln in found)  # each found where it begins in the text


def test_a_short_text_with_headings_is_not_a_document() -> None:
    assert not document.Document("## One\nA line here.\n## Two\nAnother.\n## Three\nMore.", 6).is_document


def test_a_user_document_is_offered_by_its_outline() -> None:
    found = user.lines(PAPER, 0)
    assert of(found, Kind.OUTLINE) and not of(found, Kind.USER_CONCLUDING)


def test_a_condensed_summary_carries_its_sources_lines_ranked() -> None:
    text = ("Title\n" + keylines.HEAD + "\n- user: First thing asked here.\n- tool: 12 files listed\n"
            "- assistant: We decided to drop the cache layer.\n- user: please make it faster for the users now\n"
            "- tool: Error: disk full on /dev/sda1\n- assistant: The cache lives in src/cache.c now.")
    source = SourceItem("summary", text, 60, NOW, NOW, depth=0)
    ranked = [lvl[0].words for lvl in carried.levels(source, 10)]
    assert ranked == ["First thing asked here.", "We decided to drop the cache layer.",
                      "please make it faster for the users now", "Error: disk full on /dev/sda1",
                      "The cache lives in src/cache.c now.", "12 files listed"]
    assert [lvl[0].place for lvl in carried.levels(source, 10)][0] == (10, 0)


def test_a_step_keeps_only_its_last_answers_ends() -> None:
    items = [SourceItem("episode", t, 10, NOW, NOW, role=r) for r, t in (
        ("user", "Why does the backup fail every night now?"),
        ("assistant", "The mount point moved to a new place last week. Check fstab for it first."),
        ("assistant", "I found the cause in the unit file of the service. Restarting it fixed the nightly run."))]
    ends = [ln.words for ln in keylines.step_levels(items, 0)[PRIORITY.level(Kind.ANSWER_ENDS) or 0]]
    assert ends == ["I found the cause in the unit file of the service.", "Restarting it fixed the nightly run."]


def test_every_kind_has_a_level_and_the_versions_derive_from_the_table() -> None:
    assert {k for level in PRIORITY.levels for k in level} == set(Kind)
    assert QUOTES_VERSION == f"+quotes-v{PRIORITY.version}" and EXTRACTIVE_VERSION == f"extractive-v{PRIORITY.version - 2}"


def test_a_users_question_later_in_a_message_is_part_of_its_opening() -> None:
    """The request a reader asks about ("is the JR Pass worth it?") came third and was lost under the message's
    opening remark ("private bath would be nice")."""
    found = user.lines("private bath would be nice. we land at 7 in the morning. is the JR Pass worth it for us?", 0)
    assert of(found, Kind.USER_OPENING) == ["private bath would be nice.", "we land at 7 in the morning.",
                                            "is the JR Pass worth it for us?"]
    assert "is the JR Pass worth it for us?" not in of(found, Kind.USER_MORE)
