"""What a watch tick costs: idle over many files, and when one of them grew by a line.

Builds (in a temp dir) ``--files`` native JSONL files spread over sub-folders, imports them
with a first tick, then times quiet ticks against a bare ``os.stat`` loop over the same files
(the least any polling watcher must do), and a tick after one file grew by one line.

    .venv/bin/python bench/bench_watch.py [--files 2000] [--repeat 21]

Target: an idle tick ≤ 2× the bare stat loop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from hiermem_tui.store import Store
from hiermem_tui.watch import Watcher


def build(root: Path, files: int, per_folder: int = 50, lines: int = 20) -> list[Path]:
    paths = []
    for i in range(files):
        folder = root / f"project-{i // per_folder:03d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"session-{i:05d}.jsonl"
        path.write_text("".join(
            json.dumps({"session": f"s{i}", "role": ("user", "assistant")[k % 2], "content": f"message {k} of {i}"})
            + "\n" for k in range(lines)))
        paths.append(path)
    old = time.time() - 3600
    for path in [*paths, *{p.parent for p in paths}]:
        os.utime(path, (old, old))  # quiet files and folders, as a real history mostly is
    return paths


def median_ms(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append((time.perf_counter() - t0) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "logs"
        root.mkdir()
        paths = build(root, args.files)
        with Store.open(Path(tmp) / "bench.db") as store:
            watcher = Watcher(store, [root])
            t0 = time.perf_counter()
            first = watcher.tick()
            print(f"first tick: {first.files:,} files in {first.folders} folders, {first.episodes:,} episodes "
                  f"imported in {time.perf_counter() - t0:.2f} s")

            def bare() -> None:
                for p in paths:
                    os.stat(p)

            def quiet() -> None:
                report = watcher.tick()
                assert not report.imports

            bare()
            quiet()  # warm the OS caches for both alike
            pairs = [(median_ms(bare, 1), median_ms(quiet, 1)) for _ in range(args.repeat)]  # interleaved:
            base = statistics.median(b for b, _ in pairs)  # a load that comes and goes hits both alike
            idle = statistics.median(q for _, q in pairs)
            print(f"bare os.stat loop over {len(paths):,} files: {base:8.2f} ms  (median of {args.repeat})")
            print(f"idle tick:                            {idle:8.2f} ms  → {idle / base:.2f}× the bare loop "
                  "(target ≤ 2×)")

            grown = paths[len(paths) // 2]
            runs, bases = [], []
            for k in range(args.repeat):
                with grown.open("a") as fh:
                    fh.write(json.dumps({"session": "grown", "role": "user", "content": f"new line {k}"}) + "\n")
                t0 = time.perf_counter()
                report = watcher.tick()
                runs.append((time.perf_counter() - t0) * 1000)
                assert report.episodes == 1
                bases.append(median_ms(bare, 1))
            busy, base = statistics.median(runs), statistics.median(bases)
            print(f"tick after one file grew by a line:   {busy:8.2f} ms  → {busy / base:.2f}× the bare loop "
                  "(reads only the new line, one transaction)")


if __name__ == "__main__":
    main()
