"""Full-text search: the query language, ranking, snippets, the index's triggers and robustness."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hiermem_tui.search import QueryError, make_snippet, parse_query, search
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite, new_id
from tests.conftest import T0, make_session


def add(store: Store, sid: str, texts: list[str], *, roles: tuple[str, ...] = ("user", "assistant")) -> None:
    if store.sessions.get(sid) is None:
        store.sessions.upsert(sid, title=f"title {sid}", source="test", created_at=T0)
    have = store.sessions.get(sid).episodes  # type: ignore[union-attr]
    store.episodes.append(sid, [NewEpisode(str(have + i), roles[i % len(roles)], t, None)
                                for i, t in enumerate(texts)])


def leaf(store: Store, sid: str, first: int, last: int, text: str) -> str:
    s = NewSummary(new_id("s"), sid, 0, "normal", "extractive", None, "t", text, 5)
    store.dag.write([SummaryWrite(s, episode_range=(first, last))])
    return s.id


# ---------------------------------------------------------------- the query language
@pytest.mark.parametrize(("typed", "fts"), [
    ("foo-bar", '"foo-bar"'),
    ("what?", '"what?"'),
    ("C++", '"C++"'),
    ("retry backoff", '("retry" AND "backoff")'),
    ("timeout OR deadline", '("timeout" OR "deadline")'),
    ("flaky NOT windows", '("flaky" NOT "windows")'),
    ('"exact phrase"', '"exact phrase"'),
    ("pars*", '"pars"*'),
    ("(a OR b) c", '(("a" OR "b") AND "c")'),
    ("and or not", '("and" AND "or" AND "not")'),
    ("what ? now", '("what" AND "now")'),
])
def test_words_are_quoted_and_only_capital_operators_are_operators(typed: str, fts: str) -> None:
    assert parse_query(typed).fts == fts


@pytest.mark.parametrize(("typed", "says"), [
    ("", "nothing to search for"),
    ("???", "nothing to search for"),
    ("foo OR", "missing after OR"),
    ("NOT foo", "NOT needs a word before it"),
    ("AND foo", "AND needs words on both sides"),
    ('"open quote', "quote is not closed"),
    ("(a b", "'(' is not closed"),
    ("a b)", "no matching '('"),
    ("()", "a word is missing"),
])
def test_bad_queries_say_what_to_fix_in_one_line(typed: str, says: str) -> None:
    with pytest.raises(QueryError) as info:
        parse_query(typed)
    assert says in str(info.value) and "\n" not in str(info.value)


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_typed_text_is_either_a_clear_error_or_a_query_fts5_accepts(typed: str) -> None:
    try:
        query = parse_query(typed)
    except QueryError:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2')")
    conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (f"text : {query.fts}",)).fetchall()


# ---------------------------------------------------------------- snippets
def test_snippet_marks_matching_words_and_folds_whitespace() -> None:
    text = "Intro line.\n\n" + "filler " * 60 + "then the Café config\tparser broke\nagain. " + "tail " * 60
    snip = make_snippet(text, parse_query("cafe pars*").terms)
    assert [snip.text[a:b] for a, b in snip.marks] == ["Café", "parser"]
    assert "\n" not in snip.text and "\t" not in snip.text and "  " not in snip.text
    assert snip.text.startswith("… ") and snip.text.endswith(" …")
    assert len(snip.text) <= 170


def test_snippet_of_hostile_text_is_the_text_itself() -> None:
    text = "[bold red]boom[/] \x1b[31mred\x1b[0m [@click=app.quit]quit[/]"
    snip = make_snippet(text, parse_query("boom").terms)
    assert snip.text == text and [snip.text[a:b] for a, b in snip.marks] == ["boom"]


# ---------------------------------------------------------------- searching
def test_episodes_and_summaries_are_found_best_first_with_exact_json(store: Store) -> None:
    add(store, "a", ["the deploy failed on staging", "unrelated chat", "deploy deploy deploy rollback"])
    add(store, "b", ["nothing here", "we talked about the deploy window"])
    sid = leaf(store, "a", 0, 1, "A deploy to staging failed.")
    result = search(store, "deploy")
    ids = [h.id for h in result.hits]
    assert set(ids) == {"a/0", "a/2", "b/1", sid}
    assert ids[0] == "a/2"  # three occurrences in a short text ranks first (bm25)
    summary = next(h for h in result.hits if h.kind == "summary")
    assert summary.as_json() == {"session": "a", "kind": "summary", "id": sid, "first_seq": 0, "last_seq": 1,
                                 "snippet": "A deploy to staging failed."}
    episode = next(h for h in result.hits if h.id == "b/1")
    assert episode.as_json() == {"session": "b", "kind": "episode", "id": "b/1", "first_seq": 1, "last_seq": 1,
                                 "snippet": "we talked about the deploy window"}
    assert not result.capped


def test_session_filter_limit_and_phrases(store: Store) -> None:
    add(store, "a", [f"retry backoff number {i}" for i in range(10)])
    add(store, "b", ["backoff retry in the other order", "retry backoff in b"])
    assert {h.session_id for h in search(store, "retry backoff", session_id="b").hits} == {"b"}
    assert len(search(store, "retry", limit=3).hits) == 3
    phrase = search(store, '"retry backoff"', limit=50).hits
    assert "b/0" not in {h.id for h in phrase} and "b/1" in {h.id for h in phrase}
    assert search(store, "retry", session_id="nope").hits == ()


def test_superseded_summaries_only_when_asked(store: Store) -> None:
    make_session(store, "s", 8)
    old = leaf(store, "s", 0, 3, "old wording about zebras")
    new = NewSummary(new_id("s"), "s", 0, "normal", "extractive", None, "t", "new wording about zebras", 5)
    store.dag.write([SummaryWrite(new, episode_range=(0, 3), supersede=[old])])
    assert [h.id for h in search(store, "zebras").hits] == [new.id]
    both = search(store, "zebras", include_superseded=True).hits
    assert {h.id: h.active for h in both} == {new.id: True, old: False}


def test_episodes_written_by_another_tool_are_indexed(store: Store, db_path: Path) -> None:
    make_session(store, "s", 2)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("INSERT INTO episodes (id, session_id, seq, role, content, created_at) VALUES "
                     "('s/x', 's', 2, 'tool', 'written by someone else: quokka', '2025-03-01T10:00:00.000Z')")
    conn.close()
    hits = search(store, "quokka").hits
    assert [(h.id, h.first_seq, h.role) for h in hits] == [("s/x", 2, "tool")]


def test_renumbered_rowids_do_not_break_the_index(store: Store, db_path: Path) -> None:
    """What VACUUM may do to a table without an INTEGER PRIMARY KEY: the index does not use them."""
    add(store, "a", ["alpha bravo", "charlie delta", "echo foxtrot"])
    leaf(store, "a", 0, 1, "summary of alpha and charlie")
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("UPDATE episodes SET rowid = rowid + 1000")
        conn.execute("UPDATE episodes SET rowid = 2000 - rowid")  # and reversed
        conn.execute("UPDATE summaries SET rowid = rowid + 77")
    conn.execute("VACUUM")
    conn.close()
    assert [h.id for h in search(store, "charlie", limit=5).hits if h.kind == "episode"] == ["a/1"]
    assert search(store, "foxtrot").hits[0].snippet.text == "echo foxtrot"
    assert [h.kind for h in search(store, "summary alpha").hits] == ["summary"]


def test_bad_query_raises_query_error_not_sqlite_error(store: Store) -> None:
    make_session(store, "s", 2)
    with pytest.raises(QueryError):
        search(store, "foo AND")


def test_very_common_words_rank_only_the_newest_window(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import hiermem_tui.search.engine as engine

    monkeypatch.setattr(engine, "RANK_WINDOW", 5)
    add(store, "a", ["common " * 5 + "strong"] + [f"common filler {i}" for i in range(9)])
    result = search(store, "common", limit=20)
    assert result.capped
    # a/0 says "common" five times (the best bm25 score) but is older than the newest five
    assert {h.id for h in result.hits} == {f"a/{i}" for i in range(5, 10)}
    assert search(store, "strong").hits[0].id == "a/0"  # a rarer word still finds the old row


def test_long_and_odd_session_ids_filter_exactly(store: Store) -> None:
    long_id = "claude-code:" + "x" * 3000
    for sid in (long_id, "a b", "a", "ä/ö", "A"):
        add(store, sid, [f"marmot in {sid[:10]}"])
    for sid in (long_id, "a b", "a", "ä/ö", "A"):
        assert [h.session_id for h in search(store, "marmot", session_id=sid).hits] == [sid]
