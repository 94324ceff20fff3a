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

Reading the export (file, zip or folder) is shared with ``claude_ai`` and lives in ``_export``.

Regenerations and edits are new nodes with new ids, so a re-import after the user switched to
another branch appends the newly visible messages and keeps the ones already imported. A message
whose text changed under the same id is added as a new version of it (``importers._versions``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._export import export_conversations, sniff_export
from hiermem_tui.importers._util import OUTPUT_TEXT_MAX, clip, first_user_title
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, Problems, utc_from_epoch, dict_field, text_field

NAME = "chatgpt"
DESCRIPTION = "ChatGPT data export: conversations.json or the export .zip"

CALL_TEXT_MAX = 16_000  # code / canvas documents the model sent to a tool


def sniff(path: Path, head: bytes) -> bool:
    """A JSON array whose first conversation has a ``mapping`` (Claude.ai's has ``chat_messages``)."""
    return sniff_export(path, head, "mapping")


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Yield one session per conversation; malformed conversations are skipped and reported."""
    for conv, where in export_conversations(path, problems, "mapping"):
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

    on_path = sum(1 for i in path_ids if mapping[i].get("message"))
    if not episodes:  # the loader's "without messages" would hide why: say what there was
        problems.skip("conversation with no visible messages" if on_path else "conversation without messages", where)
        return None
    title = text_field(conv, "title")
    if not title.strip():
        title = first_user_title(episodes) or "Untitled"
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
    meta = dict_field(message, "metadata")
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
        return str(part["text"])
    if "image" in kind or ("asset_pointer" in part and kind == "attachment"):
        w, h = part.get("width"), part.get("height")
        return f"[image {w}x{h}]" if isinstance(w, int) and isinstance(h, int) else "[image]"
    if "audio" in kind:
        return "[audio]"
    if "video" in kind:
        return "[video]"
    return f"[{kind}]"
