"""bench/run_all.py runs every benchmark in bench/, and the parts that need a model or a big file
say "skipped" in one line without one (run_all passes neither)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _run_all_plan(quick: bool) -> list[list[str]]:
    sys.path.insert(0, str(BENCH))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCH))
    return run_all.plan(quick, Path("/nonexistent/scale.db"))


def test_every_benchmark_is_in_both_plans() -> None:
    scripts = {p.name for p in BENCH.glob("bench_*.py")}
    assert len(scripts) > 20
    for quick in (True, False):
        planned = [run[0] for run in _run_all_plan(quick)]
        assert sorted(planned) == sorted(scripts), quick  # each once, none missing, none that is not there


def _bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_the_backlog_plan_without_a_big_file_says_skipped() -> None:
    res = _bench("bench_backlog.py", "--plan-only")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines() == ["(a) skipped: no --db given (the 1M-episode file bench_scale.py --keep makes)"]


def test_the_model_time_rig_without_a_model_says_skipped() -> None:
    res = _bench("bench_model_time.py", "--only", "d")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines() == ["(d) skipped: no --ollama-host and --model given (the real-model rig)"]
