"""How fast the session screen opens on a big DAG, compared with an empty session.

Builds (in a temp dir) a session of 20k episodes with ~6.6k active summaries — leaves over
4 episodes each, then condensed levels of fanout 4 — plus an empty session and a session
with 20k raw episodes, then times, in one app run, push → mounted → first paint of the
session screen for each (median of several opens), and a few interactions on the big one.

    .venv/bin/python bench/bench_tui_session.py [--episodes 20000] [--repeat 5]

Target: the big session's first paint within 2× of the empty one's, and under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from collections.abc import Callable
from pathlib import Path

from textual.widgets import TabbedContent

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.screens.session import SessionScreen

T0 = datetime(2026, 7, 3, 10, 0, tzinfo=timezone.utc)


def _summary(session_id: str, sid: str, depth: int, tier: str) -> NewSummary:
    return NewSummary(id=sid, session_id=session_id, depth=depth, tier=tier, backend="extractive", model=None,
                      prompt_version="bench", content=f"summary {sid} " * 20, tokens=60)


def build(store: Store, episodes: int) -> int:
    """The three sessions; returns how many summaries the big one got."""
    for sid, title in (("big", "Big session"), ("raw", "Raw session"), ("empty", "Empty session")):
        store.sessions.upsert(sid, title=title, source="bench", created_at=T0)
    for sid in ("big", "raw"):
        store.episodes.append(sid, [
            NewEpisode(str(i), ("user", "assistant")[i % 2], f"episode {i}: some words about the work " * 3,
                       T0 + timedelta(seconds=20 * i))
            for i in range(episodes)
        ])
    leaves = (episodes - 16) // 4
    level = [f"s_0_{k}" for k in range(leaves)]
    for start in range(0, leaves, 500):
        store.dag.write([
            SummaryWrite(_summary("big", level[k], 0, "fallback" if k % 997 == 0 else "normal"),
                         episode_range=(4 * k, 4 * k + 3))
            for k in range(start, min(start + 500, leaves))
        ])
    made, depth = leaves, 0
    while len(level) >= 4:
        depth += 1
        groups = [level[i:i + 4] for i in range(0, len(level) - len(level) % 4, 4)]
        upper = [f"s_{depth}_{k}" for k in range(len(groups))]
        for start in range(0, len(groups), 250):
            store.dag.write([
                SummaryWrite(_summary("big", upper[k], depth, "normal"), source_ids=groups[k])
                for k in range(start, min(start + 250, len(groups)))
            ])
        made += len(groups)
        level = upper
    return made


async def measure(store: Store, settings: Settings, repeat: int) -> None:
    app = make_app(settings, store, probe_backend=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()

        async def open_once(sid: str) -> tuple[float, float]:
            t0 = time.perf_counter()
            screen = SessionScreen(sid)
            await app.push_screen(screen)
            mounted = time.perf_counter()
            painted = asyncio.Event()
            screen.call_after_refresh(painted.set)
            await painted.wait()
            done = time.perf_counter()
            await pilot.pause()
            app.pop_screen()
            await pilot.pause()
            return (mounted - t0) * 1000, (done - t0) * 1000

        results: dict[str, list[tuple[float, float]]] = {"empty": [], "raw": [], "big": []}
        await open_once("big")  # warm imports and caches once, for every session alike
        for _ in range(repeat):
            for sid in results:
                results[sid].append(await open_once(sid))
        print(f"{'session':<8} {'mounted ms':>11} {'first paint ms':>15} {'(min)':>7}   median of {repeat}, "
              "interleaved")
        medians = {}
        for sid, rows in results.items():
            medians[sid] = statistics.median(r[1] for r in rows)
            print(f"{sid:<8} {statistics.median(r[0] for r in rows):>11.1f} {medians[sid]:>15.1f} "
                  f"{min(r[1] for r in rows):>7.1f}")
        print(f"ratio big/empty first paint: {medians['big'] / medians['empty']:.2f}×  (target ≤ 2×, and < 1000 ms)")

        screen = SessionScreen("big")
        await app.push_screen(screen)
        await pilot.pause()

        async def timed(label: str, action: Callable[[], object], times: int = 5) -> None:
            """Synchronous work plus the repaint it causes, median of ``times`` runs (pilot key
            presses would add ~100 ms of waiting each, so actions are called directly)."""
            runs = []
            for _ in range(times):
                await pilot.pause()
                t0 = time.perf_counter()
                action()
                painted = asyncio.Event()
                screen.call_after_refresh(painted.set)
                await painted.wait()
                runs.append((time.perf_counter() - t0) * 1000)
            print(f"{label:<44} {statistics.median(runs):8.1f} ms  (median of {times})")

        await timed("reload()", screen.reload)
        await timed("f (next fallback: reveals a deep leaf)", lambda: screen.dag_tree.action_fallback(1))
        await timed("expand / collapse the node under the cursor", lambda: screen.dag_tree.action_toggle_node())
        await timed("t (toggle detail / transcript)", screen.action_toggle_view)
        if screen.query_one(TabbedContent).active != "tab-transcript":
            screen.action_toggle_view()
        await pilot.pause()
        transcript = screen.transcript
        await timed("transcript: end (jump to the last episode)", lambda: transcript.action_edge(1), times=1)
        await pilot.pause()
        t0 = time.perf_counter()
        pages = 0
        while transcript.window is not None and transcript.window[0] > args_pages_floor(transcript):
            transcript.action_page(-1)
            pages += 1
        painted = asyncio.Event()
        screen.call_after_refresh(painted.set)
        await painted.wait()
        elapsed = (time.perf_counter() - t0) * 1000
        print(f"{'transcript: page up until 1,000 episodes back':<44} {elapsed:8.1f} ms  ({pages} pages, "
              f"{elapsed / max(pages, 1):.1f} ms/page; window {transcript.window}, {transcript.loaded} loaded)")


def args_pages_floor(transcript: object) -> int:
    """Stop paging once the window starts 1,000 episodes before the end."""
    return max(getattr(transcript, "total", 0) - 1000, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--db", type=Path, help="keep the built database here (reused if it exists)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        settings = Settings(db_path=path, config_path=Path(tmp) / "config.toml")
        fresh = not path.exists()
        store = Store.open(path)
        if fresh:
            t0 = time.perf_counter()
            made = build(store, args.episodes)
            print(f"built {args.episodes:,} episodes and {made:,} summaries in {time.perf_counter() - t0:.1f} s")
        else:
            print(f"reusing {path}")
        asyncio.run(measure(store, settings, args.repeat))
        store.close()


if __name__ == "__main__":
    main()
