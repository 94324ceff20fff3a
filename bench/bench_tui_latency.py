"""Key press → repaint latency on the session screen, with a compaction run going and without.

Builds (in a temp dir) a session with a few hundred active leaves and a long unsummarised
stretch, starts the fake Ollama server (tests/fakeollama.py) answering every summary after
a delay, and in one app run presses keys that change the screen — move in the tree
(``down`` / ``up``), toggle detail / transcript (``t``) — first with no run (baseline), then
while a leaf pass writes summaries: keys 30 ms apart (the tree reload waits for a pause in
the keys; header and map update at once), then keys 0.5 s apart (reloads of the tree now
run between presses, and a press can land during one: the worst case).

The fake server runs in its own process, as Ollama does: in-process, its Python would
compete with the UI for the GIL and overstate the cost of a run.

Latency of one press = from sending the key event to the end of the first screen update
produced after the key took effect (the tree cursor moved / the tab switched). The update
is also turned into terminal output (``render_segments``), the work a real terminal would
get, so only the final ``write`` is left out. Nothing is mocked; Textual's ``_display`` is
wrapped to take the time.

    .venv/bin/python bench/bench_tui_latency.py [--presses 100] [--latency 0.12]

Target: median and p95 under 100 ms while the run goes (keys 30 ms apart).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

from textual import events
from textual.widgets import TabbedContent

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite
from hiermem_tui.tui.app import HiermemApp, make_app
from hiermem_tui.tui.screens.session import SessionScreen
ROOT = Path(__file__).resolve().parent.parent
SERVER = """
import sys
sys.path.insert(0, {root!r})
from tests.fakeollama import FakeOllama, Reply
with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",)) as fake:
    fake.script(*[Reply("The user and the assistant worked through the task; the assistant proposed a fix "
                        "and listed the files it changed.", latency_s={latency}) for _ in range(5000)])
    print(fake.url, flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
"""

T0 = datetime(2026, 7, 3, 10, 0, tzinfo=timezone.utc)
POLICY = Policy(fresh_tail=16, leaf_chunk_tokens=400, leaf_min_episodes=2, leaf_target_tokens=200,
                condense_fanout=4, condensed_target_tokens=400)
KEYS = ("down", "down", "down", "up", "up", "t", "down", "up", "t", "up")


def build(store: Store, episodes: int, leaves: int) -> None:
    """One session: ``leaves`` active leaves of 4 episodes, then raw episodes up to ``episodes``."""
    store.sessions.upsert("bench", title="Latency bench", source="bench", created_at=T0)
    store.episodes.append("bench", [
        NewEpisode(str(i), ("user", "assistant")[i % 2], f"episode {i}: some words about the work at hand " * 3,
                   T0 + timedelta(seconds=20 * i))
        for i in range(episodes)
    ])
    store.dag.write([
        SummaryWrite(NewSummary(id=f"s_leaf_{k}", session_id="bench", depth=0, tier="normal", backend="extractive",
                                model=None, prompt_version="bench", content=f"leaf {k} " * 30, tokens=60),
                     episode_range=(4 * k, 4 * k + 3))
        for k in range(leaves)
    ])


class Probe:
    """Times the first screen update after a state change."""

    def __init__(self, app: HiermemApp) -> None:
        self.app = app
        self.changed_at: float | None = None
        self.shown = asyncio.Event()
        self.shown_at = 0.0
        self.updates = 0
        original = app._display

        def display(screen: object, renderable: object) -> None:
            original(screen, renderable)  # type: ignore[arg-type]
            if renderable is None:
                return
            render = getattr(renderable, "render_segments", None)
            if render is not None:
                render(app.console)  # what a real terminal driver would be sent
            self.updates += 1
            if self.changed_at is not None and not self.shown.is_set():
                self.shown_at = time.perf_counter()
                self.shown.set()

        app._display = display  # type: ignore[method-assign]

    def changed(self, _value: object = None) -> None:
        if self.changed_at is None:
            self.changed_at = time.perf_counter()

    async def press(self, key: str) -> float:
        """Send ``key``; milliseconds until the screen showed its effect."""
        self.changed_at = None
        self.shown.clear()
        driver = self.app._driver
        assert driver is not None
        started = time.perf_counter()
        driver.send_message(events.Key(key, key if len(key) == 1 else None))
        await asyncio.wait_for(self.shown.wait(), timeout=5)
        return (self.shown_at - started) * 1000


def summary(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{label:<22} median {statistics.median(values):6.1f} ms   p95 {p95:6.1f} ms   "
            f"max {max(values):6.1f} ms   (n={len(values)})")


async def measure(store: Store, settings: Settings, presses: int) -> None:
    app = make_app(settings, store, probe_backend=False)
    async with app.run_test(size=(140, 40)) as pilot:
        app.open_session("bench")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        probe = Probe(app)
        app.watch(screen.dag_tree, "cursor_line", probe.changed, init=False)
        app.watch(screen.query_one(TabbedContent), "active", probe.changed, init=False)

        by_key: dict[str, dict[str, list[float]]] = {}

        async def series(label: str, keep_going: Callable[[], bool], gap: float = 0.03, count: int = presses
                         ) -> list[float]:
            out: list[float] = []
            for i in range(count):
                if not keep_going():
                    print(f"  ({label}: the run ended after {i} presses)")
                    break
                key = KEYS[i % len(KEYS)]
                out.append(await probe.press(key))
                by_key.setdefault(label, {}).setdefault(key, []).append(out[-1])
                await asyncio.sleep(gap)  # 30 ms: a fast typist, not a key-repeat flood
            return out

        await series("warm-up", lambda: True)
        baseline = await series("baseline", lambda: True)
        before = len(store.dag.summaries("bench"))
        app.runs.start("leaf", "bench", backend="ollama", model="llama3.2")
        while app.run_state is None or app.run_state.done < 2:
            await asyncio.sleep(0.05)
        updates = probe.updates
        t0 = time.perf_counter()
        during = await series("during run", lambda: app.run_state is not None)
        elapsed = time.perf_counter() - t0
        rate = (probe.updates - updates) / elapsed
        written = len(store.dag.summaries("bench")) - before
        # Keys 0.5 s apart: the tree reloads (deferred while keys come fast) now run between
        # presses, and a press can land while one is under way.
        paused = await series("paused keys", lambda: app.run_state is not None, gap=0.5, count=max(10, presses // 3))
        state = app.run_state
        print(summary("no run (baseline)", baseline))
        print(summary("while a run goes", during))
        print(summary("  keys 0.5 s apart", paused))
        for label in ("baseline", "during run", "paused keys"):
            print(f"  {label:<11} median by key: " + ", ".join(
                f"{k} {statistics.median(v):.0f} ms" for k, v in sorted(by_key.get(label, {}).items())))
        print(f"during the fast presses: {written} summaries written so far, "
              f"{rate:.0f} screen updates/s; at the end the run was "
              f"{'still going' if state is not None else 'ended'} ({state.done if state else '-'} done)")
        app.runs.cancel()
        while app.run_state is not None:
            await asyncio.sleep(0.05)
        p95 = sorted(during)[round(0.95 * (len(during) - 1))] if during else 0.0
        target = "OK" if during and statistics.median(during) < 100 and p95 < 100 else "over target"
        print(f"target: median and p95 < 100 ms while a run goes → {target}")


@contextmanager
def fake_server(latency: float) -> Iterator[str]:
    """tests/fakeollama.py in a child process; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT), latency=latency)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.12, help="seconds the fake model takes per summary")
    parser.add_argument("--episodes", type=int, default=4000)
    parser.add_argument("--leaves", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, fake_server(args.latency) as url:
        path = Path(tmp) / "bench.db"
        settings = Settings(db_path=path, config_path=Path(tmp) / "config.toml", ollama_host=url, policy=POLICY)
        store = Store.open(path)
        t0 = time.perf_counter()
        build(store, args.episodes, args.leaves)
        print(f"built {args.episodes:,} episodes, {args.leaves} leaves in {time.perf_counter() - t0:.1f} s; "
              f"fake model answers after {args.latency * 1000:.0f} ms")
        asyncio.run(measure(store, settings, args.presses))
        store.close()


if __name__ == "__main__":
    main()
