"""Reading names skips a kind's pattern in a text that lacks what every match of it holds (issue 38: the
patterns were most of the time a summary's names took to read). Held here: wherever the skip applies, the
pattern finds nothing, on random texts made of every kind's pieces and on the demo's chats."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hiermem_tui.summarize import fidelity

PIECES = ["https://x.org/a", "ftp://h/p", "a@b.io", "`name`", "/usr/lib/x", "src/foo.py", "C:\\dir\\f.txt", "deadbee1",
          "os.path", "snake_case", "_private", "camelCase", "HTTPServer", "2025-01-02", "12:30", "3.14", "1,000", "42",
          "ABC", "URLs", "word", "the", ".", "-", "_", "/", "@", "`", ":", "\\", " ", "\n", "(", ")", "é", "Ünïcode", "٣"]


def test_a_kind_skipped_for_a_text_never_matches_in_it() -> None:
    rng = random.Random(38)
    demo = Path(__file__).resolve().parents[2] / "hiermem_tui" / "assets" / "demo" / "demo.jsonl"
    texts = [json.loads(line)["content"] for line in demo.read_text(encoding="utf-8").splitlines()]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    skipped = 0
    for text in texts:
        text = fidelity.readable(text)
        for kind, pattern in fidelity._PROSE_KINDS:
            if not fidelity._may_hold(kind, text):
                skipped += 1
                assert pattern.search(text) is None, (kind, text)
    assert skipped > 1000
