"""Stats (per session and file-wide) and the run history, against what the engine really wrote."""

from __future__ import annotations

import asyncio

from hiermem_tui.fidelity_value import Fidelity
from hiermem_tui.run_history import duration, list_runs, run_json, run_summaries, why
from hiermem_tui.stats import compute_stats
from hiermem_tui.store import NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.tokens import Tokenizer

from ._engine_fixtures import add_episodes, extractive_runner


def test_stats_of_a_session_match_its_summaries(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 60)
    add_episodes(store, "b", 0, 5)
    runner = extractive_runner(store, tokenizer)
    asyncio.run(runner.compact("a"))
    asyncio.run(runner.remake.summary(store.dag.top("a")[0].id))
    s = compute_stats(store, "a")
    active = store.dag.summaries("a")
    assert s.sessions == 1 and s.episodes == 60
    assert s.active == len(active) and s.superseded == len(store.dag.summaries("a", status="superseded")) > 0
    assert [(d.depth, d.count) for d in s.by_depth] == sorted(
        {(x.depth, sum(1 for y in active if y.depth == x.depth)) for x in active})
    assert sum(s.by_tier.values()) == s.active
    session = store.sessions.get("a")
    assert session is not None
    assert (s.raw_tokens, s.model_tokens) == (session.tokens, session.uncompacted_tokens)
    assert s.compression is not None and s.compression > 1
    assert s.runs_by_status["done"] == 2 and s.runs == 2
    assert s.engines[0].backend == "extractive" and s.engines[0].runs == 2
    assert s.engines[0].summaries == sum(r.summaries_created for r in store.runs.of_session("a"))
    data = s.as_json()
    assert data["scope"] == "session" and data["summaries"]["active"] == s.active
    assert data["tokens"]["raw"] == session.tokens and data["fallbacks"] == s.by_tier["fallback"]


def test_file_stats_add_up_the_sessions(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 40)
    add_episodes(store, "b", 0, 30)
    add_episodes(store, "c", 0, 3)
    runner = extractive_runner(store, tokenizer)
    for sid in ("a", "b"):
        asyncio.run(runner.compact(sid))
    whole = compute_stats(store)
    parts = [compute_stats(store, sid) for sid in ("a", "b", "c")]
    assert whole.session_id is None and whole.sessions == 3
    for field in ("episodes", "raw_tokens", "model_tokens", "active", "superseded", "runs", "covered_episodes"):
        assert getattr(whole, field) == sum(getattr(p, field) for p in parts), field
    assert whole.as_json()["scope"] == "file"


def test_fidelity_counts_low_measured_and_unmeasured(store: Store) -> None:
    add_episodes(store, "a", 0, 16)

    def leaf(first: int, last: int, identifiers: int | None, kept: int | None) -> None:
        s = NewSummary(new_id("s"), "a", 0, "normal", "ollama", "m", "t", "text", 3,
                       fidelity=None if identifiers is None or kept is None else Fidelity(identifiers, kept, (), ()))
        store.dag.write([SummaryWrite(s, episode_range=(first, last))])

    leaf(0, 3, 10, 5)      # 0.5: low
    leaf(4, 7, 10, 8)      # 0.8: not under 0.8
    leaf(8, 11, 0, 0)      # nothing to keep: measured, fine
    leaf(12, 15, None, None)  # made before fidelity was measured
    s = compute_stats(store, "a", threshold=0.8)
    assert (s.low_fidelity, s.measured, s.unmeasured) == (1, 3, 1)
    assert s.min_retention == 0.5
    assert compute_stats(store, "a", threshold=0.9).low_fidelity == 2


def test_the_stats_judge_low_fidelity_by_the_rule_a_summary_is_judged_by(store: Store) -> None:
    """The figures the stats count low-fidelity summaries by are the ones a summary is flagged by
    (``Fidelity.low``), at exactly the threshold too: 7 of 25 key names is 0.28, not under 0.28."""
    add_episodes(store, "a", 0, 12)
    measured = [Fidelity(25, 7, (), (), key=25, key_kept=7), Fidelity(50, 14, (), ()), Fidelity(40, 30, (), (), 10, 2)]
    for i, fid in enumerate(measured):
        s = NewSummary(new_id("s"), "a", 0, "normal", "ollama", "m", "t", "text", 3, fidelity=fid)
        store.dag.write([SummaryWrite(s, episode_range=(4 * i, 4 * i + 3))])
    for threshold in (0.14, 0.2, 0.28, 0.29):
        flagged = sum(f.low(threshold) for f in measured)
        assert compute_stats(store, "a", threshold=threshold).low_fidelity == flagged, threshold
        assert compute_stats(store, threshold=threshold).low_fidelity == flagged, threshold


def test_empty_file_stats_are_zeros_not_errors(store: Store) -> None:
    s = compute_stats(store)
    assert (s.sessions, s.episodes, s.active, s.runs) == (0, 0, 0, 0)
    assert s.compression is None and s.as_json()["tokens"]["compression"] is None


def test_run_history_newest_first_paged_with_what_each_run_made(store: Store, tokenizer: Tokenizer) -> None:
    add_episodes(store, "a", 0, 40)
    add_episodes(store, "b", 0, 30)
    runner = extractive_runner(store, tokenizer)
    first = asyncio.run(runner.compact("a"))
    second = asyncio.run(runner.compact("b"))
    redo = asyncio.run(runner.remake.summary(store.dag.top("a")[0].id))
    assert first and second
    page = list_runs(store, limit=2)
    assert [r.id for r in page.runs] == [redo.id, second.id] and page.more
    rest = list_runs(store, limit=2, before=page.cursor)
    assert [r.id for r in rest.runs] == [first.id] and not rest.more
    assert [r.id for r in list_runs(store, "a").runs] == [redo.id, first.id]
    made = run_summaries(store, first.id)
    assert len(made) == first.summaries_created
    assert [m.span.first_seq for m in made] == sorted(m.span.first_seq for m in made)
    assert any(not m.active for m in made)  # the re-summarise superseded some of them since
    assert duration(first) is not None and why(first) is None
    data = run_json(first)
    assert data["session"] == "a" and data["tiers"]["normal"] + data["tiers"]["fallback"] + \
        data["tiers"]["aggressive"] == first.summaries_created


def test_interrupted_and_failed_runs_say_why(store: Store) -> None:
    add_episodes(store, "a", 0, 4)
    run = store.runs.start("a", "leaf", "ollama", "m")
    store.db.conn.execute("UPDATE runs SET pid = 999999999, host = 'elsewhere' WHERE id = ?", (run.id,))
    store.runs.mark_interrupted()
    failed = store.runs.start("a", "full", "ollama", "m")
    store.runs.finish(failed.id, "failed", wall_seconds=1.5, error="Ollama at http://x went away")
    cancelled = store.runs.start("a", "full", "ollama", "m")
    store.runs.finish(cancelled.id, "cancelled", wall_seconds=0.5)
    by_id = {r.id: r for r in list_runs(store, "a").runs}
    assert why(by_id[run.id]) == "the process running it stopped"
    assert why(by_id[failed.id]) == "Ollama at http://x went away" and duration(by_id[failed.id]) == 1.5
    assert "cancelled" in (why(by_id[cancelled.id]) or "")
