"""The legacy llm layout, ``conversations`` + ``responses``: one row is a prompt and its reply.

It shares no tables with the newer threads layout (``_llm_threads``), only the session shape
and the cell readers in ``_llm_cells``, so it is read on its own here; ``llm`` decides which
layout a chat stored in both is taken from.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from hiermem_tui.importers._llm_cells import NAME, args_json, id_text
from hiermem_tui.importers._sqlite import Schema, quote, select_list, text_or_none
from hiermem_tui.importers._util import ONLY_REASONING, first_user_title, take_reasoning
from hiermem_tui.importers.base import ParsedEpisode, ParsedSession, Problems, utc_from_iso

# A reply's time is its prompt's time plus ``duration_ms``; a longer "duration" than this is a
# broken counter, not a wait, and would push the reply years (or past datetime's range) away.
MAX_DURATION_MS = 24 * 3600 * 1000


def _number_or_text(value: Any) -> Any:
    """Metadata cells: numbers kept as they are, anything else as text (a BLOB is not JSON)."""
    return value if isinstance(value, (int, float)) else text_or_none(value)


_RESPONSE_COLUMNS = (
    "id", "model", "prompt", "system", "response", "conversation_id",
    "datetime_utc", "duration_ms", "input_tokens", "output_tokens",
)  # fmt: skip


class LegacyReader:
    """``conversations`` + ``responses``: one row becomes a prompt and a reply episode."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, path: Path) -> None:
        self.conn, self.schema, self.path = conn, schema, path
        self.names: dict[str, tuple[str, str]] = {}
        if {"id", "name"} <= schema.get("conversations", set()):
            cols = select_list(schema["conversations"], ("id", "name", "model"))
            for row in conn.execute(f"SELECT {cols} FROM conversations"):
                self.names[id_text(row["id"])] = (text_or_none(row["name"]) or "", text_or_none(row["model"]) or "")
        # Tool traffic is small next to the text; holding it per response id avoids a
        # full scan of an unindexed table for every response.
        self.calls = self._tool_rows("tool_calls", "arguments")
        self.results = self._tool_rows("tool_results", "output")
        self.seen: set[str] = set()

    def _tool_rows(self, table: str, body: str) -> dict[str, list[str]]:
        cols = self.schema.get(table, set())
        if not {"response_id", "name"} <= cols:
            return {}
        order = "id" if "id" in cols else "rowid"
        columns = select_list(cols, (body,))
        sql = f"SELECT response_id, name, {columns} FROM {quote(table)} ORDER BY {order}"
        out: dict[str, list[str]] = {}
        for row in self.conn.execute(sql):
            name, value = text_or_none(row["name"]), text_or_none(row[body])
            if table == "tool_calls":
                text = f"[tool_call {name}({args_json(value or '{}')})]"
            else:
                text = f"[tool_result {name}] {value or ''}"
            out.setdefault(id_text(row["response_id"]), []).append(text)
        return out

    def batches(self) -> Iterator[tuple[str, list[sqlite3.Row]]]:
        """Rows grouped by conversation (one sorted scan); a NULL conversation is its own."""
        cols = select_list(self.schema["responses"], _RESPONSE_COLUMNS)
        rows = self.conn.execute(
            f"SELECT {cols} FROM responses "
            "ORDER BY conversation_id IS NULL, conversation_id, datetime_utc, rowid"
        )
        key: str | None = None
        batch: list[sqlite3.Row] = []
        for row in rows:
            conv = row["conversation_id"]
            row_key = id_text(conv) if conv is not None else None
            if batch and (row_key is None or row_key != key):
                yield key or id_text(batch[0]["id"]), batch
                batch = []
            key = row_key
            batch.append(row)
            self.seen.add(row_key or id_text(row["id"]))
        if batch:
            yield key or id_text(batch[0]["id"]), batch

    def without_responses(self) -> list[str]:
        """Conversations that no response row points at (call after ``batches``)."""
        return [cid for cid in self.names if cid not in self.seen]

    def session(
        self, key: str, rows: list[sqlite3.Row], problems: Problems
    ) -> ParsedSession | None:
        episodes: list[ParsedEpisode] = []
        last_system = ""
        for row in rows:
            rid = id_text(row["id"])
            when = utc_from_iso(text_or_none(row["datetime_utc"]))
            system = text_or_none(row["system"]) or ""
            # The system prompt opens the chat; rows repeat it, so only a change is news.
            if system.strip() and system != last_system:
                episodes.append(ParsedEpisode("system", system, when, f"{rid}:system"))
                last_system = system
            if rid in self.results:
                tool_text = "\n".join(self.results[rid])
                episodes.append(ParsedEpisode("tool", tool_text, when, f"{rid}:tool_results"))
            prompt, reply = text_or_none(row["prompt"]) or "", text_or_none(row["response"]) or ""
            if rid in self.calls:
                reply = "\n".join(([reply] if reply.strip() else []) + self.calls[rid])
            if not prompt.strip() and not reply.strip() and rid not in self.results:
                where = f"{self.path.name}:responses {rid}"
                problems.skip("response row with neither prompt nor response", where)
                continue
            if prompt.strip():
                episodes.append(ParsedEpisode("user", prompt, when, f"{rid}:prompt"))
            if reply.strip():
                done = when
                duration = row["duration_ms"]
                if when is not None and isinstance(duration, int) and 0 < duration <= MAX_DURATION_MS:
                    done = when + timedelta(milliseconds=duration)
                meta = {k: _number_or_text(row[k]) for k in ("model", "input_tokens", "output_tokens")}
                meta = {k: v for k, v in meta.items() if v is not None}
                reply_id = f"{rid}:response"
                episode = ParsedEpisode("assistant", reply, done, reply_id, meta or None)
                if take_reasoning(episode):
                    episodes.append(episode)
                else:
                    problems.skip(ONLY_REASONING, f"{self.path.name}:responses {rid}")
        if not episodes:
            return None
        name, model = self.names.get(key, ("", ""))
        return ParsedSession(
            id=f"{NAME}:{key}",
            title=name or first_user_title(episodes, trim_cut=True) or key,
            source=NAME,
            episodes=episodes,
            created_at=next((e.created_at for e in episodes if e.created_at), None),
            metadata={"layout": "responses", **({"model": model} if model else {})},
        )
