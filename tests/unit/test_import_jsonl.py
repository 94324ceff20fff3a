"""Native JSONL importer: grouping, order, strict per-line validation, format detection."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hiermem_tui.importers import jsonl
from hiermem_tui.importers.base import FormatError, Problems, read_head

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Small invented inputs of the *other* text formats, so every sniff can be checked against
# them (the SQLite test modules and the Open WebUI sniff matrix import these too).
OTHER_TEXT_SAMPLES: dict[str, str] = {
    "chatgpt": json.dumps(
        [
            {
                "title": "Soup",
                "create_time": 1700000000.0,
                "current_node": "n2",
                "mapping": {
                    "n1": {"id": "n1", "message": None, "parent": None, "children": ["n2"]},
                    "n2": {
                        "id": "n2",
                        "parent": "n1",
                        "children": [],
                        "message": {
                            "id": "n2",
                            "author": {"role": "user"},
                            "content": {"content_type": "text", "parts": ["role content session"]},
                        },
                    },
                },
            }
        ]
    ),
    "claude_ai": json.dumps(
        [
            {
                "uuid": "c-1",
                "name": "Bread",
                "created_at": "2024-01-01T00:00:00Z",
                "chat_messages": [
                    {"uuid": "m-1", "sender": "human", "text": "Hi", "created_at": "2024-01-01T00:00:00Z"}
                ],
            }
        ]
    ),
    "claude_code": "\n".join(
        json.dumps(r)
        for r in [
            {"type": "summary", "summary": "Fix tests", "leafUuid": "u2"},
            {
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "sessionId": "s-1",
                "timestamp": "2024-01-01T00:00:00Z",
                "message": {"role": "user", "content": "run the tests"},
            },
            {
                "type": "assistant",
                "uuid": "u2",
                "parentUuid": "u1",
                "sessionId": "s-1",
                "timestamp": "2024-01-01T00:00:01Z",
                "message": {"id": "msg1", "role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            },
        ]
    )
    + "\n",
    "codex": "\n".join(
        json.dumps(r)
        for r in [
            {"timestamp": "2024-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/"}},
            {
                "timestamp": "2024-01-01T00:00:01Z",
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            },
        ]
    )
    + "\n",
    "empty": "",
}


def write_text_samples(directory: Path) -> dict[str, Path]:
    """Write OTHER_TEXT_SAMPLES plus one input of each of our text formats; name → path."""
    out = {}
    for name, text in OTHER_TEXT_SAMPLES.items():
        out[name] = directory / f"{name}.txt"
        out[name].write_text(text, encoding="utf-8")
    out["jsonl"] = FIXTURES / "jsonl" / "two_sessions.jsonl"
    out["sharegpt"] = FIXTURES / "sharegpt" / "dataset.json"
    out["sharegpt_lines"] = FIXTURES / "sharegpt" / "dataset.jsonl"
    return out


def _parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(jsonl.parse(path, problems)), problems


def test_groups_interleaved_sessions_in_order() -> None:
    sessions, problems = _parse(FIXTURES / "jsonl" / "two_sessions.jsonl")
    assert problems.count == 0
    assert [s.id for s in sessions] == ["garden-1", "bike-7"]  # order of first appearance
    garden, bike = sessions
    assert garden.source == "jsonl"
    assert garden.title == "Planning the vegetable beds"  # first non-empty title wins
    assert bike.title == "Chain skipping"  # a title may come on a later line
    assert [e.role for e in garden.episodes] == ["system", "user", "assistant", "tool"]
    assert garden.episodes[2].content == "The south-facing beds along the fence."
    assert garden.episodes[3].content == '{"sunlight_hours": 7.5}'  # kept literal
    assert bike.episodes[1].content == "Check the cable tension first:\n  turn the barrel adjuster a quarter turn."
    assert all(e.source_id is None for s in sessions for e in s.episodes)


def test_timestamps_are_aware_utc_or_none() -> None:
    sessions, _ = _parse(FIXTURES / "jsonl" / "two_sessions.jsonl")
    garden, bike = sessions
    assert garden.episodes[0].created_at == datetime(2024, 3, 1, 9, 0, 0, tzinfo=timezone.utc)
    assert garden.episodes[3].created_at == datetime(2024, 3, 1, 9, 0, 10, tzinfo=timezone.utc)  # naive → UTC
    assert bike.episodes[0].created_at == datetime(2024, 3, 2, 16, 30, tzinfo=timezone.utc)  # +02:00
    assert bike.episodes[1].created_at is None
    assert garden.created_at == garden.episodes[0].created_at


def test_malformed_lines_are_skipped_with_reasons(tmp_path: Path) -> None:
    good = {"session": "s", "role": "user", "content": "kept"}
    lines = [
        json.dumps(good).encode(),
        b"{not json",
        b'{"session": "s", "role": "user", "content": "caf\xe9"}',  # latin-1 byte: invalid UTF-8
        json.dumps({"session": "s", "content": "no role"}).encode(),
        json.dumps({"session": "s", "role": "robot", "content": "bad role"}).encode(),
        json.dumps({"session": "s", "role": "user", "content": ["a", "list"]}).encode(),
        json.dumps({"role": "user", "content": "no session"}).encode(),
        json.dumps({"session": 5, "role": "user", "content": "session not a string"}).encode(),
        json.dumps({"session": "s", "role": "user", "content": "x", "created_at": "yesterday"}).encode(),
        json.dumps({"session": "s", "role": "user", "content": "x", "title": 3}).encode(),
        json.dumps({"session": "s", "role": "user", "content": "   "}).encode(),
        b"[1, 2]",
        b"null",
        b"   ",
        json.dumps({"session": "s", "role": "assistant", "content": "also kept"}).encode(),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    sessions, problems = _parse(path)
    assert len(sessions) == 1
    assert [e.content for e in sessions[0].episodes] == ["kept", "also kept"]
    assert problems.count == 12  # the blank line is not a problem
    assert problems.reasons["not valid JSON"] == 1
    assert problems.reasons["invalid UTF-8"] == 1
    assert problems.reasons["missing or invalid 'role'"] == 2
    assert problems.reasons["missing or invalid 'content'"] == 1
    assert problems.reasons["missing or invalid 'session'"] == 2
    assert problems.reasons["line is not a JSON object"] == 2
    assert problems.examples[0] == "mixed.jsonl:2: not valid JSON"
    assert problems.examples[1] == "mixed.jsonl:3: invalid UTF-8"


def test_bom_and_crlf_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    rows = [{"session": "b", "role": "user", "content": "one"}, {"session": "b", "role": "assistant", "content": "two"}]
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(json.dumps(r).encode() for r in rows) + b"\r\n")
    sessions, problems = _parse(path)
    assert problems.count == 0
    assert [e.content for e in sessions[0].episodes] == ["one", "two"]


@pytest.mark.parametrize("name", ["claude_code", "codex", "chatgpt", "empty"])
def test_other_formats_raise_format_error(tmp_path: Path, name: str) -> None:
    path = write_text_samples(tmp_path)[name]
    with pytest.raises(FormatError, match="not native JSONL"):
        _parse(path)


def test_format_error_after_probe_lines_without_a_record(tmp_path: Path) -> None:
    """Twenty junk lines decide it even if a valid record comes later."""
    path = tmp_path / "junk.jsonl"
    junk = [json.dumps({"type": "user", "n": i}) for i in range(jsonl.PROBE_LINES)]
    late = json.dumps({"session": "s", "role": "user", "content": "too late"})
    path.write_text("\n".join(junk + [late]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="first 20 lines"):
        _parse(path)
    # ...but a few bad lines at the top of a genuine file are fine.
    path.write_text("\n".join(junk[:5] + [late]) + "\n", encoding="utf-8")
    sessions, problems = _parse(path)
    assert len(sessions) == 1 and problems.count == 5


def test_sniff_own_and_others(tmp_path: Path) -> None:
    samples = write_text_samples(tmp_path)
    verdicts = {name: jsonl.sniff(p, read_head(p)) for name, p in samples.items()}
    assert verdicts == {name: name == "jsonl" for name in samples}


def test_sniff_single_line_longer_than_head(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    record = {"session": "s", "role": "user", "content": "x" * 70000}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert jsonl.sniff(path, read_head(path))
    other = tmp_path / "long_cc.jsonl"
    cc = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": '"session" ' * 9000}}
    other.write_text(json.dumps(cc) + "\n", encoding="utf-8")
    assert not jsonl.sniff(other, read_head(other))


def test_parse_is_deterministic() -> None:
    first, _ = _parse(FIXTURES / "jsonl" / "two_sessions.jsonl")
    second, _ = _parse(FIXTURES / "jsonl" / "two_sessions.jsonl")
    assert first == second
