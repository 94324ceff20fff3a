"""What keeping the search index current as rows are written costs (issue 36 item 2).

Every write transaction of ours now indexes the rows it recorded just before it commits
(``search_index.index_at_commit``), so a reader that never writes (the MCP server) finds them. The
baseline, measured in the same run, is the same write with that step taken out (``Db.write_hooks``
emptied): what an import cost before, when the index was caught up by the next search or start.

(a) one ``import`` of a native JSONL file into a fresh database, indexed as it commits ÷ the import
    without it; and ÷ that import followed by ``build_search_index`` (what the first search or the
    TUI's start then paid before anything was searchable);
(b) a chat that grows an episode at a time (``watch`` on a live log: one transaction per episode),
    indexed as each commits ÷ the same appends without it;
(c) searching (b)'s file, whose index grew a transaction at a time (a segment each, merged by FTS5's
    automerge), ÷ the same rows indexed in one build;
(d) a reader that cannot index (read-only, as the MCP server opens the file) meeting the newest
    ``SCAN_ROWS`` rows unindexed: a search that scans them ÷ the same search once they are indexed.

Runs alternate (with, without, with, …) and medians are compared: wall time, and for (a) and (b) also
this process's CPU time (the indexing runs here; a big input's tokens are counted in a worker process,
the same in both), which a machine busy with other work disturbs less.

    .venv/bin/python bench/bench_index_on_write.py [--episodes 50000] [--sessions 500] [--appends 2000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_import import write_jsonl
from hiermem_tui.importers import import_paths
from hiermem_tui.search import search
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.store.search_index import SCAN_ROWS, build_search_index, search_index_status
from hiermem_tui.tokens import Tokenizer

QUERIES = ["error", "retry backoff", '"the test"', "pars*", "timeout OR deadline", "config NOT yaml", "cache",
           "migration", "latency", "token"]


def opened(path: Path, tok: Tokenizer, indexed: bool) -> Store:
    store = Store.open(path, tokenizer=tok)
    if not indexed:
        store.db.write_hooks.clear()  # the write as it was before: recorded for search, not indexed
    return store


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) that ``fn()`` took."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def med(values: list[float]) -> float:
    return statistics.median(values)


def wall(runs: Timings) -> float:
    return med([w for w, _ in runs])


def cpu(runs: Timings) -> float:
    return med([c for _, c in runs])


Timings = list[tuple[float, float]]


def bench_import(work: Path, src: Path, tok: Tokenizer, repeat: int) -> tuple[Timings, Timings, Timings]:
    on: Timings = []
    off: Timings = []
    off_then_build: Timings = []
    for i in range(repeat):
        for indexed in (True, False):
            db = work / f"import-{i}-{indexed}.db"
            store = opened(db, tok, indexed)
            took = timed(lambda: import_paths(store, [src], "jsonl"))
            if indexed:
                assert not search_index_status(store).pending
                on.append(took)
            else:
                off.append(took)
                build = timed(lambda: build_search_index(store))
                off_then_build.append((took[0] + build[0], took[1] + build[1]))
            store.close()
            db.unlink()
            for side in work.glob(db.name + "-*"):
                side.unlink()
    return on, off, off_then_build


def grow(path: Path, tok: Tokenizer, texts: list[str], indexed: bool) -> tuple[float, float]:
    """One episode per transaction, as ``watch`` appends what a live log gained."""
    store = opened(path, tok, indexed)
    counts = tok.count_many(texts)
    store.sessions.upsert("live", title="A live chat", source="jsonl")

    def append() -> None:
        for i, (text, n) in enumerate(zip(texts, counts)):
            store.episodes.append("live", [NewEpisode(str(i), ("user", "assistant")[i % 2], text, None)], [n])

    took = timed(append)
    store.close()
    return took


def query_ms(store: Store, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        for q in QUERIES:
            t0 = time.perf_counter()
            search(store, q)
            times.append((time.perf_counter() - t0) * 1000)
    return med(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=50_000)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--appends", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tok = Tokenizer()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        src = work / "in.jsonl"
        contents = write_jsonl(src, args.sessions, args.episodes)
        mb = src.stat().st_size / 1e6
        print(f"input: {args.episodes:,} episodes, {args.sessions:,} sessions, {mb:.1f} MB")

        on, off, off_build = bench_import(work, src, tok, args.repeat)

        def runs(t: Timings) -> str:
            return ", ".join(f"{w:.2f}" for w, _ in t)

        print(f"(a) import, indexed as it commits: {wall(on):6.2f} s wall, {cpu(on):6.2f} s CPU  (runs: {runs(on)})")
        print(f"    import without it (before)   : {wall(off):6.2f} s wall, {cpu(off):6.2f} s CPU  (runs: {runs(off)})")
        print(f"    ... then build_search_index   : {wall(off_build):6.2f} s wall, {cpu(off_build):6.2f} s CPU")
        print(f"    ratio indexed ÷ without = {wall(on) / wall(off):.2f}x wall, {cpu(on) / cpu(off):.2f}x CPU;  "
              f"÷ without-then-build = {wall(on) / wall(off_build):.2f}x wall, {cpu(on) / cpu(off_build):.2f}x CPU")

        texts = contents[: args.appends]
        grown_on: Timings = []
        grown_off: Timings = []
        for i in range(args.repeat):
            grown_on.append(grow(work / f"grow-on-{i}.db", tok, texts, True))
            grown_off.append(grow(work / f"grow-off-{i}.db", tok, texts, False))
        per = 1000 / args.appends
        print(f"(b) {args.appends:,} one-episode transactions, indexed as each commits: {wall(grown_on) * per:.2f} ms "
              f"each ({cpu(grown_on) * per:.2f} CPU); without: {wall(grown_off) * per:.2f} ms each "
              f"({cpu(grown_off) * per:.2f} CPU); ratio {wall(grown_on) / wall(grown_off):.2f}x wall, "
              f"{cpu(grown_on) / cpu(grown_off):.2f}x CPU")

        built = work / "grow-built.db"
        shutil.copyfile(work / "grow-off-0.db", built)
        with Store.open(built, tokenizer=tok) as store:
            build_search_index(store)
            one_build = query_ms(store, 5)
        with Store.open(work / "grow-on-0.db", tokenizer=tok) as store:
            segments = store.db.conn.execute("SELECT count(*) FROM search_index_data").fetchone()[0]
            grown = query_ms(store, 5)
        print(f"(c) search, index grown a transaction at a time: {grown:.2f} ms median ({segments:,} index pages); "
              f"built in one go: {one_build:.2f} ms; ratio {grown / one_build:.2f}x")

        scan_db = work / "scan.db"
        rows = min(SCAN_ROWS, args.episodes)
        store = opened(scan_db, tok, True)
        import_paths(store, [src], "jsonl")
        store.db.write_hooks.clear()
        store.sessions.upsert("late", title="Written by an older version", source="jsonl")
        store.episodes.append("late", [NewEpisode(str(i), "user", t, None) for i, t in enumerate(contents[:rows])])
        store.close()
        with Store.open_reader(scan_db, tokenizer=tok) as reader:
            assert search_index_status(reader).missing == rows
            scanning = query_ms(reader, 3)
        with Store.open(scan_db, tokenizer=tok) as store:
            build_search_index(store)
            indexed = query_ms(store, 3)
        print(f"(d) a reader's search with the newest {rows:,} rows unindexed (scanned): {scanning:.1f} ms median; "
              f"the same rows indexed: {indexed:.1f} ms; ratio {scanning / indexed:.1f}x")


if __name__ == "__main__":
    main()
