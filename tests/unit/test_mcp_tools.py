"""The MCP tools' work in process (no SDK): paging within budgets, clipping after masking, snippets
cut from masked text, and a store that only reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from hiermem_tui.mcp_server.args import ToolError
from hiermem_tui.mcp_server.tools import Reader, call
from hiermem_tui.redact import Redactor
from hiermem_tui.search import build_search_index
from hiermem_tui.store import Store, StoreError
from tests.unit._cli import sha, strays
from tests.unit.secret_corpus import PLANTED
from tests.unit.test_search import add, leaf

GHP = next(p for p in PLANTED if p.name == "github classic token").secret


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.db"
    with Store.open(path) as store:
        add(store, "long", [f"message {i}: " + "word " * (5 + i % 40) for i in range(300)])
        leaf(store, "long", 0, 299, "one leaf over three hundred messages")
        filler = "lorem ipsum dolor sit amet " * 30
        add(store, "leaky", [f"{filler}the deploy token is {GHP} and then {filler}", "short reply"])
        build_search_index(store)  # the reader cannot: it never writes
    return path


@pytest.fixture
def reader(db: Path, redactor: Redactor) -> Reader:
    store = Store.open_reader(db)
    yield Reader(store, redactor)  # type: ignore[misc]
    store.close()


def test_expand_pages_a_big_leaf_within_its_budget(reader: Reader) -> None:
    leaf_id = reader.store.dag.top("long")[0].id
    seen: list[int] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        page = call(reader, "expand", {"id": leaf_id, "budget": 500, "offset": offset}).structured
        assert page["total"] == 300 and 0 < page["tokens"] <= 500
        assert [i["first_seq"] for i in page["items"]] == list(range(offset, offset + len(page["items"])))
        seen += [i["first_seq"] for i in page["items"]]
        offset = page["next_offset"]
        pages += 1
    assert seen == list(range(300)) and pages > 5


def test_an_item_bigger_than_the_budget_comes_alone_clipped(reader: Reader) -> None:
    leaf_id = reader.store.dag.top("long")[0].id
    page = call(reader, "expand", {"id": leaf_id, "budget": 3, "offset": 0}).structured
    (item,) = page["items"]
    assert item["clipped"] and len(item["text"]) <= 3 * 4 + 1 and item["text"].endswith("…")
    assert page["next_offset"] == 1


def test_text_is_clipped_after_masking_so_no_key_is_cut_in_half(reader: Reader) -> None:
    episode = reader.store.episodes.at("leaky", 0)
    assert episode is not None
    cut = episode.content.index(GHP) + 10  # the limit falls inside the key
    answer = call(reader, "describe", {"id": episode.id, "max_chars": cut})
    text = answer.structured["text"]
    assert answer.structured["clipped"] and GHP[:10] not in text
    # the limit fell inside the mark too: the mark is left out whole, not cut
    assert text.endswith("the deploy token is …") and "[secret" not in text
    assert answer.structured["redacted"]["secrets"] == 0
    whole = call(reader, "describe", {"id": episode.id}).structured
    assert "[secret: github token]" in whole["text"] and whole["redacted"]["secrets"] == 1


def test_snippets_are_cut_from_the_masked_text(reader: Reader) -> None:
    """A key next to the matched word would be cut at the snippet's edge and not be recognised: the
    whole text is masked first, then the snippet is made."""
    hits = call(reader, "search", {"query": "deploy", "session": "leaky"}).structured
    (hit,) = hits["hits"]
    assert "[secret: github token]" in hit["snippet"] and GHP[:8] not in hit["snippet"]
    assert hits["redacted"] == {"masked": True, "secrets": 1, "by_kind": {"github token": 1}}


def test_sessions_filter_sort_and_page(reader: Reader) -> None:
    page = call(reader, "sessions", {"sort": "title", "limit": 1}).structured
    assert page["total"] == 2 and [s["id"] for s in page["sessions"]] == ["leaky"] and page["next_offset"] == 1
    assert call(reader, "sessions", {"query": "lon"}).structured["sessions"][0]["id"] == "long"
    empty = call(reader, "sessions", {"query": "nothing like it"})
    assert empty.structured["total"] == 0 and "No sessions match" in empty.text


def test_ids_of_the_wrong_kind_say_what_to_use(reader: Reader) -> None:
    episode = reader.store.episodes.at("long", 3)
    assert episode is not None
    with pytest.raises(ToolError, match="is an episode, which has no sources"):
        call(reader, "expand", {"id": episode.id})
    with pytest.raises(ToolError, match="unknown tool"):
        call(reader, "nope", {})


def test_the_reader_store_refuses_writes_and_leaves_nothing(db: Path, reader: Reader) -> None:
    before = sha(db)
    call(reader, "search", {"query": "message"})
    with pytest.raises(StoreError):
        reader.store.sessions.upsert("new", title="x", source="test")
    reader.store.close()
    assert sha(db) == before and strays(db) == []


def test_an_empty_or_old_file_is_refused_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="empty database"):
        Store.open_reader(empty)
    with pytest.raises(StoreError, match="does not exist"):
        Store.open_reader(tmp_path / "missing.db")
    assert empty.read_bytes() == b""
