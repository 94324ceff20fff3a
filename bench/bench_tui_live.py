"""What it costs the open session screen when one new summary lands: in place vs a rebuild.

Builds the session of bench_tui_session.py (20k episodes, ~6.6k active summaries), opens it
with the first root's path opened three levels down, then, many times over: another
connection appends four episodes and a leaf over the four that left the fresh tail (what a
watcher or a run writes), and the screen catches up — alternately in place
(``refresh_live``: the tree diffs its roots) and by a full ``reload`` (every root rebuilt,
open nodes re-opened). Each figure is the synchronous update plus the repaint it causes.

    .venv/bin/python bench/bench_tui_live.py [--episodes 20000] [--repeat 15]

Target: the in-place update well under the rebuild (ratio ≤ 0.5).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bench_tui_session import T0, _summary, build

from hiermem_tui.config import Settings
from hiermem_tui.store import NewEpisode, Store, SummaryWrite
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.screens.session_live import live_update
from hiermem_tui.tui.screens.session import SessionScreen


def land_one(writer: Store, k: int) -> None:
    """Four new episodes, and a leaf over the four that just left the fresh tail (16)."""
    session = writer.sessions.get("big")
    assert session is not None
    n = session.episodes
    writer.episodes.append("big", [
        NewEpisode(f"new-{n + i}", ("user", "assistant")[i % 2], f"late episode {n + i}: more words about it",
                   T0 + timedelta(seconds=20 * (n + i))) for i in range(4)
    ])
    first = n + 4 - 16 - 4
    writer.dag.write([SummaryWrite(_summary("big", f"s_live_{k}", 0, "normal"),
                                         episode_range=(first, first + 3))])


async def measure(store: Store, writer: Store, settings: Settings, repeat: int) -> None:
    app = make_app(settings, store, probe_backend=False)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = SessionScreen("big")
        await app.push_screen(screen)
        await pilot.pause()
        tree = screen.dag_tree
        node = tree.root.children[0]
        for _ in range(3):  # open a path into the DAG, as someone reading it would have
            tree.ensure_loaded(node)
            node.expand()
            if not node.children:
                break
            node = node.children[0]
        tree.focus_node(node)
        await pilot.pause()

        sync: dict[str, list[float]] = {"live": [], "full": []}

        async def timed(update: Callable[[], object], label: str) -> float:
            t0 = time.perf_counter()
            update()
            sync[label].append((time.perf_counter() - t0) * 1000)
            painted = asyncio.Event()
            screen.call_after_refresh(painted.set)
            await painted.wait()
            return (time.perf_counter() - t0) * 1000

        live: list[float] = []
        full: list[float] = []
        tree_live: list[float] = []
        tree_full: list[float] = []
        for k in range(repeat):
            for label, update, out in (("live", screen.follow_store, live), ("full", screen.reload, full)):
                land_one(writer, 2 * k + (label == "full"))
                await pilot.pause()
                out.append(await timed(update, label))
            land_one(writer, 10_000 + k)
            t0 = time.perf_counter()
            caught = live_update(store, screen.live, tree.roots, tree.fresh_tail)  # what the in-place path reads …
            assert caught is not None
            tree.update_roots(caught.roots)  # … and how the tree follows it
            tree_live.append((time.perf_counter() - t0) * 1000)
            expanded, _ = tree.state()
            t0 = time.perf_counter()
            tree.load_roots()
            tree.restore(expanded)
            tree_full.append((time.perf_counter() - t0) * 1000)
            screen.reload()
            await pilot.pause()
        summaries = store.sessions.get("big").summaries  # type: ignore[union-attr]
        print(f"session: {summaries:,} active summaries, {len(tree.roots)} roots, "
              f"{sum(1 for _ in tree._by_key)} tree nodes loaded")
        m_live, m_full = statistics.median(live), statistics.median(full)
        print(f"screen, one new summary, in place (follow_store): {m_live:7.1f} ms  (median of {repeat}, with repaint)")
        print(f"screen, one new summary, full reload():           {m_full:7.1f} ms")
        print(f"ratio in place / rebuild: {m_live / m_full:.2f}  (target ≤ 0.5)")
        s_live, s_full = statistics.median(sync["live"]), statistics.median(sync["full"])
        print(f"the update alone, before the repaint: {s_live:.1f} ms vs {s_full:.1f} ms ({s_live / s_full:.2f}×)")
        t_live, t_full = statistics.median(tree_live), statistics.median(tree_full)
        print(f"tree alone, no repaint: catch up + update_roots {t_live:.2f} ms vs load_roots + restore "
              f"{t_full:.2f} ms ({t_live / t_full:.2f}×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        settings = Settings(db_path=path, config_path=Path(tmp) / "config.toml")
        store = Store.open(path)
        t0 = time.perf_counter()
        made = build(store, args.episodes)
        print(f"built {args.episodes:,} episodes and {made:,} summaries in {time.perf_counter() - t0:.1f} s")
        writer = Store.open(path, tokenizer=store.tokenizer)  # another connection, as a watcher has
        asyncio.run(measure(store, writer, settings, args.repeat))
        writer.close()
        store.close()


if __name__ == "__main__":
    main()
