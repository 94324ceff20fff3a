"""Codex rollout parser: envelope and old bare formats, human turns, tool calls, bad lines."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import chatgpt, claude_ai, claude_code, codex
from hiermem_tui.importers.base import FormatError, Problems, read_head

FIX = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = FIX / "codex" / "sessions"
NEW = SESSIONS / "2025/03/14/rollout-2025-03-14T09-30-00-0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
OLD = SESSIONS / "2024/11/02/rollout-2024-11-02T18-05-11-4e3d2c1b-0a09-4877-8665-544332211000.jsonl"
MALFORMED = FIX / "codex" / "malformed.jsonl"


def parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(codex.parse(path, problems)), problems


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def env(kind: str, payload: dict, ts: str = "2025-01-01T00:00:00Z") -> dict:
    return {"timestamp": ts, "type": kind, "payload": payload}


def test_envelope_rollout_roles_order_timestamps() -> None:
    sessions, problems = parse(NEW)
    assert problems.count == 0
    s = sessions[0]
    assert s.id == "codex:0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert s.source == "codex"
    assert s.title == "How many litres does the rain barrel hold? The size is in notes/barrel.md"
    assert [e.role for e in s.episodes] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "system", "assistant",
    ]
    assert s.episodes[0].created_at == datetime(2025, 3, 14, 9, 30, 5, 1000, tzinfo=timezone.utc)
    assert s.created_at == datetime(2025, 3, 14, 9, 30, 0, 100000, tzinfo=timezone.utc)
    assert s.metadata["cwd"] == "/home/ana/garden"
    assert s.metadata["cli_version"] == "0.41.0"
    assert s.metadata["git_branch"] == "main"
    assert s.metadata["models"] == ["gpt-5-codex"]


def test_human_turns_come_from_user_message_events_without_injected_context() -> None:
    s = parse(NEW)[0][0]
    users = [e.content for e in s.episodes if e.role == "user"]
    assert users == [
        "How many litres does the rain barrel hold? The size is in notes/barrel.md",
        "Add that to notes/barrel.md",
    ]
    text = "\n".join(e.content for e in s.episodes)
    assert "<environment_context>" not in text and "<user_instructions>" not in text
    assert s.metadata["injected_messages"] == 2


def test_agent_message_events_do_not_duplicate_replies_and_reasoning_is_dropped() -> None:
    s = parse(NEW)[0][0]
    replies = [e.content for e in s.episodes if e.role == "assistant" and not e.content.startswith("[")]
    assert replies == ["About 254 litres (π × 0.3² × 0.9 m³).", "Done — notes/barrel.md now lists the capacity."]
    assert "Reading the notes" not in "\n".join(e.content for e in s.episodes)
    assert s.metadata["reasoning_items"] == 1


def test_tool_calls_are_assistant_and_outputs_are_tool() -> None:
    s = parse(NEW)[0][0]
    call, output = s.episodes[1], s.episodes[2]
    assert call.role == "assistant"
    assert call.content == (
        '[function_call shell] {"command": ["bash", "-lc", "cat notes/barrel.md"], "workdir": "/home/ana/garden"}'
    )
    assert output.role == "tool"
    assert output.content == "Barrel: 60 cm diameter, 90 cm tall\n"
    assert output.metadata == {"exit_code": 0, "tool": "shell"}
    patch, patched = s.episodes[5], s.episodes[6]
    assert patch.content.startswith("[custom_tool_call apply_patch] *** Begin Patch\n")
    assert patched.content == "Success. Updated the following files:\nM notes/barrel.md"
    assert patched.metadata == {"tool": "apply_patch"}
    compacted = s.episodes[7]
    assert compacted.role == "system" and compacted.metadata == {"compact_summary": True}


def test_old_bare_format_with_header() -> None:
    s = parse(OLD)[0][0]
    assert s.id == "codex:4e3d2c1b-0a09-4877-8665-544332211000"
    assert s.created_at == datetime(2024, 11, 2, 18, 5, 11, tzinfo=timezone.utc)
    assert [(e.role, e.source_id) for e in s.episodes] == [
        ("user", None), ("assistant", "fc_1"), ("tool", None), ("assistant", "msg_1"),
    ]
    assert s.episodes[0].content == "List the TODOs in src/"
    assert all(e.created_at is None for e in s.episodes)
    assert s.metadata["git_branch"] == "dev"


def test_agent_message_fallback_and_stem_as_id(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "rollout-x.jsonl", [
        env("event_msg", {"type": "user_message", "message": "hi", "kind": "plain"}),
        env("event_msg", {"type": "agent_message", "message": "hello"}),
        env("event_msg", {"type": "user_message", "message": "<environment_context>", "kind": "environment_context"}),
    ])
    s = parse(path)[0][0]
    assert s.id == "codex:rollout-x"
    assert [(e.role, e.content) for e in s.episodes] == [("user", "hi"), ("assistant", "hello")]


def test_folder_tree_reads_every_rollout_in_path_order() -> None:
    sessions, problems = parse(SESSIONS)
    assert problems.count == 0
    assert [s.id for s in sessions] == [
        "codex:4e3d2c1b-0a09-4877-8665-544332211000",
        "codex:0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    ]


def test_malformed_lines_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "malformed.jsonl"
    shutil.copy(MALFORMED, path)
    with path.open("ab") as fh:
        fh.write(b'{"timestamp": "2025-01-01T00:00:00Z", "type": "event_msg", "payload": {"message": "\xff"}}\n')
        fh.write(b"[" * 100_000 + b"\n")
    sessions, problems = parse(path)
    assert [(e.role, e.content) for e in sessions[0].episodes] == [("user", "ping"), ("assistant", "pong")]
    assert problems.reasons == {
        "not JSON": 1,
        "response_item line without payload": 1,
        "not a Codex rollout line": 1,
        "invalid UTF-8": 1,
        "JSON nested too deeply": 1,
    }
    assert problems.examples[0] == "malformed.jsonl:3: not JSON"


@pytest.mark.parametrize(
    "path",
    [
        FIX / "chatgpt" / "conversations.json",
        FIX / "claude_ai" / "conversations.json",
        FIX / "claude_code" / "malformed.jsonl",
        FIX / "claude_code" / "projects",
    ],
)
def test_other_formats_raise_format_error(path: Path) -> None:
    with pytest.raises(FormatError):
        parse(path)


def test_native_jsonl_and_empty_file_are_format_errors(tmp_path: Path) -> None:
    native = write_lines(tmp_path / "native.jsonl", [{"session": "s", "role": "user", "content": "hi"}])
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for path in (native, empty):
        with pytest.raises(FormatError):
            parse(path)


def test_sniff_claims_own_files_only(tmp_path: Path) -> None:
    for own in (NEW, OLD, SESSIONS, MALFORMED):
        assert codex.sniff(own, read_head(own)), own
    for other in (
        FIX / "chatgpt" / "conversations.json",
        FIX / "claude_ai" / "conversations.json",
        FIX / "claude_code" / "projects",
        FIX / "claude_code" / "malformed.jsonl",
    ):
        assert not codex.sniff(other, read_head(other)), other
    for module in (chatgpt, claude_ai, claude_code):
        assert not module.sniff(NEW, read_head(NEW)), module.NAME
        assert not module.sniff(OLD, read_head(OLD)), module.NAME
        assert not module.sniff(SESSIONS, read_head(SESSIONS)), module.NAME
    native = write_lines(tmp_path / "native.jsonl", [{"session": "s", "role": "user", "content": "hi"}])
    assert not codex.sniff(native, read_head(native))


def test_sniff_handles_a_session_meta_longer_than_the_head(tmp_path: Path) -> None:
    meta = env("session_meta", {"id": "abc", "cwd": "/w", "base_instructions": {"text": "y" * 100_000}})
    first_turn = env("event_msg", {"type": "user_message", "message": "go"})
    path = write_lines(tmp_path / "rollout-long.jsonl", [meta, first_turn])
    head = read_head(path)
    assert codex.sniff(path, head)
    assert not claude_code.sniff(path, head)
    assert parse(path)[0][0].id == "codex:abc"


def test_parsing_is_deterministic() -> None:
    assert parse(SESSIONS)[0] == parse(SESSIONS)[0]
