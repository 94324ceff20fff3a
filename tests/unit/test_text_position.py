"""``text.position`` finds a quote where a pattern of its first words would (issue 38: the pattern, built and
compiled for every quote, was most of the key lines' time): held equal on random texts and quotes."""

from __future__ import annotations

import random
import re

from hiermem_tui.summarize.text import position

ALPHABET = ["ab", "abc", "b", "cat", "concat", "x_1", "é", "naïve", "42", "__", "Ab", "ABC"]
GAPS = [" ", "  ", ", ", ".\n", " — ", "**", "`", "\t", "-", "/", "'", "[", "]: ", "…", "\n\n"]


def by_pattern(text: str, words: str) -> int:
    """What ``position`` answered when it searched a pattern of the quote's first five words."""
    first = re.findall(r"\w+", words)[:5]
    if not first:
        return len(text)
    m = re.search(r"\W+".join(map(re.escape, first)), text)
    return m.start() if m else len(text)


def random_text(rng: random.Random, words: int) -> str:
    out = [rng.choice(GAPS) if rng.random() < 0.3 else ""]
    for _ in range(words):
        out += [rng.choice(ALPHABET), rng.choice(GAPS)]
    return "".join(out[: len(out) - rng.randint(0, 1)])


def test_the_same_place_as_a_pattern_of_the_first_words() -> None:
    rng = random.Random(38)
    for _ in range(1500):
        text = random_text(rng, rng.randint(0, 30))
        if rng.random() < 0.6 and text:  # a quote of the text itself, from anywhere in it, cut anywhere
            a = rng.randint(0, len(text) - 1)
            quote = text[a: a + rng.randint(1, 60)]
        else:
            quote = random_text(rng, rng.randint(0, 7))
        assert position(text, quote) == by_pattern(text, quote), (text, quote)


def test_a_quote_begins_where_its_words_do_across_markup() -> None:
    text = "Intro. The **build** failed:\n`cargo test` — it timed out."
    assert position(text, "build failed: cargo test") == text.index("build")
    assert position(text, "uild failed") == text.index("uild")  # the first word may end a longer one
    assert position(text, "nothing like it") == len(text)
    assert position(text, "...") == len(text)
