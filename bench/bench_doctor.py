"""Doctor on the 10k-session / 1M-episode file, ÷ one ``PRAGMA quick_check`` of the same file.

Target: well under a minute. The baseline is the least any check must pay: SQLite's own
``quick_check`` reads every page once (the doctor runs it too, then checks every session's DAG,
the aggregates, the search index and the runs, each session in its own read snapshot). Both are
measured in the same run, on a file already in the page cache (a first quick_check warms it), so the
ratio is what the doctor adds on top of reading the file. The doctor runs as its own process (the
``hiermem-tui doctor --json`` a user runs), so its peak RSS is its own.

    .venv/bin/python bench/bench_doctor.py [--db PATH] [--episodes 1000000] [--sessions 10000]

The file is made as bench_find.py makes it (``demo``, then one extractive pass over every session, so
there are summaries, edges and runs to check), and its search index is built, so the doctor checks a
file as a user who searched has it; both are kept at ``--db`` and reused when present (a temporary file
without ``--db``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_find import make_big

from hiermem_tui.store import Store
from hiermem_tui.store.search_index import build_search_index, search_index_status

CLI = [sys.executable, "-c", "import sys; from hiermem_tui.cli import main; sys.exit(main(sys.argv[1:]))"]


def quick_check(db: Path) -> float:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        t0 = time.perf_counter()
        [(result,)] = conn.execute("PRAGMA quick_check").fetchall()
        seconds = time.perf_counter() - t0
    finally:
        conn.close()
    assert result == "ok", result
    return seconds


def doctor(db: Path) -> tuple[float, dict[str, object]]:
    t0 = time.perf_counter()
    out = subprocess.run([*CLI, "doctor", "--db", str(db), "--json"], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    assert out.returncode in (0, 1), out.stderr
    return seconds, json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", help="the big file: made here once (or bench_scale.py --keep PATH), reused after")
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    args = ap.parse_args()
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "doctor.db"
    make_big(db, args.sessions, args.episodes)
    with Store.open(db) as store:
        if search_index_status(store).pending:
            t0 = time.perf_counter()
            rows = build_search_index(store)
            print(f"built the search index ({rows:,} rows) in {time.perf_counter() - t0:.1f} s (once)", flush=True)
    size = db.stat().st_size / 1e6
    quick_check(db)  # warms the page cache for both measurements
    qc = quick_check(db)
    seconds, report = doctor(db)
    qc2 = quick_check(db)
    base = min(qc, qc2)
    # the largest child process since the last one (make_big runs demo and compact in this process)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    checked = report["checked"]
    assert isinstance(checked, dict)
    problems = report["problems"]
    assert isinstance(problems, list)
    print(f"doctor on {checked.get('sessions', 0):,} sessions / {checked.get('episodes', 0):,} episodes / "
          f"{checked.get('summaries', 0):,} summaries / {checked.get('runs', 0):,} runs ({size:,.0f} MB): "
          f"{seconds:.1f} s (target: well under 60 s); one PRAGMA quick_check {base:.1f} s "
          f"({qc:.1f} / {qc2:.1f} s, before / after); ratio {seconds / base:.2f}x; "
          f"ok={report['ok']} ({len(problems):,} problems); "
          f"doctor process peak RSS {rss:,.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
