"""Scale: `demo` at 1M episodes, then `sessions --json` on the 10k-session / 1M-episode DB.

Targets: `demo --episodes 1000000` in a couple of minutes; `sessions --json` under 1 s.
Baselines measured in the same run:
- demo: generating + tokenising the same episodes without writing (what any writer must pay);
- sessions --json: a bare ``SELECT * FROM sessions`` dumped with json (the least possible work).

    .venv/bin/python bench/bench_scale.py [--episodes 1000000] [--sessions 10000] [--keep PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from hiermem_tui.cli import main as cli
from hiermem_tui.demo import generate
from hiermem_tui.tokens import Tokenizer


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--keep", help="write the DB here and keep it (for other benchmarks)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    db = Path(args.keep) if args.keep else Path(tmp) / "scale.db"
    if db.exists():
        db.unlink()

    tok = Tokenizer()

    def baseline() -> None:
        for s in generate(args.sessions, args.episodes, 1):
            tok.count_many([e.content for e in s.episodes])

    base = timed(baseline)
    out = io.StringIO()
    demo = timed(lambda: cli(["demo", "--db", str(db), "--sessions", str(args.sessions),
                              "--episodes", str(args.episodes), "--seed", "1"], stdout=out))
    size = db.stat().st_size / 1e6
    print(f"demo {args.sessions:,} sessions / {args.episodes:,} episodes: {demo:.1f} s "
          f"(generate+tokenise only: {base:.1f} s; ratio {demo / base:.2f}x); DB {size:,.0f} MB")

    def raw() -> None:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        json.dumps([dict(r) for r in conn.execute("SELECT * FROM sessions")])
        conn.close()

    raw_t = min(timed(raw) for _ in range(3))
    sink = open(os.devnull, "w")
    runs = [timed(lambda: cli(["sessions", "--db", str(db), "--json"], stdout=sink)) for _ in range(3)]
    ours = min(runs)
    check = io.StringIO()
    cli(["sessions", "--db", str(db), "--json"], stdout=check)
    n = len(json.loads(check.getvalue()))
    assert n == args.sessions, n
    print(f"sessions --json ({n:,} sessions): {ours * 1000:.0f} ms (best of 3; target < 1000 ms); "
          f"raw SELECT+json baseline {raw_t * 1000:.0f} ms; ratio {ours / raw_t:.2f}x")


if __name__ == "__main__":
    main()
