"""Steps: where a leaf is cut for the model, and how each step is shown to it."""

from __future__ import annotations

from datetime import datetime, timezone

from hiermem_tui.summarize.steps import (
    MAX_STEPS, STEP_TOKENS, compact_code, readable_calls, shown, split,
)
from hiermem_tui.summarize.types import SourceItem

T0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)


def item(role: str, text: str, tokens: int | None = None) -> SourceItem:
    return SourceItem("episode", text, tokens if tokens is not None else max(1, len(text.split())), T0, T0, role=role)


def covered(steps: list, n: int) -> list[int]:
    return [i for s in steps for i in range(s.first, s.last + 1)] if steps else []


def test_a_chat_is_cut_at_each_user_message_and_every_source_is_in_one_step() -> None:
    chat = [item("user", "make an extension that groups tabs", 200), item("assistant", "Here is v0.1.0 …", 600),
            item("user", "it fails: Status code: 3", 200), item("assistant", "Declare the worker a module", 400),
            item("user", "can i use activeTab instead", 200), item("assistant", "No: activeTab sees one tab", 300)]
    steps = split(chat)
    assert [(s.first, s.last, s.opened_by) for s in steps] == [(0, 1, "user"), (2, 3, "user"), (4, 5, "user")]
    assert covered(steps, len(chat)) == list(range(len(chat)))


def test_an_agent_session_is_cut_where_the_assistant_says_what_it_does_next() -> None:
    """A Claude Code leaf with one user message and many tool calls: prose openers start steps; a
    message that is only a tool call does not."""
    work = [item("user", "find the root cause, do not fix it", 300),
            item("assistant", '[tool_use Read] {"file_path": "/repo/STATUS.md"}', 40),
            item("tool", "Handoff summary …", 500),
            item("assistant", "Now let me examine the test file to understand the specific error: "
                              '[tool_use Read] {"file_path": "/repo/tests/test_gpu.c"}', 60),
            item("tool", "int main() { … }", 500),
            item("assistant", "Let me check where VSLA_BACKEND_CUDA should be defined in the headers: "
                              '[tool_use Grep] {"pattern": "VSLA_BACKEND_CUDA"}', 60),
            item("tool", "Found 4 files", 300)]
    steps = split(work)
    assert [(s.first, s.opened_by) for s in steps] == [(0, "user"), (3, "continued"), (5, "continued")]
    assert covered(steps, len(work)) == list(range(len(work)))


def test_tiny_steps_join_a_neighbour_large_ones_are_cut_and_there_are_never_too_many() -> None:
    chat = [item("user", "fix the author of every commit", 300), item("tool", "…", 300),
            item("user", "[Request interrupted by user]", 6), item("user", "that is not my email though", 300),
            item("assistant", "Rewriting with filter-branch", 300)]
    steps = split(chat)
    assert all(s.first != 2 for s in steps)  # the interruption is no step of its own
    big = [item("user", "review it", 100)] + [item("assistant", f"Point {i}: this part is long", 700) for i in range(4)]
    cut = split(big)
    assert len(cut) >= 2 and all(sum(t.tokens for t in s.items(big)) <= STEP_TOKENS * 1.3 + 700 for s in cut)
    many = [item("user" if i % 2 == 0 else "assistant", f"message {i} with some words in it", 200) for i in range(40)]
    assert len(split(many)) == MAX_STEPS and covered(split(many), 40) == list(range(40))
    assert split([]) == []


def test_tool_calls_read_as_commands_not_json() -> None:
    claude = ('I\'ll check the email. [tool_use Bash] {"command": "git config --get user.email", '
              '"description": "Check current git email"}')
    assert readable_calls(claude) == ("I'll check the email. [Bash] command: git config --get user.email; "
                                      "description: Check current git email")
    codex = '[function_call shell] {"command": ["bash", "-lc", "uv run pytest -q"], "workdir": "/repo"}'
    assert readable_calls(codex) == "[shell] command: uv run pytest -q"
    odd = "[custom_tool_call apply_patch] *** Begin Patch\n*** Update File: a.py"
    assert readable_calls(odd).startswith("[apply_patch] *** Begin Patch")
    assert readable_calls("no calls here: {\"a\": 1}") == "no calls here: {\"a\": 1}"


def test_long_code_is_shown_by_its_first_lines() -> None:
    body = "\n".join(f"line {i}" for i in range(30))
    text = f"Here is the file:\n\n```js\n{body}\n```\n\nLoad it unpacked."
    short = compact_code(text)
    assert "line 5" in short and "line 6" not in short and "[… 24 more lines]" in short
    assert short.startswith("Here is the file:") and short.endswith("Load it unpacked.")
    assert compact_code("```\na\nb\n```") == "```\na\nb\n```"
    shown_item = shown(item("assistant", text))
    assert shown_item.text == short and shown_item.tokens == item("assistant", text).tokens
