"""Reading a whole-JSON export (``conversations.json`` alone, zipped or unzipped) as a stream.

ChatGPT, Claude.ai and the Open WebUI chat export all hand over one big JSON array. Reading it
safely takes more than ``json.load``: the file can be hundreds of MB, the zip can be a bomb, and
a user can point one format's ``--format`` at another's export. That machinery is kept here,
apart from the small text helpers in ``_util``, so a fix to the zip guard or the streaming
parser lands in every export format at once and no format reaches into a sibling for it.
"""

from __future__ import annotations

import codecs
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hiermem_tui.importers._util import HEAD_BYTES
from hiermem_tui.importers.base import FormatError, Problems

EXPORT_MEMBER = "conversations.json"
MAX_MEMBER_BYTES = 2 * 1024**3  # refuse members declaring more than this
RATIO_CHECK_MIN_BYTES = 10 * 1024**2  # compression ratio is only judged on members above this
MAX_RATIO = 200  # uncompressed:compressed above this on a large member looks like a zip bomb

_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)


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
