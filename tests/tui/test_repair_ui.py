"""Fidelity, repair and marks in the UI: the detail pane, the sessions list flag, the map colour,
x / X / M, P / E — each waiting for what it checks (they must hold on a loaded machine)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import NewSummary, Store, SummaryWrite
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.compare import CompareScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.fakeollama import FakeOllama, Reply
from tests.tui._session_fixtures import DAG_IDS, HOSTILE_TITLE, add_episodes, app_for, build_dag_session
from tests.tui.conftest import screen_text, wait_for

SIZE = (150, 40)
IDS = DAG_IDS


pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    build_dag_session(store)
    # L0 lost most of what its episodes named; L5 kept it all; a literal markup name among the lost
    store.dag.set_fidelity(IDS["L0"], Fidelity(12, 3, ("[bold]not_bold[/bold]", "src/app.py", "4096"), ("made_up_name",)))
    store.dag.set_fidelity(IDS["L5"], Fidelity(10, 10, (), ()))
    yield store
    store.close()


def settings_for(tmp_path: Path, store: Store, host: str = "http://127.0.0.1:9", **kw: object) -> Settings:
    return Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=host, **kw)  # type: ignore[arg-type]


@asynccontextmanager
async def opened(settings: Settings, store: Store, session_id: str = "dag"
                 ) -> AsyncIterator[tuple[HiermemApp, Pilot, SessionScreen]]:
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        app.open_session(session_id)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session is not None)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        yield app, pilot, screen


def notices(app: HiermemApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_the_detail_pane_shows_fidelity_literally(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(IDS["L0"]))
        await wait_for(pilot, lambda: screen.detail.key == f"s:{IDS['L0']}")
        plain = screen.detail.plain
        assert "fidelity: kept 3 of 12 identifiers (25%)  under 50% of its identifiers: x repairs it" in plain
        assert "lost: [bold]not_bold[/bold], src/app.py, 4096" in plain  # literal, never markup
        assert "in no source: made_up_name" in plain
        await wait_for(pilot, lambda: "[bold]not_bold[/bold]" in screen_text(app))  # painted literally (busy machine)
        await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(IDS["L6"]))
        await wait_for(pilot, lambda: screen.detail.key == f"s:{IDS['L6']}")
        assert "not measured (made before fidelity was measured): press M" in screen.detail.plain


async def test_rejections_are_listed_in_the_detail_pane(tmp_path: Path, store: Store) -> None:
    store.dag.write([SummaryWrite(NewSummary(
        "s_rejected", "dag", 0, "fallback", "extractive", None, "extractive-v1", "- digest", 4,
        rejections=[{"tier": "normal", "reason": "echo", "detail": "copies '[2025] user:' lines"},
                    {"tier": "aggressive", "reason": "continues_chat", "detail": "opens like a chat reply ('Sure')"}],
    ), episode_range=(40, 43))])
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await wait_for(pilot, lambda: screen.dag_tree.reveal_summary("s_rejected"))
        await wait_for(pilot, lambda: screen.detail.key == "s:s_rejected")
        assert ("rejected: normal: echo — copies '[2025] user:' lines\n"
                "aggressive: continues chat — opens like a chat reply ('Sure')") in screen.detail.plain


async def test_the_sessions_list_flags_low_fidelity_sessions(tmp_path: Path, store: Store) -> None:
    add_episodes(store, "fine", "A faithful session", 10)
    app = app_for(settings_for(tmp_path, store), store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen) and "◇25%" in screen_text(app))
        # at 150 columns the About column shows, and the title keeps its 23 cells: "Refactor the [config] …"
        row = next(line for line in screen_text(app).splitlines() if "Refactor the [config]" in line)
        assert "▲" in row and "◇25%" in row  # next to its fallbacks
        fine = next(line for line in screen_text(app).splitlines() if "A faithful session" in line)
        assert "◇" not in fine


async def test_the_map_colours_by_fidelity_and_back(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await pilot.press("C")
        await wait_for(pilot, lambda: screen.map.colour_by == "fidelity")
        assert "low fidelity" in str(screen.map.border_subtitle) and "not measured" in str(screen.map.border_subtitle)
        item = screen.map.item(f"s:{IDS['L0']}")
        assert item is not None and "low fidelity" in screen.map.describe(item).plain
        item = screen.map.item(f"s:{IDS['L5']}")
        assert item is not None and "fidelity ok" in screen.map.describe(item).plain
        await pilot.press("C")
        await wait_for(pilot, lambda: screen.map.colour_by == "tier")
        assert "aggressive" in str(screen.map.border_subtitle)


async def test_pin_and_exclude_are_shown_and_undone(tmp_path: Path, store: Store) -> None:
    async with opened(settings_for(tmp_path, store), store) as (app, pilot, screen):
        await pilot.press("t")
        await wait_for(pilot, lambda: screen.query_one("TabbedContent").active == "tab-transcript")
        screen.transcript.focus()
        screen.transcript.jump_to(2)
        await wait_for(pilot, lambda: screen.transcript.cursor == 2)
        await pilot.press("P")
        await wait_for(pilot, lambda: store.marks.of("dag") == {2: "pin"})
        await wait_for(pilot, lambda: "#2  user  ⚑ pinned" in screen_text(app))
        ep_row = screen.map.rows[-1]
        assert ep_row.first[ep_row.kinds.index("pin")] == 2  # a tick on the map's episode row
        assert any("Pinned #2" in n and "already cover it: x re-makes them" in n for n in notices(app))
        await pilot.press("E")
        await wait_for(pilot, lambda: store.marks.of("dag") == {2: "exclude"})
        await wait_for(pilot, lambda: "#2  user  × excluded" in screen_text(app))
        await pilot.press("E")
        await wait_for(pilot, lambda: store.marks.of("dag") == {})
        await wait_for(pilot, lambda: "× excluded" not in screen_text(app) and "⚑ pinned" not in screen_text(app))
        assert "exclude" not in screen.map.rows[-1].kinds and "pin" not in screen.map.rows[-1].kinds


async def test_x_repairs_the_selected_fallback_through_the_compare_view(tmp_path: Path, store: Store) -> None:
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",)) as fake:
        fake.script(Reply("The user worked through the config loader."))
        async with opened(settings_for(tmp_path, store, fake.url, policy=Policy(fidelity_threshold=0.0)), store
                          ) as (app, pilot, screen):
            await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(IDS["L5"]))
            await pilot.press("x")  # L5 keeps everything: nothing to repair
            await wait_for(pilot, lambda: any("needs no repair" in n for n in notices(app)))
            assert not isinstance(app.screen, RunDialog)
            await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(IDS["L2"]))
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
            dialog = app.screen
            assert isinstance(dialog, RunDialog)
            assert "Needs repair: it is a fallback (made without the model)." in str(dialog.detail)
            await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), timeout=15)
            compare = app.screen
            assert isinstance(compare, CompareScreen) and compare.old.id == IDS["L2"]
            assert compare.new.tier == "normal" and "config loader" in compare.new.content


async def test_capital_x_repairs_the_whole_session_in_one_run(tmp_path: Path, store: Store) -> None:
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",),
                    responder=lambda body: "The user and the assistant discussed the topic.") as fake:
        settings = settings_for(tmp_path, store, fake.url, policy=Policy(idle_after=10 ** 9, fresh_tail=16, fidelity_threshold=0.5))
        async with opened(settings, store) as (app, pilot, screen):
            await pilot.press("X")
            await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
            dialog = app.screen
            assert isinstance(dialog, RunDialog)
            await wait_for(pilot, lambda: dialog.counts is not None and dialog.status is not None and not dialog.probing)
            plan = str(dialog.query_one("#run-plan").render())
            assert "summaries to re-make" in plan
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(r.kind == "repair" and r.status == "done" for r in store.runs.of_session("dag")),
                           timeout=20)
            await wait_for(pilot, lambda: app.run_state is None)
            (run,) = [r for r in store.runs.of_session("dag") if r.kind == "repair"]
            assert run.summaries_created == dialog.counts["repair"]
            assert not [s for s in store.dag.summaries("dag") if s.tier == "fallback"]
            await wait_for(pilot, lambda: any(n.title == "Repair done" for n in app._notifications))


async def test_the_run_dialog_title_shows_a_chat_title_literally(tmp_path: Path, store: Store) -> None:
    add_episodes(store, "evil", HOSTILE_TITLE, 30)
    async with opened(settings_for(tmp_path, store), store, "evil") as (app, pilot, screen):
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
        await wait_for(pilot, lambda: "Full pass · [bold red]Evil[/] title" in screen_text(app))
        assert "[@click=app.quit]x[/]" in screen_text(app)
