"""How long importing each SQLite format takes: llm, Open WebUI, oterm, lossless-claw, lossless-code.

Why: those importers read other tools' files through sqlite-utils (issue 21), which costs an
import of the library and its own schema introspection. This script imports each format's test
fixtures into a fresh database, in this process, and prints the median milliseconds per format,
plus what ``import sqlite_utils`` itself costs in a fresh interpreter and whether the TUI's start
loads it. The figure that matters is the ratio against the same run's JSONL baseline (a format
that never touches SQLite), so a busy machine moves both alike.

``--cold`` also times each import as a user runs it, ``hiermem-tui import`` in a fresh process
(interpreter start, the imports of the modules it needs, the import itself), median of R.

Run: ``.venv/bin/python bench/bench_sqlite_import.py [--repeat R] [--cold]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
CASES = {
    "jsonl (baseline)": ("jsonl", ["jsonl/two_sessions.jsonl"]),
    "llm": ("llm", ["llm/logs-027-a.db", "llm/logs-036-a.db"]),
    "openwebui": ("openwebui", []),  # a webui.db is made here (the fixtures ship JSON exports)
    "oterm": ("oterm", ["oterm/machine-a.db"]),
    "lossless-claw": ("lossless-claw", ["lossless_claw/lcm.db"]),
    "lossless-code": ("lossless-code", ["lossless_code/vault.db"]),
}


def _webui_db(folder: Path) -> Path:
    sys.path.insert(0, str(FIXTURES.parent.parent))
    from tests.unit.test_import_openwebui import build_webui_db

    return build_webui_db(folder / "webui.db")


def one_import(paths: list[Path], fmt: str, tokenizer: Tokenizer) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db", tokenizer=tokenizer)
        t0 = time.perf_counter()
        import_paths(store, paths, fmt, parallel=False)
        elapsed = time.perf_counter() - t0
        store.close()
    return elapsed * 1000


def cold_import_ms(paths: list[Path], fmt: str, repeat: int) -> float:
    """``hiermem-tui import --format FMT PATH…`` in a fresh process, into a fresh file: median wall ms."""
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "hiermem_tui.cli", "import", "--db", str(Path(tmp) / "b.db"), "--format", fmt,
                   *map(str, paths)]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def import_cost_ms(module: str) -> float:
    """Milliseconds ``import module`` adds in a fresh interpreter (``-X importtime``'s cumulative)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True).stderr
    for line in out.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1000
    return float("nan")


def tui_start_loads(module: str) -> bool:
    code = ("import sys; from hiermem_tui import launch; from hiermem_tui.tui import app; "
            f"print({module!r} in sys.modules)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cold", action="store_true", help="also time `hiermem-tui import` in a fresh process")
    args = parser.parse_args()
    tokenizer = Tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        webui = _webui_db(Path(tmp))
        results: dict[str, float] = {}
        cold: dict[str, float] = {}
        for name, (fmt, rels) in CASES.items():
            paths = [FIXTURES / r for r in rels] or [webui]
            one_import(paths, fmt, tokenizer)  # warm: modules imported, caches filled
            results[name] = statistics.median(one_import(paths, fmt, tokenizer) for _ in range(args.repeat))
            if args.cold:
                cold[name] = cold_import_ms(paths, fmt, args.repeat)
    base = results["jsonl (baseline)"]
    print(f"{'format':<18} {'ms':>8} {'× jsonl':>8}" + (f" {'cold ms':>9} {'× jsonl':>8}" if cold else ""))
    for name, ms in results.items():
        line = f"{name:<18} {ms:8.1f} {ms / base:8.2f}"
        if cold:
            line += f" {cold[name]:9.0f} {cold[name] / cold['jsonl (baseline)']:8.2f}"
        print(line)
    try:
        cost = import_cost_ms("sqlite_utils")
        print(f"import sqlite_utils (fresh interpreter): {cost:.1f} ms")
    except subprocess.CalledProcessError:
        print("import sqlite_utils: not installed")
    print(f"the TUI's start loads sqlite_utils: {tui_start_loads('sqlite_utils')}")


if __name__ == "__main__":
    main()
