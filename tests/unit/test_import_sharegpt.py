"""ShareGPT importer: roles, split-piece joining, ids, malformed turns, format detection."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hiermem_tui.importers import sharegpt
from hiermem_tui.importers.base import FormatError, Problems, read_head
from hiermem_tui.tokens import Tokenizer
from tests.unit._imported import contents, fresh_store, import_as_former, import_each
from tests.unit.test_import_jsonl import FIXTURES, write_text_samples


def _parse(path: Path) -> tuple[list, Problems]:
    problems = Problems()
    return list(sharegpt.parse(path, problems)), problems


def _write(tmp_path: Path, records: list) -> Path:
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _record_ids(sessions: list) -> list[str]:
    """``sharegpt:<record id>`` of each session, checking the id is that plus ``-<12 hex>``."""
    out = []
    for session in sessions:
        if session.id.startswith("sharegpt:sha1-"):
            assert session.former_ids == []
            out.append(session.id)
            continue
        (former,) = session.former_ids
        assert re.fullmatch(re.escape(former) + "-[0-9a-f]{12}", session.id), session.id
        out.append(former)
    return out


def _conv(*texts: str) -> list[dict[str, str]]:
    return [{"from": "human" if i % 2 == 0 else "gpt", "value": t} for i, t in enumerate(texts)]


def test_array_sessions_roles_and_split_joining() -> None:
    sessions, problems = _parse(FIXTURES / "sharegpt" / "dataset.json")
    ids = _record_ids(sessions)
    assert ids[:5] == [
        "sharegpt:trip",
        "sharegpt:recipe-42",
        "sharegpt:note_taking_app",  # non-numeric suffix: kept as is
        "sharegpt:lonely_0",  # a lone piece 0 is just an id
        "sharegpt:stray",  # k > 0: a surviving piece of a split chat
    ]
    assert len(ids) == 6 and ids[5].startswith("sharegpt:sha1-")
    trip = sessions[0]
    assert [e.content for e in trip.episodes] == [
        "Plan a day trip to the coast.",
        "Take the 8:05 train and walk the cliff path.",
        "And what about the return train?",
        "The last one leaves at 22:10.",
        "Thanks, that is all.",
    ]
    assert [e.role for e in trip.episodes] == ["user", "assistant", "user", "assistant", "user"]
    assert trip.metadata == {"pieces": ["trip_0", "trip_1", "trip_2"]}
    assert trip.title == "Plan a day trip to the coast."
    recipe = sessions[1]
    assert [e.role for e in recipe.episodes] == ["system", "user", "assistant"]
    assert all(e.created_at is None and e.source_id is None for s in sessions for e in s.episodes)
    assert all(s.source == "sharegpt" for s in sessions)
    assert problems.count == 5
    assert problems.reasons["unknown speaker 'narrator'"] == 1
    assert problems.reasons["empty turn"] == 1
    assert problems.reasons["turn 'value' is not text"] == 1
    assert problems.reasons["missing or invalid 'conversations' list"] == 1
    assert problems.reasons["record is not a JSON object"] == 1


def test_pieces_join_in_numeric_order_and_real_ids_are_not_merged(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "x_10", "conversations": _conv("ten")},
            {"id": "x_2", "conversations": _conv("two")},
            {"id": "x_1", "conversations": _conv("one")},
            {"id": "y", "conversations": _conv("plain y")},
            {"id": "y_1", "conversations": _conv("a different chat")},
            {"id": 7, "conversations": _conv("numeric id")},
        ],
    )
    sessions, problems = _parse(path)
    assert problems.count == 0
    assert _record_ids(sessions) == ["sharegpt:x", "sharegpt:y", "sharegpt:y_1", "sharegpt:7"]
    assert [e.content for e in sessions[0].episodes] == ["one", "two", "ten"]


def test_duplicates_and_empty_conversations_are_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "a", "conversations": _conv("first")},
            {"id": "a", "conversations": _conv("second copy")},
            {"id": "b", "conversations": []},
        ],
    )
    sessions, problems = _parse(path)
    assert _record_ids(sessions) == ["sharegpt:a"]
    assert sessions[0].episodes[0].content == "first"
    assert problems.reasons["duplicate conversation id 'a'"] == 1
    assert problems.reasons["conversation has no usable turns"] == 1


def test_missing_id_is_derived_from_content_stably(tmp_path: Path) -> None:
    a = _write(tmp_path, [{"conversations": _conv("same words")}])
    first, _ = _parse(a)
    b = tmp_path / "other_name.json"
    b.write_text(json.dumps([{"id": "z", "conversations": _conv("x")}, {"conversations": _conv("same words")}]))
    second, _ = _parse(b)
    assert first[0].id == second[1].id


def test_record_ids_shared_by_two_datasets_stay_two_sessions(tmp_path: Path) -> None:
    """Datasets number their records alike ("0", "1"…): the opening turns keep them apart,
    and the same record read from another file (a copy) keeps its id."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = _write(tmp_path / "one", [{"id": "0", "conversations": _conv("How do tides work?", "The moon.")}])
    two = _write(tmp_path / "two", [{"id": "0", "conversations": _conv("Name a prime.", "Seven.")}])
    copy = tmp_path / "copy.json"
    copy.write_bytes(one.read_bytes())
    (a,), _ = _parse(one)
    (b,), _ = _parse(two)
    (c,), _ = _parse(copy)
    assert a.former_ids == b.former_ids == ["sharegpt:0"]
    assert a.id != b.id and a.id == c.id


def test_jsonl_variant_skips_bad_line() -> None:
    sessions, problems = _parse(FIXTURES / "sharegpt" / "dataset.jsonl")
    assert _record_ids(sessions) == ["sharegpt:q1", "sharegpt:q2", "sharegpt:q4"]
    assert problems.count == 1 and problems.examples == ["dataset.jsonl:3: not valid JSON"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[{"id": "a", "conversations": [', "not valid JSON"),
        (b"[" * 200000 + b"]" * 200000, "nested too deeply"),
        (b'[{"id": "caf\xe9", "conversations": []}]', "not UTF-8"),
        (b"", "empty"),
        (b'{"just": "an object"}', "not a ShareGPT dataset"),
        (b'"a string"', "top level is not an array"),
    ],
)
def test_unreadable_inputs_raise_format_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=message):
        _parse(path)


@pytest.mark.parametrize("name", ["chatgpt", "claude_ai", "claude_code", "codex", "jsonl"])
def test_other_formats_raise_format_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(FormatError, match="not a ShareGPT dataset"):
        _parse(write_text_samples(tmp_path)[name])


def test_sniff_own_and_others(tmp_path: Path) -> None:
    samples = write_text_samples(tmp_path)
    verdicts = {name: sharegpt.sniff(p, read_head(p)) for name, p in samples.items()}
    assert verdicts == {name: name.startswith("sharegpt") for name in samples}


def test_sniff_first_record_longer_than_head(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "big", "conversations": _conv("y" * 70000, "ok")}])
    assert sharegpt.sniff(path, read_head(path))


def test_parse_is_deterministic() -> None:
    first, _ = _parse(FIXTURES / "sharegpt" / "dataset.json")
    second, _ = _parse(FIXTURES / "sharegpt" / "dataset.json")
    assert first == second


def test_sessions_imported_under_the_bare_record_id_keep_it(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """Before ids got the opening's hash a record was ``sharegpt:<id>``; re-importing the same
    dataset must find those sessions rather than add every conversation again."""
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        import_as_former(store, sharegpt, FIXTURES / "sharegpt" / "dataset.json")
        before = contents(store)
        assert "sharegpt:trip" in before
        (again,) = import_each(store, FIXTURES / "sharegpt" / "dataset.json")
        assert (again.sessions_created, again.episodes_appended) == (0, 0)
        assert contents(store) == before
        (other,) = import_each(store, FIXTURES / "sharegpt" / "other_dataset.json")  # same ids, other chats
        assert other.sessions_created == 2 and other.episodes_present == 0

