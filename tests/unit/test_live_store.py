"""ChangeFeed: what another connection committed, seen through ``PRAGMA data_version`` and rowids."""

from __future__ import annotations

from pathlib import Path

from hiermem_tui.store import NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.store.changes import ChangeFeed, LiveSummaries
from hiermem_tui.tokens import Tokenizer

from tests.conftest import make_session


def leaf(session_id: str, first: int, last: int) -> SummaryWrite:
    s = NewSummary(id=new_id("s"), session_id=session_id, depth=0, tier="normal", backend="extractive", model=None,
                   prompt_version="test", content=f"leaf {first}-{last}", tokens=5)
    return SummaryWrite(s, episode_range=(first, last))


def test_the_feed_names_the_sessions_another_connection_touched(
    db_path: Path, store: Store, tokenizer: Tokenizer
) -> None:
    make_session(store, "old", 10)
    feed = ChangeFeed(store)
    assert feed.poll() is None  # the baseline
    assert feed.poll() is None
    with Store.open(db_path, tokenizer=tokenizer) as writer:  # another connection, as another process has
        make_session(writer, "x", 5)
        assert feed.poll() == ("x",)
        assert feed.poll() is None
        writer.sessions.upsert("empty", title="no episodes yet", source="test")
        assert feed.poll() == ("empty",)
        writer.dag.write([leaf("old", 0, 3)])
        make_session(writer, "y", 2)
        assert sorted(feed.poll() or ()) == ["old", "y"]
        run = writer.runs.start("old", "leaf", "extractive", None)
        writer.runs.finish(run.id, "done", wall_seconds=0.1)
        assert feed.poll() == ()  # something changed, no new rows: any session may be affected
        assert feed.poll() is None


def test_a_brief_another_connection_wrote_names_its_session(
    db_path: Path, store: Store, tokenizer: Tokenizer
) -> None:
    """A brief is the last thing a full pass writes: the screens showing that session (its About cell, its brief
    panel, what is still waiting for it) are told which session it was, not only that something changed."""
    make_session(store, "old", 10)
    feed = ChangeFeed(store)
    assert feed.poll() is None  # the baseline
    with Store.open(db_path, tokenizer=tokenizer) as writer:
        for text in ("About: the first brief", "About: the brief made again"):  # a new one supersedes the old
            writer.briefs.write("old", title="A title", about=text, text=text, first_seq=0, last_seq=9,
                                tier="normal", backend="extractive", model=None, prompt_version="test", tokens=5,
                                llm_seconds=0.0, run_id=None)
            assert feed.poll() == ("old",)
        assert feed.poll() is None


def test_the_pollers_own_writes_are_not_reported(store: Store) -> None:
    feed = ChangeFeed(store)
    feed.poll()
    make_session(store, "mine", 3)  # same thread, same connection: the caller knows what it wrote
    assert feed.poll() is None


def test_session_position_agrees_with_list_sessions_for_every_order(store: Store) -> None:
    from datetime import timedelta

    from hiermem_tui.store.sessions import SESSION_SORTS
    from tests.conftest import T0

    for i, (sid, n) in enumerate([("b", 5), ("A", 3), ("c", 5), ("a2", 1), ("d", 8), ("e", 3)]):
        make_session(store, sid, n, title=["Same", "same", "Other", "zeta", "Alpha", "Same"][i],
                     start=T0 + timedelta(hours=[3, 1, 3, 0, 2, 1][i]))
    store.dag.write([leaf("d", 0, 3)])
    for sort in SESSION_SORTS:
        for descending in (True, False):
            for text in (None, "same", "nothing matches"):
                listed = [s.id for s in store.sessions.page(sort=sort, descending=descending, text=text)]
                for sid in ["b", "A", "c", "a2", "d", "e"]:
                    want = listed.index(sid) if sid in listed else None
                    assert store.sessions.position(sid, sort=sort, descending=descending, text=text) == want, (
                        sort, descending, text, sid)
    assert store.sessions.position("missing") is None


# ---------------------------------------------------------------- LiveSummaries
def same_as_a_fresh_read(live: LiveSummaries, store: Store, session_id: str) -> None:
    fresh = LiveSummaries(store, session_id)
    fresh.load()
    session = store.sessions.get(session_id)
    assert session is not None
    assert live.spans == fresh.spans
    assert live.roots == fresh.roots == {s.id for s in store.dag.top(session_id)}
    assert live.unsummarised(session.episodes) == store.dag.unsummarised_ranges(session_id)


async def test_live_summaries_follow_passes_rechains_redos_and_reverts(
    db_path: Path, store: Store, tokenizer: Tokenizer
) -> None:
    from ._engine_fixtures import add_episodes, extractive_runner

    add_episodes(store, "s", 0, 12)
    live = LiveSummaries(store, "s")
    live.load()
    with Store.open(db_path, tokenizer=tokenizer) as writer:  # the writes come from elsewhere
        runner = extractive_runner(writer, tokenizer)
        await runner.compact("s", "leaf")
        _, delta = live.catch_up()
        assert delta.added and not delta.removed and not delta.reloaded
        same_as_a_fresh_read(live, store, "s")
        for start in (12, 24):  # more episodes, then full passes: leaves and condensations
            add_episodes(writer, "s", start, 12)
            await runner.compact("s", "full")
            session, delta = live.catch_up()
            assert delta and not delta.reloaded and session is not None and session.episodes == start + 12
            same_as_a_fresh_read(live, store, "s")
        leaf = next(s for s in writer.dag.summaries("s") if s.depth == 0 and s.parent_id is not None)
        await runner.remake.summary(leaf.id)  # the leaf and every ancestor get new versions
        _, delta = live.catch_up()
        assert leaf.id in delta.removed and not delta.reloaded
        same_as_a_fresh_read(live, store, "s")
        redo = await runner.remake.session("s")  # everything superseded at once: read again, or
        _, delta = live.catch_up()               # applied as removals and additions that agree
        assert delta.reloaded or (delta.added and delta.removed)
        same_as_a_fresh_read(live, store, "s")
        writer.dag.revert_run(redo.id)
        _, delta = live.catch_up()
        assert delta.reloaded
        same_as_a_fresh_read(live, store, "s")
        _, delta = live.catch_up()
        assert not delta
