"""Claude.ai data export (``conversations.json``, the export ``.zip``, or the unzipped folder).

Each conversation lists ``chat_messages`` already in order; ``sender`` human → ``user``,
assistant → ``assistant``. When a message has ``content`` blocks they are preferred over the flat
``text``: text blocks literally, ``tool_use`` as ``[tool_use web_search] {json}``. ``thinking``
blocks are the model's reasoning, not its reply: their text goes to the episode's metadata
(``thinking``, clipped; ``redacted_thinking`` has no text and is only counted), and a message
with nothing but thinking is reported ("message with only thinking"), not imported. A run of
``tool_result`` blocks inside an assistant message
becomes its own role-``tool`` episode so tool output reads the same as in the other importers;
such split parts get ``source_id`` ``<uuid>#1``, ``#2``… after the message's own ``<uuid>``.
Attachments with extracted text (long pastes land there) are appended under
``[attachment <name>]``; uploaded files without text become ``[file <name>]``.

Messages with no text at all are left out and counted (``empty_messages`` in the session's
metadata); a conversation is reported as "conversation without messages" only when its
``chat_messages`` is empty, and as "conversation with only empty messages" when it has messages
but none with text (exports hold many such). Message ids are uuids: a message whose text changed
since an earlier import is added as a new version of it (see ``importers._versions``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._export import export_conversations, sniff_export
from hiermem_tui.importers._util import OUTPUT_TEXT_MAX, clip, compact_json, first_user_title
from hiermem_tui.importers.base import ParsedEpisode, ParsedSession, Problems, utc_from_iso, text_field

NAME = "claude"
DESCRIPTION = "Claude.ai data export: conversations.json or the export .zip"

_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}


def sniff(path: Path, head: bytes) -> bool:
    """A JSON array whose first conversation has ``chat_messages`` (ChatGPT's has ``mapping``)."""
    return sniff_export(path, head, "chat_messages")


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Yield one session per conversation; malformed conversations or messages are skipped and reported."""
    for conv, where in export_conversations(path, problems, "chat_messages"):
        session = _conversation(conv, where, problems)
        if session is not None:
            yield session


def _conversation(conv: dict[str, Any], where: str, problems: Problems) -> ParsedSession | None:
    uuid = conv.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        problems.skip("conversation without a uuid", where)
        return None
    where = f"{where} {uuid}"
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        problems.skip("conversation without chat_messages", where)
        return None
    if not messages:
        problems.skip("conversation without messages", where)
        return None
    episodes: list[ParsedEpisode] = []
    thinking = empty = 0
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            problems.skip("message is not an object", f"{where} message {i}")
            continue
        role = _SENDERS.get(str(msg.get("sender")))
        if role is None:
            problems.skip("unknown sender", f"{where} message {i}")
            continue
        parts, thoughts, n_thinking = _segments(msg, role)
        thinking += n_thinking
        if not parts:
            if thoughts:
                problems.skip("message with only thinking", f"{where} message {i}")
            else:
                empty += 1
            continue
        if thoughts:
            parts[0][2]["thinking"] = clip("\n\n".join(thoughts), OUTPUT_TEXT_MAX)
        mid = msg.get("uuid") if isinstance(msg.get("uuid"), str) and msg.get("uuid") else None
        when = utc_from_iso(msg.get("created_at"))
        for k, (seg_role, text, meta) in enumerate(parts):
            source_id = mid if k == 0 or mid is None else f"{mid}#{k}"
            episodes.append(ParsedEpisode(seg_role, text, when, source_id, meta or None))
    if not episodes:
        problems.skip("conversation with only empty messages" if empty else "conversation with no usable messages",
                      where)
        return None

    name = text_field(conv, "name")
    title = name.strip() or first_user_title(episodes) or "Untitled"
    metadata: dict[str, Any] = {}
    updated = utc_from_iso(conv.get("updated_at"))
    if updated:
        metadata["updated_at"] = updated.isoformat()
    if isinstance(conv.get("model"), str):
        metadata["model"] = conv["model"]
    if isinstance(conv.get("summary"), str) and conv["summary"].strip():
        metadata["summary"] = conv["summary"]
    if thinking:
        metadata["thinking_blocks"] = thinking
    if empty:
        metadata["empty_messages"] = empty
    return ParsedSession(
        id=f"{NAME}:{uuid}",
        title=title,
        source=NAME,
        episodes=episodes,
        created_at=utc_from_iso(conv.get("created_at")),
        metadata=metadata,
    )


def _segments(msg: dict[str, Any], role: str) -> tuple[list[tuple[str, str, dict[str, Any]]], list[str], int]:
    """A message as ``(role, text, metadata)`` pieces (tool results split out), the text of its
    thinking blocks, and how many thinking blocks it had."""
    segments: list[tuple[str, list[str], dict[str, Any]]] = []
    thoughts: list[str] = []
    thinking = 0
    blocks = msg.get("content")
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype in ("thinking", "redacted_thinking"):
                thinking += 1
                if isinstance(block.get("thinking"), str) and block["thinking"].strip():
                    thoughts.append(block["thinking"])
                continue
            seg_role = "tool" if btype == "tool_result" else role
            if not segments or segments[-1][0] != seg_role:
                segments.append((seg_role, [], {"content_types": []}))
            _, texts, meta = segments[-1]
            if btype not in meta["content_types"]:
                meta["content_types"].append(btype)
            texts.append(_render_block(block, meta))
    if not any(t.strip() for _, texts, _ in segments for t in texts):
        text = msg.get("text")
        segments = [(role, [text], {})] if isinstance(text, str) and text.strip() else []
    extras = _attachments(msg)
    if extras:
        if segments and segments[0][0] == role:
            segments[0][1].extend(extras)
        else:
            segments.insert(0, (role, extras, {}))
        segments[0][2]["attachments"] = len(extras)
    out = []
    for seg_role, texts, meta in segments:
        text = "\n\n".join(t for t in texts if t)
        if text.strip():
            out.append((seg_role, text, meta))
    return out, thoughts, thinking


def _render_block(block: dict[str, Any], meta: dict[str, Any]) -> str:
    btype = block.get("type")
    if btype == "text":
        return block["text"] if isinstance(block.get("text"), str) else ""
    if btype == "tool_use":
        name = str(block.get("name") or "?")
        meta.setdefault("tools", []).append(name)
        return f"[tool_use {name}] {compact_json(block.get('input'))}"
    if btype == "tool_result":
        if isinstance(block.get("name"), str):
            meta.setdefault("tools", []).append(block["name"])
        if block.get("is_error"):
            meta["is_error"] = True
        text = _result_text(block.get("content"))
        return clip(text, OUTPUT_TEXT_MAX) if text.strip() else "[no output]"
    return f"[{btype or 'block'}]"


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else compact_json(content)
    out: list[str] = []
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, dict) and isinstance(item.get("title"), str):
            url = item.get("url") if isinstance(item.get("url"), str) else ""
            out.append(f"[{item.get('type') or 'result'}] {item['title']} {url}".rstrip())
        elif isinstance(item, dict):
            out.append(f"[{item.get('type') or 'result'}]")
    return "\n".join(out)


def _attachments(msg: dict[str, Any]) -> list[str]:
    """Attached text (pastes, documents) and the names of uploaded files, as a reader would see them."""
    out: list[str] = []
    names: set[str] = set()
    for att in _list(msg.get("attachments")):
        if not isinstance(att, dict):
            continue
        name = str(att.get("file_name") or "attachment")
        names.add(name)
        body = att.get("extracted_content")
        if isinstance(body, str) and body.strip():
            out.append(f"[attachment {name}]\n{clip(body, OUTPUT_TEXT_MAX)}")
        else:
            out.append(f"[attachment {name}]")
    for f in _list(msg.get("files")):
        if isinstance(f, dict) and str(f.get("file_name") or "file") not in names:
            out.append(f"[file {f.get('file_name') or 'file'}]")
    return out


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else empty: a damaged export can hold a number or ``true`` there."""
    return value if isinstance(value, list) else []
