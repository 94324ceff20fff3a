"""``hiermem-tui backup`` and ``--backup``: a whole, healthy copy, even of a file another writer keeps changing."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from hiermem_tui.store import Store
from hiermem_tui.store.backup import backup, default_backup_path
from hiermem_tui.store.db import Db
from hiermem_tui.tokens import Tokenizer

from ._cli import run, sha, strays
from ._engine_fixtures import add_episodes, episode_text, extractive_runner, small_policy_env  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("small_policy_env")  # CLI runs read the small test policy, nothing else


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "hiermem.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "a", 0, 40)
        asyncio.run(extractive_runner(store, tokenizer).compact("a"))
    return path


def test_a_backup_taken_while_a_run_writes_is_whole_and_holds_what_was_committed(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """A writer thread appends and compacts (extractive) the whole time; the backup copies a few pages
    per step and lets the writer commit between steps. The copy must be the file at one moment."""
    path = tmp_path / "busy.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        for i in range(8):
            add_episodes(store, f"x{i}", 0, 60, words=60)  # enough pages for many steps
        add_episodes(store, "s", 0, 20)
    committed: list[int] = []
    wrote, stop = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with Store.open(path, tokenizer=tokenizer) as w:
                runner = extractive_runner(w, tokenizer)
                n = 20
                while not stop.is_set():
                    add_episodes(w, "s", n, 6)
                    n += 6
                    committed.append(n)
                    asyncio.run(runner.compact("s"))
                    wrote.set()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            wrote.set()

    thread = threading.Thread(target=writer)
    thread.start()
    steps: list[tuple[int, int]] = []
    try:
        assert wrote.wait(60)
        before = committed[-1]  # episodes of "s" committed before the backup began

        def between_steps(done: int, total: int) -> None:
            steps.append((done, total))
            wrote.clear()
            assert wrote.wait(60)  # the writer commits again before the next step

        reader = Db(path, readonly=True, checking=True)
        try:
            result = backup(reader, tmp_path / "copy.db", on_progress=between_steps, pages_per_step=8)
        finally:
            reader.close()
    finally:
        stop.set()
        thread.join(timeout=120)
    assert not errors, errors
    assert len(steps) > 5 and [d for d, _ in steps] == sorted({d for d, _ in steps})  # never restarted
    copy = tmp_path / "copy.db"
    assert result.path == copy and not strays(copy)
    conn = sqlite3.connect(copy)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT seq, content FROM episodes WHERE session_id = 's' ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert len(rows) >= before and [c for _, c in rows] == [episode_text("s", i) for i in range(len(rows))]
    assert len(rows) < committed[-1]  # the writer went on during the backup, and none of that is in the copy
    code, out, _ = run("doctor", "--db", str(copy), "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    with Store.open(copy, tokenizer=tokenizer) as store:
        assert store.sessions.get("s").episodes == len(rows)  # type: ignore[union-attr]


def test_the_cli_backup_copies_a_quiet_file_without_touching_it(tmp_path: Path, db: Path) -> None:
    before = sha(db)
    dest = tmp_path / "copies" / "one.db"
    dest.parent.mkdir()
    code, out, err = run("backup", "--db", str(db), str(dest))
    assert code == 0, err
    assert out.startswith("backed up 1 session, 40 episodes") and str(dest) in out
    assert sha(db) == before and strays(db) == [] and strays(dest) == []
    assert sorted(p.name for p in dest.parent.iterdir()) == ["one.db"]  # no partial file left
    code, out, _ = run("doctor", "--db", str(dest))
    assert code == 0 and out.startswith("ok: 1 session, 40 episodes")


def test_dest_is_never_overwritten_without_force(tmp_path: Path, db: Path) -> None:
    dest = tmp_path / "old.db"
    dest.write_text("precious")
    code, out, err = run("backup", "--db", str(db), str(dest))
    assert code == 2 and out == "" and "already exists" in err and err.count("\n") == 1
    assert dest.read_text() == "precious"
    code, out, err = run("backup", "--db", str(db), str(dest), "--force")
    assert code == 0, err
    assert run("doctor", "--db", str(dest))[0] == 0


@pytest.mark.parametrize("where", ["itself", "folder", "no-folder", "in-use"])
def test_a_destination_that_cannot_be_used_is_one_line_exit_2(tmp_path: Path, db: Path, where: str) -> None:
    dest = {"itself": db, "folder": tmp_path, "no-folder": tmp_path / "nope" / "x.db",
            "in-use": tmp_path / "busy.db"}[where]
    if where == "in-use":
        dest.write_bytes(b"")
        Path(str(dest) + "-wal").write_bytes(b"")
    before = sha(db)
    code, out, err = run("backup", "--db", str(db), str(dest), "--force")
    assert code == 2 and out == "" and err.startswith("hiermem-tui: ") and err.count("\n") == 1, err
    assert sha(db) == before


def test_an_empty_source_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    code, _, err = run("backup", "--db", str(empty), str(tmp_path / "copy.db"))
    assert code == 2 and "empty" in err and not (tmp_path / "copy.db").exists()


def test_default_backup_names_never_collide(tmp_path: Path) -> None:
    from datetime import datetime

    db = tmp_path / "hiermem.db"
    when = datetime(2026, 12, 1, 21, 30, 0)
    first = default_backup_path(db, when)
    assert first.name == "hiermem.backup-20261201-213000.db"
    first.touch()
    assert default_backup_path(db, when).name == "hiermem.backup-20261201-213000-2.db"


def test_resummarize_backup_copies_the_file_before_the_run(tmp_path: Path, db: Path, tokenizer: Tokenizer) -> None:
    dest = tmp_path / "before-redo.db"
    with Store.open(db, tokenizer=tokenizer) as store:
        active = {s.id for s in store.dag.summaries("a")}
    code, out, err = run("resummarize", "--db", str(db), "--session", "a", "--backend", "extractive", "--json",
                         "--backup", str(dest))
    assert code == 0, err
    assert json.loads(out)["status"] == "done" and "backed up 1 session, 40 episodes" in err
    with Store.open(dest, tokenizer=tokenizer) as copy:
        assert {s.id for s in copy.dag.summaries("a")} == active  # the copy is from before the redo
        assert len(copy.runs.of_session("a")) == 1
    with Store.open(db, tokenizer=tokenizer) as store:
        assert not active & {s.id for s in store.dag.summaries("a")}


@pytest.mark.parametrize("command", ["resummarize", "repair"])
def test_a_backup_destination_that_exists_stops_the_run_before_it_starts(tmp_path: Path, db: Path,
                                                                         command: str) -> None:
    dest = tmp_path / "taken.db"
    dest.write_text("x")
    before = sha(db)
    code, out, err = run(command, "--db", str(db), "--session", "a", "--backend", "extractive",
                         "--backup", str(dest))
    assert code == 2 and out == "" and "already exists" in err and err.count("\n") == 1
    assert sha(db) == before and dest.read_text() == "x"
