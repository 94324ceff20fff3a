"""The doctor on the stats screen: ``d`` checks the file in a worker with progress, the result is kept
in the file and shown next time; problems are listed literally."""

from __future__ import annotations

import threading

import pytest

from hiermem_tui.store import Store
from hiermem_tui.store.health import Progress
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.palette import collect_commands
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.screens.stats import StatsScreen
from tests.tui._session_fixtures import app_for
from tests.tui.conftest import screen_shown, screen_text, wait_for, wait_for_footer, wait_for_text
from tests.tui.test_find_screens import env  # noqa: F401 (a fixture: the "dag" session and a raw one)

SIZE = (120, 50)
pytestmark = pytest.mark.usefixtures("utc_tz")


async def open_stats(pilot, app: HiermemApp) -> StatsScreen:  # type: ignore[no-untyped-def]
    """From the sessions list, ``i``: the stats of the whole file."""
    await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
    await pilot.press("i")
    return await screen_shown(pilot, StatsScreen)


def gated(store: Store) -> threading.Event:
    """Hold the doctor at its sessions phase until the returned event is set (so a test sees its progress)."""
    gate = threading.Event()
    real = store.health.check

    def check(*, on_progress: Progress | None = None, **kw: object) -> object:
        def progress(phase: str, done: int, total: int) -> None:
            assert on_progress is not None
            on_progress(phase, done, total)
            if phase == "sessions":
                assert gate.wait(30)

        return real(on_progress=progress, **kw)  # type: ignore[arg-type]

    store.health.check = check  # type: ignore[method-assign]
    return gate


async def test_d_checks_the_file_with_progress_and_keeps_the_result(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    gate = gated(store)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stats(pilot, app)
        await wait_for_text(pilot, "Not checked yet")
        assert "d Doctor" in await wait_for_footer(pilot, "d Doctor")
        await pilot.press("d")
        await wait_for_text(pilot, "checking sessions", "of 2")  # the worker's progress, drawn
        await pilot.press("d")  # a second press while it runs starts nothing
        await wait_for(pilot, lambda: any("already" in n.message for n in app._notifications))
        gate.set()
        await wait_for_text(pilot, "✓ healthy · checked")
        assert screen.doctor is not None and screen.doctor.ok
        last = store.health.last()
        assert last is not None and last.ok  # kept in the file
        await pilot.press("escape")
        await open_stats(pilot, app)
        await wait_for_text(pilot, "✓ healthy · checked")  # shown again, read from the file


async def test_problems_are_listed_with_their_session_and_ids(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    leaf = store.db.conn.execute(
        "SELECT id FROM summaries WHERE session_id = 'dag' AND depth = 0 AND status = 'active' ORDER BY first_seq"
    ).fetchone()[0]
    store.db.conn.execute("UPDATE summaries SET start_at = '[bold]1999[/bold]' WHERE id = ?", (leaf,))
    store.db.conn.execute("UPDATE sessions SET token_count = token_count + 1 WHERE id = 'raw'")
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await open_stats(pilot, app)
        await pilot.press("d")
        text = await wait_for_text(pilot, "▲ 3 problems (3 fixable)")  # the leaf's time range, and its parent's
        assert "aggregates ×1" in text and "time_range ×2" in text
        assert "session raw" in text and f"session dag  {leaf}: leaf #0–5: time range [bold]1999[/bold]" in text
        assert "hiermem-tui doctor --fix repairs the fixable ones" in text
        await wait_for(pilot, lambda: any("3 problems found" in n.message for n in app._notifications))
    last = store.health.last()
    assert last is not None and (last.problems, last.fixable) == (3, 3)


async def test_leaving_the_screen_stops_the_check(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    gate = gated(store)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_stats(pilot, app)
        await pilot.press("d")
        await wait_for_text(pilot, "checking sessions")
        workers = [w for w in screen.workers if w.group == "doctor"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        gate.set()
        await wait_for(pilot, lambda: all(w.is_finished for w in workers))
        assert "checking" not in screen_text(app)
    assert store.health.last() is None  # stopped, nothing kept


async def test_the_palette_offers_the_doctor(env) -> None:  # type: ignore[no-untyped-def]
    settings, store = env
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        [command] = [c for c in collect_commands(app.screen, app) if c.title == "Doctor: check the whole file"]
        command.callback()
        await screen_shown(pilot, StatsScreen)
        await wait_for_text(pilot, "✓ healthy")
        titles = {c.title for c in collect_commands(app.screen, app)}
        assert "Doctor: check the whole file" in titles


def test_help_lists_the_doctor_key() -> None:
    from hiermem_tui.tui.screens.help import help_markdown

    text = help_markdown()
    assert "doctor" in text.lower() and "`d`" in text


def test_the_new_keys_can_be_moved_in_the_keymap() -> None:
    from hiermem_tui.tui.keymap import known_ids

    ids = {i for i, _keys, _what in known_ids()}
    assert {"stats.doctor", "run_dialog.toggle_backup", "backup.stop"} <= ids
