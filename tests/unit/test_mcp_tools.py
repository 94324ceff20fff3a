"""The MCP tools' work in process (no SDK): paging within budgets, clipping after masking, snippets
cut from masked text, and a store that only reads."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from hiermem_tui.masker import Masker
from hiermem_tui.mcp_server.args import ToolError
from hiermem_tui.mcp_server.tools import Reader, _clip, _head, call
from hiermem_tui.redact import Redactor, masked_lines
from hiermem_tui.search import build_search_index, make_snippet, parse_query
from hiermem_tui.search.engine import _masked
from hiermem_tui.search.snippet import REACH, WIDTH, cut_snippet
from hiermem_tui.store import Store, StoreError
from hiermem_tui.tokens import Tokenizer
from tests.unit._cli import sha, strays
from tests.unit._engine_fixtures import add_episodes, extractive_runner
from tests.unit.secret_corpus import PLANTED, Planted
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
    lines the snippet comes from are masked whole first, then the snippet is cut from them."""
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


# ---------------------------------------------------------------- secrets at a snippet's edge
FILLER = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 8


def _edge_texts() -> list[tuple[str, Planted, str]]:
    """``(query word, secret, text)``: each planted secret where a snippet's cut crosses it — its end
    (the hit opens the text: the snippet runs 160 characters from it) falling from 40 characters
    before the secret's start to 12 into it, and its start (40 characters before the hit) falling in
    it, the hit 0–54 characters after the secret's line."""
    out = []
    k = 0
    for p in PLANTED:
        at = p.line.index(p.secret)
        for d in range(-12, 44, 4):
            word = f"findme{k}"
            k += 1
            head = f"{word} " + FILLER[:max(0, WIDTH - d - at - len(word) - 2)]
            out.append((word, p, f"{head}\n{p.line}\n{FILLER}"))
        for gap in range(0, 60, 6):
            word = f"findme{k}"
            k += 1
            out.append((word, p, f"{FILLER}\n{p.line}{' ' + 'ab ' * (gap // 3)} {word} {FILLER}"))
    return out


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> tuple[Reader, list[tuple[str, Planted, str]]]:
    path = tmp_path_factory.mktemp("edges") / "edges.db"
    texts = _edge_texts()
    with Store.open(path) as store:
        add(store, "edges", [t for _, _, t in texts])
        build_search_index(store)
    store = Store.open_reader(path)
    yield Reader(store, Redactor()), texts  # type: ignore[misc]
    store.close()


def _pieces(secret: str) -> list[str]:
    """Every 8-character piece of a secret (of each of its lines: a snippet folds the newlines)."""
    return [line[i:i + 8] for line in secret.split("\n") for i in range(0, max(1, len(line) - 7), 2)]


def test_a_secret_across_a_snippets_edge_never_shows_in_part(edges: tuple[Reader, list[tuple[str, Planted, str]]]) -> None:
    """The snippet is found in the raw text and only the lines around it are masked: a key the cut
    falls in must still be recognised whole (its line is masked whole, a private key's text all of it)
    — not one 8-character piece of any planted secret shows, at either edge, for any of them."""
    reader, texts = edges
    redactor = reader.redactor
    assert redactor is not None
    crossed = 0
    for word, p, text in texts:
        assert p.secret not in redactor.mask(text)  # the whole text masks it: a fair case
        (hit,) = call(reader, "search", {"query": word}).structured["hits"]
        snippet = hit["snippet"]
        leaked = [piece for piece in _pieces(p.secret) if piece in snippet]
        assert not leaked, (p.name, word, snippet)
        raw = make_snippet(text, parse_query(word).terms).text  # where the cut falls, unmasked
        crossed += any(piece in raw for piece in _pieces(p.secret)) and p.secret not in raw
    assert crossed > len(PLANTED)  # the raw snippets did cut secrets in part: the cases are real


def test_without_secrets_the_masked_snippet_is_the_raw_one(reader: Reader) -> None:
    """Without secrets the MCP snippet is the CLI's; and cut again from the lines it comes from (what
    is done when a secret near it was masked) it comes out the same: the lines reach REACH past its
    end, so the best window and its ellipses are found as in the whole text."""
    rng = random.Random(5)
    words = FILLER.split() + ["findme", "findme", "\n", "\n\n", "x" * 50]
    masker = Masker(reader.redactor)
    for n in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(5, 900)))
        query = parse_query(rng.choice(["findme", "lorem", "elit findme", "amet*", "dolor OR xxxx"]))
        whole, start, end = cut_snippet(text, query.terms)
        assert whole == make_snippet(text, query.terms)
        assert _masked(text, query.terms, WIDTH, masker) == whole, (n, text)
        piece, a, b = masked_lines(lambda t: t, text, start, end + REACH)
        assert make_snippet(piece, query.terms, more_before=a > 0, more_after=b < len(text)) == whole, (n, text)
    assert masker.count == 0


def test_a_clipped_text_masks_only_its_lines_and_reads_as_the_whole_masked_then_cut(reader: Reader) -> None:
    """An excerpt, a describe cut to max_chars, an item clipped to a budget: the same text and the same
    ``clipped`` as masking the whole text and cutting it, for every limit across a text of secrets."""
    from tests.unit.test_redact import _mixed_text

    text = _mixed_text()
    whole = Masker(reader.redactor)(text)
    for limit in range(1, len(text) + 40, 7):
        assert _head(Masker(reader.redactor), text, limit) == _clip(whole, limit), limit


def test_newest_tops_of_a_page_are_the_tops_the_tree_lists(store: Store, tokenizer: Tokenizer) -> None:
    """The sessions listing reads a page's tops in two queries (their places, then the few shown):
    the same count and the same newest summaries as ``Dag.top`` per session, superseded versions and
    sessions without summaries included."""
    for sid, n in (("a", 60), ("b", 25), ("c", 3)):
        add_episodes(store, sid, 0, n)
    runner = extractive_runner(store, tokenizer)
    for sid in ("a", "b"):
        asyncio.run(runner.compact(sid))
    asyncio.run(runner.remake.summary(store.dag.top("a")[-1].id))  # a superseded version beside the new
    add_episodes(store, "a", 60, 30)
    asyncio.run(runner.compact("a"))  # new leaves next to the old tops: tops of several depths
    ids = ["a", "b", "c", "none"]
    for n in (0, 1, 3, 50):
        got = store.dag.newest_tops(ids, n)
        for sid in ids:
            tops = store.dag.top(sid)
            assert got[sid] == (len(tops), tops[len(tops) - n:] if n else []), (sid, n)
    assert [t.depth for t in store.dag.top("a")] == [4, 3, 2, 0] and store.dag.summaries("a", status="superseded")
