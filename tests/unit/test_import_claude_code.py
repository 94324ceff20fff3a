"""Claude Code session-log parser: merged replies, tool roles, sidechains, folders, bad lines."""

from __future__ import annotations

import json
import shutil
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import chatgpt, claude_ai, claude_code, codex
from hiermem_tui.importers.base import FormatError, Problems, read_head

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROJECTS = FIX / "claude_code" / "projects"
BAKERY = PROJECTS / "-home-ana-bakery" / "5d1e2f3a-0b4c-4d5e-8f60-7a8b9c0d1e2f.jsonl"
MALFORMED = FIX / "claude_code" / "malformed.jsonl"


def parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(claude_code.parse(path, problems)), problems


def test_session_roles_order_timestamps_and_ids() -> None:
    sessions, problems = parse(BAKERY)
    assert problems.count == 0
    assert len(sessions) == 1
    s = sessions[0]
    assert s.id == "claude-code:5d1e2f3a-0b4c-4d5e-8f60-7a8b9c0d1e2f"
    assert s.source == "claude-code"
    assert [(e.role, e.source_id) for e in s.episodes] == [
        ("user", "u-0001"),
        ("assistant", "msg_01A"),
        ("tool", "u-0005"),
        ("assistant", "msg_01B"),
        ("tool", "u-0008"),
        ("assistant", "msg_01C"),
        ("system", "u-0012"),
        ("system", "u-0013"),
        ("user", "u-0014"),
        ("system", "u-0015"),
        ("assistant", "msg_01D"),
        ("system", "u-0017"),
    ]
    assert s.episodes[0].content == "The oven timer shows 59 min instead of 60.\nCan you find the rounding bug?"
    assert s.episodes[0].created_at == datetime(2025, 5, 2, 9, 0, 0, tzinfo=timezone.utc)
    assert s.created_at == datetime(2025, 5, 2, 9, 0, 0, tzinfo=timezone.utc)
    assert s.metadata["cwd"] == "/home/ana/bakery"
    assert s.metadata["git_branch"] == "main"
    assert s.metadata["tools"] == {"Bash": 1, "Edit": 1}


def test_split_reply_lines_merge_into_one_episode_without_thinking() -> None:
    s = parse(BAKERY)[0][0]
    reply = s.episodes[1]
    assert reply.content == (
        'Let me look at the timer code.\n\n[tool_use Bash] {"command": "grep -n round src/timer.py"}'
    )
    assert "int() truncation" not in reply.content  # the thinking block
    assert reply.created_at == datetime(2025, 5, 2, 9, 0, 3, tzinfo=timezone.utc)  # first line of the reply
    assert reply.metadata["thinking_blocks"] == 1
    assert reply.metadata["model"] == "claude-sonnet-4-5-20250929"
    assert s.metadata["thinking_blocks"] == 1


def test_tool_results_are_tool_role_with_their_text() -> None:
    s = parse(BAKERY)[0][0]
    tools = [e for e in s.episodes if e.role == "tool"]
    assert [t.content for t in tools] == ["12:    return int(seconds / 60)", "The file src/timer.py has been updated."]
    assert [t.metadata["tools"] for t in tools] == [["Bash"], ["Edit"]]


def test_meta_sidechain_and_non_episode_records_are_left_out() -> None:
    s = parse(BAKERY)[0][0]
    contents = "\n".join(e.content for e in s.episodes)
    assert "Caveat:" not in contents
    assert "Search for other truncations" not in contents and "None found." not in contents
    assert "Hook ran" not in contents
    assert s.metadata["sidechain_records"] == 2
    assert s.metadata["meta_records"] == 1
    assert s.metadata["other_records"] == 1  # file-history-snapshot
    assert s.metadata["system_records_skipped"] == 1


def test_system_kinds_and_compact_summary() -> None:
    s = parse(BAKERY)[0][0]
    by_id = {e.source_id: e for e in s.episodes}
    assert by_id["u-0012"].content == "[compact_boundary] Conversation compacted"
    assert by_id["u-0012"].metadata == {"subtype": "compact_boundary", "trigger": "manual", "preTokens": 12345}
    assert by_id["u-0013"].metadata == {"compact_summary": True}
    assert by_id["u-0013"].content.startswith("This session is being continued")
    assert by_id["u-0015"].content.startswith("[api_error] ") and "Overloaded" in by_id["u-0015"].content
    assert by_id["u-0017"].metadata == {"local_command": True}


def test_title_is_the_summary_of_this_sessions_leaf() -> None:
    assert parse(BAKERY)[0][0].title == "Fix oven timer rounding bug"


def test_projects_folder_groups_by_session_and_folds_in_agent_files() -> None:
    sessions, problems = parse(PROJECTS)
    assert problems.count == 0
    assert [s.id for s in sessions] == [
        "claude-code:5d1e2f3a-0b4c-4d5e-8f60-7a8b9c0d1e2f",
        "claude-code:9a8b7c6d-1111-4222-8333-444455556666",
    ]
    assert sessions[0] == parse(BAKERY)[0][0]
    notes = sessions[1]
    assert notes.title == "Summarise notes/todo.md"  # no summary record: first user line
    assert [(e.role, e.source_id) for e in notes.episodes] == [
        ("user", "v-0001"),
        ("assistant", "msg_02X"),
        ("tool", "v-0003"),
        ("assistant", "msg_02X#1"),  # same message.id, not consecutive: kept apart, id made unique
    ]
    assert notes.episodes[0].content == "Summarise notes/todo.md\n\n[image image/png]"
    assert notes.episodes[2].content == "[no output]"
    assert notes.metadata["duplicate_records"] == 1
    assert notes.metadata["sidechain_records"] == 2
    assert notes.metadata["files"] == ["9a8b7c6d-1111-4222-8333-444455556666.jsonl", "agent-1a2b3c4d.jsonl"]
    assert "No TODO markers." not in "\n".join(e.content for e in notes.episodes)


def test_malformed_lines_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "malformed.jsonl"
    shutil.copy(MALFORMED, path)
    with path.open("ab") as fh:
        fh.write(b'{"type": "user", "sessionId": "x", "message": {"content": "caf\xe9"}}\n')
        fh.write(b"[" * 100_000 + b"\n")
    sessions, problems = parse(path)
    assert [e.content for e in sessions[0].episodes] == ["Is this line fine?", "Yes, it is."]
    assert problems.count == 5
    assert problems.reasons == {
        "not JSON": 1,
        "not a Claude Code record": 1,
        "assistant record without message content": 1,
        "invalid UTF-8": 1,
        "JSON nested too deeply": 1,
    }
    assert problems.examples[0] == "malformed.jsonl:2: not JSON"


def test_folder_skips_foreign_files_but_keeps_going(tmp_path: Path) -> None:
    shutil.copytree(PROJECTS / "-home-ana-bakery", tmp_path / "p")
    (tmp_path / "p" / "notes.jsonl").write_text("just some text\nmore text\n", encoding="utf-8")
    (tmp_path / "p" / "empty.jsonl").write_bytes(b"")
    sessions, problems = parse(tmp_path)
    assert len(sessions) == 1
    assert problems.reasons == {"not a Claude Code session file": 2}


@pytest.mark.parametrize(
    "path",
    [
        FIX / "chatgpt" / "conversations.json",
        FIX / "claude_ai" / "conversations.json",
        FIX / "codex" / "malformed.jsonl",
        FIX / "codex" / "sessions",
    ],
)
def test_other_formats_raise_format_error(path: Path) -> None:
    with pytest.raises(FormatError):
        parse(path)


def test_empty_file_native_jsonl_and_zip_are_format_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    native = tmp_path / "native.jsonl"
    native.write_text('{"session": "s", "role": "user", "content": "hi"}\n', encoding="utf-8")
    archive = tmp_path / "logs.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.write(BAKERY, "session.jsonl")
    for path in (empty, native, archive):
        with pytest.raises(FormatError):
            parse(path)


def test_sniff_claims_own_files_only(tmp_path: Path) -> None:
    for own in (BAKERY, PROJECTS, PROJECTS / "-home-ana-notes", MALFORMED):
        assert claude_code.sniff(own, read_head(own)), own
    for other in (
        FIX / "chatgpt" / "conversations.json",
        FIX / "claude_ai" / "conversations.json",
        FIX / "codex" / "sessions",
        FIX / "codex" / "malformed.jsonl",
    ):
        assert not claude_code.sniff(other, read_head(other)), other
    for module in (chatgpt, claude_ai, codex):
        assert not module.sniff(BAKERY, read_head(BAKERY)), module.NAME
        assert not module.sniff(PROJECTS, read_head(PROJECTS)), module.NAME
    native = tmp_path / "native.jsonl"
    native.write_text('{"session": "s", "role": "user", "content": "hi"}\n', encoding="utf-8")
    assert not claude_code.sniff(native, read_head(native))


def test_sniff_handles_a_first_line_longer_than_the_head(tmp_path: Path) -> None:
    record = {"parentUuid": None, "isSidechain": False, "sessionId": "abc", "type": "user",
              "message": {"role": "user", "content": "x" * 100_000}, "uuid": "u1", "timestamp": "2025-01-01T00:00:00Z"}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    head = read_head(path)
    assert len(head) == 65536
    assert claude_code.sniff(path, head)
    assert not codex.sniff(path, head)
    assert len(parse(path)[0][0].episodes[0].content) == 100_000


def test_parsing_is_deterministic() -> None:
    assert parse(PROJECTS)[0] == parse(PROJECTS)[0]
