"""What an agent meets right after a CLI import, through a real MCP session (the SDK's own stdio client
against ``hiermem-tui mcp``, as test_mcp.py starts it): what was just imported is found, a small budget
still gives a context, and times the store invented are said to be invented.

Each test makes its own file with the CLI, as a user would, then asks the server; the server must leave
the file byte for byte as it was.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.store import NewEpisode, Store
from tests.unit._cli import run, sha, strays
from tests.unit.test_mcp import ok, session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """An empty place for a file, and the settings every command and server here reads (none)."""
    config = tmp_path / "none.toml"
    monkeypatch.setenv("HIERMEM_CONFIG", str(config))
    return {"db": tmp_path / "history.db", "config": config}


def cli(served: dict[str, Any], *argv: str) -> str:
    code, out, err = run(*argv[:1], "--db", str(served["db"]), *argv[1:])
    assert code == 0, err
    return out


def write_jsonl(path: Path, session_id: str, texts: list[str], *, hour: int = 9) -> Path:
    path.write_text("".join(json.dumps({
        "session": session_id, "title": f"chat {session_id}", "role": ("user", "assistant")[i % 2], "content": text,
        "created_at": f"2025-05-0{1 + i // 1000}T{hour:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z",
    }) + "\n" for i, text in enumerate(texts)), encoding="utf-8")
    return path


def unindexed_rows(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)  # leaves nothing beside the file
    try:
        last = conn.execute("SELECT coalesce(max(docid), 0) FROM search_docs").fetchone()[0]
        done = conn.execute("SELECT value FROM meta WHERE key = 'search_indexed'").fetchone()[0]
        return int(last) - int(done)
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------ search
FISH = [f"step {i}: the quokkafish migration log line {i} with words to summarise" for i in range(40)]


async def test_search_finds_what_the_cli_just_imported(served: dict[str, Any], tmp_path: Path) -> None:
    cli(served, "import", str(write_jsonl(tmp_path / "a.jsonl", "fish", FISH)))
    assert unindexed_rows(served["db"]) == 0  # the import indexed what it wrote
    before, beside = sha(served["db"]), strays(served["db"])
    async with session(served) as client:
        found, text = await ok(client, "search", query="quokkafish", limit=100)
    assert len(found["hits"]) == 40 and {h["session"] for h in found["hits"]} == {"fish"}
    assert (found["unindexed"], found["scanned"]) == (0, 0) and "not searched" not in text
    assert "40 hits" in text
    assert sha(served["db"]) == before and strays(served["db"]) == beside


@pytest.fixture
def compacted(served: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The same import, then an extractive pass: summaries written by the run, no search in between."""
    cli(served, "import", str(write_jsonl(tmp_path / "a.jsonl", "fish", FISH)))
    cli(served, "compact", "--all", "--backend", "extractive")
    return served


async def test_search_finds_the_summaries_a_compaction_just_wrote(compacted: dict[str, Any]) -> None:
    assert unindexed_rows(compacted["db"]) == 0
    async with session(compacted) as client:
        found, _ = await ok(client, "search", query="quokkafish", limit=100)
    assert {h["kind"] for h in found["hits"]} == {"episode", "summary"} and found["scanned"] == 0


async def test_a_file_an_older_version_wrote_is_searched_by_a_scan(served: dict[str, Any], tokenizer: Any) -> None:
    with Store.open(served["db"], tokenizer=tokenizer) as store:
        store.db.write_hooks.clear()  # as versions before this one wrote: rows recorded, none indexed
        store.sessions.upsert("old", title="an older import", source="jsonl")
        store.episodes.append("old", [NewEpisode("0", "user", "tell me about the quokkafish", None),
                                      NewEpisode("1", "assistant", "the quokkafish swims north", None)])
    assert unindexed_rows(served["db"]) == 2
    before, beside = sha(served["db"]), strays(served["db"])
    async with session(served) as client:
        found, text = await ok(client, "search", query="quokkafish")
        alone, _ = await ok(client, "search", query='"swims north"', session="old")
    assert {h["id"] for h in found["hits"]} == {"old/0", "old/1"} and "2 hits" in text
    assert (found["unindexed"], found["scanned"]) == (0, 2) and "not searched" not in text
    assert [h["id"] for h in alone["hits"]] == ["old/1"]
    assert sha(served["db"]) == before and strays(served["db"]) == beside  # a reader: it indexed nothing


# ------------------------------------------------------------------------------------------ context
async def test_a_budget_smaller_than_the_newest_message_gives_its_head_clipped(served: dict[str, Any],
                                                                               tmp_path: Path) -> None:
    long = " ".join(f"line {i}: the build log says the linker ran out of memory." for i in range(600))
    cli(served, "import", str(write_jsonl(tmp_path / "a.jsonl", "build", ["why does it fail?", long])))
    async with session(served) as client:
        view, text = await ok(client, "context", session="build", budget=800)
    [item] = view["items"]
    assert item["id"] == "build/@1" and item["clipped"] is True
    assert 700 < item["tokens"] <= 800 == view["budget"] and view["total_tokens"] == item["tokens"]
    assert item["full_tokens"] > 5 * item["tokens"]
    assert item["text"].endswith("…") and long.startswith(item["text"][:-1])
    assert view["left_out"]["items"] == 1 and view["left_out"]["first_seq"] == 0
    assert f"the first {item['tokens']:,} of {item['full_tokens']:,} tokens" in text and "clipped to the budget" in text
    expected = json.loads(cli(served, "context", "--session", "build", "--budget", "800", "--json"))
    assert {k: view[k] for k in expected} | {"items": [{k: item[k] for k in expected["items"][0]}]} == expected
    shown = cli(served, "context", "--session", "build", "--budget", "800")
    assert f"(clipped to the budget)\n{item['text']}\n" in shown


# ------------------------------------------------------------------------------------------ sessions
async def test_sessions_say_when_their_times_were_invented_and_list_them_after_dated_ones(
        served: dict[str, Any], tmp_path: Path) -> None:
    cli(served, "import", str(FIXTURES / "oterm" / "machine-a.db"))  # oterm keeps no times
    cli(served, "import", str(FIXTURES / "jsonl" / "two_sessions.jsonl"))  # 2024 chats, imported after
    listed = json.loads(cli(served, "sessions", "--json"))
    untimed = {s["id"] for s in listed if s["source"] == "oterm"}
    assert len(untimed) == 2 and all(s["times_known"] is (s["id"] not in untimed) for s in listed)
    episode = sqlite3.connect(f"file:{served['db']}?mode=ro&immutable=1", uri=True).execute(
        "SELECT id FROM episodes WHERE session_id = ? ORDER BY seq LIMIT 1", (sorted(untimed)[0],)).fetchone()[0]
    async with session(served) as client:
        for sort in ("updated", "created"):
            page, text = await ok(client, "sessions", sort=sort)
            order = [s["id"] for s in page["sessions"]]
            assert set(order[-2:]) == untimed  # after the dated chats, though imported first
            assert [s["times_known"] for s in page["sessions"]] == [s not in untimed for s in order]
            assert "2000-01-01" not in text and text.count("no times (imported ") == 2
            assert all(f"{s['id']} ·" in text for s in page["sessions"])
        described, text = await ok(client, "describe", id=episode)
    assert described["start_at"].startswith("2000-01-01")  # the stored value, for what it is…
    assert "2000-01-01" not in text and "· no time ·" in text  # …and the text does not pass it off as real
    by_id = {s["id"]: s for s in listed}
    assert all({k: s[k] for k in by_id[s["id"]]} == by_id[s["id"]] for s in page["sessions"])
