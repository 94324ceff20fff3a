"""Sources that keep no times (ShareGPT, oterm, some JSONL): the times the store filled in are shown
as unknown, never as "Jan 1 2000", and such sessions are listed after the dated ones, by when they
were imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from hiermem_tui.config import Settings
from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.tui.conftest import app_for, screen_shown, screen_text, wait_for, wait_for_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = pytest.mark.usefixtures("utc_tz")


def test_filled_in_times_format_as_unknown() -> None:
    assert fmt.timestamp("2000-01-01T00:00:07.000Z") == "—"
    assert fmt.time_range("2000-01-01T00:00:00.000Z", "2000-01-01T00:03:00.000Z") == "no times"
    assert fmt.timestamp("2024-03-01T09:00:05.000Z", ref_year=2024) == "Mar 1 09:00"  # real times unchanged


def test_untimed_sessions_are_listed_after_the_dated_ones_by_import(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "h.db")
    try:
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])
        import_paths(store, [FIXTURES / "jsonl" / "two_sessions.jsonl"])
        import_paths(store, [FIXTURES / "oterm" / "machine-a.db"])
        rows = store.sessions.page()
        untimed = [s for s in rows if not s.times_known]
        assert {s.source for s in untimed} == {"sharegpt", "oterm"} and {s.source for s in rows} - {
            s.source for s in untimed} == {"jsonl"}
        assert all(s.created_at.startswith("2000-01-01") and not s.updated_at.startswith("2000") for s in untimed)
        for sort in ("updated", "created"):
            for descending in (True, False):
                listed = store.sessions.page(sort=sort, descending=descending)
                dated = [s for s in listed if s.times_known]
                key = "updated_at" if sort == "updated" else "created_at"
                # the dated chats by their real times, then the rest by when they were imported, either way
                assert listed == dated + sorted(untimed, key=lambda s: (s.updated_at, s.id), reverse=descending)
                assert dated == sorted(dated, key=lambda s: (getattr(s, key), s.id), reverse=descending)
                for at, s in enumerate(listed):  # the list keeps its cursor on a session in the same order
                    assert store.sessions.position(s.id, sort=sort, descending=descending) == at
                for size in (1, 2, 3):  # paged, across where the dated chats end, and filtered
                    pages = [store.sessions.page(sort=sort, descending=descending, limit=size, offset=at)
                             for at in range(0, len(listed) + size, size)]
                    assert [s for page in pages for s in page] == listed
                    filtered = store.sessions.page(sort=sort, descending=descending, text="e")
                    assert filtered == [s for s in listed if "e" in (s.title + s.id + s.source).lower()]
                    assert store.sessions.page(sort=sort, descending=descending, text="e", limit=size,
                                               offset=1) == filtered[1:1 + size]
                    for at, s in enumerate(filtered):
                        assert store.sessions.position(s.id, sort=sort, descending=descending, text="e") == at
        assert all(s.as_json()["times_known"] == s.times_known for s in rows)
        before = [(s.id, s.updated_at) for s in store.sessions.page()]
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])  # again: nothing moves
        assert [(s.id, s.updated_at) for s in store.sessions.page()] == before
    finally:
        store.close()


async def test_the_list_and_the_time_axis_say_the_times_are_unknown(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "h.db")
    try:
        import_paths(store, [FIXTURES / "jsonl" / "two_sessions.jsonl"])
        import_paths(store, [FIXTURES / "sharegpt" / "dataset.json"])
        untimed = next(s for s in store.sessions.page() if not s.times_known)
        app = app_for(Settings(db_path=store.path, config_path=tmp_path / "config.toml"), store)
        async with app.run_test(size=(140, 36)) as pilot:
            table = (await screen_shown(pilot, SessionsScreen)).table
            await wait_for(pilot, lambda: table.row_count == store.sessions.count())
            await wait_for_text(pilot, "sharegpt")
            assert table.current is not None and table.current.times_known  # the newest dated chat first
            await pilot.press("G")  # the last row: a chat without times comes after every dated one
            await wait_for(pilot, lambda: table.current is not None and not table.current.times_known)
            text = await wait_for_text(pilot, "sharegpt", "Planning the vegetable beds", "no times (imported ", "listed after the dated chats)")
            assert "2000" not in text and "Jan 1" not in text
            rows = [line for line in text.splitlines() if "  sharegpt  " in line]  # the table's rows
            assert rows and all("—" in line and "ago" not in line for line in rows), rows
            app.open_session(untimed.id)
            screen = await screen_shown(pilot, SessionScreen)
            await wait_for(pilot, lambda: screen.session is not None)
            await pilot.press("s")
            await wait_for(pilot, lambda: any("time axis cannot apply" in n.message for n in app._notifications),
                           show=lambda: [n.message for n in app._notifications])
            assert screen.map.scale == "episodes"
            assert "Jan 1" not in screen_text(app)
    finally:
        store.close()
