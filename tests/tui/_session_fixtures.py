"""Deterministic sessions for the session-screen tests and snapshots.

Built through the store's public API. The only raw SQL pins ``summaries.created_at``
(the store stamps "now" on write) so snapshots do not change from run to run.

The DAG session ("dag", 60 episodes, fresh tail 16):

    D0  d2 #0–35   = C0 + C1
      C0  d1 #0–17   = L0 #0–5, L1 #6–11 (v2; v1 superseded), L2 #12–17 (fallback)
      C1  d1 #18–35  (fallback) = L3 #18–23, L4 #24–29 (aggressive), L5 #30–35
    L6  d0 #36–39  (a root leaf)
    gap #40–43, fresh tail #44–59
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite
from hiermem_tui.tui.app import HiermemApp, make_app

T0 = datetime(2026, 7, 3, 10, 2, tzinfo=timezone.utc)
CREATED = "2026-07-06T09:00:00.000Z"
HOSTILE = (
    "[bold]BOLD[/bold] [@click=app.quit]quit[/] \x1b[31mred\x1b[0m "
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ bell\x07 back\x08 [link=http://x]l[/link]"
)
HOSTILE_TITLE = "[bold red]Evil[/] title \x1b[2J [@click=app.quit]x[/]"
DAG_IDS = {
    "D0": "s_d2_root", "C0": "s_d1_a", "C1": "s_d1_b", "L0": "s_leaf_0", "L1v1": "s_leaf_1_v1",
    "L1": "s_leaf_1", "L2": "s_leaf_2", "L3": "s_leaf_3", "L4": "s_leaf_4", "L5": "s_leaf_5", "L6": "s_leaf_6",
}


IN_USE = Policy(idle_after=10 ** 9)
"""The policy of a session in use: the fixture sessions' times (July 2026) are long past, and a session idle for
``idle_after`` keeps no fresh tail; this one is never reached, so the tree shows the fresh tail the module
docstring draws (a test of what a finished chat shows uses the default)."""


def summary(session_id: str, sid: str, depth: int, tier: str = "normal", content: str | None = None,
            tokens: int = 40) -> NewSummary:
    """A summary to write, with fixed figures (so labels and detail rows are predictable)."""
    return NewSummary(
        id=sid, session_id=session_id, depth=depth, tier=tier, backend="ollama" if tier != "fallback" else "extractive",
        model="llama3.2:3b" if tier != "fallback" else None, prompt_version=f"d{min(depth, 1)}-v2",
        content=content or f"Summary {sid}: the user and the assistant discussed topic {sid[-1]}.",
        tokens=tokens, input_tokens=tokens * 5, output_tokens=tokens, duration_s=2.5, llm_seconds=2.25,
    )


def add_episodes(store: Store, session_id: str, title: str, count: int, *, hostile_at: int | None = None,
                 step: timedelta = timedelta(minutes=3)) -> None:
    store.sessions.upsert(session_id, title=title, source="jsonl", created_at=T0)
    episodes = []
    for i in range(count):
        content = f"message {i}: " + " ".join(f"word{k}" for k in range(12 + i % 7))
        if i == hostile_at:
            content = HOSTILE
        episodes.append(NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", content, T0 + i * step))
    store.episodes.append(session_id, episodes)


def pin_times(store: Store, session_id: str) -> None:
    """Fix the write-time stamps the store sets to "now" (display only), and the session aggregate
    that follows them (the trigger does not fire on ``created_at``), so the file stays one doctor passes."""
    store.db.conn.execute("UPDATE summaries SET created_at = ? WHERE session_id = ?", (CREATED, session_id))
    store.db.conn.execute("UPDATE sessions SET last_summary_at = ? WHERE id = ? AND last_summary_at IS NOT NULL",
                          (CREATED, session_id))


def build_dag_session(store: Store, session_id: str = "dag") -> None:
    """The multi-level DAG described in the module docstring."""
    add_episodes(store, session_id, "Refactor the [config] loader", 60, hostile_at=5)
    ids = DAG_IDS
    w = store.dag.write
    w([SummaryWrite(summary(session_id, ids["L0"], 0), episode_range=(0, 5))])
    w([SummaryWrite(summary(session_id, ids["L1v1"], 0, "fallback"), episode_range=(6, 11))])
    w([SummaryWrite(summary(session_id, ids["L1"], 0, content="Second version of leaf 1."), episode_range=(6, 11),
                    supersede=[ids["L1v1"]])])
    w([SummaryWrite(summary(session_id, ids["L2"], 0, "fallback", content="- first sentence\n- last sentence"),
                    episode_range=(12, 17))])
    w([SummaryWrite(summary(session_id, ids["L3"], 0, content=HOSTILE), episode_range=(18, 23))])
    w([SummaryWrite(summary(session_id, ids["L4"], 0, "aggressive"), episode_range=(24, 29))])
    w([SummaryWrite(summary(session_id, ids["L5"], 0), episode_range=(30, 35))])
    w([SummaryWrite(summary(session_id, ids["L6"], 0), episode_range=(36, 39))])
    w([SummaryWrite(summary(session_id, ids["C0"], 1, tokens=90), source_ids=[ids["L0"], ids["L1"], ids["L2"]])])
    w([SummaryWrite(summary(session_id, ids["C1"], 1, "fallback", tokens=95),
                    source_ids=[ids["L3"], ids["L4"], ids["L5"]])])
    w([SummaryWrite(summary(session_id, ids["D0"], 2, tokens=150), source_ids=[ids["C0"], ids["C1"]])])
    pin_times(store, session_id)


def build_empty_session(store: Store, session_id: str = "raw") -> None:
    """A session with episodes and no summaries at all."""
    add_episodes(store, session_id, "Plan the garden", 30)


def build_big_session(store: Store, session_id: str = "big", count: int = 20_000, leaves: int = 0) -> None:
    """``count`` short episodes (and optionally ``leaves`` leaves of 4 episodes), written in bulk."""
    store.sessions.upsert(session_id, title="A very long session", source="jsonl", created_at=T0)
    store.episodes.append(session_id, [
        NewEpisode(str(i), ("user", "assistant")[i % 2], f"episode {i} says hello", T0 + timedelta(seconds=30 * i))
        for i in range(count)
    ])
    if leaves:
        store.dag.write([
            SummaryWrite(summary(session_id, f"s_big_{k}", 0), episode_range=(4 * k, 4 * k + 3)) for k in range(leaves)
        ])
        pin_times(store, session_id)


def open_store(tmp_path: Path) -> tuple[Settings, Store]:
    settings = Settings(db_path=tmp_path / "hiermem.db", config_path=tmp_path / "config.toml", policy=IN_USE)
    return settings, Store.open(settings.db_path)


def app_for(settings: Settings, store: Store, *, follow: bool = True) -> HiermemApp:
    return make_app(settings, store, probe_backend=False, follow=follow)
