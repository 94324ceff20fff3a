"""Run a command while other processes keep every core busy, to find tests that only pass on an idle machine.

    .venv/bin/python scripts/cpu_load.py -- make test
    .venv/bin/python scripts/cpu_load.py --repeat 5 -- .venv/bin/python -m pytest -n 2 -q tests/tui tests/snapshots
    .venv/bin/python scripts/cpu_load.py --spinners 0 --writers 0 --repeat 3 -- CMD   # the same runs, no load

Why: a Textual test that "waits" with one ``pilot.pause()`` passes when the app gets the CPU at once and
fails when another process holds it (``pause()`` waits for the *process* to look idle, and a starved
process looks idle). The load is what such a test meets on a shared 2-core machine: one pure-Python
spinner per core (``--spinners``, default: the core count) and a SQLite writer committing in WAL mode
with ``synchronous=FULL`` (``--writers``, default 1), which adds fsyncs and lock traffic next to the
tests' own databases. The load starts before the command, stops after it (also on Ctrl-C), and each run's
exit code and wall time is printed; the exit code is the first failing run's, 0 when every run passed.
Standard library only, so it runs from any Python.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _orphaned(parent: int) -> bool:
    return os.getppid() != parent


def _quiet_on_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops us


def spin(parent: int) -> None:
    """Burn one core until terminated (pure Python, so it competes like a busy test process does);
    exit by itself if the parent died without stopping it."""
    _quiet_on_ctrl_c()
    x = 0
    while not _orphaned(parent):
        for _ in range(1_000_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def write_sqlite(path: str, parent: int) -> None:
    """Commit small transactions to a WAL database until terminated: CPU, fsyncs and file locks."""
    _quiet_on_ctrl_c()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)")
    body = "x" * 2000
    n = 0
    while not _orphaned(parent):
        with conn:
            conn.executemany("INSERT INTO t (body) VALUES (?)", [(body,)] * 20)
        n += 1
        if n % 200 == 0:  # keep the file small: the point is the traffic, not the disk space
            with conn:
                conn.execute("DELETE FROM t")


def start_load(spinners: int, writers: int, workdir: Path) -> list[mp.Process]:
    ctx = mp.get_context("spawn")  # no inherited state from this process
    me = os.getpid()
    procs = [ctx.Process(target=spin, args=(me,), name=f"spin{i}", daemon=True) for i in range(spinners)]
    procs += [ctx.Process(target=write_sqlite, args=(str(workdir / f"load{i}.db"), me), name=f"sqlite{i}", daemon=True)
              for i in range(writers)]
    for p in procs:
        p.start()
    return procs


def stop_load(procs: list[mp.Process]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()


def run(command: list[str]) -> int:
    """Run the command in its own process group, so an interrupt ends it and everything it started
    (pytest-xdist workers), and nothing else."""
    child = subprocess.Popen(command, start_new_session=True)
    try:
        return child.wait()
    except BaseException:
        try:
            os.killpg(child.pid, signal.SIGTERM)
            child.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
        raise


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     usage="%(prog)s [--spinners N] [--writers N] [--repeat N] -- COMMAND ...")
    parser.add_argument("--spinners", type=int, default=os.cpu_count() or 2,
                        help="processes spinning on a core each (default: the core count)")
    parser.add_argument("--writers", type=int, default=1, help="processes committing to a SQLite file (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="run the command this many times under the load")
    parser.add_argument("--keep-going", action="store_true", help="run all repeats even after a failure")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("cpu_load: give the command to run after --, e.g. cpu_load.py -- make test", file=sys.stderr)
        return 2
    if args.spinners < 0 or args.writers < 0 or args.repeat < 1:
        print("cpu_load: --spinners and --writers must be ≥ 0, --repeat ≥ 1", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _interrupted)  # stop the load and the command when killed, too
    signal.signal(signal.SIGINT, _interrupted)  # even when started in the background (SIGINT ignored there)
    results: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory(prefix="cpu_load-") as tmp:
        procs = start_load(args.spinners, args.writers, Path(tmp))
        print(f"cpu_load: {args.spinners} spinner(s), {args.writers} SQLite writer(s) on {os.cpu_count()} cores; "
              f"running {' '.join(command)!r} ×{args.repeat}", file=sys.stderr, flush=True)
        start = time.monotonic()
        try:
            time.sleep(0.5)  # let the load reach full speed before the command starts
            for i in range(args.repeat):
                start = time.monotonic()
                code = run(command)
                results.append((code, time.monotonic() - start))
                print(f"cpu_load: run {i + 1}/{args.repeat}: exit {code}, {results[-1][1]:.1f} s",
                      file=sys.stderr, flush=True)
                if code != 0 and not args.keep_going:
                    break
        except KeyboardInterrupt:
            results.append((130, time.monotonic() - start))
            print("cpu_load: interrupted; the command and the load were stopped", file=sys.stderr)
        finally:
            stop_load(procs)
    failed = [code for code, _ in results if code != 0]
    walls = sorted(s for _, s in results)
    print(f"cpu_load: {len(results) - len(failed)}/{len(results)} runs passed; wall min {walls[0]:.1f} s, "
          f"median {walls[len(walls) // 2]:.1f} s, max {walls[-1]:.1f} s", file=sys.stderr)
    return failed[0] if failed else 0


if __name__ == "__main__":
    sys.exit(main())
