"""Run every benchmark in this folder, one after another, and print their figures.

    .venv/bin/python bench/run_all.py [--quick]

--quick uses smaller inputs (for a smoke run); the figures in bench/README.md come from the
full run. Each script measures its own baseline in the same run and prints ratios.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    big_db = Path(tempfile.mkdtemp()) / "scale.db"
    if args.quick:
        plan = [
            ["bench_import.py", "--episodes", "20000", "--sessions", "200"],
            ["bench_scale.py", "--episodes", "100000", "--sessions", "1000", "--keep", str(big_db)],
            ["bench_summariser_overhead.py", "50"],
            ["bench_engine.py"],
            ["bench_bounded.py", "--episodes", "80"],
            ["bench_tui_sessions.py", "--repeat", "3", "--no-datatable"],
            ["bench_tui_session.py", "--episodes", "4000", "--repeat", "3"],
            ["bench_watch.py", "--files", "300", "--repeat", "5"],
            ["bench_tui_live.py", "--episodes", "4000", "--repeat", "3"],
            ["bench_find.py", "--db", str(big_db)],
            ["bench_doctor.py", "--db", str(big_db)],
            ["bench_mcp.py", "--db", str(big_db)],
        ]
    else:
        plan = [
            ["bench_import.py"],
            ["bench_scale.py", "--keep", str(big_db)],
            ["bench_summariser_overhead.py"],
            ["bench_engine.py"],
            ["bench_bounded.py"],
            ["bench_tui_sessions.py"],
            ["bench_tui_session.py"],
            ["bench_memory.py", "--db", str(big_db)],
            ["bench_watch.py"],
            ["bench_tui_live.py"],
            ["bench_find.py", "--db", str(big_db)],
            ["bench_doctor.py", "--db", str(big_db)],
            ["bench_mcp.py", "--db", str(big_db)],
        ]
    if (HERE / "bench_tui_latency.py").exists():
        plan.append(["bench_tui_latency.py"])
    plan.append(["bench_real_model.py"])  # needs a real model: says "skipped" and exits 0 here
    plan.append(["bench_openai.py"])  # needs an OpenAI-compatible server: says "skipped" and exits 0 here
    failed = 0
    for script, *rest in plan:
        if not (HERE / script).exists():
            continue
        print(f"\n=== {script} {' '.join(rest)}", flush=True)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, str(HERE / script), *rest])
        print(f"--- {script}: exit {res.returncode}, {time.perf_counter() - t0:.0f} s", flush=True)
        failed += res.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
