"""The app shell and the sessions screen, driven through Pilot like a user would."""

from __future__ import annotations

import importlib.util
import re
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from hiermem_tui.backend_status import BackendStatus, probe_backend
from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp, make_app
from hiermem_tui.tui.screens.sessions import SessionsScreen
from hiermem_tui.tui.widgets.backend_status import BackendIndicator
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.widgets.session_columns import fmt_when
from hiermem_tui.tui.widgets.sessions_table import SessionsTable
from tests.fakeollama import FakeOllama, closed_port_url
from tests.tui.conftest import (
    DEADLINE,
    NOW,
    SessionSpec,
    add_session,
    app_for,
    bulk_sessions,
    screen_shown,
    screen_text,
    wait_for,
    wait_for_footer,
    wait_for_text,
)

SIZE = (120, 36)


def table_titles(table: SessionsTable) -> list[str]:
    return [s.title for s in (table.session_at(i) for i in range(table.row_count)) if s]


def row_line(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


async def table_shown(pilot: Pilot[HiermemApp], rows: int) -> SessionsTable:
    """Wait for the sessions screen, its table with ``rows`` rows and the header counting them."""
    table = (await screen_shown(pilot, SessionsScreen)).table
    await wait_for(pilot, lambda: table.row_count == rows, show=lambda: table.row_count)
    await wait_for_text(pilot, f"Sessions {rows:,}")
    return table


async def test_empty_db_shows_how_to_import(settings: Settings, empty_store: Store) -> None:
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        await wait_for_text(pilot, "No sessions yet", "hiermem-tui import PATH", "hiermem-tui --demo")
        assert not app.screen.query_one("#sessions-body").display
        assert "/ Filter" not in await wait_for_footer(pilot, "q Quit")  # keys that need a list are hidden


async def test_sessions_are_listed_with_their_figures(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await table_shown(pilot, 3)
        text = screen_text(app)
        alpha = standard_store.sessions.get("alpha")
        assert alpha is not None
        line = row_line(text, "Alpha: fix the flaky CI")
        # episodes, tokens (compact), 3 leaves + 1 condensed, depth 1, 24/40 covered, 1 fallback
        expected = ["claude-code", " 40 ", f" {fmt.tokens(alpha.tokens)} ", " 4 ", " 1 ", " 60%", "▲1", "1d ago"]
        for figure in expected:
            assert figure in line, (figure, line)
        assert re.search(r"\b120\b", row_line(text, "Gamma: rust"))
        assert " 83%" in row_line(text, "Gamma: rust")
        assert "k " in row_line(text, "Gamma: rust")  # 12.3k-style token count
        assert "4h ago" in row_line(text, "Beta: plan the garden")
        # newest activity first by default
        assert table_titles(app.screen.query_one(SessionsTable))[0].startswith("Beta")


async def test_fallbacks_are_flagged_in_the_warning_colour(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 3)
        warning = table.get_component_rich_style("sessions-table--warning")
        rows = {table.session_at(i).id: i for i in range(table.row_count)}  # type: ignore[union-attr]
        y_alpha = rows["alpha"] + 1 - round(table.scroll_y)
        flagged = [seg for seg in table.render_line(y_alpha) if "▲1" in seg.text]
        assert flagged and flagged[0].style.color == warning.color and flagged[0].style.bold
        y_gamma = rows["gamma"] + 1 - round(table.scroll_y)
        assert not any(seg.style and seg.style.color == warning.color for seg in table.render_line(y_gamma))


async def test_sort_keys_and_header_click_change_the_order(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 3)
        assert [t[:5] for t in table_titles(table)] == ["Beta:", "Alpha", "Gamma"]
        await pilot.press("s")  # from "last activity" (the last column) round to title, A→Z
        await wait_for(pilot, lambda: table.sort == "title" and not table.descending)
        assert [t[:5] for t in table_titles(table)] == ["Alpha", "Beta:", "Gamma"]
        await pilot.press("S")
        await wait_for(pilot, lambda: table.sort == "title" and table.descending)
        assert [t[:5] for t in table_titles(table)] == ["Gamma", "Beta:", "Alpha"]
        assert "title ▲" not in await wait_for_text(pilot, "sorted by title ▼")
        # click the "Tokens" header: biggest first
        x = 1
        for column, width in table._layout(table.size.width):
            if column.key == "tokens":
                break
            x += width + 2
        await pilot.click(SessionsTable, offset=(x + 2, 1))  # +1 for the border, row 0 is the header
        await wait_for(pilot, lambda: table.sort == "tokens" and table.descending)
        assert [t[:5] for t in table_titles(table)] == ["Gamma", "Alpha", "Beta:"]


async def test_filter_narrows_as_you_type_and_escape_restores(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 3)
        box = app.screen.query_one("#filter", Input)

        async def open_filter() -> None:
            await pilot.press("slash")
            await wait_for(pilot, lambda: box.has_focus)  # what is typed next goes to the filter

        await open_filter()
        await pilot.press("g", "a", "r", "d")
        await wait_for(pilot, lambda: table.row_count == 1)  # the debounced filter ran
        assert table_titles(table) == ["Beta: plan the garden"]
        await wait_for_text(pilot, "Sessions 1 matching “gard”")
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count == 3 and table.filter_text == "" and app.focused is table)
        assert not app.screen.query_one("#filter-bar").display
        # enter applies at once and hands the keys back to the table; no match says so
        await open_filter()
        await pilot.press("z", "z", "z", "enter")
        await wait_for(pilot, lambda: table.row_count == 0 and app.focused is table)
        await wait_for_text(pilot, "No sessions match “zzz”")
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count == 3)


async def test_ten_thousand_sessions_open_and_jump_to_the_end(settings: Settings, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "big.db")
    bulk_sessions(store, 10_000)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 10_000)
        await wait_for_text(pilot, "Bulk session 09999")  # newest first
        await pilot.press("G")
        await wait_for(pilot, lambda: table.cursor_row == 9_999)
        await wait_for_text(pilot, "Bulk session 00000")  # the oldest, last in this order
        assert len(table._pages) <= 24  # only pages near what was shown were fetched
        await pilot.press("g", "j", "j")
        await wait_for(pilot, lambda: table.cursor_row == 2, show=lambda: table.cursor_row)
        await pilot.press("pagedown")
        page = table.size.height - 2  # a page is the visible rows minus one
        await wait_for(pilot, lambda: table.cursor_row == 2 + page, show=lambda: table.cursor_row)
        await pilot.press("k")
        await wait_for(pilot, lambda: table.cursor_row == page + 1, show=lambda: table.cursor_row)
    store.close()


async def test_q_quits(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert app.return_code == 0


async def test_untrusted_title_is_shown_literally_and_cannot_act(settings: Settings, tmp_path: Path) -> None:
    title = "[bold]loud[/bold] [@click=app.quit]click me[/] \x1b[31mred\x1b[0m"
    store = Store.open(tmp_path / "evil.db")
    add_session(store, SessionSpec("evil", title, 3, NOW))
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 1)
        text = await wait_for_text(pilot, "[bold]loud[/bold] [@click=app.quit]click me[/] ␛[31mred␛[0m")
        assert "\x1b" not in text
        line_no = next(i for i, line in enumerate(text.splitlines()) if "click me" in line)
        column = text.splitlines()[line_no].index("click me")
        await pilot.click(offset=(column + 2, line_no))
        # a key the app handles after the click: had the click quit the app, it would be gone by now
        await pilot.press("s")
        await wait_for(pilot, lambda: table.sort == "title")
        assert app.is_running and app.return_code is None
        assert "click me" in screen_text(app)
    store.close()


async def test_enter_opens_the_highlighted_session(settings: Settings, standard_store: Store) -> None:
    app = app_for(settings, standard_store)
    async with app.run_test(size=SIZE) as pilot:
        table = await table_shown(pilot, 3)
        await pilot.press("j", "enter")  # the second row: Alpha
        if importlib.util.find_spec("hiermem_tui.tui.screens.session") is None:
            await wait_for(pilot, lambda: any("session view is not available" in str(n.message)
                                              for n in app._notifications))
        else:
            await wait_for(pilot, lambda: type(app.screen).__name__ == "SessionScreen")
            assert app.screen.session_id == "alpha" and table.cursor_row == 1  # type: ignore[attr-defined]


async def test_read_only_database_shows_a_badge(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    Store.open(path).close()
    store = Store.open(path, readonly=True)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        assert "read-only" in row_line(await wait_for_text(pilot, "read-only"), "hiermem")
    store.close()


async def test_backend_indicator_follows_the_app_state(settings: Settings, empty_store: Store) -> None:
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        indicator = app.screen.query_one(BackendIndicator)
        assert "Ollama not checked" in row_line(await wait_for_text(pilot, "Ollama not checked"), "hiermem")
        error = "Ollama not reachable at http://127.0.0.1:9 (connection refused)"
        app.backend_state = BackendStatus(host="http://127.0.0.1:9", reachable=False, error=error)
        text = await wait_for_text(pilot, "▲ Ollama not reachable at http://127.0.0.1:9")
        assert "▲ Ollama not reachable at http://127.0.0.1:9" in row_line(text, "hiermem")
        assert indicator.has_class("-warn")


async def test_app_probes_a_running_ollama_in_a_worker(tmp_path: Path, empty_store: Store) -> None:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:3b"), loaded=("qwen2.5:3b",)) as fake:
        settings = Settings(db_path=tmp_path / "x.db", config_path=tmp_path / "c.toml", ollama_host=fake.url)
        app = make_app(settings, empty_store, clock=lambda: NOW)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.backend_state is not None)
            assert app.backend_state is not None and app.backend_state.reachable
            text = await wait_for_text(pilot, "Ollama 0.9.6 · qwen2.5:3b (loaded)")
            assert "Ollama 0.9.6 · qwen2.5:3b (loaded)" in row_line(text, "hiermem")
            assert app.screen.query_one(BackendIndicator).has_class("-ok")


async def test_no_probe_means_no_request(tmp_path: Path, empty_store: Store) -> None:
    with FakeOllama() as fake:
        settings = Settings(db_path=tmp_path / "x.db", config_path=tmp_path / "c.toml", ollama_host=fake.url)
        app = make_app(settings, empty_store, probe_backend=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: any("Backend checks are off" in str(n.message) for n in app._notifications))
            assert app.refresh_backend() is None
        assert fake.requests == []


async def test_probe_of_a_closed_port_says_unreachable() -> None:
    url = closed_port_url()
    status = await probe_backend(url, "llama3.2")
    assert not status.reachable and not status.ok
    assert status.describe() == f"Ollama not reachable at {url} (connection refused)"
    assert "\n" not in status.describe()


async def test_probe_of_a_running_ollama_lists_models() -> None:
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:3b"), loaded=("llama3.2:latest",), version="0.9.6") as fake:
        status = await probe_backend(fake.url)
        assert status.reachable and status.ok and status.error is None
        assert status.version == "0.9.6"
        assert set(status.installed) == {"llama3.2:latest", "qwen2.5:3b"}
        assert status.loaded == ("llama3.2:latest",)
        assert status.model == "llama3.2:latest" and status.model_source == "loaded"
        missing = await probe_backend(fake.url, "mistral")
        assert missing.model_missing and not missing.ok
        assert "ollama pull mistral" in missing.describe()
        configured = await probe_backend(fake.url, "qwen2.5:3b")
        assert configured.ok and configured.model == "qwen2.5:3b" and not configured.model_loaded


def test_relative_times_are_compact() -> None:
    assert fmt_when("2026-06-01T11:59:30.000Z", NOW) == "just now"
    assert fmt_when("2026-06-01T11:48:00.000Z", NOW) == "12m ago"
    assert fmt_when("2026-05-29T12:00:00.000Z", NOW) == "3d ago"
    assert fmt_when("2026-02-03T12:00:00.000Z", NOW) == "Feb 3"
    assert fmt_when("2025-02-03T12:00:00.000Z", NOW) == "Feb 3 2025"
    assert fmt_when(None, NOW) == "–"


def test_a_date_is_written_one_way_on_every_screen(utc_tz: None) -> None:
    """Issue 21 item 10: dates came in three styles ("May 02", "2025-04-07", "Jul 3 10:02"). Older than a
    week, the sessions list writes the day as the tree, the detail pane, run history and search do."""
    for stamp in ("2026-02-03T12:00:00.000Z", "2025-04-07T09:30:00.000Z", "2026-08-01T00:00:00.000Z"):
        listed = fmt_when(stamp, NOW)
        assert fmt.timestamp(stamp, ref_year=NOW.year).startswith(listed + " "), (listed, stamp)



async def test_the_search_index_is_built_in_the_background_with_progress_in_the_top_bar(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 item 12: the first start after a big import waited on "indexing for search …" before any
    session appeared. Now the sessions show at once and the index is built behind them."""
    import threading

    import hiermem_tui.tui.indexer as app_module
    from hiermem_tui.store.search_index import build_search_index, search_index_status
    from tests.unit.test_first_start import imported

    path = tmp_path / "big.db"
    imported(path, 3000)
    store = Store.open(path)
    go = threading.Event()
    told: list[tuple[int, int]] = []

    def gated(store_: Store, on_progress, **kwargs):  # type: ignore[no-untyped-def]
        go.wait(DEADLINE)  # the build starts only once the test saw the sessions without it

        def progress(done: int, total: int) -> None:
            told.append((done, total))
            on_progress(done, total)

        return build_search_index(store_, progress, **kwargs)

    monkeypatch.setattr(app_module, "build_search_index", gated)
    app = make_app(settings, store, probe_backend=False, index_search=True)
    async with app.run_test(size=SIZE) as pilot:
        await table_shown(pilot, 1)
        assert search_index_status(store).pending  # the sessions are there, the index is not yet
        go.set()
        await wait_for(pilot, lambda: not search_index_status(store).pending and app.index_progress is None
                       and bool(told) and told[-1][0] == told[-1][1])
        assert told[0] == (0, 3000)  # the top bar was told how far it was (shown: the test below)
        assert not app.screen.query_one("#index-badge").display
    store.close()


async def test_the_index_badge_says_how_far_the_build_is(settings: Settings, empty_store: Store) -> None:
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await screen_shown(pilot, SessionsScreen)
        app.index_progress = (250_000, 1_000_000)
        text = await wait_for_text(pilot, "indexing for search 25% · 250,000 of 1,000,000 rows")
        assert "indexing for search" in row_line(text, "hiermem")


async def test_quitting_while_the_index_builds_waits_for_its_batch_before_the_store_closes(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing the store while the background build stepped a statement crashed SQLite (a segfault on quit)."""
    import threading

    import hiermem_tui.tui.indexer as app_module
    from hiermem_tui.store.search_index import build_search_index, search_index_status
    from tests.unit.test_first_start import imported

    path = tmp_path / "big.db"
    imported(path, 12_000)
    store = Store.open(path)
    in_batch, resume = threading.Event(), threading.Event()
    returned: list[str] = []

    def held(store_: Store, on_progress, **kwargs):  # type: ignore[no-untyped-def]
        def progress(done: int, total: int) -> None:
            on_progress(done, total)
            if done and not in_batch.is_set():
                in_batch.set()
                resume.wait(DEADLINE)  # the test quits the app meanwhile

        try:
            return build_search_index(store_, progress, **kwargs)
        finally:
            returned.append("returned")

    monkeypatch.setattr(app_module, "build_search_index", held)
    app = make_app(settings, store, probe_backend=False, index_search=True)
    async with app.run_test(size=SIZE) as pilot:
        await table_shown(pilot, 1)
        await wait_for(pilot, lambda: in_batch.is_set())
        resume.set()
    assert returned == ["returned"]  # the app's exit waited for the build to let go of the store
    store.close()
    with Store.open(path) as again:  # what was indexed stays; the next start resumes the rest
        status = search_index_status(again)
        assert status.done >= 5_000


async def test_the_source_column_shows_lossless_claw_and_lossless_code_whole(
    settings: Settings, empty_store: Store
) -> None:
    """Issue 21 item 10: the Source column cut them to "lossless-c…"."""
    for i, source in enumerate(("lossless-claw", "lossless-code", "claude-code")):
        add_session(empty_store, SessionSpec(f"s{i}", f"From {source}", 3, NOW, source=source))
    app = app_for(settings, empty_store)
    async with app.run_test(size=SIZE) as pilot:
        await table_shown(pilot, 3)
        text = await wait_for_text(pilot, "lossless-claw", "lossless-code", "claude-code")
        assert "lossless-c…" not in text


@pytest.mark.parametrize("width", [140, 120, 100, 80])
async def test_a_date_of_another_year_fits_the_active_column(
    settings: Settings, empty_store: Store, utc_tz: None, width: int
) -> None:
    """Issue 36 item 11: at 140 columns the list cut "Jul 21 2025" to "Jul 21 20…"."""
    add_session(empty_store, SessionSpec("old", "A chat from last July", 3, NOW - timedelta(days=315)))
    add_session(empty_store, SessionSpec("new", "A chat from this week", 3, NOW - timedelta(days=2)))
    app = app_for(settings, empty_store)
    async with app.run_test(size=(width, 30)) as pilot:
        await table_shown(pilot, 2)
        text = await wait_for_text(pilot, "A chat from last", "A chat from this")
        assert "Jul 21 2025" in row_line(text, "A chat from last"), row_line(text, "A chat from last")
        assert "20…" not in text
