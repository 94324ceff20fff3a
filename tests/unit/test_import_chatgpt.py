"""ChatGPT export parser: visible path only, roles, placeholders, malformed input, zip safety."""

from __future__ import annotations

import json
import struct
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import chatgpt, claude_ai, claude_code, codex
from hiermem_tui.importers.base import FormatError, Problems, read_head

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CONV = FIX / "chatgpt" / "conversations.json"
BROKEN = FIX / "chatgpt" / "broken_conversations.json"


def parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(chatgpt.parse(path, problems)), problems


def make_zip(tmp_path: Path, members: dict[str, bytes], name: str = "export.zip") -> Path:
    out = tmp_path / name
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return out


def test_current_path_in_order_with_roles_timestamps_and_ids() -> None:
    sessions, problems = parse(CONV)
    assert problems.count == 0
    assert [s.id for s in sessions] == [
        "chatgpt:c0ffee00-0000-4000-8000-000000000001",
        "chatgpt:c0ffee00-0000-4000-8000-000000000002",
    ]
    first = sessions[0]
    assert first.title == "Sourdough starter timing"
    assert first.source == "chatgpt"
    assert [(e.role, e.source_id) for e in first.episodes] == [
        ("user", "n-u1"),
        ("assistant", "n-a1"),
        ("user", "n-u2"),
        ("assistant", "n-code"),
        ("tool", "n-exec"),
        ("assistant", "n-a2"),
        ("user", "n-u3"),
        ("assistant", "n-a3"),
    ]
    assert first.episodes[0].content.startswith("My sourdough starter doubles in 4 hours at 26°C.\nWhen")
    assert first.episodes[0].created_at == datetime(2024, 3, 9, 16, 0, 0, tzinfo=timezone.utc)
    assert all(e.created_at is not None and e.created_at.tzinfo is not None for e in first.episodes)
    assert first.created_at == datetime(2024, 3, 9, 15, 59, 50, 500000, tzinfo=timezone.utc)
    assert first.metadata["default_model"] == "gpt-4o"
    assert first.metadata["models"] == ["gpt-4o"]


def test_regenerations_and_edits_off_the_current_path_are_left_out() -> None:
    first = parse(CONV)[0][0]
    contents = "\n".join(e.content for e in first.episodes)
    assert "Feed it Friday night." not in contents  # regenerated answer
    assert "You're welcome!" not in contents  # reply to the edited-away question
    assert [e.content for e in first.episodes if e.role == "user"][-1] == "Thanks! How long should the bulk ferment be?"
    assert first.metadata["off_path_messages"] == 3


def test_hidden_thoughts_recap_and_empty_messages_are_dropped_and_counted() -> None:
    first = parse(CONV)[0][0]
    contents = "\n".join(e.content for e in first.episodes)
    assert "internal search results" not in contents
    assert "Assessing rise" not in contents and "band marks" not in contents
    assert "Thought for 5 seconds" not in contents
    assert "Comparing rise" not in contents  # async reasoning progress authored by a tool
    assert first.metadata["dropped"] == {
        "empty": 1, "hidden": 2, "reasoning summary": 1, "reasoning_recap": 1, "thoughts": 1,
    }


def test_code_is_an_assistant_call_and_execution_output_is_tool() -> None:
    first = parse(CONV)[0][0]
    by_id = {e.source_id: e for e in first.episodes}
    assert by_id["n-code"].role == "assistant"
    assert by_id["n-code"].content == "[call python] rise = 2.1\nprint(rise >= 2)"
    assert by_id["n-exec"].role == "tool"
    assert by_id["n-exec"].content == "True"
    assert by_id["n-exec"].metadata["tool"] == "python"


def test_multimodal_parts_become_placeholders() -> None:
    first = parse(CONV)[0][0]
    image_msg = next(e for e in first.episodes if e.source_id == "n-u2")
    assert image_msg.content == "[image 800x600]\nHere is the jar this morning — is that enough rise?"
    assert image_msg.metadata["attachments"] == ["jar.jpg"]


def test_missing_title_falls_back_to_first_user_line_clipped() -> None:
    second = parse(CONV)[0][1]
    assert len(second.title) == 80
    assert second.title.startswith("Translate 'good morning' into Portuguese")
    assert second.title.endswith("…")


def test_malformed_conversations_are_skipped_with_reasons() -> None:
    sessions, problems = parse(BROKEN)
    assert [s.id for s in sessions] == ["chatgpt:c0ffee00-0000-4000-8000-0000000000aa"]
    assert problems.count == 4
    assert problems.reasons == {
        "conversation without a mapping": 1,
        "broken parent chain": 2,  # a missing parent and a loop
        "conversation is not an object": 1,
    }
    assert problems.examples[0].startswith("broken_conversations.json[1]")


def test_malformed_message_on_path_is_skipped_but_conversation_kept(tmp_path: Path) -> None:
    conv = json.loads(CONV.read_text(encoding="utf-8"))[1]
    conv["mapping"]["b1"]["message"]["author"]["role"] = "critic"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    sessions, problems = parse(path)
    assert [e.role for e in sessions[0].episodes] == ["assistant"]
    assert problems.reasons == {"unknown author role": 1}


@pytest.mark.parametrize(
    "path",
    [FIX / "claude_ai" / "conversations.json", FIX / "claude_code" / "malformed.jsonl"],
)
def test_other_formats_raise_format_error(path: Path) -> None:
    with pytest.raises(FormatError):
        parse(path)


def test_top_level_object_is_not_chatgpt(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text('{"mapping": {}}', encoding="utf-8")
    with pytest.raises(FormatError, match="not a list"):
        parse(path)


def test_sniff_claims_own_files_only(tmp_path: Path) -> None:
    assert chatgpt.sniff(CONV, read_head(CONV))
    assert chatgpt.sniff(BROKEN, read_head(BROKEN))
    others = [
        FIX / "claude_ai" / "conversations.json",
        FIX / "claude_code" / "projects",
        FIX / "claude_code" / "malformed.jsonl",
        FIX / "codex" / "sessions",
        FIX / "codex" / "malformed.jsonl",
    ]
    for other in others:
        assert not chatgpt.sniff(other, read_head(other)), other
    for module in (claude_ai, claude_code, codex):
        assert not module.sniff(CONV, read_head(CONV)), module.NAME
    native = tmp_path / "native.jsonl"
    native.write_text('{"session": "s1", "role": "user", "content": "the mapping: here"}\n', encoding="utf-8")
    assert not chatgpt.sniff(native, read_head(native))


def test_sniff_ignores_keys_quoted_inside_chat_text(tmp_path: Path) -> None:
    fake = [{"uuid": "u", "name": 'about "mapping": {}', "chat_messages": []}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(fake), encoding="utf-8")
    assert not chatgpt.sniff(path, read_head(path))
    assert claude_ai.sniff(path, read_head(path))


def test_zip_and_unzipped_folder_inputs_equal_plain_file(tmp_path: Path) -> None:
    plain, _ = parse(CONV)
    archive = make_zip(tmp_path, {"chat.html": b"<html></html>", "conversations.json": CONV.read_bytes()})
    assert chatgpt.sniff(archive, read_head(archive))
    assert not claude_ai.sniff(archive, read_head(archive))
    assert parse(archive)[0] == plain
    folder = tmp_path / "unzipped"
    folder.mkdir()
    (folder / "conversations.json").write_bytes(CONV.read_bytes())
    assert chatgpt.sniff(folder, read_head(folder))
    assert parse(folder)[0] == plain


def test_zip_without_conversations_json(tmp_path: Path) -> None:
    archive = make_zip(tmp_path, {"user.json": b"{}"})
    with pytest.raises(FormatError, match="no conversations.json"):
        parse(archive)


def test_zip_bomb_member_is_refused(tmp_path: Path) -> None:
    archive = make_zip(tmp_path, {"conversations.json": b"\0" * (50 * 1024 * 1024)})
    with pytest.raises(FormatError, match="zip bomb"):
        parse(archive)


def _patch_declared_size(archive: Path, size: int) -> None:
    """Rewrite the uncompressed size in the local and central headers (a lying zip)."""
    data = bytearray(archive.read_bytes())
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, size)
    struct.pack_into("<I", data, central + 24, size)
    archive.write_bytes(bytes(data))


@pytest.mark.parametrize(("declared", "message"), [(3 * 1024**3, "2 GiB"), (10, "unreadable zip")])
def test_lying_zip_header_is_refused(tmp_path: Path, declared: int, message: str) -> None:
    archive = make_zip(tmp_path, {"conversations.json": CONV.read_bytes()})
    _patch_declared_size(archive, declared)
    with pytest.raises(FormatError, match=message):
        parse(archive)


def test_deeply_nested_json_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(FormatError, match="nested too deeply"):
        parse(path)


def test_invalid_utf8_and_broken_json_are_format_errors(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b'[{"title": "caf\xe9"}]')
    with pytest.raises(FormatError, match="not UTF-8"):
        parse(path)
    path.write_text('[{"title": ', encoding="utf-8")
    with pytest.raises(FormatError, match="not valid JSON"):
        parse(path)


def test_parsing_is_deterministic() -> None:
    assert parse(CONV)[0] == parse(CONV)[0]


def test_conversation_with_nothing_visible_names_why(tmp_path: Path) -> None:
    """Real exports hold conversations whose only messages are hidden plumbing: that is not
    the same as a conversation without messages, and the count says which."""
    conv = json.loads((FIX / "chatgpt" / "account-b.json").read_text())[0]
    hidden = {**conv, "conversation_id": "hidden-only", "current_node": "7f1e0c2a-0001-4b6e-9d3c-5a4b3c2d1e0f"}
    bare = {**conv, "conversation_id": "root-only", "current_node": "client-created-root"}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([hidden, bare, conv]))
    sessions, problems = parse(path)
    assert [s.title for s in sessions] == ["Is 2027 prime"]
    assert problems.reasons == {"conversation with no visible messages": 1, "conversation without messages": 1}


def test_real_shaped_export_follows_the_regenerated_branch() -> None:
    (session,), problems = parse(FIX / "chatgpt" / "account-b.json")
    assert problems.count == 0
    assert [(e.role, e.content) for e in session.episodes] == [
        ("user", "Is 2027 a prime number?"),
        ("assistant", "Yes: no prime up to √2027 ≈ 45 divides it, so 2027 is prime."),
    ]
    assert session.metadata["off_path_messages"] == 1  # the first answer, before it was regenerated
    assert session.metadata["dropped"] == {"hidden": 1, "reasoning_recap": 1, "thoughts": 1}
