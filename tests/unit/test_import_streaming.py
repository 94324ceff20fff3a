"""Whole-JSON exports (ChatGPT, Claude.ai) are read as a stream of conversations, not loaded whole."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.importers import FormatError, Problems, get_importer
from hiermem_tui.importers._export import iter_json_array

FIXTURE = Path(__file__).parent.parent / "fixtures" / "chatgpt" / "conversations.json"


def many_conversations(n: int) -> list[dict]:
    """``n`` copies of the fixture's first conversation with distinct ids and ~2 KB of text each."""
    base = json.loads(FIXTURE.read_text())[0]
    out = []
    for i in range(n):
        conv = json.loads(json.dumps(base))
        conv["id"] = conv["conversation_id"] = f"conv-{i}"
        for node in conv["mapping"].values():
            msg = node.get("message")
            if msg and msg.get("content", {}).get("parts"):
                parts = msg["content"]["parts"]
                if parts and isinstance(parts[0], str):
                    parts[0] = parts[0] + f" (copy {i}) " + "padding words " * 150
        out.append(conv)
    return out


def reader(data: bytes):  # type: ignore[no-untyped-def]
    return io.BytesIO(data).read


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_iter_json_array_matches_json_loads_at_any_chunk_size(chunk: int) -> None:
    value = [{"a": [1, 2, {"b": "x, ] y"}]}, "s\u00e9", 12345678901234567890, -1.5e3, None, True, [], {}]
    data = json.dumps(value, ensure_ascii=False).encode()
    assert list(iter_json_array(reader(b"\xef\xbb\xbf" + data), "x", "no", chunk=chunk)) == value


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b'{"a": 1}', "not a list"),
    (b'[{"a": 1}, {"b": ', "not valid JSON"),
    (b'[{"a": 1} {"b": 2}]', "expected ','"),
    (b'[1, 2] [3]', "data after"),
    (b'["\xff"]', "not UTF-8"),
    (b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]", "nested too deeply"),
])
def test_iter_json_array_errors_are_one_line(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message) as err:
        list(iter_json_array(reader(data), "f.json", "f.json: not a list", chunk=16))
    assert "\n" not in str(err.value)


def test_a_big_export_streams_with_bounded_memory(tmp_path: Path) -> None:
    convs = many_conversations(3000)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs))
    size = path.stat().st_size
    del convs
    assert size > 8_000_000
    tracemalloc.start()
    seen = 0
    for _ in get_importer("chatgpt").parse(path, Problems()):
        seen += 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen == 3000
    assert peak < size / 3, (peak, size)  # json.load of the whole file needs several times its size


def test_a_truncated_export_leaves_no_session_behind(tmp_path: Path) -> None:
    data = json.dumps(many_conversations(20)).encode()
    zipped = tmp_path / "export.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", data[: int(len(data) * 0.8)])  # cut mid-array
    out, err = io.StringIO(), io.StringIO()
    db = tmp_path / "h.db"
    assert main(["import", "--db", str(db), str(zipped)], stdout=out, stderr=err) == 2
    assert err.getvalue().count("\n") == 1 and "not valid JSON" in err.getvalue()
    out = io.StringIO()
    main(["sessions", "--db", str(db), "--json"], stdout=out, stderr=io.StringIO())
    assert json.loads(out.getvalue()) == []
