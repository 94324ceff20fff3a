"""The first start after a big import: time to the first full frame of the sessions list.

Why (issue 21 item 12): ``demo`` and ``import`` never build the search index, and the TUI used to
build it before showing anything ("indexing for search … of 1,000,000 rows" for 17.6 s); every
start also read the whole episodes table looking for missing token counts. Now the app indexes in
the background and a partial index finds the missing counts. This script measures, in one run:

- first paint of a small file (the baseline), and of a big freshly made file with its index
  pending, the way ``launch_tui`` starts now and the way it started before (index first);
- ``fill_missing_tokens`` on the big file with the partial index and without it (dropped on a copy).

Ratios are against the small file measured in the same run, so a busy machine moves both alike.

    .venv/bin/python bench/bench_first_start.py [--episodes 300000] [--sessions 3000] [--db /tmp/first.db]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hiermem_tui.commands.common import CliContext
from hiermem_tui.commands.index_progress import ensure_search_index
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.store.search_index import search_index_status
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.tui.app import make_app

SIZE = (160, 48)


def demo(path: Path, sessions: int, episodes: int) -> None:
    subprocess.run([sys.executable, "-m", "hiermem_tui.cli", "demo", "--db", str(path), "--sessions", str(sessions),
                    "--episodes", str(episodes)], check=True, capture_output=True)


async def first_paint_ms(path: Path, config: Path, tokenizer: Tokenizer, *, index_first: bool) -> float:
    """What ``launch_tui`` does up to the first full frame (``index_first``: as it did before issue 21)."""
    t0 = time.perf_counter()
    store = Store.open(path, tokenizer=tokenizer)
    store.episodes.fill_missing_tokens()
    if index_first:
        ensure_search_index(CliContext(settings=Settings(db_path=path), stdout=io.StringIO(), stderr=io.StringIO()),
                            store)
    app = make_app(Settings(db_path=path, config_path=config), store, probe_backend=False, follow=False,
                   index_search=not index_first)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen._compositor.render_strips()
        elapsed = (time.perf_counter() - t0) * 1000
    store.close()
    return elapsed


def fill_ms(path: Path, tokenizer: Tokenizer, repeat: int) -> float:
    with Store.open(path, tokenizer=tokenizer) as store:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            store.episodes.fill_missing_tokens()
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300_000)
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--db", type=Path, help="the big file, made once with `hiermem-tui demo` and reused")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tokenizer = Tokenizer()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        config = tmp / "config.toml"
        small = tmp / "small.db"
        demo(small, 10, 1000)
        big = args.db or tmp / "big.db"
        if not big.exists():
            t0 = time.perf_counter()
            demo(big, args.sessions, args.episodes)
            print(f"made {big} ({args.episodes:,} episodes) in {time.perf_counter() - t0:.1f} s")
        with Store.open(big, tokenizer=tokenizer) as store:
            status = search_index_status(store)
        print(f"big file: {status.missing:,} rows not indexed for search")

        def run(path: Path, index_first: bool) -> float:
            times = []
            for _ in range(args.repeat):
                copy = tmp / "copy.db"  # a fresh copy each time: the old way leaves the index built
                shutil.copy(path, copy)
                times.append(asyncio.run(first_paint_ms(copy, config, tokenizer, index_first=index_first)))
                copy.unlink()
            return statistics.median(times)

        indexed = tmp / "indexed.db"  # the same file once its index is whole: what every later start sees
        shutil.copy(big, indexed)
        with Store.open(indexed, tokenizer=tokenizer) as store:
            ensure_search_index(CliContext(settings=Settings(db_path=indexed), stdout=io.StringIO(),
                                           stderr=io.StringIO()), store)
        run(small, False)  # warm: Textual's modules, the tokenizer, the page cache
        base = run(small, False)
        now = run(big, False)
        before = run(big, True)
        later = run(indexed, False)
        print(f"{'first paint':<48} {'ms':>9} {'× small':>8}")
        print(f"{'small file (baseline)':<48} {base:9.0f} {1:8.2f}")
        print(f"{'big file, index built in the background (now)':<48} {now:9.0f} {now / base:8.2f}")
        print(f"{'big file, index built first (before)':<48} {before:9.0f} {before / base:8.2f}")
        print(f"{'big file, index whole (every later start)':<48} {later:9.0f} {later / base:8.2f}")

        dropped = tmp / "no-partial.db"
        shutil.copy(big, dropped)
        with Store.open(dropped) as store:
            store.db.conn.execute("DROP INDEX IF EXISTS episodes_tokens_missing")
        with_index, without = fill_ms(big, tokenizer, 5), fill_ms(dropped, tokenizer, 5)
        print(f"fill_missing_tokens with nothing to fill: {with_index:.2f} ms with the partial index, "
              f"{without:.1f} ms without it")


if __name__ == "__main__":
    main()
