"""The newer llm layout: ``threads`` point at a tip message, ``messages`` chain to their parent.

Reading it means walking parent links (and surviving cycles and gaps), spreading ``turns``
times over the messages they cover and composing ``parts`` from text, fragments, tool calls
and attachments: most of the llm importer, so it has a module of its own beside the legacy
reader (``_llm_legacy``). The schema assumptions it makes are listed in ``llm``'s docstring.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from hiermem_tui.importers._llm_cells import NAME, args_json, id_text
from hiermem_tui.importers._sqlite import Schema, select_list, text_or_none
from hiermem_tui.importers._util import ONLY_REASONING, first_user_title, take_reasoning
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, Problems, utc_from_iso


class ThreadReader:
    """Reads threads as chains of messages; keeps only the turn index in memory."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, path: Path) -> None:
        self.conn, self.schema, self.path = conn, schema, path
        self.part_cols = schema["parts"]
        self.turn_at: dict[str, tuple[datetime, str]] = {}
        turn_cols = schema.get("turns", set())
        if {"tip_message_hash", "datetime_utc"} <= turn_cols:
            cols = select_list(turn_cols, ("tip_message_hash", "datetime_utc", "model"))
            for row in conn.execute(f"SELECT {cols} FROM turns ORDER BY datetime_utc, rowid"):
                when = utc_from_iso(text_or_none(row["datetime_utc"]))
                tip = row["tip_message_hash"]
                if tip and when and tip not in self.turn_at:  # rows come oldest first
                    self.turn_at[tip] = (when, text_or_none(row["model"]) or "")

    def thread_rows(self) -> list[sqlite3.Row]:
        wanted = ("id", "name", "tip_message_hash", "datetime_utc")
        cols = select_list(self.schema["threads"], wanted)
        return list(self.conn.execute(f"SELECT {cols} FROM threads ORDER BY datetime_utc, id"))

    def loose_turns(self) -> list[sqlite3.Row]:
        """Turns logged outside any thread: each is a one-off chat of its own."""
        cols = self.schema.get("turns", set())
        if not {"id", "thread_id", "tip_message_hash"} <= cols:
            return []
        sql = (
            f"SELECT id, NULL AS name, tip_message_hash, {select_list(cols, ('datetime_utc',))} "
            "FROM turns WHERE thread_id IS NULL ORDER BY datetime_utc, id"
        )
        return list(self.conn.execute(sql))

    def session(self, thread: sqlite3.Row, problems: Problems) -> ParsedSession | None:
        tid = id_text(thread["id"])
        where = f"{self.path.name}:thread {tid}"
        chain = self._chain(thread["tip_message_hash"], where, problems)
        start = utc_from_iso(text_or_none(thread["datetime_utc"]))
        times = self._times([m["hash"] for m in chain], start)
        episodes: list[ParsedEpisode] = []
        for message, when in zip(chain, times):
            role = (text_or_none(message["role"]) or "").strip().lower()
            if role not in ROLES:
                problems.skip(f"unknown message role {role[:20]!r}", where)
                continue
            content = "\n\n".join(self._parts(message["hash"]))
            if not content.strip():
                continue  # e.g. reasoning only: nothing a reader would see
            meta = None
            if role == "assistant" and self.turn_at.get(message["hash"], (None, ""))[1]:
                meta = {"model": self.turn_at[message["hash"]][1]}
            episode = ParsedEpisode(role, content, when, text_or_none(message["hash"]), meta)
            if not take_reasoning(episode):  # reasoning written into the reply's text, not as a part of its own
                problems.skip(ONLY_REASONING, where)
                continue
            episodes.append(episode)
        if not episodes:
            problems.skip("thread with no messages", where)
            return None
        return ParsedSession(
            id=f"{NAME}:{tid}",
            title=text_or_none(thread["name"]) or first_user_title(episodes, trim_cut=True) or tid,
            source=NAME,
            episodes=episodes,
            created_at=start or next((e.created_at for e in episodes if e.created_at), None),
            metadata={"layout": "threads"},
        )

    def _chain(self, tip: Any, where: str, problems: Problems) -> list[sqlite3.Row]:
        """Tip → root through parent_hash, reversed; stops (and reports) on a cycle or a gap.

        Hashes stay as stored (whatever their type) so the lookups match what SQLite holds.
        """
        chain: list[sqlite3.Row] = []
        seen: set[Any] = set()
        current = tip
        while current:
            if current in seen:
                problems.skip("cycle in message parents", where)
                break
            seen.add(current)
            row = self.conn.execute(
                "SELECT hash, parent_hash, role FROM messages WHERE hash = ?", (current,)
            ).fetchone()
            if row is None:
                problems.skip("thread refers to a missing message", where)
                break
            chain.append(row)
            current = row["parent_hash"]
        chain.reverse()
        return chain

    def _times(self, hashes: list[Any], fallback: datetime | None) -> list[datetime | None]:
        """Earliest turn whose tip is at or after each message; gaps take the previous time."""
        covering: list[datetime | None] = [None] * len(hashes)
        best: datetime | None = None
        for index in range(len(hashes) - 1, -1, -1):
            hit = self.turn_at.get(hashes[index])
            if hit and (best is None or hit[0] < best):
                best = hit[0]
            covering[index] = best
        previous = fallback
        for index, when in enumerate(covering):
            if when is None:
                covering[index] = previous
            previous = covering[index]
        return covering

    def _parts(self, message_hash: Any) -> Iterator[str]:
        """Each visible part as literal text; reasoning is model-internal and left out."""
        cols = self.part_cols
        wanted = ("id", "type", "text", "tool_name", "name", "arguments", "output", "payload")
        order = "position" if "position" in cols else "rowid"
        sql = (
            f"SELECT {select_list(cols, wanted + ('fragment_id',))} FROM parts "
            f"WHERE message_hash = ? ORDER BY {order}"
        )
        for part in self.conn.execute(sql, (message_hash,)).fetchall():
            kind = text_or_none(part["type"]) or ""
            try:
                payload = json.loads(part["payload"]) if part["payload"] else {}
            except (ValueError, TypeError, RecursionError):
                # ValueError covers a BLOB that is not UTF-8 and ints over the digit limit; TypeError a
                # number. The part keeps what its columns say rather than costing the whole source.
                payload = {}
            if not isinstance(payload, dict):
                payload = {}
            name = text_or_none(part["tool_name"]) or text_or_none(part["name"]) or payload.get("name") or ""
            if kind == "reasoning":
                continue
            if kind == "text":
                text = text_or_none(part["text"]) or self._fragments(part)
                if text:
                    yield text
            elif kind == "tool_call":
                args = text_or_none(part["arguments"])
                if args is None:
                    args = payload.get("arguments", {})
                yield f"[tool_call {name}({args_json(args)})]"
            elif kind == "tool_result":
                output = text_or_none(part["output"])
                if output is None:
                    output = payload.get("output", text_or_none(part["text"]) or "")
                text = output if isinstance(output, str) else args_json(output)
                yield f"[tool_result {name}] {text}"
            elif kind == "attachment":
                yield self._attachment(part)
            else:
                yield f"[{kind or 'part'}]"

    def _fragments(self, part: sqlite3.Row) -> str:
        """Text stored by reference to ``fragments`` (two schema variants)."""
        if "content" not in self.schema.get("fragments", set()):
            return ""
        if part["fragment_id"] is not None:
            sql = "SELECT content FROM fragments WHERE id = ?"
            row = self.conn.execute(sql, (part["fragment_id"],)).fetchone()
            return (text_or_none(row["content"]) or "") if row else ""
        if part["id"] is not None and "part_fragments" in self.schema:
            sql = (
                "SELECT f.content FROM part_fragments pf JOIN fragments f ON f.id = pf.fragment_id"
                ' WHERE pf.part_id = ? ORDER BY pf."order"'
            )
            return "".join(text_or_none(r["content"]) or "" for r in self.conn.execute(sql, (part["id"],)))
        return ""

    def _attachment(self, part: sqlite3.Row) -> str:
        """A placeholder: the bytes stay in the source, the reader learns what was attached."""
        linked = "part_attachments" in self.schema
        if part["id"] is not None and linked and "attachments" in self.schema:
            cols = select_list(self.schema["attachments"], ("type", "path", "url"))
            sql = (
                f"SELECT {cols} FROM part_attachments pa JOIN attachments a"
                ' ON a.id = pa.attachment_id WHERE pa.part_id = ? ORDER BY pa."order"'
            )
            row = self.conn.execute(sql, (part["id"],)).fetchone()
            if row:
                kind, place = text_or_none(row["type"]), text_or_none(row["path"]) or text_or_none(row["url"])
                detail = " ".join(v for v in (kind, place) if v)
                return f"[attachment: {detail}]" if detail else "[attachment]"
        return "[attachment]"
