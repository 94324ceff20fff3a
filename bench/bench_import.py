"""Import speed vs. only tokenising the same text (target: import ≤ 1.5× tokenising).

Writes a native JSONL file of synthetic episodes, then in the same run times
(a) baseline: cl100k_base-counting every episode's content (batched, as the store does),
(b) a full ``import`` of the file into a fresh database (parse + tokens + SQLite writes);
    an input this big is tokenised in a worker process while the main one parses and writes.

    .venv/bin/python bench/bench_import.py [--episodes 200000] [--sessions 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from hiermem_tui.demo import generate
from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store, iso
from hiermem_tui.tokens import Tokenizer


def write_jsonl(path: Path, sessions: int, episodes: int) -> list[str]:
    contents: list[str] = []
    with path.open("w", encoding="utf-8") as fh:
        for s in generate(sessions, episodes, seed=7):
            for e in s.episodes:
                contents.append(e.content)
                fh.write(json.dumps({"session": s.id, "title": s.title, "role": e.role, "content": e.content,
                                     "created_at": iso(e.created_at)}, ensure_ascii=False) + "\n")
    return contents


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200_000)
    ap.add_argument("--sessions", type=int, default=2_000)
    args = ap.parse_args()
    tok = Tokenizer()
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "in.jsonl"
        contents = write_jsonl(src, args.sessions, args.episodes)
        mb = src.stat().st_size / 1e6

        t0 = time.perf_counter()
        total = 0
        for i in range(0, len(contents), 1000):
            total += sum(tok.count_many(contents[i : i + 1000]))
        base = time.perf_counter() - t0

        store = Store.open(Path(d) / "bench.db", tokenizer=tok)
        t0 = time.perf_counter()
        report = import_paths(store, [src], "jsonl")
        imp = time.perf_counter() - t0
        store.close()

    assert report.episodes_appended == args.episodes
    print(f"input: {args.episodes:,} episodes, {args.sessions:,} sessions, {mb:.1f} MB, {total:,} tokens")
    print(f"tokenise only : {base:6.2f} s  ({args.episodes / base:,.0f} episodes/s)  [baseline: Tokenizer.count_many]")
    print(f"full import   : {imp:6.2f} s  ({args.episodes / imp:,.0f} episodes/s)")
    print(f"ratio import/tokenise = {imp / base:.2f}x   (target ≤ 1.5x)")


if __name__ == "__main__":
    main()
