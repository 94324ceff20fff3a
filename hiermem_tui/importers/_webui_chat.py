"""One Open WebUI chat (the ``chat`` JSON both webui.db and the chat export hold) as a session.

Each chat holds a message tree (``history.messages`` keyed by id, ``parentId`` links,
``currentId`` = the message the user last saw). Regenerations and edits are siblings in the
tree; only the current branch is imported, the conversation as the user left it.

Open WebUI writes what the model did besides answering into the message text as HTML blocks
(``backend/open_webui/utils/middleware.py``, ``serialize_output``)::

    <details type="reasoning" done="true" duration="4">
    <summary>Thought for 4 seconds</summary>
    > the model's reasoning, each line quoted (HTML-escaped in newer versions)
    </details>

Reasoning is not part of the reply: it goes to the episode's metadata (``reasoning``, clipped,
and ``reasoning_seconds``). Tool calls (``type="tool_calls"``, with ``name``/``arguments``/
``result`` attributes) become ``[tool_call name] args`` / ``[tool_result name] result`` lines,
and any other block keeps its inner text under a ``[<type>]`` marker, so no raw HTML is left.
"""

from __future__ import annotations

import html
import json
import re
from datetime import datetime
from typing import Any

from hiermem_tui.importers._util import OUTPUT_TEXT_MAX, clip, first_user_title
from hiermem_tui.importers._versions import first_exchange_digest
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, Problems, dict_field, utc_from_epoch

NAME = "openwebui"

_DETAILS = re.compile(r'<details\s+type="(?P<type>[\w-]+)"(?P<attrs>[^>]*)>(?P<body>.*?)</details>[ \t]*\n?', re.S)
_SUMMARY = re.compile(r"\s*<summary>.*?</summary>\s*", re.S)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_QUOTE = re.compile(r"^(&gt;|>) ?", re.M)


def session(
    chat_id: str | None,
    title: str,
    data: Any,
    created_at: datetime | None,
    metadata: dict[str, Any],
    where: str,
    problems: Problems,
) -> ParsedSession | None:
    """The chat's current branch as a session; None (reported) when nothing usable is left.
    A chat without an id (a bare chat object) is named by its first two messages (their ids and text)."""
    if not isinstance(data, dict):
        problems.skip("chat JSON is not an object", where)
        return None
    chain = _branch(data, where, problems)
    if chain is None:
        return None
    episodes: list[ParsedEpisode] = []
    for message in chain:
        episode = _episode(message, f"{where} message {message.get('id')}", problems)
        if episode is not None:
            episodes.append(episode)
    if not episodes:
        problems.skip("chat with no messages", where)
        return None
    title = title.strip()
    if not title and isinstance(data.get("title"), str):
        title = data["title"].strip()
    key = chat_id or f"chat-{first_exchange_digest('', episodes)}"
    return ParsedSession(
        id=f"{NAME}:{key}",
        title=title or first_user_title(episodes, trim_cut=True) or key,
        source=NAME,
        episodes=episodes,
        created_at=created_at,
        metadata=metadata,
    )


def _branch(data: dict[str, Any], where: str, problems: Problems) -> list[dict[str, Any]] | None:
    """The current branch, root first; None (reported) when there is no usable tree.

    Falls back to the flat ``messages`` list that some versions also keep.
    """
    history = data.get("history")
    messages = history.get("messages") if isinstance(history, dict) else None
    current = history.get("currentId") if isinstance(history, dict) else None
    if isinstance(messages, dict) and current is not None and str(current) in messages:
        chain: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: Any = current
        while cursor is not None:
            key = str(cursor)
            if key in seen:
                problems.skip("cycle in message parents", where)
                break
            seen.add(key)
            message = messages.get(key)
            if not isinstance(message, dict):
                problems.skip("parent message missing", where)
                break
            chain.append({"id": key, **message})
            cursor = message.get("parentId")
        chain.reverse()
        return chain
    flat = data.get("messages")
    if isinstance(flat, list) and flat:
        return [m for m in flat if isinstance(m, dict)]
    if isinstance(messages, dict) and messages:
        problems.skip("chat has no current message", where)
        return None
    return []


def _episode(message: dict[str, Any], where: str, problems: Problems) -> ParsedEpisode | None:
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        problems.skip(f"unknown role {str(role)[:20]!r}", where)
        return None
    raw = message.get("content")
    if isinstance(raw, str):
        text = raw
    elif isinstance(raw, list):  # OpenAI-style content blocks
        text = "\n".join(b["text"] for b in raw if isinstance(b, dict) and isinstance(b.get("text"), str))
    elif raw is None:
        text = ""
    else:
        problems.skip("message content is not text", where)
        return None
    visible, meta = split_details(text)
    notes = _attachments(message)
    content = "\n\n".join(p for p in (visible, notes) if p.strip())
    if not content:
        problems.skip("message with only reasoning" if meta.get("reasoning") else "empty message", where)
        return None
    model = message.get("model")
    if isinstance(model, str) and model:
        meta["model"] = model
    return ParsedEpisode(
        role=role,
        content=content,
        created_at=utc_from_epoch(message.get("timestamp")),
        source_id=str(message["id"]) if message.get("id") is not None else None,
        metadata=meta or None,
        # Before the <details> blocks were rendered, the raw text was stored: that is this message.
        former_content="\n\n".join(p for p in (text, notes) if p.strip()) if visible != text else None,
    )


def _attachments(message: dict[str, Any]) -> str:
    """Placeholders for attached files: the bytes stay in Open WebUI."""
    notes = []
    files = message.get("files")
    for item in files if isinstance(files, list) else []:  # a damaged chat can hold a number there
        if isinstance(item, dict):
            inner = dict_field(item, "file")
            name = item.get("name") or inner.get("filename") or item.get("type")
            notes.append(f"[attachment: {name}]" if isinstance(name, str) else "[attachment]")
    return "\n".join(notes)


def split_details(text: str) -> tuple[str, dict[str, Any]]:
    """``text`` with its ``<details type=…>`` blocks rendered as plain text or moved to metadata."""
    if "<details" not in text:
        return text, {}
    reasoning: list[str] = []
    seconds = 0

    def render(match: re.Match[str]) -> str:
        nonlocal seconds
        kind = match["type"]
        attrs = {k: html.unescape(v) for k, v in _ATTR.findall(match["attrs"])}
        body = _SUMMARY.sub("", match["body"], count=1).strip("\n")
        if kind == "reasoning":
            reasoning.append(html.unescape(_QUOTE.sub("", body)).strip())
            if attrs.get("duration", "").isdigit():
                seconds += int(attrs["duration"])
            return ""
        if kind == "tool_calls":
            name = attrs.get("name") or "tool"
            lines = [f"[tool_call {name}] {_decoded(attrs.get('arguments', ''))}".rstrip()]
            if "result" in attrs:
                lines.append(f"[tool_result {name}] {clip(_decoded(attrs['result']), OUTPUT_TEXT_MAX)}".rstrip())
            return "\n".join(lines) + "\n"
        return f"[{kind}]\n{html.unescape(body)}\n" if body.strip() else f"[{kind}]\n"

    visible = _DETAILS.sub(render, text).strip("\n")
    meta: dict[str, Any] = {}
    if any(reasoning):
        meta["reasoning"] = clip("\n\n".join(r for r in reasoning if r), OUTPUT_TEXT_MAX)
        if seconds:
            meta["reasoning_seconds"] = seconds
    return visible, meta


def _decoded(value: str) -> str:
    """Open WebUI stores tool arguments/results as JSON text inside the attribute (sometimes
    JSON of a JSON string): unwrap the string layer, show the rest as compact text."""
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    if isinstance(decoded, str):
        return decoded
    return json.dumps(decoded, ensure_ascii=False)
