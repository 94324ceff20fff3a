"""Run every benchmark in this folder, one after another, and print their figures.

    .venv/bin/python bench/run_all.py [--quick]

--quick uses smaller inputs (for a smoke run); the figures in bench/README.md come from the
full run. Each script measures its own baseline in the same run and prints ratios. The ones
that need a real model or server say "skipped" and exit 0 here. The probe lab (lab/) is not
run: it needs a model and readers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def plan(quick: bool, big_db: Path) -> list[list[str]]:
    """Each benchmark's command line (script, then its arguments), in the order they run. The scripts
    that read the big file (``--db``) come after ``bench_scale.py``, which makes it."""
    db = ["--db", str(big_db)]
    if quick:
        runs = [
            ["bench_import.py", "--episodes", "20000", "--sessions", "200"],
            ["bench_scale.py", "--episodes", "100000", "--sessions", "1000", "--keep", str(big_db)],
            ["bench_summariser_overhead.py", "50"],
            ["bench_engine.py"],
            ["bench_bounded.py", "--episodes", "80"],
            ["bench_tui_sessions.py", "--repeat", "3", "--no-datatable"],
            ["bench_tui_session.py", "--episodes", "4000", "--repeat", "3"],
            ["bench_memory.py", *db],
            ["bench_watch.py", "--files", "300", "--repeat", "5"],
            ["bench_tui_live.py", "--episodes", "4000", "--repeat", "3"],
            ["bench_find.py", *db],
            ["bench_doctor.py", *db],
            ["bench_mcp.py", *db],
            ["bench_backlog.py", "--quick", *db],
            ["bench_hosts.py", "--sessions", "6"],
            ["bench_model_time.py", "--quick"],
            ["bench_first_start.py", "--episodes", "30000", "--sessions", "300", "--repeat", "1"],
            ["bench_sqlite_import.py", "--repeat", "3"],
            ["bench_index_on_write.py", "--episodes", "5000", "--sessions", "50", "--appends", "200", "--repeat", "1"],
        ]
    else:
        runs = [
            ["bench_import.py"],
            ["bench_scale.py", "--keep", str(big_db)],
            ["bench_summariser_overhead.py"],
            ["bench_engine.py"],
            ["bench_bounded.py"],
            ["bench_tui_sessions.py"],
            ["bench_tui_session.py"],
            ["bench_memory.py", *db],
            ["bench_watch.py"],
            ["bench_tui_live.py"],
            ["bench_find.py", *db],
            ["bench_doctor.py", *db],
            ["bench_mcp.py", *db],
            ["bench_backlog.py", *db],
            ["bench_hosts.py"],
            ["bench_model_time.py"],
            ["bench_first_start.py"],
            ["bench_sqlite_import.py", "--cold"],
            ["bench_index_on_write.py"],
        ]
    runs.append(["bench_tui_latency.py", *(["--presses", "30"] if quick else [])])
    runs.append(["bench_real_model.py"])  # needs a real model: says "skipped" and exits 0 here
    runs.append(["bench_openai.py"])  # needs an OpenAI-compatible server: says "skipped" and exits 0 here
    return runs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    big_db = Path(tempfile.mkdtemp()) / "scale.db"
    failed = []
    for script, *rest in plan(args.quick, big_db):
        print(f"\n=== {script} {' '.join(rest)}", flush=True)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, str(HERE / script), *rest])
        print(f"--- {script}: exit {res.returncode}, {time.perf_counter() - t0:.0f} s", flush=True)
        if res.returncode != 0:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
