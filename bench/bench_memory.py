"""Scale and memory: `sessions --json` and the TUI on 10k sessions / 1M episodes, against an empty DB.

Why: the store pages everything (keyset queries, virtual tables), so listing, opening and
browsing should cost about the same — in time and in memory — on a million episodes as on an
empty file. This measures, in one run:

(a) ``hiermem-tui sessions --json`` as a user runs it (a process, best of 3), and in process;
(b) the TUI built with ``make_app(settings, store, probe_backend=False)`` under ``run_test``:
    time to the first full screen, ``G`` (jump to the last session), opening the largest
    session (``app.open_session``) to its first full screen, then ``end`` in its transcript;
(c) the peak resident memory of the process after that browsing (``ru_maxrss``); target < 300 MB.

Each measurement of (b)/(c) runs in a fresh child process, so a peak belongs to one database.
Baselines: an empty database (listing, first screen, memory) and a database holding one
10-episode session (opening a session, ``end``), both built in the same run.

    .venv/bin/python bench/bench_memory.py --db /tmp/scale.db [--sessions 10000] [--episodes 1000000]

The big database is built once with ``hiermem-tui demo`` into ``--db`` and reused if present.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

SIZE = (160, 48)
TARGET_MB = 300.0
CLI = [sys.executable, "-m", "hiermem_tui.cli"]


def peak_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# ---------------------------------------------------------------- children (one database each)
async def browse(db: Path, config: Path) -> dict[str, Any]:
    """First screen, G, open the largest session, end in its transcript; then the memory peak."""
    from hiermem_tui.config import Settings
    from hiermem_tui.store import Store
    from hiermem_tui.tui.app import make_app
    from hiermem_tui.tui.widgets.sessions_table import SessionsTable

    out: dict[str, Any] = {"rss_after_imports_mb": round(peak_mb(), 1)}
    t0 = time.perf_counter()
    store = Store.open(db)
    app = make_app(Settings(db_path=db, config_path=config), store, probe_backend=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen._compositor.render_strips()  # the whole frame, not just what changed
        out["first_screen_ms"] = (time.perf_counter() - t0) * 1000
        table = app.screen.query_one(SessionsTable)
        out["rows"] = table.row_count
        out["G_ms"] = await timed_key(app, pilot, "G")
        out["G_row"] = table.cursor_row
        largest = store.sessions.page(sort="episodes", limit=1)
        if largest:
            await open_largest(app, pilot, largest[0].id, largest[0].episodes, out)
    store.close()
    out["peak_rss_mb"] = round(peak_mb(), 1)
    return out


async def timed_key(app: Any, pilot: Any, key: str) -> float:
    """A key press through the Pilot until the frame after it is composed (ms)."""
    t0 = time.perf_counter()
    await pilot.press(key)
    await pilot.pause()
    app.screen._compositor.render_strips()
    return (time.perf_counter() - t0) * 1000


async def open_largest(app: Any, pilot: Any, session_id: str, episodes: int, out: dict[str, Any]) -> None:
    from hiermem_tui.tui.screens.session import SessionScreen

    out["largest_session_episodes"] = episodes
    t0 = time.perf_counter()
    app.open_session(session_id)
    while not isinstance(app.screen, SessionScreen):
        await asyncio.sleep(0)  # the push is scheduled on the app's loop
    screen = app.screen
    painted = asyncio.Event()
    screen.call_after_refresh(painted.set)
    await painted.wait()
    app.screen._compositor.render_strips()
    out["open_session_ms"] = (time.perf_counter() - t0) * 1000
    await pilot.press("t")  # show the transcript and give it the keys
    await pilot.pause()
    transcript = screen.transcript
    transcript.focus()
    await pilot.pause()
    out["end_ms"] = await timed_key(app, pilot, "end")
    out["end_cursor"] = transcript.cursor
    await pilot.press("home")
    await pilot.pause()
    await pilot.press("G")  # vim users' "end": does the transcript take it too?
    await pilot.pause()
    out["G_in_transcript_moves"] = transcript.cursor == episodes - 1


def list_in_process(db: Path) -> dict[str, Any]:
    """``sessions --json`` through ``cli.main`` in this process: time (best of 3) and peak memory."""
    from hiermem_tui.cli import main

    runs = []
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for _ in range(3):
            t0 = time.perf_counter()
            assert main(["sessions", "--db", str(db), "--json"], stdout=sink) == 0
            runs.append((time.perf_counter() - t0) * 1000)
    return {"sessions_json_inproc_ms": min(runs), "sessions_json_peak_rss_mb": round(peak_mb(), 1)}


def child(mode: str, db: Path, config: Path) -> None:
    result = asyncio.run(browse(db, config)) if mode == "tui" else list_in_process(db)
    print(json.dumps(result))


# ---------------------------------------------------------------- the parent: build, run children, report
def run_child(mode: str, db: Path, config: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, "--db", str(db), "--config", str(config)],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"child {mode} on {db} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sessions_json_process_ms(db: Path) -> tuple[float, int]:
    """Wall time of ``hiermem-tui sessions --json`` as a process (best of 3), and how many it listed."""
    best, listed = float("inf"), -1
    for _ in range(3):
        t0 = time.perf_counter()
        proc = subprocess.run([*CLI, "sessions", "--db", str(db), "--json"], capture_output=True, text=True)
        best = min(best, (time.perf_counter() - t0) * 1000)
        assert proc.returncode == 0, proc.stderr
        listed = len(json.loads(proc.stdout))
    return best, listed


def build_big(db: Path, sessions: int, episodes: int, seed: int) -> None:
    if db.exists():
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        n, m = conn.execute("SELECT count(*), coalesce(sum(episode_count), 0) FROM sessions").fetchone()
        conn.close()
        print(f"reusing {db}: {n:,} sessions, {m:,} episodes")
        return
    t0 = time.perf_counter()
    subprocess.run([*CLI, "demo", "--db", str(db), "--sessions", str(sessions), "--episodes", str(episodes),
                    "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    print(f"built {db} with `demo --sessions {sessions} --episodes {episodes}` in {time.perf_counter() - t0:.0f} s")


def build_small(root: Path) -> tuple[Path, Path]:
    """The baselines: an empty database, and one holding a single 10-episode session."""
    from hiermem_tui.store import NewEpisode, Store

    empty, tiny = root / "empty.db", root / "tiny.db"
    Store.open(empty).close()
    with Store.open(tiny) as store:
        start = datetime(2026, 1, 1, tzinfo=timezone.utc)
        store.sessions.upsert("tiny", title="Tiny session", source="bench", created_at=start)
        store.episodes.append("tiny", [NewEpisode(str(i), ("user", "assistant")[i % 2], f"message {i} " * 20,
                                                  start + timedelta(minutes=i)) for i in range(10)])
    return empty, tiny


def ratio(a: float, b: float) -> str:
    return f"{a / b:5.2f}x" if b else "  n/a"


def report(big: dict[str, Any], empty: dict[str, Any], tiny: dict[str, Any]) -> None:
    rows = [
        ("first full screen (ms)", "first_screen_ms", empty),
        ("G on the sessions list (ms)", "G_ms", empty),
        ("open largest session (ms)", "open_session_ms", tiny),
        ("end in its transcript (ms)", "end_ms", tiny),
        ("peak RSS after browsing (MB)", "peak_rss_mb", empty),
    ]
    print(f"\n{'TUI (Pilot, ' + str(SIZE[0]) + 'x' + str(SIZE[1]) + ')':<32} {'big':>9} {'baseline':>9} {'ratio':>7}  baseline")
    for label, key, base in rows:
        name = "empty DB" if base is empty else "1 session x 10 episodes"
        print(f"{label:<32} {big[key]:>9.1f} {base[key]:>9.1f} {ratio(big[key], base[key]):>7}  {name}")
    print(f"(rows on screen list: {big['rows']:,}; G landed on row {big['G_row']:,}; largest session "
          f"{big['largest_session_episodes']:,} episodes, end put the cursor on #{big['end_cursor']}; "
          f"RSS after imports, before the app: {big['rss_after_imports_mb']:.0f} MB)")
    verdict = "OK" if big["peak_rss_mb"] < TARGET_MB else "MISSED"
    print(f"peak RSS target < {TARGET_MB:.0f} MB: {big['peak_rss_mb']:.0f} MB -> {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="the big database (built here if missing)")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--episodes", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", choices=("tui", "list"), help=argparse.SUPPRESS)
    ap.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.db, args.config)
        return
    build_big(args.db, args.sessions, args.episodes, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = root / "config.toml"  # never written unless a setting changes
        empty, tiny = build_small(root)
        big_ms, listed = sessions_json_process_ms(args.db)
        empty_ms, _ = sessions_json_process_ms(empty)
        big_in, empty_in = run_child("list", args.db, config), run_child("list", empty, config)
        print(f"\nsessions --json ({listed:,} sessions)  big      empty   ratio")
        print(f"  as a process, best of 3 (ms)   {big_ms:7.0f}  {empty_ms:7.0f}  {ratio(big_ms, empty_ms)}")
        print(f"  in process, best of 3 (ms)     {big_in['sessions_json_inproc_ms']:7.0f}  "
              f"{empty_in['sessions_json_inproc_ms']:7.0f}  "
              f"{ratio(big_in['sessions_json_inproc_ms'], empty_in['sessions_json_inproc_ms'])}")
        print(f"  peak RSS of that process (MB)  {big_in['sessions_json_peak_rss_mb']:7.0f}  "
              f"{empty_in['sessions_json_peak_rss_mb']:7.0f}  "
              f"{ratio(big_in['sessions_json_peak_rss_mb'], empty_in['sessions_json_peak_rss_mb'])}")
        empty_tui = run_child("tui", empty, config)
        tiny_tui = run_child("tui", tiny, config)
        big_tui = run_child("tui", args.db, config)
        report(big_tui, empty_tui, tiny_tui)
        moved = big_tui.get("G_in_transcript_moves")
        print(f"note: in the transcript, G {'moves to the end' if moved else 'is not bound (only end is)'}")


if __name__ == "__main__":
    main()
