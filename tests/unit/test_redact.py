"""Secrets masked with detect-secrets' plugins: every planted one found, look-alikes and real chats left alone.

The corpus (secret_corpus.py) holds made-up secrets in real shapes; the look-alikes are the
random-looking strings chats are full of (git hashes, digests, UUIDs, ids). The repo's sample
chats (../shared/samples, real ChatGPT and Claude Code sessions, read where they are and never
copied) must come out without a single mask.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.masker import Masker
from hiermem_tui.redact import MARK, Redactor, masked_lines
from tests.unit.secret_corpus import LOOKALIKES, PLANTED

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("planted", PLANTED, ids=[p.name for p in PLANTED])
def test_every_planted_secret_is_masked_with_its_kind(redactor: Redactor, planted) -> None:  # type: ignore[no-untyped-def]
    tally: Counter[str] = Counter()
    masked = redactor.mask(planted.line, tally)
    assert planted.secret not in masked
    assert tally == Counter({planted.kind: 1}), masked
    # the mark stands exactly where the secret stood: the rest of the line stays
    assert masked == planted.line.replace(planted.secret, MARK.format(planted.kind))


def test_no_secret_survives_in_part(redactor: Redactor) -> None:
    """No 12-character piece of a planted secret is left: a pattern that stops early (JWT's signature,
    a fixed-length key longer in reality) must not leave the rest of the token showing."""
    text = "\n".join(p.line for p in PLANTED)
    masked = redactor.mask(text)
    for p in PLANTED:
        body = p.secret.replace("\n", "")
        for i in range(0, max(1, len(body) - 12), 6):
            assert body[i:i + 12] not in masked.replace("\n", ""), (p.name, body[i:i + 12])


def test_all_of_them_in_one_text_are_counted(redactor: Redactor) -> None:
    text = "\n\nnotes from the session:\n".join(p.line for p in PLANTED)
    masker = Masker(redactor)
    masked = masker(text)
    assert masker.count == len(PLANTED)
    assert masker.json() == {"masked": True, "secrets": len(PLANTED),
                             "by_kind": dict(sorted(Counter(p.kind for p in PLANTED).items()))}
    assert all(p.secret not in masked for p in PLANTED)


@pytest.mark.parametrize("line", LOOKALIKES)
def test_lookalikes_are_not_masked(redactor: Redactor, line: str) -> None:
    assert redactor.find(line) == []
    assert redactor.mask(line) == line


def test_masking_twice_reads_the_same(redactor: Redactor) -> None:
    text = "\n".join(p.line for p in PLANTED) + "\n" + "\n".join(LOOKALIKES)
    once = redactor.mask(text)
    tally: Counter[str] = Counter()
    assert redactor.mask(once, tally) == once
    assert not tally


def test_a_private_key_is_masked_from_its_begin_line_to_its_end_line(redactor: Redactor) -> None:
    key = next(p for p in PLANTED if p.name == "rsa private key")
    masked = redactor.mask(key.line)
    assert masked == "here is the deploy key:\n[secret: private key]\nuse it carefully"
    unterminated = key.secret.rsplit("\n", 1)[0] + "\n\nthe rest of the message"
    assert redactor.mask(unterminated) == "[secret: private key]\n\nthe rest of the message"


def test_the_line_gates_change_nothing(redactor: Redactor) -> None:
    """The gates only skip lines a gated pattern cannot match: the same texts scanned with and
    without them give the same secrets (the corpus, the look-alikes, and every line with a gate word)."""
    ungated = Redactor(gated=False)
    texts = [p.line for p in PLANTED] + LOOKALIKES + [
        "\n".join(p.line for p in PLANTED),
        "cloudant_password = 'abcdefghijabcdefghijabcd'\nIBM_API_KEY = \"" + "Ab1_" * 11 + "\"",
        "softlayer_key: " + "a1" * 32 + "\nmailchimp 0123456789abcdef0123456789abcdef-us12",
        ' AKC' + 'a1B2c3D4e5F6g7' + ' and AP6' + 'xyz12345ab' + '"',
    ]
    for text in texts:
        assert redactor.find(text) == ungated.find(text), text


def test_without_a_redactor_nothing_is_masked() -> None:
    masker = Masker(None)
    line = PLANTED[0].line
    assert masker(line) == line
    assert masker.json() == {"masked": False, "secrets": 0, "by_kind": {}}
    assert masker.line() == "secrets not masked (--no-redact)"


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="the shared sample chats are not beside this checkout")
def test_the_real_sample_chats_get_no_masks(tmp_path: Path, redactor: Redactor,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """15 ChatGPT conversations and 3 Claude Code sessions, full of hex ids, git hashes, UUIDs and code:
    not one mask (a mask there would be a false positive: the samples hold no credentials)."""
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "samples.db"
    out, err = io.StringIO(), io.StringIO()
    code = main(["import", "--db", str(db), str(SAMPLES / "chatgpt_conversations.json"),
                 str(SAMPLES / "claude-code")], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    code = main(["compact", "--db", str(db), "--all", "--backend", "extractive", "--json"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    conn = sqlite3.connect(db)
    texts = [r[0] for r in conn.execute("SELECT content FROM episodes")] + [
        r[0] for r in conn.execute("SELECT title FROM sessions")] + [
        r[0] for r in conn.execute("SELECT content FROM summaries")]
    names = {n for row in conn.execute("SELECT keywords, fid_lost, fid_novel FROM summaries")
             for col in row for n in json.loads(col or "[]")}
    conn.close()
    assert len(texts) > 300 and len(names) > 100
    found = {(f.kind, t[f.start:f.end][:60]) for t in texts for f in redactor.find(t)}
    assert found == set()
    # the names the summaries' fidelity kept (keywords, lost, made up): paths, constants, hashes …
    assert [n for n in names if redactor.mask_name(n) != n] == []


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write_secrets_session(directory: Path, session: str = "leaky") -> Path:
    """A native JSONL session whose every message holds one planted secret (and a title with one),
    with a few ordinary messages between: long enough for the extractive pass to make leaves."""
    title = f"deploy notes {PLANTED[0].secret}"
    lines = []
    for i, p in enumerate(PLANTED):
        lines.append({"session": session, "title": title, "role": "user" if i % 2 else "assistant",
                      "content": f"step {i}: {p.line}\nok?"})
        lines.append({"session": session, "title": title, "role": "assistant", "content": f"done with step {i}."})
    path = directory / f"{session}.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def leaky_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "leaky.db"
    assert _run("import", "--db", str(db), str(write_secrets_session(tmp_path)))[0] == 0
    code, _, err = _run("compact", "--db", str(db), "--session", "leaky", "--backend", "extractive", "--json")
    assert code == 0, err
    return db


def _file_state(db: Path) -> tuple[bytes, list[str]]:
    return db.read_bytes(), sorted(p.name for p in db.parent.iterdir())


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_export_masks_every_secret_and_counts_them(leaky_db: Path, fmt: str) -> None:
    before = _file_state(leaky_db)
    code, out, err = _run("export", "--db", str(leaky_db), "--session", "leaky", "--format", fmt)
    assert code == 0, err
    for p in PLANTED:
        assert p.secret not in out, p.name
    assert "[secret: github token]" in out and "[secret: private key]" in out
    conn = sqlite3.connect(leaky_db)
    summaries = conn.execute("SELECT count(*) FROM summaries").fetchone()[0]
    conn.close()
    assert summaries > 0  # the extractive summaries copied secrets too: they are masked as well
    if fmt == "json":
        data = json.loads(out)
        assert data["session"]["title"] == "deploy notes [secret: github token]"
        # one per message, the title once, and each copy a summary's text (or keywords) carried
        assert data["redacted"]["secrets"] == out.count("[secret: ") > len(PLANTED)
        assert data["redacted"]["by_kind"]["private key"] >= 2
    else:
        assert out.rstrip().endswith("masked (" + out.rstrip().split("masked (", 1)[1])
        assert f"{out.count('[secret: ')} secrets masked" in out
    assert _file_state(leaky_db) == before  # the stored file is never changed


def test_export_no_redact_keeps_them(leaky_db: Path) -> None:
    code, out, err = _run("export", "--db", str(leaky_db), "--session", "leaky", "--no-redact")
    assert code == 0, err
    data = json.loads(out)
    contents = "\n".join(e["content"] for e in data["episodes"])
    assert all(p.line in contents for p in PLANTED)
    assert data["redacted"] == {"masked": False, "secrets": 0, "by_kind": {}}


def test_a_summarys_names_cut_from_a_secret_are_masked(redactor: Redactor) -> None:
    """Fidelity keeps names cut out of their sources, where a plugin's context is gone (an npm token
    without ``_authToken=``, the middle of a PyPI token): pieces of a secret masked in the same
    answer are masked, and so are random-looking runs; ordinary names are not."""
    npm = next(p for p in PLANTED if p.name == "npm token")
    masker = Masker(redactor)
    masker(npm.line)  # the episode comes first in an answer or an export
    pypi_piece = next(p for p in PLANTED if p.name == "pypi token").secret[5:29]
    names = [npm.secret, pypi_piece, "UINT64_MAX", "vsla_paper_v0.44.pdf", "/home/me/src/main.c",
             "3f9a2c41d0b7e8f65a9c", "7c9e6679-7425-40de-944b-e07fc1f90ae7", "hiermem_tui.redact",
             "ValueError12", "HttpClient2Factory", "XMLHttpRequest2", "base64EncodedV2Payload"]
    assert masker.names(names) == ["[secret: npm tokens]", "[secret: random-looking name]", *names[2:]]
    assert masker.tally["npm tokens"] == 2 and masker.tally["random-looking name"] == 1


# ------------------------------------------------------------------ masking a part of a text
def _can_match_newline(parsed: object, flags: int) -> bool:
    """Whether a parsed pattern (``re._parser``) can consume a newline, or needs one beside it in a
    positive lookaround (a look that a piece's edge would fail where the whole text passes)."""
    import re._constants as c  # type: ignore[import-not-found]

    newline = ord("\n")

    def in_set(items: list[tuple[object, object]]) -> bool:
        negate, hit = False, False
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                hit |= av == newline
            elif op is c.RANGE:
                hit |= av[0] <= newline <= av[1]  # type: ignore[index]
            elif op is c.CATEGORY:
                hit |= av in (c.CATEGORY_SPACE, c.CATEGORY_NOT_DIGIT, c.CATEGORY_NOT_WORD, c.CATEGORY_LINEBREAK,
                              c.CATEGORY_UNI_SPACE, c.CATEGORY_UNI_NOT_DIGIT, c.CATEGORY_UNI_NOT_WORD,
                              c.CATEGORY_UNI_LINEBREAK)
            else:
                raise AssertionError(f"unknown set item {op}")
        return hit != negate

    def walk(seq: object) -> bool:
        for op, av in seq:  # type: ignore[attr-defined]
            if op is c.LITERAL and av == newline or op is c.NOT_LITERAL and av != newline:
                return True
            if op is c.ANY and flags & re.DOTALL or op is c.IN and in_set(av):
                return True
            if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and walk(av[2]):
                return True
            if op is c.SUBPATTERN and walk(av[3]) or op is c.ATOMIC_GROUP and walk(av):
                return True
            if op is c.BRANCH and any(walk(b) for b in av[1]):
                return True
            if op is c.ASSERT and walk(av[1]):  # (ASSERT_NOT can only match more in a piece: safe)
                return True
        return False

    return walk(parsed)


def test_only_the_known_plugins_can_match_across_lines() -> None:
    """What makes masking the lines around a part exact (redact.masked_lines): a plugin that runs on
    the whole text and could match a newline would find secrets a piece of lines misses. Today that is
    npm's ``\\s*`` alone (read with the line before as context) and the private keys (whose mask runs
    to their END line: a text holding one is masked whole); a newer detect-secrets adding another must
    fail here, not leak."""
    import re._parser as sre  # type: ignore[import-not-found]

    from hiermem_tui.redact import CROSS_LINE_TYPES, SPANNING, _plugins

    crossing = {p.secret_type for p in _plugins() if not p.gate
                for pattern in p.patterns if _can_match_newline(sre.parse(pattern.pattern, pattern.flags), pattern.flags)}
    assert crossing == set(CROSS_LINE_TYPES)
    assert _can_match_newline(sre.parse(r"a[^\s]b|c.d", 0), 0) is False  # the walker itself
    assert all(_can_match_newline(sre.parse(p, 0), 0) for p in (r"a\sb", r"a[^x]b", r"(?<=\W)a", r"a(b|\n)"))
    private = next(p for p in _plugins() if p.private_key)
    for pattern in private.patterns:
        assert not pattern.flags & re.IGNORECASE and any(word in pattern.pattern for word in SPANNING), pattern


def _mixed_text() -> str:
    """Planted secrets (no private key) among look-alikes, prose, blank lines, and an npm token whose
    value follows its name after blank lines."""
    npm = next(p for p in PLANTED if p.name == "npm token").secret
    lines: list[str] = []
    for i, p in enumerate(q for q in PLANTED if q.kind != "private key"):
        lines += [f"step {i}: the lorem ipsum of it all, said twice over", p.line, LOOKALIKES[i % len(LOOKALIKES)]]
        if i % 3 == 0:
            lines += ["", "   "]
    lines += ["//registry.npmjs.org/:_authToken=", "", "  ", f"   {npm}", "and the end of it"]
    return "\n".join(lines)


def test_the_lines_around_a_part_are_masked_as_the_whole_text_masks_them(redactor: Redactor) -> None:
    text = _mixed_text()
    whole = redactor.mask(text).split("\n")
    assert len(whole) == text.count("\n") + 1
    npm = next(p for p in PLANTED if p.name == "npm token").secret
    assert npm not in "\n".join(whole)  # its value, four lines after its name, is masked in the whole text
    for start in range(0, len(text), 13):
        for width in (1, 40, 300):
            piece, a, b = masked_lines(redactor.mask, text, start, start + width)
            first, last = text.count("\n", 0, a), text.count("\n", 0, b)
            assert (a == 0 or text[a - 1] == "\n") and (b == len(text) or text[b] == "\n")
            assert a <= start and min(start + width, len(text)) <= b
            assert piece == "\n".join(whole[first:last + 1]), (start, width)


def test_a_text_holding_a_private_key_is_masked_whole(redactor: Redactor) -> None:
    key = next(p for p in PLANTED if p.name == "rsa private key")
    text = "a\n" * 50 + key.line + "\nb" * 50
    inside = text.index(key.secret) + 200  # a part in the key's body: its header is lines above
    piece, a, b = masked_lines(redactor.mask, text, inside, inside + 10)
    assert (piece, a, b) == (redactor.mask(text), 0, len(text))
    assert "[secret: private key]" in piece and key.secret.split("\n")[3] not in piece


def test_a_mask_running_across_lines_falls_back_to_the_whole_text() -> None:
    """If a mask ever ran across a line (the newlines of the piece would not add up), the lines cannot
    be cut out of it: the whole text is masked instead."""
    text = "one\ntwo\nthree\nfour"
    joined = masked_lines(lambda t: t.replace("two\nthree", "[secret: x]"), text, 9, 12)
    assert joined == ("one\n[secret: x]\nfour", 0, len(text))


def test_a_quote_clipped_inside_a_secret_seen_earlier_is_masked(redactor: Redactor) -> None:
    """A summary or a brief quotes a line clipped with "…": a database URL cut after its password no longer
    has the shape the detector finds, so the part of the secret it holds is masked as the whole was; and a
    name made of a URL's password and host ("pw@db.internal") holds the secret."""
    url = "postgres://admin:ehVUXSjut3RfTuka@db.internal:5432/app"
    mask = Masker(redactor)
    assert "ehVUXSjut3RfTuka" not in mask(f"connect with {url} please")
    clipped = mask("- user: connect with postgres://admin:ehVUXSjut3Rf…")
    assert "ehVUXSjut3Rf" not in clipped and clipped.endswith("]…")
    assert "ehVUXSjut3RfTuka" not in mask.names(["ehVUXSjut3RfTuka@db.internal"])[0]
