"""How long until the sessions screen is on screen: 10k sessions vs an empty database.

Why: the sessions list must open "instantly" however big the file is. The table is virtual
(it fetches one page of rows from SQLite), so the time to the first full screen should not
grow with the number of sessions. This script measures it headless, in one run, and also
times the naive alternative (10k rows added to a DataTable) for comparison.

Run: ``.venv/bin/python bench/bench_tui_sessions.py [--sessions N] [--repeat R] [--no-datatable]``

``--state FILE``: instead, the first full screen of FILE (opened read-only, left as it was) with the
backlog's state column (what is waiting, planned once beforehand, as the app has it after its start-up
plan) against the same screen without it (issue 20: target ≤ 1.2×).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hiermem_tui.compaction.job import Job
from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.backlog_run import waiting_of
from hiermem_tui.tui.backlog_view import Waiting
from hiermem_tui.tui.widgets.sessions_table import SessionsTable

SIZE = (120, 36)
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def build_db(path: Path, sessions: int) -> float:
    """``sessions`` one-episode sessions in one transaction; returns the seconds it took."""
    t0 = time.perf_counter()
    store = Store.open(path)
    with store.db.transaction():
        for i in range(sessions):
            sid = f"bench-{i:06d}"
            when = START + timedelta(minutes=i)
            store.sessions.upsert(sid, title=f"Bench session {i}", source="bench", created_at=when)
            store.episodes.append(sid, [NewEpisode("0", "user", f"hello {i}", when)])
    store.close()
    return time.perf_counter() - t0


async def first_screen_ms(db: Path, config: Path) -> tuple[float, int]:
    """Milliseconds from opening the store to the first full frame of the sessions screen."""
    t0 = time.perf_counter()
    store = Store.open(db)
    app = make_app(Settings(db_path=db, config_path=config), store, probe_backend=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen._compositor.render_strips()  # the whole frame, visible rows included
        elapsed = (time.perf_counter() - t0) * 1000
        rows = app.screen.query_one(SessionsTable).row_count
    store.close()
    return elapsed, rows


async def state_column_ms(db: Path, config: Path, waiting: Waiting | None) -> float:
    """Milliseconds to the first full frame of ``db``'s sessions screen, with the state column when
    ``waiting`` is given (the app's ``backlog_waiting`` set before it mounts), without it otherwise."""
    t0 = time.perf_counter()
    store = Store.open_reader(db)
    app = make_app(Settings(db_path=db, config_path=config), store, probe_backend=False, follow=False)
    app.backlog_waiting = waiting
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen._compositor.render_strips()
        elapsed = (time.perf_counter() - t0) * 1000
        shown = app.screen.query_one(SessionsTable).state_of is not None
        assert shown == (waiting is not None), shown
    store.close()
    return elapsed


async def state_main(db: Path, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        reader = Store.open_reader(db)
        t0 = time.perf_counter()
        waiting = waiting_of(Job(reader, Settings(db_path=db, config_path=config)).plan())
        print(f"planned what is waiting: {waiting.summaries:,} summaries in {len(waiting.per_session):,} sessions "
              f"({time.perf_counter() - t0:.2f} s, beforehand)")
        reader.close()
        await state_column_ms(db, config, None)  # warm imports, CSS and the page cache of the OS
        with_ms, without_ms = [], []
        for _ in range(repeat):  # interleaved, so drift hits both alike
            without_ms.append(await state_column_ms(db, config, None))
            with_ms.append(await state_column_ms(db, config, waiting))
        w, wo = statistics.median(with_ms), statistics.median(without_ms)
        print(f"first full screen without the state column: {wo:7.1f} ms (median of {repeat})")
        print(f"first full screen with the state column:    {w:7.1f} ms (median of {repeat})")
        print(f"ratio: {w / wo:.2f}x   target: <= 1.2x -> {'OK' if w <= 1.2 * wo else 'MISSED'}")


async def interaction_ms(db: Path, config: Path) -> dict[str, float]:
    """Milliseconds for a re-sort (no index), a filter, and a jump to the end, each to a full frame."""
    store = Store.open(db)
    app = make_app(Settings(db_path=db, config_path=config), store, probe_backend=False)
    out: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one(SessionsTable)
        for name, act in (
            ("sort by tokens", lambda: table.set_sort("tokens")),
            ("filter '99'", lambda: table.set_filter("99")),
            ("clear filter", lambda: table.set_filter("")),
            ("jump to end (G)", lambda: table.action_jump(-1)),
        ):
            t0 = time.perf_counter()
            act()
            await pilot.pause()
            app.screen._compositor.render_strips()
            out[name] = (time.perf_counter() - t0) * 1000
    store.close()
    return out


async def datatable_ms(db: Path) -> float:
    """The naive alternative: every session added as a DataTable row (for comparison only)."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    store = Store.open(db)

    class Naive(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("title", "source", "episodes", "tokens", "updated")
            table.add_rows((s.title, s.source, s.episodes, s.tokens, s.updated_at) for s in store.sessions.page())

    t0 = time.perf_counter()
    app = Naive()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen._compositor.render_strips()
        elapsed = (time.perf_counter() - t0) * 1000
    store.close()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-datatable", action="store_true", help="skip the DataTable comparison")
    parser.add_argument("--state", type=Path, metavar="FILE", help="the state column's cost on FILE (read-only)")
    args = parser.parse_args()
    if args.state is not None:
        await state_main(args.state, args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big, empty, config = root / "big.db", root / "empty.db", root / "config.toml"
        print(f"building {args.sessions:,} sessions: {build_db(big, args.sessions):.2f} s")
        build_db(empty, 0)
        await first_screen_ms(empty, config)  # warm imports and CSS parsing once, for both
        big_ms, empty_ms = [], []
        for _ in range(args.repeat):  # interleaved, so drift hits both alike
            ms, rows = await first_screen_ms(big, config)
            assert rows == args.sessions, rows
            big_ms.append(ms)
            empty_ms.append((await first_screen_ms(empty, config))[0])
        b, e = statistics.median(big_ms), statistics.median(empty_ms)
        print(f"first full screen, empty DB:       {e:7.1f} ms (median of {args.repeat})")
        print(f"first full screen, {args.sessions:,} sessions: {b:7.1f} ms (median of {args.repeat})")
        verdict = "OK" if b < 1000 and b <= 2 * e else "MISSED"
        print(f"ratio: {b / e:.2f}x   target: < 1000 ms and <= 2x empty -> {verdict}")
        for name, ms in (await interaction_ms(big, config)).items():
            print(f"  {name:<16} {ms:7.1f} ms")
        if not args.no_datatable:
            print(f"for comparison, a DataTable with all {args.sessions:,} rows: {await datatable_ms(big):7.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
