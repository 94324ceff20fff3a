"""Re-summarising from the UI: the compare view (keep / revert), the whole-session redo with
its confirmation, and the versions screen (browse, restore, the store's refusals shown literally)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from hiermem_tui.config import Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.app import HiermemApp
from hiermem_tui.tui.screens.compare import CompareScreen, line_diff, token_change, word_diff
from hiermem_tui.tui.screens.confirm import ConfirmScreen
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.screens.versions import VersionsScreen
from tests.fakeollama import FakeOllama, Reply
from tests.tui._session_fixtures import DAG_IDS, app_for, build_dag_session
from tests.tui.conftest import screen_shown, wait_for, wait_for_text

IDS = DAG_IDS
SIZE = (150, 40)


pytestmark = pytest.mark.usefixtures("utc_tz")  # times show in UTC (tests/tui/conftest.py)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    build_dag_session(store)
    yield store
    store.close()


@asynccontextmanager
async def opened(tmp_path: Path, store: Store, host: str = "http://127.0.0.1:9", backend: str = "ollama"
                 ) -> AsyncIterator[tuple[HiermemApp, Pilot, SessionScreen]]:
    settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=host, backend=backend)
    app = app_for(settings, store)
    async with app.run_test(size=SIZE) as pilot:
        app.open_session("dag")
        yield app, pilot, await screen_shown(pilot, SessionScreen)


async def run_from_dialog(app: HiermemApp, pilot: Pilot, key: str, *keys: str) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
    dialog = app.screen
    assert isinstance(dialog, RunDialog)
    await wait_for(pilot, lambda: dialog.status is not None and not dialog.probing)
    await pilot.press(*keys, "enter")


async def resummarize(app: HiermemApp, pilot: Pilot, screen: SessionScreen, summary_id: str, *keys: str
                      ) -> CompareScreen:
    await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(summary_id))
    await run_from_dialog(app, pilot, "R", *keys)
    return await screen_shown(pilot, CompareScreen)


def test_diff_helpers() -> None:
    assert token_change(812, 640) == "812 → 640 tokens (−21%)"
    assert token_change(100, 150) == "100 → 150 tokens (+50%)" and token_change(5, 5) == "5 → 5 tokens (±0%)"
    ops = word_diff("keep the old path /srv/a", "keep the new path /srv/a")
    assert ("-", "old") in ops and ("+", "new") in ops and ops[0] == ("=", "keep the ")
    assert line_diff("a\nb\nc", "a\nc\nd") == [("=", "a"), ("-", "b"), ("=", "c"), ("+", "d")]


async def test_resummarize_one_node_compare_and_revert(tmp_path: Path, store: Store) -> None:
    new_text = "Leaf four again: [bold]kept[/bold] the fix in the loader \x1b[31m."
    with FakeOllama(models=("llama3.2:latest",), loaded=("llama3.2:latest",)) as fake:
        fake.script(Reply(new_text))  # the leaf; its two ancestors get the default answer
        async with opened(tmp_path, store, fake.url) as (app, pilot, screen):
            compare = await resummarize(app, pilot, screen, IDS["L4"])
            assert compare.old.id == IDS["L4"] and compare.new.supersedes == IDS["L4"]
            plain = compare.plain
            assert "Summary s_leaf_4: the user and the assistant discussed topic 4." in plain
            assert "Leaf four again: [bold]kept[/bold] the fix in the loader ␛[31m." in plain  # literal
            assert re.search(r"40 → \d+ tokens \([−+]\d+%\)", plain)
            # the answer lost the episodes' numbers: they are its keywords, not a line of its text
            assert "Also mentioned" not in plain and compare.new.keywords
            assert "aggressive" in plain and "ollama/llama3.2:latest" in plain and "2 ancestors" in plain
            text = await wait_for_text(pilot, "[bold]kept[/bold]")
            assert "\x1b" not in text
            await pilot.press("d")
            await wait_for(pilot, lambda: compare.view == "words" and "word diff" in compare.plain,
                           show=lambda: compare.view)
            await pilot.press("d")
            await wait_for(pilot, lambda: "- Summary s_leaf_4:" in compare.plain and "+ Leaf four again:" in compare.plain,
                           show=lambda: compare.plain)
            assert store.dag.get(IDS["L4"]).status == "superseded"  # type: ignore[union-attr]
            new_id = compare.new.id
            await pilot.press("u")
            await wait_for(pilot, lambda: app.screen is screen)
        for sid in ("L4", "C1", "D0"):
            assert store.dag.get(IDS[sid]).status == "active", sid  # type: ignore[union-attr]
        reverted = store.dag.get(new_id)
        assert reverted is not None and reverted.status == "superseded" and reverted.superseded_by == f"revert:{compare.run_id}"


async def test_keep_closes_and_the_tree_shows_the_new_version(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store, backend="extractive") as (app, pilot, screen):
        compare = await resummarize(app, pilot, screen, IDS["L5"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        assert store.dag.get(compare.new.id).status == "active"  # type: ignore[union-attr]
        await wait_for(pilot, lambda: screen.dag_tree.node_for(f"s:{compare.new.id}") is not None
                       or screen.dag_tree.reveal_summary(compare.new.id))
        [run] = store.runs.of_session("dag")
        assert run.kind == "resummarize" and run.backend == "extractive" and run.summaries_created == 3


async def test_whole_session_redo_asks_first_and_restores_from_versions(tmp_path: Path, store: Store) -> None:
    before = sorted(s.id for s in store.dag.summaries("dag"))
    async with opened(tmp_path, store, backend="extractive") as (app, pilot, screen):
        await run_from_dialog(app, pilot, "W")
        body = str((await screen_shown(pilot, ConfirmScreen)).query_one("#confirm-body", Static).content)
        assert ("10 active summaries (depth ≤ 2) will be superseded and kept; "
                "a fresh full pass will run with extractive.") in body
        await pilot.press("n")  # cancel at the confirmation: nothing changes
        await wait_for(pilot, lambda: app.screen is screen)
        assert sorted(s.id for s in store.dag.summaries("dag")) == before and store.runs.of_session("dag") == []
        await run_from_dialog(app, pilot, "W")
        await screen_shown(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.run_state is None and store.runs.of_session("dag") != [])
        [run] = store.runs.of_session("dag")
        assert run.kind == "resummarize-session" and run.status == "done"
        assert all(store.dag.get(i).superseded_by == f"run:{run.id}" for i in before)  # type: ignore[union-attr]
        new_leaf = min((s for s in store.dag.summaries("dag") if s.depth == 0), key=lambda s: s.first_seq)
        await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(new_leaf.id))
        await pilot.press("v")
        versions = await screen_shown(pilot, VersionsScreen)
        ids = [v.id for v in versions.versions]
        assert IDS["L0"] in ids and new_leaf.id in ids  # the replaced leaf is listed with the new one
        versions.query_one(OptionList).highlighted = ids.index(IDS["L0"])
        head = versions.query_one("#versions-head", Static)
        await wait_for(pilot, lambda: f"reverts run {run.id}" in str(head.content), show=lambda: str(head.content))
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Restored" in n.title for n in app._notifications))
        assert store.dag.get(IDS["L0"]).status == "active"  # type: ignore[union-attr]
        assert sorted(s.id for s in store.dag.summaries("dag")) == before
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: screen.dag_tree.node_for(f"s:{IDS['D0']}") is not None)


async def test_versions_restore_and_the_stores_refusal_verbatim(tmp_path: Path, store: Store) -> None:
    async with opened(tmp_path, store, backend="extractive") as (app, pilot, screen):
        first = await resummarize(app, pilot, screen, IDS["L1"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        second = await resummarize(app, pilot, screen, first.new.id)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: screen.dag_tree.reveal_summary(second.new.id))
        await pilot.press("v")
        versions = await screen_shown(pilot, VersionsScreen)
        ids = [v.id for v in versions.versions]
        assert ids == [IDS["L1v1"], IDS["L1"], first.new.id, second.new.id]
        await wait_for_text(pilot, "● active", "superseded")
        picker = versions.query_one(OptionList)

        async def restore(summary_id: str) -> str:
            """Restore one version; every attempt ends in a notification, so wait for a new one."""
            picker.highlighted = ids.index(summary_id)
            seen = {n.identity for n in app._notifications}
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(n.identity not in seen for n in app._notifications))
            return str(versions.query_one("#versions-error", Static).content)

        # the first run was built upon by the second: the store refuses, and says so word for word
        refusal = await restore(IDS["L1"])
        assert f"cannot revert run {first.run_id}: its summaries have been replaced since" in refusal
        assert any(f"cannot revert run {first.run_id}" in str(n.message) for n in app._notifications)
        # the very first version was replaced outside any run: nothing to revert
        assert "not made by a run" in await restore(IDS["L1v1"])
        # the version the second run replaced comes back
        await restore(first.new.id)
        await wait_for(pilot, lambda: store.dag.get(first.new.id).status == "active")  # type: ignore[union-attr]
        assert store.dag.get(second.new.id).status == "superseded"  # type: ignore[union-attr]
        assert not versions.query_one("#versions-error").display
        await wait_for_text(pilot, "Versions of d0 #6–11 (6)")
