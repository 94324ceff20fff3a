"""Who said what is the chat's, not the model's (issue 19, notes v3): the app quotes the user's own
words in each part's line, and drops the model's sentences that make a user speak in a part where
no user says anything."""

from __future__ import annotations

from datetime import datetime, timezone

from hiermem_tui.summarize import notes
from hiermem_tui.summarize.types import SourceItem

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def src(role: str, text: str) -> SourceItem:
    return SourceItem("episode", text, len(text.split()), T0, T0, role=role)


def part(*items: SourceItem, opened_by: str = "user") -> notes.Part:
    return notes.Part(1, 1, tuple(items), opened_by, 200)


def test_the_quote_is_the_users_opening_sentence_and_a_deciding_one() -> None:
    p = part(src("user", "ok type module fixed it. Can the groups have one colour? Let's drop auto grouping instead."),
             src("assistant", "Yes: hash the domain to a colour."))
    assert notes.quote(p) == "\u201cok type module fixed it. Let's drop auto grouping instead. \u2026\u201d"


def test_a_long_message_is_cut_at_the_word_budget_and_says_so() -> None:
    words = " ".join(f"w{i}" for i in range(100))
    q = notes.quote(part(src("user", "Please build this: " + words)))
    assert q.endswith("\u2026\u201d") and len(q.split()) == notes.QUOTE_WORDS + 1


def test_markup_and_interruptions_are_not_the_users_words() -> None:
    p = part(src("user", "<command-name>/exit</command-name> <command-message>exit</command-message>"),
             src("user", "[Request interrupted by user]"), src("assistant", "Stopped."), opened_by="continued")
    assert not notes.spoke(p) and notes.quote(p) == ""
    assert notes.said(src("user", "[image image/png] Cool but the name is still wrong")) == \
        "Cool but the name is still wrong"


def test_a_part_where_no_user_speaks_loses_the_sentences_that_make_one_speak() -> None:
    p = part(src("assistant", "Let me grep."), src("tool", "src/a.c: select_best_backend()"), opened_by="continued")
    note = ("The user asked about the select_best_backend function. The assistant searched src/ and found it in "
            "src/a.c. The user's request was then answered.")
    assert notes.unheard(p, note) == "The assistant searched src/ and found it in src/a.c."
    assert notes.unheard(p, "The user asked about it.") == ""


def test_where_a_user_spoke_the_note_is_kept_whole_and_follows_their_words() -> None:
    p = part(src("user", "Pin foo to 1.4 please."), src("assistant", "Pinned foo>=1.4 in setup.cfg."))
    note = "The user asked to pin foo. The assistant pinned foo>=1.4 in setup.cfg."
    assert notes.unheard(p, note) == note
    assert notes.line(p, "The assistant pinned foo>=1.4.") == \
        "User: \u201cPin foo to 1.4 please.\u201d \u2192 The assistant pinned foo>=1.4."


def test_a_condensed_part_has_no_quote_and_keeps_its_note() -> None:
    p = part(src("assistant", "- The user asked for x."), opened_by="summary")
    assert notes.line(p, "The user asked for x.") == "The user asked for x."
