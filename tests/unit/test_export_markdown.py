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


PASTED = [
    "Here is the paper.\n\n# A Title\n\n## Abstract\n\nWe study rain.\n\n## 1. Introduction\n\nRain falls.",
    "Sure:\n```python\nprint(1)\n```\nand nested:\n````md\n```\ninner\n```\n````\n## Conclusion",
    "~~~\n## not a heading either\n~~~\n~~~~~\n<details><summary>open</summary>\n\n## inside html\n</details>",
    "<div>\n\n## after html\n\n</div>\n<script>alert(1)</script>\n---\n===\n  ```\n# indented fence",
]
SESSION = "paper`s\n## Injected heading ``"


def test_chat_text_and_ids_never_change_the_exports_structure(tmp_path: Path) -> None:
    """Issue 36 item 4: a chat's own headings, fences and HTML stay inside its fenced block, and the
    session id (the source's own text: here backticks and a line break) cannot start a heading."""
    from markdown_it import MarkdownIt

    src = tmp_path / "paper.jsonl"
    texts = [PASTED[i % len(PASTED)] + f"\n(message {i})" for i in range(40)]
    src.write_text("".join(json.dumps({"session": SESSION, "title": "## Paper `notes`\n# too",
                                       "role": "user" if i % 2 == 0 else "assistant", "content": text}) + "\n"
                           for i, text in enumerate(texts)), encoding="utf-8")
    db = str(tmp_path / "h.db")
    assert run("import", "--db", db, str(src))[0] == 0
    assert run("compact", "--db", db, "--all", "--backend", "extractive")[0] == 0
    out = tmp_path / "paper.md"
    code, _, err = run("export", "--db", db, "--session", SESSION, "--format", "markdown", "-o", str(out))
    assert code == 0, err
    tokens = MarkdownIt("commonmark").parse(out.read_text(encoding="utf-8"))
    headings = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0][0] == "h1" and [h for h in headings if h[0] in ("h1", "h2")] == [
        headings[0], ("h2", "Brief"), ("h2", "Summaries"), ("h2", "Transcript")]
    start = headings.index(("h2", "Transcript"))
    summaries, transcript = headings[3:start], headings[start + 1:]
    assert summaries and all(tag in ("h3", "h4", "h5", "h6") and text.startswith("d") for tag, text in summaries)
    assert [text for _, text in transcript] == [
        f"#{i} {'user' if i % 2 == 0 else 'assistant'} · no time in the source" for i in range(40)]
    fences = [t.content for t in tokens if t.type == "fence"]
    assert fences[-40:] == [text + "\n" for text in texts]  # every message whole, in its own block
    assert not [t for t in tokens if t.type.startswith("html")]  # no HTML outside a fence
    ids = [c.content for t in tokens if t.type == "inline" and t.content.startswith("session:")
           for c in t.children or () if c.type == "code_inline"]
    assert ids == [" ".join(SESSION.split())]
