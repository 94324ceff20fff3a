"""Open WebUI — its database ``webui.db``, or its chat export.

* ``webui.db``: ``chat(id, user_id, title, chat JSON, created_at, …)``.
* The export (Settings → Chats → Export Chats, or a chat's ⋯ → Download → Export chat (.json)):
  ``chat-export-<ms>.json``, a JSON array of the API's chat objects, ``JSON.stringify``-ed by the
  browser: ``[{"id", "user_id", "title", "chat": {…}, "updated_at", "created_at", "share_id",
  "archived", "pinned", "meta", "folder_id", …}]`` (``src/lib/components/chat/Settings/Chats.svelte``
  ``exportChats``; the fields are ``ChatResponse`` in ``backend/open_webui/models/chats.py``).
  A temporary chat exports as just ``{"id", "chat": {"title", "history"}}``.
* A bare chat: one row's ``chat`` JSON (``{"id", "title", "models", "history", "messages",
  "timestamp", …}``) on its own, or a JSON array of them — what Open WebUI's own Import Chats
  takes besides its export. A bare chat with an ``id`` gets the same session as in the
  database; one without (``"id": ""``, as many versions store it) is named by its opening
  messages' ids instead: ``openwebui:chat-<12 hex>``.

Both hold the same ``chat`` JSON (see ``_webui_chat``), and both give a chat the session id
``openwebui:<chat id>``: importing the database and an export of the same chats adds nothing twice.
The export is read as a stream, one chat at a time.

Regenerations and edits are new messages (siblings in the tree) with new ids; editing a message
in place keeps its id, and a re-import then adds the new text as a new version of it (see
``importers._versions``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers import _webui_chat
from hiermem_tui.importers._export import EXPORT_KINDS, LOOKAHEAD, iter_json_array
from hiermem_tui.importers._sqlite import (
    SQLITE_MAGIC,
    Schema,
    count_sessions,
    open_source,
    select_list,
    sniff_sqlite,
    text_or_none,
)
from hiermem_tui.importers.base import FormatError, ParsedSession, Problems, read_head, text_field, utc_from_epoch

NAME = _webui_chat.NAME
DESCRIPTION = "Open WebUI: webui.db (chat table with a JSON message tree per chat) or its chat export (.json)"

_CHAT_COLUMNS = ("id", "title", "chat", "created_at", "updated_at", "archived", "pinned")
# The export's first chat, as the browser writes it: an object whose keys include "chat": {
# and, inside it, a "history" tree (or the old flat "messages" list).
_EXPORT_START = re.compile(rb'^\s*\[\s*\{\s*"')
_EXPORT_CHAT = re.compile(rb'(?<!\\)"chat"\s*:\s*\{')
_EXPORT_TREE = re.compile(rb'(?<!\\)"(history|currentId)"\s*:')
# A bare chat (object or array of them): a "history" tree at its top, and no "chat" wrapper.
_BARE_START = re.compile(rb'^\s*\[?\s*\{\s*"')
_BARE_TREE = re.compile(rb'(?<!\\)"history"\s*:\s*\{\s*"(messages|currentId)"\s*:')


def _is_openwebui(schema: Schema) -> bool:
    """A ``chat`` table with a ``chat`` JSON column; oterm's ``chat`` has no such column."""
    return {"id", "chat"} <= schema.get("chat", set()) and (
        "user" in schema or "title" in schema["chat"]
    )


def sniff(path: Path, head: bytes) -> bool:
    if head.startswith(SQLITE_MAGIC):
        return sniff_sqlite(path, head, _is_openwebui)
    return _looks_like_export(head)

def count(path: Path) -> int | None:
    """Chats in a webui.db; None for an export (only reading it all could tell)."""
    if not read_head(path, len(SQLITE_MAGIC)).startswith(SQLITE_MAGIC):
        return None
    return count_sessions(path, _is_openwebui, lambda _: "SELECT count(*) FROM chat")


def _looks_like_export(head: bytes) -> bool:
    """The head of a JSON array whose first object has ``"chat": {`` and a message tree in it,
    or of a bare chat (a ``history`` tree at the top of an object, or of an array's first one).
    ChatGPT's export has ``mapping``, Claude.ai's ``chat_messages``, ShareGPT ``conversations``:
    none of them has a ``chat`` object or a ``history`` tree."""
    body = head.removeprefix(b"\xef\xbb\xbf")
    if _EXPORT_START.match(body):
        chat = _EXPORT_CHAT.search(body)
        if chat is not None:
            return _EXPORT_TREE.search(body, chat.end()) is not None
    return _BARE_START.match(body) is not None and _BARE_TREE.search(body) is not None


def _is_bare_chat(item: Any) -> bool:
    """One row's ``chat`` JSON on its own: a ``history`` tree, or the old flat ``messages`` list
    beside the ``models`` it was made with."""
    return isinstance(item, dict) and "chat" not in item and (
        isinstance(item.get("history"), dict) or (isinstance(item.get("messages"), list) and "models" in item))


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    try:
        with path.open("rb") as fh:
            magic = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    if magic == SQLITE_MAGIC:
        yield from _database(path, problems)
    else:
        yield from _export(path, problems)


# --- webui.db ---------------------------------------------------------------------------


def _database(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    what = "an Open WebUI webui.db (no chat JSON table)"
    with open_source(path, _is_openwebui, what) as (conn, schema):
        cols = select_list(schema["chat"], _CHAT_COLUMNS)
        order = "created_at, id" if "created_at" in schema["chat"] else "id"
        for row in conn.execute(f"SELECT {cols} FROM chat ORDER BY {order}"):
            session = _row(row, path, problems)
            if session is not None:
                yield session


def _row(row: sqlite3.Row, path: Path, problems: Problems) -> ParsedSession | None:
    chat_id = str(text_or_none(row["id"]))
    where = f"{path.name}:chat {chat_id}"
    raw = row["chat"]
    try:
        data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (TypeError, ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError
        problems.skip("chat JSON is not valid", where)
        return None
    metadata = {k: bool(row[k]) for k in ("archived", "pinned") if row[k]}
    title = text_or_none(row["title"]) or ""  # blank falls back to the JSON's title
    return _webui_chat.session(chat_id, title, data, utc_from_epoch(row["created_at"]), metadata, where, problems)


# --- the chat export --------------------------------------------------------------------


def _export(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    not_export = f"{path.name}: not an Open WebUI chat export (a list of chats with a 'chat' object each)"
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:
        head = fh.read(65536)
        if not head.strip():
            raise FormatError(f"{path.name} is empty")
        start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
        if start == b"{":
            fh.seek(0)
            yield from _bare(fh.read(), path, problems)
            return
        if start != b"[":
            raise FormatError(f"{path.name} is neither an Open WebUI webui.db nor its chat export")
        fh.seek(0)
        # Entries before the first chat are held back: a file of another kind must fail
        # before anything is reported or written.
        strays: list[tuple[str, Any]] | None = []
        for index, item in enumerate(iter_json_array(fh.read, path.name, not_export)):
            where = f"{path.name}[{index}]"
            bare = _is_bare_chat(item)
            if bare:
                item = _wrapped(item)
            if not isinstance(item, dict) or not isinstance(item.get("chat"), dict):
                if strays is None:
                    problems.skip("entry is not a chat (no 'chat' object)", where)
                    continue
                strays.append((where, item))
                if len(strays) > LOOKAHEAD:
                    raise FormatError(not_export + _kind_hint(strays))
                continue
            for stray, _ in strays or ():
                problems.skip("entry is not a chat (no 'chat' object)", stray)
            strays = None
            session = _item(item, where, problems, bare=bare)
            if session is not None:
                yield session
        if strays:  # only non-chats; an empty list is an export of no chats
            raise FormatError(not_export + _kind_hint(strays))


def _kind_hint(strays: list[tuple[str, Any]]) -> str:
    """`` (looks like a ChatGPT export)`` when the entries carry another export's key."""
    for key, (label, _) in EXPORT_KINDS.items():
        if any(isinstance(item, dict) and key in item for _, item in strays):
            return f" (looks like a {label} export)"
    return ""


def _bare(data: bytes, path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """A file holding one bare chat object."""
    try:
        chat = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError
        chat = None
    if not _is_bare_chat(chat):
        raise FormatError(f"{path.name} is neither an Open WebUI webui.db nor its chat export (nor one chat)")
    session = _item(_wrapped(chat), path.name, problems, bare=True)
    if session is not None:
        yield session


def _wrapped(chat: dict[str, Any]) -> dict[str, Any]:
    """A bare chat as the export's entry for it would be."""
    return {"id": chat.get("id"), "title": chat.get("title"), "created_at": chat.get("timestamp"), "chat": chat}


def _item(item: dict[str, Any], where: str, problems: Problems, *, bare: bool = False) -> ParsedSession | None:
    chat_id = item.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        if not bare or chat_id not in ("", None):
            problems.skip("chat without an id", where)
            return None
        chat_id = None  # named by its opening instead
    where = f"{where} {chat_id}" if chat_id else where
    metadata = {k: True for k in ("archived", "pinned") if item.get(k) is True}
    title = text_field(item, "title")
    created = utc_from_epoch(item.get("created_at"))
    return _webui_chat.session(chat_id, title, item["chat"], created, metadata, where, problems)
