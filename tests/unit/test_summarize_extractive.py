"""The first-and-last-sentence digest (what the extractive digest falls back to over sources that
quote nothing): deterministic, bulleted, de-duplicated, within the target. The key lines the
digest is made of otherwise are tested in ``test_quotes.py``."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hiermem_tui.summarize import ExtractiveBackend, Summariser, extractive_digest
from hiermem_tui.summarize.extractive import EMPTY_DIGEST, first_last_digest
from hiermem_tui.summarize.text import sentences
from hiermem_tui.summarize.prompts import EXTRACTIVE_VERSION
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer

T0 = datetime(2025, 1, 2, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


def req(tok: Tokenizer, texts: list[str], target: int = 200, kind: str = "episode") -> SummaryRequest:
    items = [
        SourceItem(kind, t, tok.count(t), T0, T0, role="user" if i % 2 == 0 else "assistant",  # type: ignore[arg-type]
                   depth=None if kind == "episode" else 0, label=f"#{i}")
        for i, t in enumerate(texts)
    ]
    return SummaryRequest(0 if kind == "episode" else 1, items, target)


TEXTS = [
    "The build fails on CI. It works locally. The error is ModuleNotFoundError: foo.bar.",
    "Add foo to install_requires in setup.cfg. Then rerun `pip install -e .` and the tests.",
    "Thanks, that fixed it! The build fails on CI.",
    "ok",
]


def test_first_and_last_sentences_bulleted(tok: Tokenizer) -> None:
    digest = first_last_digest(req(tok, TEXTS), tok)
    lines = digest.splitlines()
    assert all(line.startswith("- ") for line in lines)
    assert lines[0] == "- user: The build fails on CI. … The error is ModuleNotFoundError: foo.bar."
    assert lines[1] == "- assistant: Add foo to install_requires in setup.cfg. … Then rerun `pip install -e .` and the tests."
    assert "It works locally" not in digest  # a middle sentence
    assert lines[2] == "- user: Thanks, that fixed it!"  # its repeated last sentence is dropped
    assert lines[3] == "- assistant: ok"
    assert digest.count("The build fails on CI.") == 1


def test_deterministic(tok: Tokenizer) -> None:
    r = req(tok, TEXTS)
    assert first_last_digest(r, tok) == first_last_digest(r, tok)


def test_within_target_and_fair_to_every_source(tok: Tokenizer) -> None:
    huge = "word " * 3000 + "."
    texts = [huge, "The second source says something specific about config.toml.", huge + " Final remark here."]
    r = req(tok, texts, target=120)
    digest = first_last_digest(r, tok)
    assert tok.count(digest) <= 120
    assert "config.toml" in digest  # the huge first source did not crowd it out


@pytest.mark.parametrize("target", [5, 17, 60, 333])
def test_never_over_target(tok: Tokenizer, target: int) -> None:
    texts = [f"Sentence {i} about ünïcödé ✓ and emojis 🎉🎉. Closing line {i}." for i in range(40)]
    assert tok.count(first_last_digest(req(tok, texts, target=target), tok)) <= target


def test_empty_sources_give_a_placeholder(tok: Tokenizer) -> None:
    assert first_last_digest(req(tok, ["", "```\n---\n```"]), tok) == EMPTY_DIGEST


def test_sentences_split_lines_and_skip_punctuation() -> None:
    assert sentences("First one.  Second?\n```\n$ make test\n---") == ["First one.", "Second?", "$ make test"]


def test_summaries_have_no_role_prefix(tok: Tokenizer) -> None:
    digest = first_last_digest(req(tok, ["Leaf one covered setup. It ended well."], kind="summary"), tok)
    assert digest == "- Leaf one covered setup. … It ended well."


async def test_extractive_backend_tiers(tok: Tokenizer) -> None:
    s = Summariser(ExtractiveBackend(tok), tok)
    long_req = req(tok, TEXTS * 5, target=60)
    res = await s.summarise(long_req)
    assert (res.tier, res.backend, res.model, res.prompt_version) == ("normal", "extractive", None, EXTRACTIVE_VERSION)
    assert res.text == extractive_digest(long_req, tok) and res.tokens < res.source_tokens
    assert res.attempts == 0 and res.llm_seconds == 0
    short = await s.summarise(req(tok, ["ok"], target=60))  # digest "- user: ok" is longer than "ok"
    assert short.tier == "fallback" and short.backend == "extractive"


def test_clip_to_keeps_as_much_as_fits(tok: Tokenizer) -> None:
    """Re-encoding a clipped text may count one token more: the clip shrinks until it fits
    the *target*, never far below it (it once shrank to a single word)."""
    from hiermem_tui.summarize.extractive import clip_to

    text = "Earlier in the same chat (context only, already reported): <previous_summary> x </previous_summary> more"
    for limit in (5, 12, 18, 22):
        clipped = clip_to(text, limit, tok)
        assert limit - 2 <= tok.count(clipped) <= limit


def test_a_clipped_sentence_never_ends_in_half_a_number_or_name(tok: Tokenizer) -> None:
    """A real digest clipped ``"id":2998836`` to ``"id":299883…``: a number in no source.

    Whatever the share each sentence gets, every identifier the digest names is in the sources.
    """
    from hiermem_tui.summarize.fidelity import measure

    text = ('{"login":"Durban-Designer","id":2998836,"node_id":"MDQ6VXNlcjI5OTg4MzY=",'
            '"url":"https://api.github.com/users/Durban-Designer","type":"User"} and more text here.')
    sources = [text, "Short second message."]
    for target in range(8, 60, 3):
        digest = first_last_digest(req(tok, sources, target=target), tok)
        assert tok.count(digest) <= target
        assert not measure(digest, [(t, False) for t in sources]).novel, (target, digest)


def test_a_clipped_first_sentence_is_not_followed_by_a_second_mark(tok: Tokenizer) -> None:
    """Issue 19: the digest read "… … which one" where a clipped first sentence met the gap mark."""
    long_first = "wait on ali theres E22-900M22S and also E22-900T22S for about the same price " * 6 + "and more."
    digest = first_last_digest(req(tok, [long_first + "\nwhich one, they all say sx1262"], target=40), tok)
    assert "… …" not in digest and "E22-900M22S" in digest and "which one, they all say sx1262" in digest
    assert digest.count("…") == 1
