"""Search, context, stats and run history on 10k sessions / 1M episodes, each against a baseline.

Targets: a search over 1M episodes answers in < 100 ms median; whole-file stats stay fast;
building the search index of an upgraded file is reported as a ratio to a plain table copy of
the same text. Measured in one run, on one big file:

(a) index build: ``build_search_index`` over every episode and summary of the file, the file
    reset to what an upgrade from schema 2 leaves (no search_docs rows, nothing indexed),
    against ``CREATE TABLE … AS SELECT id, session_id, content FROM episodes`` plus the same
    for summaries — a plain copy of the same text;
(b) search: ``search()`` (ranked, with snippets) over a fixed mix of queries — rare and common
    words, phrases, prefixes, OR, NOT, within one session — median and p95 of 5 runs each,
    against plain FTS5 ranking, ``SELECT rowid … MATCH ? ORDER BY rank LIMIT 20`` (bm25 over
    every match, no join, no text: what a search without the ranking window costs); the worst
    case (a word in 80% of the rows) separately;
(c) whole-file stats: ``compute_stats(store)``, against one bare pass over the sessions
    aggregates (``SELECT sum(…) FROM sessions``);
(d) context of the largest session (thousands of raw episodes), against paging its episodes
    (``iter_episodes``) — the least a context must read;
(e) run history: the first page of 200 runs of the whole file, against ``SELECT * FROM runs
    ORDER BY rowid LIMIT 200``;
(f) the search screen: from submitting the query to the frame with its hits (headless app; the
    query is submitted and the result polled directly, so Pilot's wait for an idle app is not in it).

The big file is made once with ``hiermem-tui demo --sessions 10000 --episodes 1000000`` and,
so that there are summaries and runs to count, a full extractive pass over every session
(``compact --all --backend extractive``); both are kept at ``--db`` and reused when present.

    .venv/bin/python bench/bench_find.py --db /tmp/find.db [--sessions 10000] [--episodes 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hiermem_tui.cli import main as cli
from hiermem_tui.context import build_context
from hiermem_tui.run_history import list_runs
from hiermem_tui.search import RANK_WINDOW, parse_query, search
from hiermem_tui.stats import compute_stats
from hiermem_tui.store import Store
from hiermem_tui.store.search_index import BACKFILL_KEY, INDEXED_KEY, build_search_index, session_token

QUERIES = [
    "postmortem", "borrow checker", '"hash indexes"', "pars*", "timeout OR deadline", "flaky NOT windows",
    "sourdough", "bisect", "cover letter", "leverage", "CRDTs", '"failure cases"', "git bisect run",
    "config", "rust", "deploy rollback", "kubernetes", "grant proposal", "retry backoff", "migration",
]
WORST = "the"


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def make_big(db: Path, sessions: int, episodes: int) -> None:
    """The big file: made if missing; given an extractive pass if it has no runs yet (bench_scale's file)."""
    out = io.StringIO()
    if not db.exists():
        print(f"building {db} (once): demo {sessions:,} sessions / {episodes:,} episodes")
        assert cli(["demo", "--db", str(db), "--sessions", str(sessions), "--episodes", str(episodes)],
                   stdout=out) == 0
    with Store.open(db) as store:
        compacted = store.db.conn.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
    if not compacted:
        print(f"compacting every session of {db} with the extractive backend (once)")
        assert cli(["compact", "--db", str(db), "--all", "--backend", "extractive", "--parallel", "2", "--json"],
                   stdout=out) == 0


def bench_index(db: Path) -> None:
    work = Path(tempfile.mkdtemp()) / "index.db"
    shutil.copy(db, work)
    conn = sqlite3.connect(work, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")

    def plain_copy() -> None:
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE copy_e AS SELECT id, session_id, content FROM episodes")
        conn.execute("CREATE TABLE copy_s AS SELECT id, session_id, content FROM summaries")
        conn.execute("COMMIT")

    base = timed(plain_copy)
    conn.execute("DROP TABLE copy_e")
    conn.execute("DROP TABLE copy_s")
    # As a file upgraded from schema 2 is: no search_docs rows, nothing indexed, the backfill cursor at the start.
    conn.execute("BEGIN")
    conn.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
    conn.execute("DROP TRIGGER search_docs_no_delete")
    conn.execute("DELETE FROM search_docs")
    conn.execute("UPDATE meta SET value = '0' WHERE key = ?", (INDEXED_KEY,))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 'episode:')", (BACKFILL_KEY,))
    conn.execute("COMMIT")
    conn.close()
    store = Store.open(work)
    rows = [0]
    build = timed(lambda: rows.__setitem__(0, build_search_index(store)))
    store.close()
    shutil.rmtree(work.parent)
    print(f"(a) index build: {rows[0]:,} rows in {build:.1f} s ({rows[0] / build:,.0f} rows/s); plain table copy "
          f"of the same text {base:.1f} s; ratio {build / base:.2f}x")


def bench_search(store: Store) -> None:
    conn = store.db.conn
    biggest = conn.execute("SELECT id FROM sessions ORDER BY episode_count DESC LIMIT 1").fetchone()[0]
    cases = [(q, None) for q in QUERIES] + [("config", biggest), ("message OR assistant", biggest)]
    ours, bare = [], []
    for query, sid in cases:
        fts = parse_query(query).fts  # the same MATCH our search runs
        expr = f"text : {fts}" if sid is None else f'sess : "{session_token(sid)}" AND text : {fts}'
        search(store, query, session_id=sid)  # warm the pages this query touches
        runs = [timed(lambda: search(store, query, session_id=sid)) for _ in range(5)]
        bare_runs = [timed(lambda: conn.execute(
            "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rank LIMIT 20", (expr,)).fetchall())
            for _ in range(5)]
        ours.append(statistics.median(runs))
        bare.append(statistics.median(bare_runs))
    med, p95 = statistics.median(ours), sorted(ours)[int(0.95 * (len(ours) - 1))]
    base = statistics.median(bare)
    print(f"(b) search, {len(cases)} queries x 5 over {conn.execute('SELECT count(*) FROM search_docs').fetchone()[0]:,} "
          f"rows: median {med * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, slowest {max(ours) * 1000:.1f} ms "
          f"(target < 100 ms median); plain FTS5 bm25 ORDER BY rank LIMIT 20 median {base * 1000:.1f} ms; "
          f"ratio {med / base:.2f}x")
    worst = [timed(lambda: search(store, WORST)) for _ in range(3)]
    matches = conn.execute("SELECT count(*) FROM search_index WHERE search_index MATCH ?", (f'text : "{WORST}"',))
    naive = timed(lambda: conn.execute("SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rank "
                                       "LIMIT 20", (f'text : "{WORST}"',)).fetchall())
    print(f"    worst case {WORST!r} ({matches.fetchone()[0]:,} matching rows, the newest {RANK_WINDOW:,} ranked): "
          f"median {statistics.median(worst) * 1000:.0f} ms; plain FTS5 bm25 over all of them {naive * 1000:.0f} ms")


def bench_stats(store: Store) -> None:
    conn = store.db.conn
    base = min(timed(lambda: conn.execute(
        "SELECT count(*), sum(episode_count), sum(token_count), sum(covered_tokens), sum(top_tokens) FROM sessions"
    ).fetchone()) for _ in range(5))
    compute_stats(store)
    ours = [timed(lambda: compute_stats(store)) for _ in range(5)]
    s = compute_stats(store)
    print(f"(c) whole-file stats ({s.sessions:,} sessions, {s.active:,} active summaries, {s.runs:,} runs): median "
          f"{statistics.median(ours) * 1000:.0f} ms; bare pass over the sessions aggregates {base * 1000:.1f} ms; "
          f"ratio {statistics.median(ours) / base:.1f}x")


def bench_context(store: Store) -> None:
    sid, n = store.db.conn.execute(
        "SELECT id, episode_count FROM sessions ORDER BY episode_count DESC LIMIT 1").fetchone()
    base = min(timed(lambda: sum(1 for _ in store.episodes.each(sid))) for _ in range(3))
    ours = [timed(lambda: build_context(store, sid)) for _ in range(3)]
    view = build_context(store, sid)
    print(f"(d) context of the largest session ({n:,} episodes -> {len(view.items):,} items, "
          f"{view.total_tokens:,} tokens): median {statistics.median(ours) * 1000:.0f} ms; paging its episodes "
          f"{base * 1000:.0f} ms; ratio {statistics.median(ours) / base:.2f}x")


def bench_history(store: Store) -> None:
    conn = store.db.conn
    base = min(timed(lambda: conn.execute("SELECT * FROM runs ORDER BY rowid LIMIT 200").fetchall())
               for _ in range(5))
    ours = min(timed(lambda: list_runs(store, limit=200)) for _ in range(5))
    total = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    print(f"(e) run history, first 200 of {total:,} runs newest first: {ours * 1000:.1f} ms; bare first 200 rows "
          f"{base * 1000:.1f} ms; ratio {ours / base:.1f}x")


async def bench_screen(db: Path) -> None:
    from hiermem_tui.config import Settings
    from hiermem_tui.tui.app import make_app
    from hiermem_tui.tui.screens.search import SearchScreen
    from textual.widgets import Input

    store = Store.open(db)
    app = make_app(Settings(db_path=db, config_path=db.with_suffix(".toml")), store, probe_backend=False)
    times = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f")
        while not isinstance(app.screen, SearchScreen):
            await pilot.pause(0.01)
        screen = app.screen
        box = screen.query_one("#search-input", Input)
        for query in QUERIES[:10]:
            box.focus()
            terms = parse_query(query).terms
            t0 = time.perf_counter()
            box.value = query
            await box.action_submit()  # enter: runs at once (no debounce wait)
            while screen.terms != terms:  # this query's answer arrived (hits or "no matches")
                await asyncio.sleep(0.002)  # not pilot.pause: that also waits for the whole app to be idle
            await asyncio.sleep(0)
            app.screen._compositor.render_strips()  # the frame with the hits
            times.append(time.perf_counter() - t0)
            await pilot.pause(0.3)  # let the cursor blink, the preview settle: the next query starts quiet
    store.close()
    print(f"(f) search screen, query set to hits shown (10 queries): median {statistics.median(times) * 1000:.0f} ms, "
          f"slowest {max(times) * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True, help="the big file: built here once, reused after")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--skip-index", action="store_true", help="skip (a), which copies the whole file")
    ap.add_argument("--only", default="abcdef", help="which parts to run (letters a-f, default all)")
    args = ap.parse_args()
    db = Path(args.db)
    make_big(db, args.sessions, args.episodes)
    if "a" in args.only and not args.skip_index:
        bench_index(db)
    store = Store.open(db)
    try:
        for part, fn in (("b", bench_search), ("c", bench_stats), ("d", bench_context), ("e", bench_history)):
            if part in args.only:
                fn(store)
    finally:
        store.close()
    if "f" in args.only:
        asyncio.run(bench_screen(db))


if __name__ == "__main__":
    main()
