"""Helpers several importers share: text clipping and titles, whole-JSON exports, JSONL logs.

They live here rather than in one format module so that no format depends on another (the
ChatGPT, Claude.ai, Claude Code and Codex importers were each reaching into a sibling), and so
that a fix to, say, the zip-bomb guard or per-line JSON decoding lands in every format at once.
SQLite sources have their own module, ``_sqlite``.
"""

from __future__ import annotations

import codecs
import json
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hiermem_tui.importers.base import FormatError, ParsedEpisode, Problems

HEAD_BYTES = 65536  # what ``base.read_head`` hands to ``sniff``; inner files are sniffed by as much
TITLE_MAX = 80  # a fallback title is one line of at most this many characters
OUTPUT_TEXT_MAX = 16_000  # tool output kept per message
TOOL_INPUT_MAX = 4000  # compact JSON of a tool call's input
PRECHECK_LINES = 50  # non-blank JSONL lines looked at to decide "is this the format at all"

EXPORT_MEMBER = "conversations.json"
MAX_MEMBER_BYTES = 2 * 1024**3  # refuse members declaring more than this
RATIO_CHECK_MIN_BYTES = 10 * 1024**2  # compression ratio is only judged on members above this
MAX_RATIO = 200  # uncompressed:compressed above this on a large member looks like a zip bomb

_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)


# --------------------------------------------------------------------------- text


def clip(text: str, limit: int) -> str:
    """Cut long text to ``limit`` characters and say so, so huge tool payloads stay readable."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [clipped {len(text) - limit} chars]"


def title_from(text: str | None, limit: int = TITLE_MAX, *, trim_cut: bool = False) -> str:
    """First non-empty line of ``text``, cut to ``limit`` characters with an ellipsis: the fallback title.

    ``trim_cut`` also drops white space left at the cut before the ellipsis. The SQLite and
    ShareGPT importers always did; the JSON/JSONL ones never did. Both are kept so that titles
    already stored do not change on re-import.
    """
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            if len(line) <= limit:
                return line
            cut = line[: limit - 1]
            return (cut.rstrip() if trim_cut else cut) + "…"
    return ""


def first_user_title(episodes: Iterable[ParsedEpisode], *, trim_cut: bool = False) -> str:
    """``title_from`` of the first user episode ("" when there is none): what a chat is about."""
    return next((title_from(e.content, trim_cut=trim_cut) for e in episodes if e.role == "user"), "")


def compact_json(value: Any, limit: int = TOOL_INPUT_MAX) -> str:
    """One-line JSON of a tool input, clipped so a whole written file does not become one episode."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clip(text, limit)


def numbered_id(source_id: str | None, used: Counter[str]) -> str | None:
    """``source_id`` the first time, then ``<id>#1``, ``#2``…: a log can repeat one id (a reply
    split around a tool result), but the store needs each episode's key unique to stay idempotent."""
    if source_id is None:
        return None
    used[source_id] += 1
    return source_id if used[source_id] == 1 else f"{source_id}#{used[source_id] - 1}"


# --------------------------------------------------------------------------- whole-JSON exports

# ChatGPT and Claude.ai exports are both a ``conversations.json`` array (alone, zipped or in the
# unzipped folder); only the key each conversation carries tells them apart. Each importer names
# the other in its errors, so a user who picked the wrong ``--format`` learns which one is right.
EXPORT_KINDS: dict[str, tuple[str, str]] = {
    "mapping": ("ChatGPT", "a 'mapping'"),
    "chat_messages": ("Claude.ai", "'chat_messages'"),
}


def _find_member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
    """The member called ``name`` at the root or, failing that, in the shallowest folder."""
    candidates = [i for i in zf.infolist() if not i.is_dir() and i.filename.rsplit("/", 1)[-1] == name]
    candidates.sort(key=lambda i: (i.filename.count("/"), i.filename))
    return candidates[0] if candidates else None


@contextmanager
def open_export(path: Path, name: str = EXPORT_MEMBER) -> Iterator[Callable[[int], bytes]]:
    """The export's JSON as a ``read(n)`` function: the file itself, ``name`` inside the export
    zip (refusing bombs, never reading past the member's declared size) or inside the unzipped folder."""
    if path.is_dir():
        inner = path / name
        if not inner.is_file():
            raise FormatError(f"{path}: no {name} in this folder")
        path = inner
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
            if magic != b"PK\x03\x04":
                fh.seek(0)
                yield fh.read
                return
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        with zipfile.ZipFile(path) as zf:
            info = _find_member(zf, name)
            if info is None:
                raise FormatError(f"{path.name}: no {name} inside the zip")
            declared = info.file_size
            if declared > MAX_MEMBER_BYTES:
                raise FormatError(f"{path.name}: {info.filename} declares {declared} bytes, over the 2 GiB limit")
            if declared > RATIO_CHECK_MIN_BYTES and declared > MAX_RATIO * max(info.compress_size, 1):
                ratio = declared // max(info.compress_size, 1)
                raise FormatError(
                    f"{path.name}: {info.filename} compresses {ratio}:1, refusing it as a likely zip bomb"
                )
            with zf.open(info) as member:
                total = 0

                def read(n: int) -> bytes:
                    nonlocal total
                    try:
                        chunk = member.read(n)
                    except _ZIP_ERRORS as exc:
                        raise FormatError(f"{path.name}: unreadable zip ({exc})") from None
                    total += len(chunk)
                    if total > declared:  # zipfile caps at the declared size; this is a second guard
                        raise FormatError(f"{path.name}: {info.filename} is larger than its header says")
                    return chunk

                yield read
    except FormatError:
        raise
    except _ZIP_ERRORS as exc:
        raise FormatError(f"{path.name}: unreadable zip ({exc})") from None


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def iter_json_array(read: Callable[[int], bytes], label: str, not_array: str, chunk: int = 1 << 20) -> Iterator[Any]:
    """The elements of a top-level JSON array, one at a time, from ``read(n)`` byte chunks.

    A conversations.json can be hundreds of MB; loading it whole costs several times that in
    Python objects. This holds one element (plus a chunk) at a time. Every failure — bad UTF-8,
    bad JSON, absurd nesting, not an array — is a one-line FormatError.
    """
    utf8 = codecs.getincrementaldecoder("utf-8")()
    decoder = json.JSONDecoder()
    buf, pos, eof = "", 0, False

    def fill(want: int) -> bool:
        """Append about ``want`` more bytes of text, dropping what was consumed; False at EOF."""
        nonlocal buf, pos, eof
        if eof:
            return False
        data = read(want)
        try:
            text = utf8.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise FormatError(f"{label}: not UTF-8 ({exc.reason})") from None
        eof = not data
        buf, pos = buf[pos:] + text, 0
        return True

    def skip_space() -> None:
        nonlocal pos
        while True:
            pos = _JSON_SPACE.match(buf, pos).end()  # type: ignore[union-attr]
            if pos < len(buf) or not fill(chunk):
                return

    while not buf and fill(chunk):  # a chunk may end inside a multi-byte character (or the BOM)
        pass
    if buf.startswith("\ufeff"):
        pos = 1
    skip_space()
    if pos >= len(buf) or buf[pos] != "[":
        if pos >= len(buf):
            raise FormatError(f"{label} is empty")
        raise FormatError(not_array)
    pos += 1
    first = True
    while True:
        skip_space()
        if pos >= len(buf):
            raise FormatError(f"{label}: not valid JSON (the array is cut short)")
        if buf[pos] == "]":
            pos += 1
            skip_space()
            if pos < len(buf):
                raise FormatError(f"{label}: not valid JSON (data after the array)")
            return
        if not first:
            if buf[pos] != ",":
                raise FormatError(f"{label}: not valid JSON (expected ',' between conversations)")
            pos += 1
            skip_space()
        first = False
        want = chunk
        while True:
            try:
                obj, end = decoder.raw_decode(buf, pos)
                if end >= len(buf) and not eof:  # a number at the very end may continue in the next chunk
                    raise json.JSONDecodeError("incomplete", buf, end)
                break
            except json.JSONDecodeError as exc:
                if not fill(want):
                    raise FormatError(f"{label}: not valid JSON ({exc.msg})") from None
                want = max(want, len(buf))  # grow geometrically: a huge element is parsed O(n) times total
            except RecursionError:
                raise FormatError(f"{label}: JSON nested too deeply to read") from None
            except ValueError as exc:  # e.g. an integer over Python's digit limit
                raise FormatError(f"{label}: not valid JSON ({exc})") from None
        pos = end
        yield obj


def export_head(path: Path, head: bytes, name: str = EXPORT_MEMBER) -> bytes:
    """First bytes of the export JSON, whether ``path`` is the file, the zip or the folder (for sniffing)."""
    try:
        if path.is_dir():
            inner = path / name
            if not inner.is_file():
                return b""
            with inner.open("rb") as fh:
                return fh.read(HEAD_BYTES)
        if head.startswith(b"PK\x03\x04"):
            with zipfile.ZipFile(path) as zf:
                info = _find_member(zf, name)
                if info is None:
                    return b""
                with zf.open(info) as fh:
                    return fh.read(HEAD_BYTES)
    except _ZIP_ERRORS:
        return b""
    return head


def first_key(head: bytes, keys: tuple[str, ...]) -> str | None:
    """Which of ``keys`` first appears *as an object key* in a JSON array head, or None.

    Quotes inside JSON strings are always backslash-escaped, so requiring an unescaped quote
    keeps chat text that merely mentions ``"mapping":`` from counting.
    """
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not body.startswith(b"["):
        return None
    best: tuple[int, str] | None = None
    for key in keys:
        m = re.search(rb'(?<!\\)"' + re.escape(key.encode()) + rb'"\s*:', body)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), key)
    return best[1] if best else None


def sniff_export(path: Path, head: bytes, key: str) -> bool:
    """Whether the export's first conversation shows ``key`` before any other kind's key."""
    return first_key(export_head(path, head), tuple(EXPORT_KINDS)) == key


LOOKAHEAD = 100
"""Leading entries without the format's key tolerated before deciding the file is another kind."""


def export_conversations(path: Path, problems: Problems, key: str) -> Iterator[tuple[dict[str, Any], str]]:
    """``(conversation, where)`` for each object in the export whose conversations carry ``key``.

    Streams the array. A file of the wrong kind fails before anything is yielded (naming the
    right kind when it is one we know): the leading entries are held until one carries ``key``
    (at most LOOKAHEAD of them). A non-object entry is one skipped conversation.
    """
    label, needs = EXPORT_KINDS[key]
    waiting: list[Any] = []
    matched = False

    def wrong_kind() -> FormatError:
        other = next((k for k in EXPORT_KINDS if k != key and any(isinstance(c, dict) and k in c for c in waiting)),
                     None)
        hint = f" (looks like a {EXPORT_KINDS[other][0]} export)" if other else ""
        return FormatError(f"{path.name}: not a {label} export, no conversation has {needs}{hint}")

    def checked(index: int, conv: Any) -> Iterator[tuple[dict[str, Any], str]]:
        where = f"{path.name}[{index}]"
        if not isinstance(conv, dict):
            problems.skip("conversation is not an object", where)
            return
        yield conv, where

    with open_export(path) as read:
        not_array = f"{path.name}: not a {label} export (top level is not a list of conversations)"
        for index, conv in enumerate(iter_json_array(read, path.name, not_array)):
            if not matched:
                waiting.append(conv)
                if not (isinstance(conv, dict) and key in conv):
                    if len(waiting) > LOOKAHEAD:
                        raise wrong_kind()
                    continue
                matched = True
                for i, held in enumerate(waiting):
                    yield from checked(i, held)
                waiting.clear()
                continue
            yield from checked(index, conv)
    if waiting:
        raise wrong_kind()


# --------------------------------------------------------------------------- JSONL logs (Claude Code, Codex)


_BAD = object()  # marks a line that did not decode


def decode_line(raw: bytes) -> tuple[Any, str]:
    """One JSONL line → ``(value, "")``, or ``(_BAD, reason)``; strict UTF-8 per line."""
    try:
        return json.loads(raw.decode("utf-8").removeprefix("\ufeff")), ""
    except UnicodeDecodeError:
        return _BAD, "invalid UTF-8"
    except RecursionError:
        return _BAD, "JSON nested too deeply"
    except ValueError:
        return _BAD, "not JSON"


def iter_jsonl(path: Path, problems: Problems | None, limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` per non-blank line; bad lines are reported (when ``problems``) and skipped.

    Each line is decoded on its own so one bad byte or bracket costs one line, not the file.
    """
    seen = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            seen += 1
            if limit is not None and seen > limit:
                return
            value, reason = decode_line(raw)
            if value is _BAD:
                if problems is not None:
                    problems.skip(reason, f"{path.name}:{lineno}")
                continue
            yield lineno, value


def head_records(head: bytes) -> list[Any]:
    """JSON values of the complete lines in a file head (for sniffing); bad lines are ignored."""
    lines = head.split(b"\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut off
    values = (decode_line(raw)[0] for raw in lines[:PRECHECK_LINES] if raw.strip())
    return [v for v in values if v is not _BAD]


def jsonl_files(path: Path) -> list[Path]:
    """Every ``*.jsonl`` under a folder, sorted, so imports are deterministic."""
    return sorted(p for p in path.rglob("*.jsonl") if p.is_file())


def sniff_dir(
    path: Path, pattern: str, check: Callable[[Path, bytes], bool], max_dirs: int = 200, max_depth: int = 5
) -> bool:
    """Judge a folder by the first matching file found in a bounded, sorted walk.

    Bounded so that pointing ``--format auto`` at a huge tree stays cheap; sorted so the same
    folder is always judged by the same file.
    """
    queue: list[tuple[Path, int]] = [(path, 0)]
    visited = 0
    while queue and visited < max_dirs:
        folder, depth = queue.pop(0)
        visited += 1
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_file() and entry.match(pattern):
                try:
                    with entry.open("rb") as fh:
                        return bool(check(entry, fh.read(HEAD_BYTES)))
                except OSError:
                    return False
        queue.extend((e, depth + 1) for e in entries if depth < max_depth and e.is_dir() and not e.name.startswith("."))
    return False


def read_jsonl_input(
    path: Path,
    problems: Problems,
    looks_right: Callable[[Any], bool],
    read_file: Callable[[Path], None],
    *,
    wrong_file: str,
    skip_reason: str,
    none_found: str,
) -> None:
    """Hand every log of a file-or-folder input to ``read_file``, in sorted order.

    A lone file that is not of the format (no ``looks_right`` record in its first lines) or
    cannot be read fails the import with ``<file>: <wrong_file>``; inside a folder such files
    are only skipped (``skip_reason``), since log folders collect strays. A folder with none of
    the format fails with ``<path>: <none_found>``.
    """
    files = jsonl_files(path) if path.is_dir() else [path]
    if not files:
        raise FormatError(f"{path}: no .jsonl files in this folder")
    read_any = False
    for file in files:
        label = str(file.relative_to(path)) if path.is_dir() else file.name
        try:
            if not any(looks_right(v) for _, v in iter_jsonl(file, None, PRECHECK_LINES)):
                if not path.is_dir():
                    raise FormatError(f"{label}: {wrong_file}")
                problems.skip(skip_reason, label)
                continue
            read_file(file)
        except OSError as exc:
            if not path.is_dir():
                raise FormatError(f"{label}: cannot read ({exc.strerror or exc})") from None
            problems.skip("unreadable file", label)
            continue
        read_any = True
    if not read_any:
        raise FormatError(f"{path}: {none_found}")
