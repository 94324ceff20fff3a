"""Watch mode's core (``hiermem_tui.watch``): real files in tmp_path that the test grows, a real
store, and ticks run explicitly — no sleeps. The clock handed to the Watcher is wall time
plus an offset the test moves, to say "this file has been quiet for a while".

The main property: whatever the moments at which the watcher looked at a growing file, the
store ends up exactly as one ``import`` of the finished file would leave it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.config import Policy
from hiermem_tui.watch import CompactionQueue, TickReport, Watcher, default_min_new

FIX = Path(__file__).resolve().parents[1] / "fixtures"
BAKERY = FIX / "claude_code" / "projects" / "-home-ana-bakery" / "5d1e2f3a-0b4c-4d5e-8f60-7a8b9c0d1e2f.jsonl"
ROLLOUT = (FIX / "codex" / "sessions" / "2025" / "03" / "14"
           / "rollout-2025-03-14T09-30-00-0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
NATIVE = FIX / "jsonl" / "two_sessions.jsonl"
SETTLE = 30.0


class Clock:
    """Wall time plus an offset: ``quiet()`` makes every file look settled."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        import time

        return time.time() + self.offset

    def quiet(self) -> None:
        self.offset += 10 * SETTLE


@pytest.fixture
def clock() -> Clock:
    return Clock()


def watcher(store: Store, paths: list[Path], clock: Clock, **kw: object) -> Watcher:
    return Watcher(store, paths, settle_s=SETTLE, clock=clock, **kw)  # type: ignore[arg-type]


def content(store: Store) -> list[tuple]:
    """Every episode as (id, session, seq, role, content, created_at), in order."""
    rows = store.db.conn.execute(
        "SELECT id, session_id, seq, role, content, created_at FROM episodes ORDER BY session_id, seq")
    return [tuple(r) for r in rows]


def imported_whole(path: Path, tmp_path: Path, tokenizer: Tokenizer, fmt: str = "auto") -> list[tuple]:
    """What a one-shot ``import`` of the finished file stores (in a second database)."""
    with Store.open(tmp_path / f"reference-{path.name}.db", tokenizer=tokenizer) as ref:
        import_paths(ref, [path], fmt)
        return content(ref)


def grow(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# ---------------------------------------------------------------- native JSONL, from a byte offset
def test_native_jsonl_read_line_by_line_ends_as_one_import_would(
    tmp_path: Path, store: Store, tokenizer: Tokenizer, clock: Clock
) -> None:
    live = tmp_path / "chats" / "log.jsonl"
    live.parent.mkdir()
    live.touch()
    w = watcher(store, [live.parent], clock)
    assert w.tick().episodes == 0
    total = 0
    for raw in lines_of(NATIVE):
        half = len(raw) // 2
        grow(live, raw[:half])  # a writer caught mid-line
        report = w.tick()
        assert not any(f.skipped for f in report.imports), "a half-written line is not malformed"
        grow(live, raw[half:])
        total += w.tick().episodes
    assert content(store) == imported_whole(NATIVE, tmp_path, tokenizer)
    assert total == len(content(store))
    assert store.sessions.get("garden-1").title == "Planning the vegetable beds"  # the first title wins


def test_an_unterminated_last_line_waits_until_whole_or_the_file_is_quiet(
    tmp_path: Path, store: Store, clock: Clock
) -> None:
    live = tmp_path / "log.jsonl"
    live.write_text('{"session": "s", "role": "user", "content": "one"}\n')
    w = watcher(store, [live], clock)
    assert w.tick().episodes == 1
    grow(live, b'{"session": "s", "role": "assistant", "content": "two"}')  # whole JSON, no newline yet
    assert w.tick().episodes == 1
    grow(live, b'\n{"session": "s", "role": "user", "cont')
    report = w.tick()
    assert report.episodes == 0 and not report.imports
    clock.quiet()  # nobody finished the line: it is the file's real end, and it is malformed
    report = w.tick()
    assert [dict(f.skipped) for f in report.imports] == [{"not valid JSON": 1}]
    assert w.tick().imports == []  # reported once
    assert [r[4] for r in content(store)] == ["one", "two"]


# ---------------------------------------------------------------- logs: parsed again, last episode held back
@pytest.mark.parametrize("source", [BAKERY, ROLLOUT], ids=["claude-code", "codex"])
def test_a_log_written_line_by_line_ends_as_one_import_would(
    tmp_path: Path, store: Store, tokenizer: Tokenizer, clock: Clock, source: Path
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    live = folder / source.name
    w = watcher(store, [folder], clock)
    w.tick()
    for raw in lines_of(source):
        grow(live, raw)
        report = w.tick()
        assert not any(f.skipped for f in report.imports)
    reference = imported_whole(source, tmp_path, tokenizer)
    got = content(store)
    # Every stored episode is final (a reply split over lines was never stored half-merged) …
    assert got == reference[: len(got)]
    assert len(got) < len(reference)  # … and the last one waits while the file may still grow
    clock.quiet()
    report = w.tick()
    assert report.episodes == len(reference) - len(got)
    assert content(store) == reference
    assert w.tick().imports == []


def test_a_reply_split_over_two_lines_is_stored_once_and_whole(tmp_path: Path, store: Store, clock: Clock) -> None:
    """Claude Code writes one reply's text and tool call as two lines with the same message id."""
    lines = lines_of(BAKERY)
    text_at = next(i for i, raw in enumerate(lines) if b"Let me look at the timer code." in raw)
    live = tmp_path / "session.jsonl"
    live.write_bytes(b"".join(lines[: text_at + 1]))
    w = watcher(store, [live], clock)
    w.tick()
    assert all("Let me look" not in r[4] for r in content(store))  # held back: the tool call may follow
    grow(live, b"".join(lines[text_at + 1:]))
    w.tick()
    reply = next(r[4] for r in content(store) if "Let me look" in r[4])
    assert reply.startswith("Let me look at the timer code.\n\n[tool_use Bash]")


# ---------------------------------------------------------------- folders and files coming and going
def test_new_files_in_new_sub_folders_are_found(tmp_path: Path, store: Store, tokenizer: Tokenizer,
                                                clock: Clock) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    w = watcher(store, [root], clock)
    assert w.tick().files == 0
    day = root / "2025" / "03" / "14"
    day.mkdir(parents=True)
    shutil.copy(ROLLOUT, day / ROLLOUT.name)
    (day / "notes.txt").write_text("not followed: folders contribute *.jsonl only")
    clock.quiet()
    report = w.tick()
    assert report.found == 1 and w.files == [day / ROLLOUT.name]
    assert report.folders == 4
    assert content(store) == imported_whole(ROLLOUT, tmp_path, tokenizer)


def test_a_file_of_no_known_format_is_reported_once_until_it_changes(tmp_path: Path, store: Store,
                                                                     clock: Clock) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    stray = folder / "stray.jsonl"
    stray.write_text('{"hello": "world"}\n')
    w = watcher(store, [folder], clock)
    assert w.tick().refused == []  # live: it may yet turn out to be something
    clock.quiet()
    assert [p for p, _ in w.tick().refused] == [stray]
    assert w.tick().refused == []
    grow(stray, b'{"session": "x", "role": "user", "content": "now it is a chat"}\n')
    assert w.tick().episodes == 1


def test_a_removed_file_is_dropped_and_a_replaced_one_read_again(tmp_path: Path, store: Store, clock: Clock) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    a = folder / "a.jsonl"
    a.write_text('{"session": "a", "role": "user", "content": "first"}\n')
    w = watcher(store, [folder], clock)
    assert w.tick().episodes == 1
    a.unlink()
    report = w.tick()
    assert report.gone == [a] and w.files == []
    a.write_text('{"session": "a", "role": "user", "content": "first"}\n'
                 '{"session": "a", "role": "assistant", "content": "second"}\n')
    assert w.tick().episodes == 1  # the first line is already stored (idempotent keys)
    a.write_text('{"session": "a", "role": "user", "content": "first"}\n')  # cut short: read again
    assert w.tick().episodes == 0
    assert [r[4] for r in content(store)] == ["first", "second"]


def test_a_whole_file_export_is_imported_once_it_is_quiet(tmp_path: Path, store: Store, clock: Clock) -> None:
    export = tmp_path / "conversations.json"
    shutil.copy(FIX / "chatgpt" / "conversations.json", export)
    w = watcher(store, [export], clock)
    w.tick()
    assert content(store) == []  # maybe still downloading
    clock.quiet()
    report = w.tick()
    assert report.episodes > 0 and report.imports[0].fmt == "chatgpt"
    assert w.tick().imports == []


def test_a_quiet_tick_reads_nothing(tmp_path: Path, store: Store, clock: Clock) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(20):
        (folder / f"{i}.jsonl").write_text(json.dumps({"session": f"s{i}", "role": "user", "content": "hi"}) + "\n")
    w = watcher(store, [folder], clock)
    assert w.tick().episodes == 20
    clock.quiet()
    report = w.tick()
    assert report == TickReport(files=20, folders=1)


def test_stopping_ends_the_tick_between_files(tmp_path: Path, store: Store, clock: Clock) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(5):
        (folder / f"{i}.jsonl").write_text(json.dumps({"session": f"s{i}", "role": "user", "content": "hi"}) + "\n")
    asked: list[int] = []

    def stop_after_two() -> bool:
        asked.append(1)
        return len(asked) > 2

    w = watcher(store, [folder], clock, should_stop=stop_after_two)
    report = w.tick()
    assert report.stopped and report.episodes == 2
    assert store.db.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2


# ---------------------------------------------------------------- what to compact
def test_the_queue_decides_on_aggregates_and_backs_off(store: Store) -> None:
    from ._engine_fixtures import add_episodes

    add_episodes(store, "busy", 0, 30)
    add_episodes(store, "quiet", 0, 5)
    now = [100.0]
    queue = CompactionQueue(store, min_new=20, backoff_s=(5.0, 50.0), clock=lambda: now[0])
    queue.add(["busy", "quiet", "gone"])
    assert queue.due() == ["busy"]
    assert queue.waiting == ["busy"]  # the others wait for new episodes to bring them back
    assert queue.finished(["busy"], {"busy": "failed"}) == 5.0
    assert queue.due() == []
    now[0] += 5
    assert queue.due() == ["busy"]
    queue.failed()
    assert queue.retry_in == 50.0  # longer each time
    now[0] += 50
    assert queue.finished(["busy"], {}) is None and queue.waiting == [] and queue.failures == 0


def test_if_over_reads_the_uncompacted_tokens(store: Store) -> None:
    from ._engine_fixtures import add_episodes

    add_episodes(store, "a", 0, 10)
    tokens = store.sessions.get("a").uncompacted_tokens
    queue = CompactionQueue(store, if_over=tokens)
    queue.add(["a"])
    assert queue.due() == []
    queue = CompactionQueue(store, if_over=tokens - 1)
    queue.add(["a"])
    assert queue.due() == ["a"]


def test_default_min_new_leaves_room_for_real_leaves() -> None:
    assert default_min_new(Policy()) == 32
    assert default_min_new(Policy(fresh_tail=4, leaf_min_episodes=2)) == 12


def test_a_database_refusal_is_retried_next_tick(tmp_path: Path, store: Store, clock: Clock) -> None:
    """The file is fine but the database says no (a trigger here; a lock or a full disk in life)."""
    store.db.conn.execute("CREATE TRIGGER no_x BEFORE INSERT ON episodes WHEN NEW.session_id = 'x' "
                       "BEGIN SELECT RAISE(ABORT, 'no room today'); END")
    live = tmp_path / "a.jsonl"
    live.write_text('{"session": "x", "role": "user", "content": "one"}\n'
                    '{"session": "x", "role": "assistant", "content": "two"}\n')
    w = watcher(store, [live], clock)
    report = w.tick()
    assert [(p, "no room today" in why) for p, why in report.failed] == [(live, True)] and not report.refused
    assert content(store) == []
    store.db.conn.execute("DROP TRIGGER no_x")
    assert w.tick().episodes == 2  # tried again although the file did not change
    assert [r[4] for r in content(store)] == ["one", "two"]


def test_a_huge_live_log_is_parsed_again_only_after_a_pause(tmp_path: Path, store: Store, clock: Clock) -> None:
    """Parsing a big log whole takes a while: the watcher waits a few times that before doing it
    again, so an agent writing a huge session does not keep a core busy."""
    records = [json.loads(raw) for raw in lines_of(BAKERY)]
    live = tmp_path / "huge.jsonl"
    with live.open("w") as fh:
        for k in range(400):  # ~4 MB: parsing it takes well over PAUSE_FROM_S anywhere
            for rec in records:
                rec = dict(rec, uuid=f"{rec.get('uuid')}-{k}")
                if isinstance(rec.get("message"), dict) and "id" in rec["message"]:
                    rec["message"] = dict(rec["message"], id=f"{rec['message']['id']}-{k}")
                fh.write(json.dumps(rec) + "\n")
    clock.quiet()
    w = watcher(store, [live], clock)
    first = w.tick().episodes
    assert first > 4000
    user = next(r for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], str))
    grow(live, json.dumps(dict(user, uuid="late-1", timestamp="2025-05-03T10:00:00Z")).encode() + b"\n")
    assert w.tick().imports == []  # changed, but within the pause: not parsed yet
    clock.quiet()
    assert w.tick().episodes == 1
