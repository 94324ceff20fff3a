"""lossless-claw — OpenClaw's ``lcm.db`` (``~/.openclaw/lcm.db``): conversations and their summary DAG.

Tables read (as lossless-claw's ``src/db/migration.ts`` creates them, v0.15 and the 1.0 betas):

* ``conversations(conversation_id, session_id, session_key, title, active, archived_at, created_at, …)``
  → one session each, ``session_id`` / ``session_key`` kept in its metadata;
* ``messages(message_id, conversation_id, seq, role, content, token_count, created_at)`` → episodes
  in ``seq`` order. A message with rows in ``message_parts(message_id, ordinal, part_type,
  text_content, is_ignored, …)`` reads as the text of its parts that are not ignored, in
  ``ordinal`` order (reasoning parts go to the episode's metadata, as every importer keeps
  reasoning out of the text); one without parts reads ``messages.content``. Times are UTC
  text without a zone (``YYYY-MM-DD HH:MM:SS``). A message with no text at all is kept as
  ``[empty message]``, so the summaries over it stay whole;
* ``summaries(summary_id, conversation_id, kind, depth, content, token_count,
  source_message_token_count, created_at, model, …)`` with ``summary_messages(summary_id,
  message_id, ordinal)`` — a leaf's messages — and ``summary_parents(summary_id,
  parent_summary_id, ordinal)``, whose naming is inverted: the rows *of* a condensed summary
  (``summary_id`` = it) name its *sources* in ``parent_summary_id``.

A summary carrying lossless-claw's fallback markers (``[LCM fallback summary…``, ``[Truncated
from N tokens]``) or made by its ``emergency-fallback`` model is tier ``fallback``. Its token
counts come across as the summary's model input/output; the backend is ``lossless-claw``. The
DAG is checked against ours before it is written (``importers._summaries``).

Session ids are ``lossless-claw:<conversation id>-<12 hex of its session id>``: conversation
numbers restart in another machine's file, OpenClaw's session ids do not. Nothing in lossless-claw
rewrites a stored message, so a grown file only appends.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from hiermem_tui.importers._sqlite import (
    Schema,
    count_sessions,
    int_or_none,
    open_source,
    quote,
    select_list,
    sniff_sqlite,
    text_or_none,
)
from hiermem_tui.importers._util import EMPTY_TEXT, OUTPUT_TEXT_MAX, clip, first_user_title
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, ParsedSummary, Problems, utc_from_iso

NAME = "lossless-claw"
DESCRIPTION = "lossless-claw lcm.db (OpenClaw conversations with their summary DAG)"
FALLBACK_MODEL = "emergency-fallback"
_FALLBACK_MARKS = re.compile(r"\[LCM fallback summary|\[Truncated from \d+ tokens\]")


def _is_lcm(schema: Schema) -> bool:
    return (
        {"conversation_id", "session_id"} <= schema.get("conversations", set())
        and {"message_id", "conversation_id", "seq", "role", "content"} <= schema.get("messages", set())
    )


def sniff(path: Path, head: bytes) -> bool:
    return sniff_sqlite(path, head, _is_lcm)


def count(path: Path) -> int | None:
    """Conversations with at least one message (what ``sources`` shows)."""
    return count_sessions(path, _is_lcm, lambda _: "SELECT count(DISTINCT conversation_id) FROM messages WHERE "
                          "conversation_id IN (SELECT conversation_id FROM conversations)")


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    with open_source(path, _is_lcm, "a lossless-claw lcm.db (no conversations/messages tables)") as (conn, schema):
        reader = _Reader(conn, schema, path)
        for row in conn.execute(
            f"SELECT {select_list(schema['conversations'], _CONVERSATION)} FROM conversations ORDER BY conversation_id"
        ).fetchall():
            session = reader.session(row, problems)
            if session is not None:
                yield session


def session_id(conversation_id: Any, openclaw_session: str) -> str:
    """``lossless-claw:<conversation id>-<12 hex>`` (see the module doc)."""
    digest = hashlib.sha256(openclaw_session.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{NAME}:{conversation_id}-{digest}"


_CONVERSATION = ("conversation_id", "session_id", "session_key", "title", "active", "archived_at", "created_at")
_MESSAGE = ("message_id", "seq", "role", "content", "created_at")
_PART = ("message_id", "ordinal", "part_type", "text_content", "is_ignored")
_SUMMARY = ("summary_id", "kind", "depth", "content", "token_count", "source_message_token_count", "created_at",
            "model")


class _Reader:
    """Reads one conversation at a time, with the optional tables only where the file has them."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, path: Path) -> None:
        self.conn = conn
        self.schema = schema
        self.path = path
        self.parts = {"message_id", "ordinal", "text_content"} <= schema.get("message_parts", set())
        self.summaries = {"summary_id", "conversation_id", "kind", "content"} <= schema.get("summaries", set())

    def session(self, row: sqlite3.Row, problems: Problems) -> ParsedSession | None:
        cid = row["conversation_id"]
        where = f"{self.path.name}:conversation {cid}"
        episodes = self._episodes(cid, where, problems)
        if not episodes:
            problems.skip("conversation with no messages", where)
            return None
        openclaw = text_or_none(row["session_id"]) or ""
        metadata: dict[str, Any] = {"conversation_id": str(cid), "session_id": openclaw}
        if key := text_or_none(row["session_key"]):
            metadata["session_key"] = key
        if row["active"] is not None and not row["active"]:
            metadata["archived"] = True
        if archived := text_or_none(row["archived_at"]):
            metadata["archived_at"] = archived
        return ParsedSession(
            id=session_id(cid, openclaw),
            title=text_or_none(row["title"]) or first_user_title(episodes, trim_cut=True) or f"{NAME} conversation {cid}",
            source=NAME,
            episodes=episodes,
            created_at=utc_from_iso(text_or_none(row["created_at"])),
            metadata=metadata,
            summaries=self._summaries(cid) if self.summaries else [],
        )

    def _episodes(self, cid: Any, where: str, problems: Problems) -> list[ParsedEpisode]:
        cols = select_list(self.schema["messages"], _MESSAGE)
        rows = self.conn.execute(
            f"SELECT {cols} FROM messages WHERE conversation_id = ? ORDER BY seq, message_id", (cid,)
        ).fetchall()
        parts = self._parts(cid) if self.parts else {}
        out: list[ParsedEpisode] = []
        for row in rows:
            role = (text_or_none(row["role"]) or "").strip().lower()
            if role not in ROLES:
                problems.skip(f"unknown role {role[:20]!r}", f"{where} message {row['message_id']}")
                continue
            text, reasoning = parts.get(row["message_id"], (None, ""))
            if text is None or not text.strip():
                text = text_or_none(row["content"]) or ""
            metadata = {"reasoning": clip(reasoning, OUTPUT_TEXT_MAX)} if reasoning else None
            out.append(ParsedEpisode(
                role=role, content=text if text.strip() else EMPTY_TEXT,
                created_at=utc_from_iso(text_or_none(row["created_at"])), source_id=str(row["message_id"]),
                metadata=metadata,
            ))
        return out

    def _parts(self, cid: Any) -> dict[Any, tuple[str, str]]:
        """``{message_id: (text, reasoning)}`` from the parts of one conversation's messages."""
        cols = select_list(self.schema["message_parts"], _PART)
        texts: dict[Any, list[str]] = defaultdict(list)
        thoughts: dict[Any, list[str]] = defaultdict(list)
        for row in self.conn.execute(
            f"SELECT {cols} FROM message_parts WHERE message_id IN "
            "(SELECT message_id FROM messages WHERE conversation_id = ?) ORDER BY message_id, ordinal", (cid,)
        ):
            text = text_or_none(row["text_content"])
            texts.setdefault(row["message_id"], [])
            if row["is_ignored"] or not text or not text.strip():
                continue
            (thoughts if text_or_none(row["part_type"]) == "reasoning" else texts)[row["message_id"]].append(text)
        return {mid: ("\n\n".join(chunks), "\n\n".join(thoughts.get(mid, []))) for mid, chunks in texts.items()}

    def _summaries(self, cid: Any) -> list[ParsedSummary]:
        cols = select_list(self.schema["summaries"], _SUMMARY)
        rows = self.conn.execute(f"SELECT {cols} FROM summaries WHERE conversation_id = ?", (cid,)).fetchall()
        messages = self._edges("summary_messages", "message_id", cid)
        sources = self._edges("summary_parents", "parent_summary_id", cid)
        out = []
        for row in rows:
            sid = str(text_or_none(row["summary_id"]))
            content = text_or_none(row["content"]) or ""
            model = text_or_none(row["model"])
            fallback = model == FALLBACK_MODEL or bool(_FALLBACK_MARKS.search(content))
            kind: Literal["leaf", "condensed"] = "condensed" if text_or_none(row["kind"]) == "condensed" else "leaf"
            depth = int_or_none(row["depth"])
            out.append(ParsedSummary(
                source_id=sid, kind=kind, depth=(0 if kind == "leaf" else 1) if depth is None else depth,
                content=content,
                backend=NAME, model=model if model and model != "unknown" else None,
                tier="fallback" if fallback else "normal",
                episodes=messages.get(sid, []) if kind == "leaf" else [],
                summaries=sources.get(sid, []) if kind == "condensed" else [],
                created_at=utc_from_iso(text_or_none(row["created_at"])),
                input_tokens=int_or_none(row["source_message_token_count"]) or None,
                output_tokens=int_or_none(row["token_count"]),
            ))
        return out

    def _edges(self, table: str, column: str, cid: Any) -> dict[str, list[str]]:
        """``{summary_id: [source ids in ordinal order]}`` of one conversation's summaries."""
        if {"summary_id", column} - self.schema.get(table, set()):
            return {}
        order = ", ordinal" if "ordinal" in self.schema[table] else ""
        out: dict[str, list[str]] = defaultdict(list)
        for summary, source in self.conn.execute(
            f"SELECT summary_id, {quote(column)} FROM {quote(table)} WHERE summary_id IN "
            f"(SELECT summary_id FROM summaries WHERE conversation_id = ?) ORDER BY summary_id{order}", (cid,)
        ):
            out[str(text_or_none(summary))].append(str(text_or_none(source)))
        return out
