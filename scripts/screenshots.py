"""Export the README screenshots (SVG) from the app itself, on a fresh copy of the demo data.

    .venv/bin/python scripts/screenshots.py [--out assets]

Deterministic where it matters: a fixed clock for relative dates, no Ollama probe, UTC.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from hiermem_tui.config import Settings
from hiermem_tui.demo_db import cleanup_demo_copy, fresh_demo_copy
from hiermem_tui.store import Store
from hiermem_tui.tui.app import make_app

SIZE = (150, 42)
CLOCK = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


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


if __name__ == "__main__":
    main()
