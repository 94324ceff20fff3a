"""The run indicator while one model call streams: its phase, tokens and tok/s move and its
estimate of the time left falls (issue 13: the footer had read "~4 m 43 s left" unchanged
through a 2.5-minute call). The fake server streams slowly; the test waits on what it reads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.tui.screens.session import SessionScreen
from hiermem_tui.tui.widgets.run_indicator import RunIndicator
from tests.fakeollama import FakeModel, FakeOllama, Reply
from tests.tui._session_fixtures import add_episodes, app_for
from tests.tui.conftest import screen_shown, wait_for, wait_for_chats

POLICY = Policy(idle_after=10 ** 9, fresh_tail=16, leaf_chunk_tokens=400, leaf_min_episodes=2, leaf_target_tokens=120,
                condense_fanout=3, condensed_target_tokens=80)
SLOW = " ".join(f"Step {i} of the plan moved the beds to spot {i}." for i in range(12))  # ~110 chunks
LIVE = re.compile(r"writing · (\d+) tok · (\d+) tok/s · ~(.+?) left")

pytestmark = pytest.mark.usefixtures("utc_tz")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(tmp_path / "hiermem.db")
    add_episodes(store, "work", "Plan the garden", 24)
    yield store
    store.close()


def seconds(text: str) -> float:
    """``1 m 10 s`` / ``4.2 s`` → seconds."""
    total = 0.0
    for value, unit in re.findall(r"([\d.]+)\s*(h|m|s)", text):
        total += float(value) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


async def test_the_footer_follows_one_streaming_call(tmp_path: Path, store: Store) -> None:
    model = FakeModel("qwen3:4b", thinking=True, think_values=["low", "medium", "high"], think_words=30)
    with FakeOllama(models=[model], loaded=("qwen3:4b",)) as fake:
        fake.script(Reply(SLOW, chunk_delay_s=0.06))
        settings = Settings(db_path=store.path, config_path=tmp_path / "config.toml", ollama_host=fake.url,
                            model="qwen3:4b", policy=POLICY)
        app = app_for(settings, store)
        async with app.run_test(size=(160, 40)) as pilot:
            app.open_session("work")
            screen = await screen_shown(pilot, SessionScreen)
            indicator = screen.query_one(RunIndicator)
            assert app.runs.start("leaf", "work", backend="ollama", model="qwen3:4b") is not None
            await wait_for_chats(pilot, fake, 1)
            # the model thinks first (it cannot be turned off): the footer says so and counts it
            await wait_for(pilot, lambda: "thinking · " in indicator.plain, show=lambda: indicator.plain)
            first: list[tuple[int, int, float]] = []

            def reading() -> tuple[int, int, float] | None:
                m = LIVE.search(indicator.plain)
                return (int(m.group(1)), int(m.group(2)), seconds(m.group(3))) if m else None

            def streaming() -> bool:
                now = reading()
                if now is not None and now[0] >= 5 and not first:
                    first.append(now)
                return bool(first)

            await wait_for(pilot, streaming, show=lambda: indicator.plain)
            tokens0, _, left0 = first[0]

            def moved() -> bool:
                now = reading()
                return now is not None and now[0] >= tokens0 + 20 and now[2] < left0

            await wait_for(pilot, moved, show=lambda: (first, indicator.plain))
            assert app.run_state is not None and app.run_state.call is not None
            assert app.run_state.call.tokens_per_s is not None and app.run_state.done == 0  # still the one call
            await wait_for(pilot, lambda: app.run_state is None)
        assert fake.chat_bodies[0]["think"] == "low"
        assert not any("hmm" in s.content for s in store.dag.summaries("work"))
