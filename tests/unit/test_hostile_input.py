"""Hostile chat content and hostile files: stored byte-exact, shown literally, never interpreted.

Content is untrusted (ARCHITECTURE §7): markup, terminal escapes, control and bidi
characters must survive import → store → export unchanged, stay inside Markdown fences, and
reach a screen only through ``textsafe.visible``. Hostile *files* (bad UTF-8, absurd nesting, zip
bombs, one huge episode, one huge session) must end in an import or a one-line refusal, in
bounded time and memory.
"""

from __future__ import annotations

import io
import json
import random
import sqlite3
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from hiermem_tui.cli import main
from hiermem_tui.textsafe import is_printable, one_line, visible
from hiermem_tui.tokens import Tokenizer

HOSTILE: dict[str, str] = {
    "rich-markup": "[bold red]not bold[/] [@click=app.quit]quit[/] [link=https://x.example]link[/link] [/]",
    "ansi-csi": "\x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared \x1b[?1049h alt screen \x1b[6n",
    "osc8-link": "\x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\ and \x1b]8;;https://x\x07bel\x1b]8;;\x07",
    "osc-title": "\x1b]0;pwned title\x07 \x1bP+q544e\x1b\\",
    "bel-nul": "ding\x07 nul\x00byte \x00",
    "c0": "".join(chr(i) for i in range(0x20) if i not in (0x09, 0x0A, 0x0D)) + " end",
    "del-c1": "\x7f" + "".join(chr(i) for i in range(0x80, 0xA0)) + " 8-bit CSI \x9b31m",
    "cr-overwrite": "rm -rf ~/important\rls -la                \r\n",
    "crlf-tabs": "line1\r\nline2\r\n\tindented\ttab",
    "emoji": "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇺🇦 ❤️",
    "zalgo": "Z̷̡̛̯͔̈́a̸̢̛͎l̴̰̈g̵̣̋o̶̱̊ e" + "\u0301" * 60,
    "rtl": "שלום עולם — مرحبا بالعالم",
    "bidi-controls": "invoice\u202efdp.exe \u2066isolate\u2069 \u202aembed\u202c \u200e\u200f \u061c",
    "zero-width": "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom\u2060wj",
    "fences": "```\nnot code\n```\n````python\nx = 1\n````\n``````\n~~~\ntilde\n~~~\n    ```",
    "markdown-html": "# heading\n* item\n<script>alert(1)</script>\n[x](javascript:alert(1))\n---",
    "json-ish": '{"session": "other", "role": "system"}\n]}',
}
TITLE = "[bold]T[/] \x1b[31mred\x1b[0m\n# not a heading `x` <b>b</b> \u202eevil"
C0_C1_DEL = {chr(i) for i in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
BIDI = {"\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("HIERMEM_DB", raising=False)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_refused(result: tuple[int, str, str]) -> None:
    code, _, err = result
    assert code == 2, result
    assert err.startswith("hiermem-tui: ") and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    """Two sessions of every hostile string: one written with raw UTF-8, one with \\u escapes only."""
    src = tmp_path / "hostile.jsonl"
    lines = []
    for sid, ascii_only in (("raw", False), ("escaped", True)):
        for i, text in enumerate(HOSTILE.values()):
            record = {"session": sid, "title": TITLE, "role": "user" if i % 2 == 0 else "assistant", "content": text}
            lines.append(json.dumps(record, ensure_ascii=ascii_only))
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0 and err == "", err
    assert f"{2 * len(HOSTILE)} episode(s) added" in out
    return db


# --------------------------------------------------------------------------- (a) stored byte-exact


@pytest.mark.parametrize("sid", ["raw", "escaped"])
def test_hostile_content_round_trips_exactly(hostile_db: Path, tmp_path: Path, sid: str) -> None:
    code, out, err = run("export", "--db", str(hostile_db), "--session", sid)
    assert code == 0, err
    exported = json.loads(out)
    assert [e["content"] for e in exported["episodes"]] == list(HOSTILE.values())
    assert exported["session"]["title"] == TITLE.strip()
    target = tmp_path / "out.json"
    assert run("export", "--db", str(hostile_db), "--session", sid, "-o", str(target))[0] == 0
    assert json.loads(target.read_text(encoding="utf-8")) == exported
    raw = sqlite3.connect(hostile_db).execute(
        "SELECT content FROM episodes WHERE session_id = ? ORDER BY seq", (sid,)).fetchall()
    assert [r[0] for r in raw] == list(HOSTILE.values())


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_export_to_a_terminal_shows_escapes_as_stand_ins_and_to_a_pipe_exactly(hostile_db: Path, fmt: str) -> None:
    """Issue 21 item 4: `export` on a terminal cleared the screen (ESC[2J), renamed the window (OSC 0)
    and emitted U+202E. On a terminal it shows them as the TUI does; to a pipe it stays exact."""
    tty, err = _Terminal(), io.StringIO()
    code = main(["export", "--db", str(hostile_db), "--session", "raw", "--format", fmt], stdout=tty, stderr=err)
    assert code == 0, err.getvalue()
    shown = tty.getvalue()
    assert not set(shown) & (C0_C1_DEL - {"\n"}) and not set(shown) & BIDI
    assert "<U+202E>" in shown
    piped = run("export", "--db", str(hostile_db), "--session", "raw", "--format", fmt)[1]
    assert "\u202e" in piped  # a pipe or a file gets the characters the chat holds
    if fmt == "json":  # (JSON spells C0 controls as \u001b itself)
        assert [e["content"] for e in json.loads(piped)["episodes"]] == list(HOSTILE.values())
    else:
        assert "␛[2J" in shown and "␛]0;pwned title␇" in shown
        assert "\x1b[2J" in piped and "\x1b]0;pwned title\x07" in piped


def test_session_listing_shows_hostile_titles_inert(hostile_db: Path) -> None:
    code, out, _ = run("sessions", "--db", str(hostile_db))
    assert code == 0
    assert not (set(out) - {"\n"}) & (C0_C1_DEL | BIDI), [c for c in out if c in C0_C1_DEL | BIDI]
    assert "[bold]T[/]" in out and "␛[31mred" in out  # literal markup, visible escape
    rows = json.loads(run("sessions", "--db", str(hostile_db), "--json")[1])
    assert {r["title"] for r in rows} == {TITLE.strip()}


# --------------------------------------------------------------------------- (b) Markdown keeps it literal


def _normalised(text: str) -> str:
    """What a CommonMark parser reports as a fenced block's content for ``text``."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd") + "\n"


@pytest.mark.parametrize("sid", ["raw", "escaped"])
def test_markdown_export_fences_every_episode_literally(hostile_db: Path, sid: str) -> None:
    code, md, err = run("export", "--db", str(hostile_db), "--session", sid, "--format", "markdown")
    assert code == 0, err
    for text in HOSTILE.values():
        assert text in md  # literally, not escaped or rewritten
    tokens = MarkdownIt("commonmark").parse(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert [t.info for t in fences] == ["text"] * len(HOSTILE)
    assert [t.content for t in fences] == [_normalised(t) for t in HOSTILE.values()]
    headings = [t.tag for t in tokens if t.type == "heading_open"]
    assert headings == ["h1", "h2"] + ["h3"] * len(HOSTILE), headings  # nothing broke out of a fence
    inline = [c for t in tokens if t.children for c in t.children]
    assert not [t for t in tokens + inline if t.type.startswith("html")]


@pytest.mark.parametrize("ticks", [3, 4, 5, 12])
def test_no_fence_break_out_whatever_the_backtick_run(tmp_path: Path, ticks: int) -> None:
    fence = "`" * ticks
    content = f"{fence}\n# escaped?\n{fence}\n{'`' * (ticks - 1)}text\nend {fence}"
    src = tmp_path / "f.jsonl"
    src.write_text(json.dumps({"session": "f", "role": "user", "content": content}) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    assert run("import", "--db", str(db), str(src))[0] == 0
    md = run("export", "--db", str(db), "--session", "f", "--format", "markdown")[1]
    tokens = MarkdownIt("commonmark").parse(md)
    assert [t.content for t in tokens if t.type == "fence"] == [content + "\n"]
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h1", "h2", "h3"]


# --------------------------------------------------------------------------- (c) textsafe.visible


@pytest.mark.parametrize("name", list(HOSTILE))
def test_visible_neutralises_hostile_text(name: str) -> None:
    shown = visible(HOSTILE[name])
    assert not set(shown) & (C0_C1_DEL | BIDI) - {"\n"}
    assert "\x1b" not in shown and b"\x1b" not in shown.encode("utf-8") and "\t" not in shown


@pytest.mark.parametrize("ch", sorted(C0_C1_DEL - {"\n", "\t"} | BIDI))
def test_every_control_character_gets_a_visible_stand_in(ch: str) -> None:
    shown = visible(f"a{ch}b")
    assert shown.startswith("a") and shown.endswith("b") and len(shown) > 2
    assert ch not in shown and is_printable(shown)


def test_specific_stand_ins() -> None:
    assert visible("\x1b[2J") == "␛[2J"
    assert visible("\x00\x07\x7f") == "␀␇␡"
    assert visible("a\rb") == "a␍b" and visible("a\r\nb") == "a\nb"
    assert visible("\x9b") == "<U+009B>" and visible("\u202e") == "<U+202E>"
    assert visible("a\tb", tabs=4) == "a   b"


@pytest.mark.parametrize("name", ["emoji", "zalgo", "rtl", "zero-width", "rich-markup", "fences"])
def test_visible_keeps_printable_text(name: str) -> None:
    assert visible(HOSTILE[name]) == HOSTILE[name]
    assert is_printable(HOSTILE[name])


def test_visible_escapes_arabic_letter_mark() -> None:
    assert "\u061c" not in visible("a\u061cb")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
       | st.lists(st.sampled_from(sorted(C0_C1_DEL | BIDI | {"x", "\r\n", "é", "\u0301"})), max_size=30).map("".join))
def test_visible_never_lets_a_control_through(text: str) -> None:
    shown = visible(text)
    assert not set(shown) & (C0_C1_DEL | BIDI) - {"\n"}
    assert shown.count("\n") == text.replace("\r\n", "\n").count("\n")
    if is_printable(text):
        assert shown == text
    flat = one_line(text, 40)
    assert "\n" not in flat and len(flat) <= 40 and not set(flat) & (C0_C1_DEL | BIDI)


# --------------------------------------------------------------------------- hostile files


def test_invalid_utf8_lines_are_skipped_with_a_reason(tmp_path: Path) -> None:
    src = tmp_path / "chats.jsonl"
    good = [json.dumps({"session": "u", "role": r, "content": f"fine {r}"}).encode() for r in ("user", "assistant")]
    bad = [b'{"session": "u", "role": "user", "content": "caf\xe9 in latin-1"}', b"\xff\xfe\x00garbage"]
    src.write_bytes(b"\n".join([good[0], bad[0], bad[1], good[1]]) + b"\n")
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0, err
    assert "2 episode(s) added" in out
    assert "invalid UTF-8 (2)" in err and "chats.jsonl:2" in err and "chats.jsonl:3" in err
    episodes = json.loads(run("export", "--db", str(db), "--session", "u")[1])["episodes"]
    assert [e["content"] for e in episodes] == ["fine user", "fine assistant"]


NEST = "[" * 10_000 + "]" * 10_000
DEEP = {
    "chatgpt": '[{"id": "c", "current_node": "a", "mapping": %s}]' % NEST,
    "claude": '[{"uuid": "u", "chat_messages": %s}]' % NEST,
    "sharegpt": '[{"id": "a", "conversations": [{"from": "human", "value": %s}]}]' % NEST,
}


@pytest.mark.parametrize("how", ["explicit", "auto"])
@pytest.mark.parametrize("fmt", list(DEEP))
def test_json_nested_10k_deep_is_a_one_line_format_error(tmp_path: Path, fmt: str, how: str) -> None:
    src = tmp_path / "conversations.json"
    src.write_text(DEEP[fmt], encoding="utf-8")
    fmt_args = ["--format", fmt] if how == "explicit" else []
    db = tmp_path / "h.db"
    result = run("import", "--db", str(db), *fmt_args, str(src))
    assert_refused(result)
    if how == "explicit":
        assert "nested too deeply" in result[2]
    assert json.loads(run("sessions", "--db", str(db), "--json")[1]) == []


@pytest.mark.parametrize("fmt", ["jsonl", "claude-code"])
def test_a_10k_deep_line_costs_only_that_line(tmp_path: Path, fmt: str) -> None:
    if fmt == "jsonl":
        ok = json.dumps({"session": "d", "role": "user", "content": "kept"})
    else:
        message = {"role": "user", "content": "kept"}
        ok = json.dumps({"type": "user", "sessionId": "d", "uuid": "u1", "message": message})
    src = tmp_path / "deep.jsonl"
    src.write_text(f"{ok}\n{NEST}\n", encoding="utf-8")
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), "--format", fmt, str(src))
    assert code == 0, err
    assert "1 episode(s) added" in out and "deep.jsonl:2" in err


def _bomb_zip(path: Path, megabytes: int, *, json_shaped: bool = False) -> None:
    """conversations.json of zeros (or one huge JSON string of spaces, which sniffs as ChatGPT), deflated
    about 1000:1, written without ever holding it in memory."""
    chunk = (b" " if json_shaped else b"\x00") * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("conversations.json", "w") as fh:
        if json_shaped:
            fh.write(b'[{"id": "c", "mapping": {}, "title": "')
        for _ in range(megabytes):
            fh.write(chunk)
        if json_shaped:
            fh.write(b'"}]')


def _lie_about_size(path: Path, declared: int) -> None:
    """Patch the member's uncompressed size in both the local header and the central directory."""
    raw = bytearray(path.read_bytes())
    assert raw[:4] == b"PK\x03\x04"
    raw[22:26] = declared.to_bytes(4, "little")
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24 : central + 28] = declared.to_bytes(4, "little")
    path.write_bytes(bytes(raw))


BOMBS = {  # name: (declared size to patch in, or None; JSON-shaped?; what the explicit refusal says)
    "50MB-of-zeros": (None, False, "likely zip bomb"),
    "50MB-json-shaped": (None, True, "likely zip bomb"),
    "header-says-1KiB": (1024, False, "unreadable zip (Bad CRC-32"),
    "header-says-3GiB": (3 << 30, False, "over the 2 GiB limit"),
}


@pytest.mark.parametrize("how", ["explicit", "auto"])
@pytest.mark.parametrize("bomb", list(BOMBS))
def test_zip_bombs_are_refused_in_bounded_memory(tmp_path: Path, bomb: str, how: str) -> None:
    declared, json_shaped, says = BOMBS[bomb]
    src = tmp_path / "chatgpt-export.zip"
    _bomb_zip(src, 50, json_shaped=json_shaped)
    if declared is not None:
        _lie_about_size(src, declared)
    db = tmp_path / "h.db"
    fmt_args = ["--format", "chatgpt"] if how == "explicit" else []
    tracemalloc.start()
    try:
        result = run("import", "--db", str(db), *fmt_args, str(src))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_refused(result)
    if how == "explicit" or json_shaped:  # auto-detection sniffs 64 KiB; only a JSON-shaped bomb looks like ChatGPT
        assert says in result[2]
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def _prose(n_chars: int, seed: int) -> str:
    rnd = random.Random(seed)
    words = ["alpha", "beta", "naïve", "straße", "日本語", "😀", "def", "x=1;", "\n", "\t", "Ωmega", "—"]
    out: list[str] = []
    size = 0
    while size < n_chars:
        word = rnd.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n_chars]


def test_a_5mb_episode_imports_counts_and_exports_identically(tmp_path: Path, tokenizer: Tokenizer) -> None:
    content = _prose(5 * 2**20, seed=5)
    src = tmp_path / "big.jsonl"
    src.write_text(json.dumps({"session": "big", "role": "user", "content": content}) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    code, _, err = run("import", "--db", str(db), str(src))
    assert code == 0, err
    (row,) = json.loads(run("sessions", "--db", str(db), "--json")[1])
    assert row["episodes"] == 1 and row["tokens"] == tokenizer.count(content) > 10**6
    exported = json.loads(run("export", "--db", str(db), "--session", "big")[1])
    assert exported["episodes"][0]["content"] == content
    assert exported["episodes"][0]["tokens"] == row["tokens"]


def test_a_100k_episode_session_imports_and_lists(tmp_path: Path) -> None:
    n = 100_000
    src = tmp_path / "long.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"session": "long", "role": "user" if i % 2 else "assistant",
                                 "content": f"message {i}: short text {i % 97}"}) + "\n")
    db = tmp_path / "h.db"
    code, out, err = run("import", "--db", str(db), str(src))
    assert code == 0, err
    assert f"{n} episode(s) added" in out
    (row,) = json.loads(run("sessions", "--db", str(db), "--json")[1])
    assert row["episodes"] == n
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*), sum(tokens), max(seq) FROM episodes").fetchone() == (n, row["tokens"], n - 1)
    conn.close()  # how fast: bench/bench_import.py (a timed assert here failed on a loaded machine)
