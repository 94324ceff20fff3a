"""The run dialog's times are ``backlog``'s (issue 38 item 3): a model never timed is measured as the CLI measures
it (a call that lets it load, then one short call), kept in the file, and the dialog shows the backlog's time at
that speed — the figure ``backlog --json`` then prints — not a guess from the model's size. Against the fake
Ollama server, whose calls take 0.2 s but report a millisecond (a queued or remote host); waits are on the app's
state, never on time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import Store
from hiermem_tui.summarize.ollama_backend import normalize_host
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.app import make_app
from hiermem_tui.tui.screens.run_dialog import RunDialog
from hiermem_tui.tui.screens.sessions import SessionsScreen
from tests.fakeollama import FakeOllama, Reply, default_responder
from tests.tui._session_fixtures import add_episodes
from tests.tui.conftest import fixed_clock, screen_shown, wait_for
from tests.unit._cli import run as cli
from tests.unit._engine_fixtures import write_policy_config

POLICY = Policy(idle_after=10 ** 9, fresh_tail=16, leaf_chunk_tokens=200, leaf_min_episodes=2, leaf_target_tokens=60,
                condense_fanout=3, condensed_target_tokens=80, fidelity_threshold=0.0)
MODEL = "llama3.2:latest"

pytestmark = pytest.mark.usefixtures("utc_tz")


async def test_the_dialog_measures_a_model_never_timed_and_shows_the_cli_s_figure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_policy_config(tmp_path / "config.toml", POLICY)  # the CLI's settings are the app's
    monkeypatch.setenv("HIERMEM_CONFIG", str(config))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    store = Store.open(tmp_path / "hiermem.db")
    for sid in ("alpha", "beta"):
        add_episodes(store, sid, f"Session {sid}", 30)
    with FakeOllama(models=(MODEL,), loaded=(MODEL,)) as fake:
        fake.script(*[Reply(default_responder, latency_s=0.2, reported_s=0.001) for _ in range(2)])
        settings = Settings(db_path=store.path, config_path=config, ollama_host=fake.url,
                            policy=POLICY, model=MODEL)
        app = make_app(settings, store, probe_backend=False, clock=fixed_clock, measure_speed=True)
        async with app.run_test(size=(150, 40)) as pilot:
            await screen_shown(pilot, SessionsScreen)
            await pilot.press("B")
            dialog = await screen_shown(pilot, RunDialog)
            await wait_for(pilot, lambda: dialog.backlog is not None and dialog.status is not None
                           and store.speeds.get("ollama", MODEL, normalize_host(fake.url)).measured
                           and not dialog.measuring)
            assert len(fake.chat_requests) == 2  # the call that lets the model load, then the measuring one
            assert dialog.backlog is not None
            speed, secs = app.planner.backlog_estimate(dialog.backlog, dialog.chosen)
            shown = str(dialog.query_one("#run-plan").render())
            assert speed.measured and f"about {fmt.duration(secs)}" in shown and "guess" not in shown
            await pilot.press("escape")
        code, out, err = await asyncio.to_thread(cli, "backlog", "--db", str(store.path), "--json", "--model", MODEL,
                                                 "--ollama-host", fake.url)
        assert code == 0, err
        assert len(fake.chat_requests) == 2  # the CLI found the dialog's measurement in the file
    plan = json.loads(out)
    assert plan["est_seconds"] == pytest.approx(secs, abs=0.1)
    # each call took at least its 0.2 s, whatever the server said: the estimate counts it
    assert plan["est_seconds"] >= 0.2 * (plan["summaries"] + plan["briefs"]) - 0.05  # rounded to a tenth
    store.close()
