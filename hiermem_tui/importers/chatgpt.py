"""ChatGPT data export (``conversations.json``, the export ``.zip``, or the unzipped folder).

Each conversation is a tree (``mapping``); regenerations and edits are sibling branches. What
the user saw is the path from ``current_node`` up through ``parent``, reversed, so that is the
only path kept. On that path we keep:

* ``text`` / ``multimodal_text`` messages addressed to everyone (``recipient == "all"``), not
  visually hidden, with non-empty parts, under the author's role (tool output stays role ``tool``);
  object parts become short placeholders (``[image 1024x768]``, ``[audio]``; voice transcripts keep
  their text);
* the model's calls to tools (``code``, or ``text`` addressed to a tool, e.g. Python, web search,
  canvas edits) that are not hidden, as role ``assistant`` rendered ``[call <recipient>] <text>``;
* ``execution_output`` (code interpreter output) as role ``tool``.

Everything else (``thoughts``, ``reasoning_recap``, async reasoning progress messages marked
``initial_text: "Reasoning"``, ``model_editable_context``, browsing spinners, hidden system/tool
plumbing) is dropped and only counted in the session metadata.

This module also holds the helpers for whole-JSON exports shared with ``claude_ai``: reading a
member out of an untrusted zip safely and turning JSON failures into ``FormatError``.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers.base import (
    ROLES,
    FormatError,
    ParsedEpisode,
    ParsedSession,
    Problems,
    utc_from_epoch,
)

NAME = "chatgpt"
DESCRIPTION = "ChatGPT data export: conversations.json or the export .zip"

EXPORT_MEMBER = "conversations.json"
MAX_MEMBER_BYTES = 2 * 1024**3  # refuse members declaring more than this
RATIO_CHECK_MIN_BYTES = 10 * 1024**2  # compression ratio is only judged on members above this
MAX_RATIO = 200  # uncompressed:compressed above this on a large member looks like a zip bomb
CALL_TEXT_MAX = 16_000  # code / canvas documents the model sent to a tool
OUTPUT_TEXT_MAX = 16_000  # tool output kept per message
TITLE_MAX = 80

_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)


# --------------------------------------------------------------------------- shared helpers


def clip(text: str, limit: int) -> str:
    """Cut long text to ``limit`` characters and say so, so huge tool payloads stay readable."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [clipped {len(text) - limit} chars]"


def title_from(text: str | None) -> str:
    """First non-empty line of ``text``, clipped to 80 characters (the fallback title)."""
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"
    return ""


def _find_member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
    """The member called ``name`` at the root or, failing that, in the shallowest folder."""
    candidates = [i for i in zf.infolist() if not i.is_dir() and i.filename.rsplit("/", 1)[-1] == name]
    candidates.sort(key=lambda i: (i.filename.count("/"), i.filename))
    return candidates[0] if candidates else None


def read_zip_member(path: Path, name: str = EXPORT_MEMBER) -> bytes:
    """Read one member of an untrusted zip, refusing bombs and never reading past its declared size."""
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
            chunks: list[bytes] = []
            total = 0
            with zf.open(info) as fh:
                while chunk := fh.read(1 << 20):
                    total += len(chunk)
                    if total > declared:  # zipfile caps at the declared size; this is a second guard
                        raise FormatError(f"{path.name}: {info.filename} is larger than its header says")
                    chunks.append(chunk)
            return b"".join(chunks)
    except FormatError:
        raise
    except _ZIP_ERRORS as exc:
        raise FormatError(f"{path.name}: unreadable zip ({exc})") from None


def load_export_json(path: Path, name: str = EXPORT_MEMBER) -> Any:
    """Load the JSON of an export given as the file itself, the export zip or the unzipped folder."""
    if path.is_dir():
        inner = path / name
        if not inner.is_file():
            raise FormatError(f"{path}: no {name} in this folder")
        path = inner
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = read_zip_member(path, name) if magic == b"PK\x03\x04" else path.read_bytes()
    return decode_json(data, path.name)


def decode_json(data: bytes, label: str) -> Any:
    """Strict UTF-8 JSON → Python, every failure (including absurd nesting) as a one-line FormatError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{label}: not UTF-8 (bad byte at offset {exc.start})") from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text)
    except RecursionError:
        raise FormatError(f"{label}: JSON nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"{label}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:
        raise FormatError(f"{label}: not valid JSON ({exc})") from None


def export_head(path: Path, head: bytes, name: str = EXPORT_MEMBER) -> bytes:
    """First bytes of the export JSON, whether ``path`` is the file, the zip or the folder (for sniffing)."""
    try:
        if path.is_dir():
            inner = path / name
            if not inner.is_file():
                return b""
            with inner.open("rb") as fh:
                return fh.read(65536)
        if head.startswith(b"PK\x03\x04"):
            with zipfile.ZipFile(path) as zf:
                info = _find_member(zf, name)
                if info is None:
                    return b""
                with zf.open(info) as fh:
                    return fh.read(65536)
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


# --------------------------------------------------------------------------- the importer


def sniff(path: Path, head: bytes) -> bool:
    """A JSON array whose first conversation has a ``mapping`` (Claude.ai's has ``chat_messages``)."""
    return first_key(export_head(path, head), ("mapping", "chat_messages")) == "mapping"


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Yield one session per conversation; malformed conversations are skipped and reported."""
    data = load_export_json(path)
    if not isinstance(data, list):
        raise FormatError(f"{path.name}: not a ChatGPT export (top level is not a list of conversations)")
    if data and not any(isinstance(c, dict) and "mapping" in c for c in data):
        claude = any(isinstance(c, dict) and "chat_messages" in c for c in data)
        hint = " (looks like a Claude.ai export)" if claude else ""
        raise FormatError(f"{path.name}: not a ChatGPT export, no conversation has a 'mapping'{hint}")
    for index, conv in enumerate(data):
        where = f"{path.name}[{index}]"
        if not isinstance(conv, dict):
            problems.skip("conversation is not an object", where)
            continue
        session = _conversation(conv, where, problems)
        if session is not None:
            yield session


def _conversation(conv: dict[str, Any], where: str, problems: Problems) -> ParsedSession | None:
    cid = conv.get("conversation_id") or conv.get("id")
    if not isinstance(cid, str) or not cid:
        problems.skip("conversation without an id", where)
        return None
    where = f"{where} {cid}"
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        problems.skip("conversation without a mapping", where)
        return None
    path_ids = _visible_path(mapping, conv.get("current_node"))
    if path_ids is None:
        problems.skip("broken parent chain", where)
        return None

    episodes: list[ParsedEpisode] = []
    dropped: Counter[str] = Counter()
    models: set[str] = set()
    for node_id in path_ids:
        message = mapping[node_id].get("message")
        if message is None:
            continue
        if not isinstance(message, dict):
            problems.skip("message is not an object", f"{where} {node_id}")
            continue
        try:
            episode = _episode(message, dropped)
        except _Malformed as exc:
            problems.skip(str(exc), f"{where} {node_id}")
            continue
        if episode is None:
            continue
        if episode.role == "assistant" and episode.metadata and episode.metadata.get("model"):
            models.add(episode.metadata["model"])
        episodes.append(episode)

    title = conv.get("title") if isinstance(conv.get("title"), str) else ""
    if not title.strip():
        title = next((title_from(e.content) for e in episodes if e.role == "user"), "") or "Untitled"
    on_path = sum(1 for i in path_ids if mapping[i].get("message"))
    all_messages = sum(1 for n in mapping.values() if isinstance(n, dict) and n.get("message"))
    metadata: dict[str, Any] = {"off_path_messages": all_messages - on_path}
    if isinstance(conv.get("default_model_slug"), str):
        metadata["default_model"] = conv["default_model_slug"]
    if models:
        metadata["models"] = sorted(models)
    updated = utc_from_epoch(conv.get("update_time"))
    if updated:
        metadata["updated_at"] = updated.isoformat()
    if dropped:
        metadata["dropped"] = dict(sorted(dropped.items()))
    return ParsedSession(
        id=f"{NAME}:{cid}",
        title=title.strip(),
        source=NAME,
        episodes=episodes,
        created_at=utc_from_epoch(conv.get("create_time")),
        metadata=metadata,
    )


def _visible_path(mapping: dict[str, Any], current: Any) -> list[str] | None:
    """Node ids from the root to ``current_node``; None when the chain is broken or loops."""
    if not isinstance(current, str) or current not in mapping:
        return None
    chain: list[str] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        node = mapping.get(node_id) if isinstance(node_id, str) else None
        if not isinstance(node, dict) or node_id in seen:
            return None
        seen.add(node_id)
        chain.append(node_id)
        node_id = node.get("parent")
    chain.reverse()
    return chain


class _Malformed(Exception):
    """A message on the visible path that cannot be read; the message is skipped, not the chat."""


def _episode(message: dict[str, Any], dropped: Counter[str]) -> ParsedEpisode | None:
    """One visible message as an episode, or None (counting why in ``dropped``)."""
    author, content = message.get("author"), message.get("content")
    if not isinstance(author, dict) or not isinstance(content, dict):
        raise _Malformed("message without author or content")
    role = author.get("role")
    if role not in ROLES:
        raise _Malformed("unknown author role")
    ctype = content.get("content_type")
    meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    recipient = message.get("recipient") or "all"
    if meta.get("is_visually_hidden_from_conversation"):
        dropped["hidden"] += 1
        return None
    if str(meta.get("initial_text") or "").startswith("Reasoning") or str(meta.get("finished_text") or "").startswith(
        "Reasoned"
    ):
        # Async reasoning progress (o3-pro, deep research): a tool-authored reasoning summary.
        dropped["reasoning summary"] += 1
        return None

    epmeta: dict[str, Any] = {"content_type": ctype}
    if role == "assistant" and recipient != "all" and ctype in ("code", "text"):
        body = content.get("text") if ctype == "code" else _join_parts(content.get("parts"))
        if not isinstance(body, str) or not body.strip():
            dropped["empty"] += 1
            return None
        text = f"[call {recipient}] {clip(body, CALL_TEXT_MAX)}"
        epmeta["recipient"] = recipient
    elif ctype == "execution_output":
        body = content.get("text")
        if not isinstance(body, str) or not body.strip():
            dropped["empty"] += 1
            return None
        role, text = "tool", clip(body, OUTPUT_TEXT_MAX)
    elif ctype in ("text", "multimodal_text"):
        if recipient != "all":
            dropped["addressed to a tool"] += 1
            return None
        text = _join_parts(content.get("parts"))
        if not text.strip():
            dropped["empty"] += 1
            return None
        if role == "tool":
            text = clip(text, OUTPUT_TEXT_MAX)
    else:
        dropped[str(ctype)] += 1
        return None

    if role == "tool" and isinstance(author.get("name"), str):
        epmeta["tool"] = author["name"]
    if isinstance(meta.get("model_slug"), str):
        epmeta["model"] = meta["model_slug"]
    attachments = meta.get("attachments")
    if isinstance(attachments, list):
        names = [a.get("name") for a in attachments if isinstance(a, dict) and isinstance(a.get("name"), str)]
        if names:
            epmeta["attachments"] = names
    mid = message.get("id")
    return ParsedEpisode(
        role=role,
        content=text,
        created_at=utc_from_epoch(message.get("create_time")),
        source_id=mid if isinstance(mid, str) and mid else None,
        metadata=epmeta,
    )


def _join_parts(parts: Any) -> str:
    """Text parts literally; object parts as short placeholders a reader would expect."""
    if not isinstance(parts, list):
        return ""
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                out.append(part)
        elif isinstance(part, dict):
            out.append(_part_placeholder(part))
    return "\n".join(out)


def _part_placeholder(part: dict[str, Any]) -> str:
    kind = str(part.get("content_type") or "attachment")
    if kind == "audio_transcription" and isinstance(part.get("text"), str):
        return part["text"]
    if "image" in kind or ("asset_pointer" in part and kind == "attachment"):
        w, h = part.get("width"), part.get("height")
        return f"[image {w}x{h}]" if isinstance(w, int) and isinstance(h, int) else "[image]"
    if "audio" in kind:
        return "[audio]"
    if "video" in kind:
        return "[video]"
    return f"[{kind}]"
