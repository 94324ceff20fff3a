"""Synthetic demo generator and the bundled demo data.

The generator feeds `hiermem-tui demo` at up to millions of episodes, so besides content
shape these tests pin down determinism (same inputs, same database), exact counts, and that
it streams (one session at a time, memory independent of the total).
"""

from __future__ import annotations

import gc
import itertools
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hiermem_tui.demo import DEFAULT_START, SPAN_DAYS, bundled_demo_path, generate
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, utc_from_iso


def _snapshot(sessions: list[ParsedSession]) -> list[tuple]:
    return [
        (s.id, s.title, s.source, s.created_at, [(e.role, e.content, e.created_at) for e in s.episodes])
        for s in sessions
    ]


def test_same_seed_gives_identical_output() -> None:
    a = _snapshot(list(generate(20, 600, 5)))
    b = _snapshot(list(generate(20, 600, 5)))
    assert a == b


def test_default_start_is_fixed_not_now() -> None:
    assert DEFAULT_START == datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
    assert _snapshot(list(generate(4, 40, 1))) == _snapshot(list(generate(4, 40, 1, start=DEFAULT_START)))


def test_different_seed_gives_different_output() -> None:
    a = _snapshot(list(generate(20, 600, 5)))
    b = _snapshot(list(generate(20, 600, 6)))
    assert a != b
    # Not just the ids: the text differs too.
    assert [e[1] for s in a for e in s[4]] != [e[1] for s in b for e in s[4]]


@pytest.mark.parametrize(
    ("sessions", "episodes"),
    [(0, 0), (1, 1), (1, 2), (3, 3), (3, 5), (7, 15), (10, 1000), (100, 10_000), (250, 251)],
)
def test_exact_session_and_episode_counts(sessions: int, episodes: int) -> None:
    out = list(generate(sessions, episodes, 11))
    assert len(out) == sessions
    assert sum(len(s.episodes) for s in out) == episodes
    assert [s.id for s in out] == [f"demo:11:{n}" for n in range(1, sessions + 1)]
    assert all(s.source == "demo" and s.title.strip() for s in out)


def test_every_session_has_two_episodes_when_there_are_enough() -> None:
    out = list(generate(50, 100, 3))
    assert [len(s.episodes) for s in out] == [2] * 50
    assert min(len(s.episodes) for s in generate(300, 9000, 3)) >= 2


@pytest.mark.parametrize(("sessions", "episodes"), [(-1, 10), (5, -1), (5, 4), (0, 3)])
def test_impossible_counts_raise_at_call_time(sessions: int, episodes: int) -> None:
    with pytest.raises(ValueError, match="--"):
        generate(sessions, episodes, 1)


def test_session_sizes_are_skewed() -> None:
    sizes = [len(s.episodes) for s in generate(2000, 200_000, 8)]
    assert statistics.median(sizes) < statistics.mean(sizes)  # most sessions are short...
    assert max(sizes) > 10 * statistics.median(sizes)  # ...and a few are long


def test_roles_follow_a_chat_pattern() -> None:
    seen: set[str] = set()
    for s in generate(200, 20_000, 4):
        roles = [e.role for e in s.episodes]
        seen.update(roles)
        assert set(roles) <= set(ROLES)
        assert "system" not in roles[1:], s.id
        body = roles[1:] if roles[0] == "system" else roles
        assert body[0] == "user", s.id
        for prev, cur in itertools.pairwise(body):
            assert (prev, cur) in {("user", "assistant"), ("assistant", "user"), ("assistant", "tool"), ("tool", "assistant")}
    assert seen == set(ROLES)


def test_timestamps_are_aware_ordered_and_spread_over_days() -> None:
    start = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    out = list(generate(10, 800, 2, start=start))
    for s in out:
        times = [e.created_at for e in s.episodes]
        assert all(t is not None and t.utcoffset() == timedelta(0) for t in times)
        assert times == sorted(times), s.id
        assert s.created_at == times[0]
        assert start - timedelta(days=SPAN_DAYS + 1) <= times[0] < start
    # Ten sessions start on ten different days, in order.
    firsts = [s.episodes[0].created_at for s in out]
    assert firsts == sorted(firsts)
    assert len({t.date() for t in firsts}) == 10
    # Turns are minutes apart, and some long sessions resume hours later.
    gaps = [(b.created_at - a.created_at).total_seconds() for s in out for a, b in itertools.pairwise(s.episodes)]
    assert statistics.median(gaps) < 600
    assert max(gaps) >= 2 * 3600


def test_text_has_realistic_shape() -> None:
    words: dict[str, list[int]] = defaultdict(list)
    code_blocks = 0
    for s in generate(100, 10_000, 9):
        for e in s.episodes:
            words[e.role].append(len(e.content.split()))
            code_blocks += e.role == "assistant" and "```" in e.content
    assert 5 <= statistics.median(words["user"]) <= 80
    assert 40 <= statistics.median(words["assistant"]) <= 400
    assert max(words["user"]) >= 300  # an occasional long paste
    assert code_blocks > 100
    assert len(set(s.title for s in generate(100, 10_000, 9))) > 50


def test_generation_is_lazy() -> None:
    """The first sessions of a billion-episode request arrive without computing the rest."""
    first = list(itertools.islice(generate(1_000_000, 1_000_000_000, 1), 3))
    assert len(first) == 3
    assert sum(len(s.episodes) for s in first) < 1_000_000  # a tiny fraction of the request


def _live_episodes() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is ParsedEpisode)


def test_streaming_keeps_only_the_current_session_alive() -> None:
    """200k episodes over 2k sessions: at any point only the session in hand is in memory."""
    gc.collect()
    baseline = _live_episodes()
    total = 0
    for n, s in enumerate(generate(2_000, 200_000, 21), 1):
        total += len(s.episodes)
        if n % 500 == 0:
            assert _live_episodes() - baseline == len(s.episodes), n
    assert total == 200_000


def test_user_turns_never_repeat_the_previous_answer() -> None:
    """Every user turn is user text, including the ones after a long break."""
    for s in generate(100, 20_000, 12):
        for prev, cur in itertools.pairwise(s.episodes):
            if cur.role == "user":
                assert cur.content != prev.content, s.id


# --- bundled demo data -----------------------------------------------------------------

REQUIRED_KEYS = {"session", "title", "role", "content", "created_at"}


def _bundled() -> dict[str, list[dict]]:
    sessions: dict[str, list[dict]] = defaultdict(list)
    with bundled_demo_path().open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            record = json.loads(line)
            assert isinstance(record, dict), number
            assert REQUIRED_KEYS <= record.keys(), number
            sessions[record["session"]].append(record)
    return sessions


def test_bundled_demo_is_valid_native_jsonl() -> None:
    path = bundled_demo_path()
    assert path.is_file()
    assert path.stat().st_size < 1_500_000
    sessions = _bundled()
    assert len(sessions) >= 6
    for sid, records in sessions.items():
        assert len({r["title"] for r in records}) == 1, sid
        times = [utc_from_iso(r["created_at"]) for r in records]
        assert all(t is not None for t in times), sid
        assert all(r["created_at"].endswith("Z") for r in records), sid
        assert times == sorted(times), sid  # type: ignore[type-var]
        assert all(r["role"] in ROLES and r["content"].strip() for r in records), sid


def test_bundled_demo_has_a_long_multi_day_session() -> None:
    long = [
        records
        for records in _bundled().values()
        if len(records) >= 300 and len({r["created_at"][:10] for r in records}) >= 3
    ]
    assert long


def test_bundled_demo_exercises_literal_display() -> None:
    """Markup-like and escape-like text is present as text, and no real control bytes are."""
    raw = bundled_demo_path().read_text(encoding="utf-8")
    contents = [r["content"] for records in _bundled().values() for r in records]
    assert any("[bold red]" in c for c in contents)
    assert any("\\x1b[31m" in c for c in contents)  # a backslash sequence, written out
    assert any("[@click=app.quit]" in c for c in contents)
    assert not any(ch in raw for ch in "\x1b\x07\x00")
    assert all("\x1b" not in c for c in contents)


def test_bundled_demo_matches_its_generator_script() -> None:
    """demo.jsonl is generated; a hand edit (or a forgotten regeneration) must not slip through."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "make_demo_jsonl.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr



def test_topic_pools_split_into_unindented_blocks() -> None:
    """The tool outputs and snippets are written indented in the topic data; each ``~~`` line
    (indented too) starts a new entry, and no entry keeps the source's indentation."""
    from hiermem_tui.demo.topic import blocks
    from hiermem_tui.demo.topics import TOPICS

    assert blocks("    a\n      b\n    ~~\n    c\n") == ("a\n  b", "c")
    by_name = {t.name: t for t in TOPICS}
    assert (len(by_name["coding"].tools), len(by_name["ops"].tools)) == (4, 3)
    for topic in TOPICS:
        for entry in (*topic.tools, *topic.snippets):
            assert "~~" not in entry.splitlines() and not entry.startswith(" "), (topic.name, entry[:40])
