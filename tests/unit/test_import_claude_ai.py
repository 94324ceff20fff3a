"""Claude.ai export parser: content blocks, tool output, attachments, malformed input, zip safety."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import chatgpt, claude_ai, claude_code, codex
from hiermem_tui.importers.base import FormatError, Problems, read_head

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CONV = FIX / "claude_ai" / "conversations.json"
BROKEN = FIX / "claude_ai" / "broken_conversations.json"


def parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(claude_ai.parse(path, problems)), problems


def make_zip(tmp_path: Path, members: dict[str, bytes]) -> Path:
    out = tmp_path / "claude-export.zip"
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return out


def test_conversation_roles_order_timestamps_and_ids() -> None:
    sessions, problems = parse(CONV)
    assert problems.count == 0
    assert [s.id for s in sessions] == [
        "claude:3f2e1d0c-aaaa-4bbb-8ccc-000000000001",
        "claude:3f2e1d0c-aaaa-4bbb-8ccc-000000000002",
    ]
    s = sessions[0]
    assert s.title == "Planning a bike tour"
    assert s.source == "claude"
    assert s.created_at == datetime(2025, 4, 10, 8, 0, tzinfo=timezone.utc)
    assert [(e.role, e.source_id) for e in s.episodes] == [
        ("user", "m-1"),
        ("assistant", "m-2"),
        ("tool", "m-2#1"),
        ("assistant", "m-2#2"),
        ("user", "m-3"),
    ]
    assert s.episodes[1].created_at == datetime(2025, 4, 10, 8, 0, 30, tzinfo=timezone.utc)


def test_blocks_preferred_thinking_kept_apart_tool_use_rendered() -> None:
    s = parse(CONV)[0][0]
    assert s.episodes[1].content == 'Let me check the weather.\n\n[tool_use web_search] {"query": "Porto weather May"}'
    assert s.episodes[1].metadata["tools"] == ["web_search"]
    assert s.episodes[3].content == "Looks sunny: day 2 Aveiro → Coimbra (60 km), day 3 back by train."
    assert "wants a route" not in "\n".join(e.content for e in s.episodes)
    assert s.episodes[1].metadata["thinking"] == "The user wants a route; check weather first."
    assert s.metadata["thinking_blocks"] == 1


def test_tool_result_is_its_own_tool_episode() -> None:
    tool = parse(CONV)[0][0].episodes[2]
    assert tool.role == "tool"
    assert tool.content == "Sunny, 22°C all week"


def test_attachments_and_empty_content_fallback_to_text() -> None:
    first, second = parse(CONV)[0]
    assert first.episodes[0].content == (
        "Plan a 3-day bike tour from Porto.\nI have the first day's route attached.\n\n"
        "[attachment route.txt]\nDay 1: Porto → Aveiro (75 km)"
    )
    assert first.episodes[4].content == "Thanks!"  # content: [] falls back to text
    assert second.episodes[0].content == "What is in this photo of my garden?\n\n[file garden.png]"
    assert second.title == "What is in this photo of my garden?"  # empty name


def test_malformed_conversations_and_messages_are_skipped() -> None:
    sessions, problems = parse(BROKEN)
    assert [s.id for s in sessions] == ["claude:3f2e1d0c-aaaa-4bbb-8ccc-0000000000aa"]
    assert [(e.role, e.content) for e in sessions[0].episodes] == [("user", "hello"), ("assistant", "hi there")]
    assert problems.reasons == {
        "message is not an object": 1,
        "unknown sender": 1,
        "conversation without a uuid": 1,
        "conversation without chat_messages": 1,
    }


@pytest.mark.parametrize("path", [FIX / "chatgpt" / "conversations.json", FIX / "claude_code" / "malformed.jsonl"])
def test_other_formats_raise_format_error(path: Path) -> None:
    with pytest.raises(FormatError):
        parse(path)


def test_top_level_object_is_not_claude(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('{"chat_messages": []}', encoding="utf-8")
    with pytest.raises(FormatError, match="not a list"):
        parse(path)


def test_sniff_claims_own_files_only(tmp_path: Path) -> None:
    assert claude_ai.sniff(CONV, read_head(CONV))
    assert claude_ai.sniff(BROKEN, read_head(BROKEN))
    for other in (
        FIX / "chatgpt" / "conversations.json",
        FIX / "claude_code" / "projects",
        FIX / "claude_code" / "malformed.jsonl",
        FIX / "codex" / "sessions",
        FIX / "codex" / "malformed.jsonl",
    ):
        assert not claude_ai.sniff(other, read_head(other)), other
    for module in (chatgpt, claude_code, codex):
        assert not module.sniff(CONV, read_head(CONV)), module.NAME
    sharegpt_like = tmp_path / "data.json"
    sharegpt_like.write_text(json.dumps([{"id": "1", "conversations": [{"from": "human", "value": "hi"}]}]))
    assert not claude_ai.sniff(sharegpt_like, read_head(sharegpt_like))


def test_zip_input_equals_plain_file(tmp_path: Path) -> None:
    archive = make_zip(tmp_path, {"users.json": b"[]", "conversations.json": CONV.read_bytes()})
    assert claude_ai.sniff(archive, read_head(archive))
    assert not chatgpt.sniff(archive, read_head(archive))
    assert parse(archive)[0] == parse(CONV)[0]


def test_zip_bomb_member_is_refused(tmp_path: Path) -> None:
    archive = make_zip(tmp_path, {"conversations.json": b"\0" * (50 * 1024 * 1024)})
    with pytest.raises(FormatError, match="zip bomb"):
        parse(archive)


def test_corrupt_zip_is_a_format_error(tmp_path: Path) -> None:
    archive = make_zip(tmp_path, {"conversations.json": CONV.read_bytes()})
    archive.write_bytes(archive.read_bytes()[:200])
    with pytest.raises(FormatError):
        parse(archive)


def test_deeply_nested_json_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('[{"chat_messages": ' + "[" * 200_000, encoding="utf-8")
    with pytest.raises(FormatError, match="nested too deeply"):
        parse(path)


def test_parsing_is_deterministic() -> None:
    assert parse(CONV)[0] == parse(CONV)[0]


# --- exports shaped like real 2025 ones (tests/fixtures/claude_ai/make_fixtures.py) ---

ACCOUNT_A = FIX / "claude_ai" / "account-a.json"


def test_real_shaped_export_keeps_thinking_and_names_true_reasons() -> None:
    sessions, problems = parse(ACCOUNT_A)
    (starter,) = sessions
    assert [(e.role, e.source_id) for e in starter.episodes] == [
        ("user", "a1f0e2d3-0001-4c5b-8a79-6e5d4c3b2a10"),
        ("assistant", "a1f0e2d3-0002-4c5b-8a79-6e5d4c3b2a11"),
        ("tool", "a1f0e2d3-0002-4c5b-8a79-6e5d4c3b2a11#1"),
        ("assistant", "a1f0e2d3-0002-4c5b-8a79-6e5d4c3b2a11#2"),
        ("user", "a1f0e2d3-0003-4c5b-8a79-6e5d4c3b2a12"),
    ]
    reply = starter.episodes[1]
    assert reply.content == 'Let me check.\n\n[tool_use web_search] {"query": "sourdough starter acetone smell"}'
    assert reply.metadata["thinking"].startswith("They describe an acetone smell.")
    assert "acetone smell. That is hunger" not in "\n".join(e.content for e in starter.episodes)
    assert starter.episodes[2].content == "An acetone smell means the culture is hungry."
    assert starter.episodes[0].content.endswith("[attachment feeding-log.txt]\nMon 9:00 fed 1:1:1\nTue 21:00 fed 1:1:1")
    assert starter.metadata["thinking_blocks"] == 1
    assert problems.reasons == {"conversation without messages": 1, "conversation with only empty messages": 1}


def test_empty_and_thinking_only_messages_are_counted_not_silent(tmp_path: Path) -> None:
    conv = json.loads(ACCOUNT_A.read_text())[0]
    msgs = conv["chat_messages"]
    blank = {**msgs[2], "uuid": "blank", "text": "", "content": [{"type": "text", "text": "  ", "citations": []}],
             "files": []}
    thought = {**msgs[1], "uuid": "thought", "text": "", "content": [msgs[1]["content"][0]]}
    conv["chat_messages"] = [*msgs, blank, thought]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    (session,), problems = parse(path)
    assert len(session.episodes) == 5
    assert session.metadata["empty_messages"] == 1
    assert session.metadata["thinking_blocks"] == 2
    assert problems.reasons == {"message with only thinking": 1}

