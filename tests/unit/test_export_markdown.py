"""Markdown export of a source that kept no times (issue 21 item 10): the filled-in stamps (January
2000) are not printed as if they were real; a source with times shows them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from hiermem_tui.cli import main


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "no-config.toml"))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_times_the_source_did_not_keep_are_not_printed_as_real(tmp_path: Path) -> None:
    src = tmp_path / "chat.jsonl"
    lines = []
    for sid, timed in (("untimed", False), ("timed", True)):
        for i in range(40):
            record = {"session": sid, "role": "user" if i % 2 == 0 else "assistant",
                      "content": f"Message {i} about the parser in src/parse_{i}.py and its tests."}
            if timed:
                record["created_at"] = f"2025-05-01T10:{i:02d}:00Z"
            lines.append(json.dumps(record))
    src.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "h.db")
    assert run("import", "--db", db, str(src))[0] == 0
    assert run("compact", "--db", db, "--all", "--backend", "extractive")[0] == 0
    code, md, err = run("export", "--db", db, "--session", "untimed", "--format", "markdown")
    assert code == 0, err
    assert "2000-01-01" not in md
    assert "### #0 user · no time in the source" in md
    assert "· no time in the source ·" in md  # a summary's span
    code, md, err = run("export", "--db", db, "--session", "timed", "--format", "markdown")
    assert "### #0 user · 2025-05-01T10:00:00.000Z" in md and "2025-05-01T10:00:00.000Z → " in md
