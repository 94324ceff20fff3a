"""Offline cl100k_base counting, the hash check, and parallel counting for big imports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import hiermem_tui.importers.loading as importers
from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer, TokenizerUnavailable, ranks_path


def test_known_counts(tokenizer: Tokenizer) -> None:
    # cl100k_base reference values
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count("") == 0
    # special-token text in chat content is ordinary text, never a control token
    assert tokenizer.count("<|endoftext|>") > 1
    assert tokenizer.count_many(["hello world", "", "hello"]) == [2, 0, 1]
    assert tokenizer.clip("one two three four", 2) == "one two"


def test_a_tampered_ranks_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    shutil.copy(ranks_path(), bad)
    with bad.open("ab") as fh:
        fh.write(b"AAAA 999999\n")
    with pytest.raises(TokenizerUnavailable, match="sha256"):
        Tokenizer(bad)


def test_parallel_counting_matches_serial(tokenizer: Tokenizer) -> None:
    texts = [f"message {i}: " + "word " * (i % 50) for i in range(300)]
    serial = tokenizer.count_many(texts)
    own = Tokenizer(cores=2)
    with own.parallel():
        futures = [own.count_many_later(texts[i : i + 50]) for i in range(0, 300, 50)]
        parallel = [n for f in futures for n in f.result(timeout=60)]
    assert parallel == serial
    assert own.count_many_later(texts[:3]).result() == serial[:3]  # outside: computed at once


def test_big_import_path_counts_in_workers_with_identical_results(
    tmp_path: Path, tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(
        json.dumps({"session": f"s{i % 7}", "role": "user" if i % 2 else "assistant", "content": f"text {i} " * (i % 13 + 1)})
        for i in range(400)
    ) + "\n")
    serial = Store.open(tmp_path / "a.db", tokenizer=tokenizer)
    import_paths(serial, [src], "jsonl")
    monkeypatch.setattr(importers, "PARALLEL_BYTES", 0)  # treat this small file as big
    parallel = Store.open(tmp_path / "b.db", tokenizer=Tokenizer(cores=2))
    report = import_paths(parallel, [src], "jsonl")
    assert report.episodes_appended == 400
    rows = "SELECT id, seq, tokens FROM episodes ORDER BY id"
    assert parallel.db.conn.execute(rows).fetchall() == serial.db.conn.execute(rows).fetchall()
    serial.close()
    parallel.close()
