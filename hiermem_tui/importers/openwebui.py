"""Open WebUI — ``webui.db``: ``chat(id, user_id, title, chat JSON, created_at, …)``.

Each chat's JSON holds a message tree (``history.messages`` keyed by id, ``parentId`` links,
``currentId`` = the message the user last saw). Regenerations and edits are siblings in the
tree; we import only the current branch, the conversation as the user left it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._sqlite import Schema, open_source, select_list, sniff_sqlite, text_or_none
from hiermem_tui.importers._util import first_user_title
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, Problems, utc_from_epoch

NAME = "openwebui"
DESCRIPTION = "Open WebUI webui.db (chat table with a JSON message tree per chat)"

_CHAT_COLUMNS = ("id", "title", "chat", "created_at", "updated_at", "archived", "pinned")


def _is_openwebui(schema: Schema) -> bool:
    """A ``chat`` table with a ``chat`` JSON column; oterm's ``chat`` has no such column."""
    return {"id", "chat"} <= schema.get("chat", set()) and (
        "user" in schema or "title" in schema["chat"]
    )


def sniff(path: Path, head: bytes) -> bool:
    return sniff_sqlite(path, head, _is_openwebui)


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    what = "an Open WebUI webui.db (no chat JSON table)"
    with open_source(path, _is_openwebui, what) as (conn, schema):
        cols = select_list(schema["chat"], _CHAT_COLUMNS)
        order = "created_at, id" if "created_at" in schema["chat"] else "id"
        for row in conn.execute(f"SELECT {cols} FROM chat ORDER BY {order}"):
            session = _session(row, path, problems)
            if session is not None:
                yield session


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


def _content(message: dict[str, Any]) -> str | None:
    """Text of a message (string, or OpenAI-style blocks), plus placeholders for files."""
    raw = message.get("content")
    if isinstance(raw, str):
        text = raw
    elif isinstance(raw, list):
        text = "\n".join(
            b["text"] for b in raw if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    elif raw is None:
        text = ""
    else:
        return None
    notes = []
    files = message.get("files")
    for item in files if isinstance(files, list) else []:  # a damaged chat can hold a number there
        if isinstance(item, dict):
            inner = item.get("file") if isinstance(item.get("file"), dict) else {}
            name = item.get("name") or inner.get("filename") or item.get("type")
            notes.append(f"[attachment: {name}]" if isinstance(name, str) else "[attachment]")
    return "\n\n".join(p for p in [text, "\n".join(notes)] if p.strip())


def _session(row: sqlite3.Row, path: Path, problems: Problems) -> ParsedSession | None:
    chat_id = str(text_or_none(row["id"]))
    where = f"{path.name}:chat {chat_id}"
    raw = row["chat"]
    try:
        data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (TypeError, ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError
        problems.skip("chat JSON is not valid", where)
        return None
    if not isinstance(data, dict):
        problems.skip("chat JSON is not an object", where)
        return None
    chain = _branch(data, where, problems)
    if chain is None:
        return None
    episodes: list[ParsedEpisode] = []
    for message in chain:
        msg_where = f"{where} message {message.get('id')}"
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:
            problems.skip(f"unknown role {str(role)[:20]!r}", msg_where)
            continue
        content = _content(message)
        if content is None:
            problems.skip("message content is not text", msg_where)
            continue
        if not content:
            problems.skip("empty message", msg_where)
            continue
        model = message.get("model")
        episodes.append(
            ParsedEpisode(
                role=role,
                content=content,
                created_at=utc_from_epoch(message.get("timestamp")),
                source_id=str(message["id"]) if message.get("id") is not None else None,
                metadata={"model": model} if isinstance(model, str) and model else None,
            )
        )
    if not episodes:
        problems.skip("chat with no messages", where)
        return None
    title = (text_or_none(row["title"]) or "").strip()  # blank falls back to the JSON's title
    if not title and isinstance(data.get("title"), str):
        title = data["title"]
    metadata = {k: bool(row[k]) for k in ("archived", "pinned") if row[k]}
    return ParsedSession(
        id=f"{NAME}:{chat_id}",
        title=title.strip() or first_user_title(episodes, trim_cut=True) or chat_id,
        source=NAME,
        episodes=episodes,
        created_at=utc_from_epoch(row["created_at"]),
        metadata=metadata,
    )
