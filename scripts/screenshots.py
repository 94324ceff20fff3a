"""Export the README screenshots (SVG) from the app itself, on a fresh copy of the demo data.

    .venv/bin/python scripts/screenshots.py [--out assets]

Deterministic where it matters: a fixed clock for relative dates, no Ollama probe, UTC. The run in
progress is a re-summarise against the tests' fake Ollama server (``tests/fakeollama.py``, loopback),
answering the leaf with the title the demo's recording holds and holding the next call open, so the
picture is a run part way through, its spinner and tokens/s pinned.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from textual.pilot import Pilot

from hiermem_tui.config import Settings
from hiermem_tui.demo_db import cleanup_demo_copy, fresh_demo_copy
from hiermem_tui.store import Store
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.widgets.run_indicator import RunIndicator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: the tests' fake Ollama server
from tests.fakeollama import FakeOllama, Hang, Reply

SIZE = (150, 42)
CLOCK = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
MODEL = "qwen2.5-coder:1.5b-instruct-q4_K_M"
LEAF_TITLE = "Rust Timestamp Parsing and Filtering"
"""The recorded model's title of the leaf the run re-makes (``assets/demo/model_answers.json``)."""


async def until(pilot: Pilot[None], holds: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Let the app run until ``holds()`` (workers, timers, repaints), or stop after ``timeout`` s saying ``what``
    it waited for."""
    deadline = time.monotonic() + timeout
    while not holds():
        if time.monotonic() > deadline:
            raise SystemExit(f"screenshots: waited {timeout:.0f} s for {what}")
        await pilot.pause(0.05)


async def shoot(db: Path, out: Path) -> list[Path]:
    settings = Settings(db_path=db, config_path=out / ".screenshot-config.toml", backend="extractive")
    store = Store.open(db)
    app = make_app(settings, store, probe_backend=False, clock=lambda: CLOCK)
    saved: list[Path] = []

    def save(name: str) -> None:
        saved.append(Path(app.save_screenshot(f"{name}.svg", str(out))))

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        save("sessions")
        app.open_session("demo-logslice")
        await pilot.pause(0.3)
        screen = app.screen
        tree = screen.dag_tree  # type: ignore[attr-defined]
        tree.focus()
        await pilot.press("enter")  # expand the top summary
        await pilot.pause()
        for key in ("down", "enter", "down", "down"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)
        save("session-dag")
        await pilot.press("t")
        await pilot.pause(0.3)
        save("session-transcript")
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        save("help")
        await pilot.press("escape")
        await pilot.pause()
        # the model's summary of the leaf in view beside the extractive one it replaced (what a re-summarise shows)
        leaf = next(s for s in store.dag.summaries("demo-logslice") if s.depth == 0 and s.first_seq == 15)
        old = next(v for v in store.dag.versions_with_replaced(leaf.id) if v.id != leaf.id)
        app.nav.compare(old, leaf, leaf.run_id or "", on_close=lambda: None)
        await pilot.pause(0.3)
        save("compare")
    store.close()
    (out / ".screenshot-config.toml").unlink(missing_ok=True)
    return saved


async def shoot_run(db: Path, out: Path) -> Path:
    """A re-summarise of one leaf and the two summaries above it, held on its second model call."""
    with FakeOllama(models=(MODEL,), loaded=(MODEL,)) as server:
        server.script(Reply(LEAF_TITLE, prompt_eval_count=716, eval_count=5), Hang())
        settings = Settings(db_path=db, config_path=out / ".screenshot-config.toml", backend="ollama",
                            ollama_host=server.url, model=MODEL)
        store = Store.open(db)
        # the dialog's own measuring calls would take the scripted answers: the picture is of the run
        app = make_app(settings, store, clock=lambda: CLOCK, follow=False, measure_speed=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.open_session("demo-logslice")
            await pilot.pause(0.3)
            await until(pilot, lambda: hasattr(app.screen, "dag_tree"), "the session screen")
            tree = app.screen.dag_tree  # type: ignore[attr-defined]
            await until(pilot, lambda: tree.root.children, "the tree")
            leaf = next(s for s in store.dag.summaries("demo-logslice") if s.depth == 0 and s.first_seq == 15)
            tree.focus()
            tree.reveal_summary(leaf.id)
            await until(pilot, lambda: tree.cursor_ref is not None and tree.cursor_ref.summary is not None
                        and tree.cursor_ref.summary.id == leaf.id, "the cursor on the leaf")
            await pilot.press("R")
            await until(pilot, lambda: getattr(app.screen, "counts", None) is not None
                        and not getattr(app.screen, "probing", True), "the run dialog")
            await pilot.press("enter")
            await until(pilot, lambda: app.run_state is not None and app.run_state.what.startswith("re-condense")
                        and server.pending == 0 and len(server.chat_requests) == 2, "the run held on its second call")
            app.screen.query_one(RunIndicator).freeze(frame=0, tokens_per_s=9.0)
            app.clear_notifications()
            await pilot.pause(0.5)
            path = Path(app.save_screenshot("run-in-progress.svg", str(out)))
            server.release()
        store.close()
    (out / ".screenshot-config.toml").unlink(missing_ok=True)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("assets"))
    args = ap.parse_args()
    os.environ["TZ"] = "UTC"
    time.tzset()
    args.out.mkdir(parents=True, exist_ok=True)
    db = fresh_demo_copy()
    try:
        for path in asyncio.run(shoot(db, args.out)):
            print(path)
    finally:
        cleanup_demo_copy(db)
    db = fresh_demo_copy()
    try:
        print(asyncio.run(shoot_run(db, args.out)))
    finally:
        cleanup_demo_copy(db)


if __name__ == "__main__":
    main()
