"""oterm — ``store.db``: ``chat(id, name, model, system, …)`` and
``message(id, chat_id, author, text, images)``.

oterm keeps no timestamps, so episodes carry none (the store fills them and flags them
synthetic) and order is ``message.id`` (``rowid`` in old files whose message table had no id).

**Session ids.** A chat's row number is only unique inside one store.db: another machine's store,
or the store after a reset, starts again at chat 1. The id is therefore ``oterm:<chat id>-<hash>``,
the hash taken over the chat id and its first exchange (the first two messages' ids and text),
which oterm writes together when the chat starts and never rewrites afterwards — except when the
reply of a chat's only exchange is regenerated, which then imports as a new session beside the
old one (never merged into it). The store's path is deliberately not part of the id: the same
store read through a copy or another mount must not import twice, and two machines' stores sit
at the same path anyway. Sessions imported by earlier versions as ``oterm:<chat id>`` keep their
id when their first exchange is this chat's (``ParsedSession.former_ids``); a different chat that
happens to have the same number gets its own session.

**Reasoning.** A reasoning model's reply, as Ollama streamed it before it sent thinking apart, opens with
``<think>…</think>``: that block goes to the episode's metadata (``reasoning``), as Open WebUI's does, and the
answer is the text; a reply with nothing after its thinking is reported, not imported. The session id is
hashed over the text as oterm holds it, so a chat imported before keeps its id.

**Regenerated replies.** oterm overwrites a regenerated reply in place (same message id, new
text); a re-import appends the new text as a new version of that message (``revision_of`` in its
metadata, see ``importers._versions``) and keeps the old one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._sqlite import (
    Schema,
    count_sessions,
    open_source,
    select_list,
    sniff_sqlite,
    text_or_none,
)
from hiermem_tui.importers._util import ONLY_REASONING, first_user_title, take_reasoning
from hiermem_tui.importers._versions import first_exchange_digest
from hiermem_tui.importers.base import ParsedEpisode, ParsedSession, Problems

NAME = "oterm"
DESCRIPTION = "oterm store.db (chat and message tables)"

# Old oterm releases wrote "me"/"ollama"; newer ones "user"/"assistant".
AUTHORS = {
    "user": "user",
    "me": "user",
    "human": "user",
    "assistant": "assistant",
    "ollama": "assistant",
    "model": "assistant",
    "system": "system",
    "tool": "tool",
}


def _is_oterm(schema: Schema) -> bool:
    """``chat`` + ``message(chat_id, author, text)``. Open WebUI also has ``chat`` and a
    (channel) ``message`` table, but its ``chat`` has a ``chat`` JSON column and its messages
    no ``author``: checking columns keeps the two sniffs apart."""
    chat = schema.get("chat", set())
    message = schema.get("message", set())
    return (
        "id" in chat
        and "chat" not in chat
        and ("name" in chat or "model" in chat)
        and {"chat_id", "author", "text"} <= message
    )


def sniff(path: Path, head: bytes) -> bool:
    return sniff_sqlite(path, head, _is_oterm)

def count(path: Path) -> int | None:
    """Chats with at least one message (what ``sources`` shows)."""
    return count_sessions(path, _is_oterm, lambda _: "SELECT count(DISTINCT chat_id) FROM message WHERE chat_id IN "
                          "(SELECT id FROM chat)")


def _images_note(raw: Any) -> str:
    """Images stay in the source; the episode says how many there were."""
    if not raw:
        return ""
    try:
        images = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):  # ValueError: also ints over Python's 4300-digit limit
        return ""
    count = len(images) if isinstance(images, list) else 0
    return f"[{count} image{'s' if count != 1 else ''} attached]" if count else ""


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    with open_source(path, _is_oterm, "an oterm store.db (no chat/message tables)") as (conn, schema):
        yield from _sessions(conn, schema, path, problems)


def _sessions(
    conn: sqlite3.Connection, schema: Schema, path: Path, problems: Problems
) -> Iterator[ParsedSession]:
    """One sorted scan of ``message`` grouped by chat; chats are few, so they are held."""
    chat_cols = select_list(schema["chat"], ("id", "name", "model", "system", "provider"))
    chats = {row["id"]: row for row in conn.execute(f"SELECT {chat_cols} FROM chat")}
    has_id = "id" in schema["message"]
    order = "id" if has_id else "rowid"
    msg_cols = select_list(schema["message"], ("chat_id", "author", "text", "images"))
    rows = conn.execute(
        f"SELECT {order} AS _mid, {msg_cols} FROM message ORDER BY chat_id, {order}"
    )
    batch: list[sqlite3.Row] = []
    seen: set[Any] = set()
    for row in rows:
        if batch and row["chat_id"] != batch[0]["chat_id"]:
            yield from _session(batch, chats, path, problems)
            batch = []
        batch.append(row)
        seen.add(row["chat_id"])
    if batch:
        yield from _session(batch, chats, path, problems)
    for chat_id in sorted(chats.keys() - seen, key=str):
        problems.skip("chat with no messages", f"{path.name}:chat {chat_id}")


def _session(
    rows: list[sqlite3.Row], chats: dict[Any, sqlite3.Row], path: Path, problems: Problems
) -> Iterator[ParsedSession]:
    chat_id = rows[0]["chat_id"]
    chat = chats.get(chat_id)
    if chat is None:
        # oterm deletes chats without SQLite enforcing the cascade, so orphans are leftovers
        # of chats the user deleted: importing them would resurrect them.
        problems.skip("messages of a deleted chat", f"{path.name}:chat {chat_id}")
        return
    episodes: list[ParsedEpisode] = []
    system = text_or_none(chat["system"])
    if system and system.strip():
        episodes.append(ParsedEpisode(role="system", content=system, source_id="system"))
    for row in rows:
        where = f"{path.name}:message {row['_mid']}"
        author = text_or_none(row["author"])
        role = AUTHORS.get(author.strip().lower()) if author is not None else None
        if role is None:
            problems.skip(f"unknown author {str(author)[:20]!r}", where)
            continue
        text = text_or_none(row["text"]) or ""
        note = _images_note(text_or_none(row["images"]))
        content = "\n\n".join(p for p in (text, note) if p.strip())
        if not content:
            problems.skip("empty message", where)
            continue
        episode = ParsedEpisode(role=role, content=content, source_id=str(row["_mid"]))
        if not take_reasoning(episode):
            problems.skip(ONLY_REASONING, where)
            continue
        episodes.append(episode)
    if not any(e.role != "system" for e in episodes):
        problems.skip("chat with no usable messages", f"{path.name}:chat {chat_id}")
        return
    metadata: dict[str, Any] = {k: v for k in ("model", "provider") if (v := text_or_none(chat[k]))}
    metadata["chat_id"] = str(chat_id)
    yield ParsedSession(
        id=session_id(chat_id, episodes),
        title=text_or_none(chat["name"]) or first_user_title(episodes, trim_cut=True) or f"oterm chat {chat_id}",
        source=NAME,
        episodes=episodes,
        metadata=metadata,
        former_ids=[f"{NAME}:{chat_id}"],
    )


def session_id(chat_id: Any, episodes: list[ParsedEpisode]) -> str:
    """``oterm:<chat id>-<12 hex>``: the chat id plus a hash of its first exchange (see the module doc)."""
    return f"{NAME}:{chat_id}-{first_exchange_digest(str(chat_id), episodes, as_sourced=True)}"
