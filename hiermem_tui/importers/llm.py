"""Simon Willison's ``llm`` — ``logs.db``, in both of its layouts.

Legacy: ``conversations`` + ``responses`` (one row = a prompt and its reply). Newer: a
content-addressed message tree — ``threads`` point at a tip message, ``messages`` link to
their parent, ``parts`` hold the content, ``turns`` record each model call (with its time).
During the transition llm writes both, reusing the conversation id as the thread id and the
response id as the turn id, so one chat can be stored twice: each id is emitted once, from
whichever layout holds more of it (ties go to the newer layout, which keeps tool parts).

Schema assumptions (columns are found with PRAGMA table_info; a missing one reads as NULL):
a part has ``type`` and either ``text`` or text borrowed from ``fragments`` (through
``parts.fragment_id`` or a ``part_fragments`` table — joined in order, an approximation of how
llm composes them); tool parts name the tool in ``tool_name`` or ``name`` and keep
``arguments``/``output`` in columns or in a JSON ``payload``. Message times are those of the
earliest turn whose chain reaches the message (llm's own ``message_tree`` view does the same).

Regenerations: llm never rewrites a logged message (a new answer is a new response, a new
content hash), so re-imports only append. Should a stored message's text change under its id
anyway, the new text is added as a new version of it (``importers._versions``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hiermem_tui.importers._sqlite import Schema, open_source, select_list, sniff_sqlite, text_or_none
from hiermem_tui.importers._util import first_user_title
from hiermem_tui.importers.base import ROLES, ParsedEpisode, ParsedSession, Problems, utc_from_iso

NAME = "llm"
DESCRIPTION = "Simon Willison's llm logs.db (legacy responses and newer threads/messages)"

# A reply's time is its prompt's time plus ``duration_ms``; a longer "duration" than this is a
# broken counter, not a wait, and would push the reply years (or past datetime's range) away.
MAX_DURATION_MS = 24 * 3600 * 1000


def _key(value: Any) -> str:
    """An id cell as text (``str`` as before, but a BLOB id is decoded rather than shown as ``b'…'``)."""
    return str(text_or_none(value))


def _args_json(value: Any) -> str:
    """Tool arguments as one short literal line (JSON text is re-serialised compactly).

    Unlike ``_util.compact_json`` (Claude-style tool input: spaced, key order kept, clipped)
    this sorts keys, packs tightly and never clips; both are kept so stored text stays the same.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # ValueError: also ints over Python's 4300-digit limit
            return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _number_or_text(value: Any) -> Any:
    """Metadata cells: numbers kept as they are, anything else as text (a BLOB is not JSON)."""
    return value if isinstance(value, (int, float)) else text_or_none(value)


# --- format detection --------------------------------------------------------------------


def _has_legacy(schema: Schema) -> bool:
    return {"id", "prompt", "response"} <= schema.get("responses", set())


def _has_threads(schema: Schema) -> bool:
    return (
        {"id", "tip_message_hash"} <= schema.get("threads", set())
        and {"hash", "parent_hash", "role"} <= schema.get("messages", set())
        and {"message_hash", "type"} <= schema.get("parts", set())
    )


def sniff(path: Path, head: bytes) -> bool:
    return sniff_sqlite(path, head, lambda s: _has_legacy(s) or _has_threads(s))


# --- legacy layout ----------------------------------------------------------------------

_RESPONSE_COLUMNS = (
    "id", "model", "prompt", "system", "response", "conversation_id",
    "datetime_utc", "duration_ms", "input_tokens", "output_tokens",
)  # fmt: skip


class _Legacy:
    """``conversations`` + ``responses``: one row becomes a prompt and a reply episode."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, path: Path):
        self.conn, self.schema, self.path = conn, schema, path
        self.names: dict[str, tuple[str, str]] = {}
        if {"id", "name"} <= schema.get("conversations", set()):
            cols = select_list(schema["conversations"], ("id", "name", "model"))
            for row in conn.execute(f"SELECT {cols} FROM conversations"):
                self.names[_key(row["id"])] = (text_or_none(row["name"]) or "", text_or_none(row["model"]) or "")
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
        sql = f"SELECT response_id, name, {columns} FROM {table} ORDER BY {order}"
        out: dict[str, list[str]] = {}
        for row in self.conn.execute(sql):
            name, value = text_or_none(row["name"]), text_or_none(row[body])
            if table == "tool_calls":
                text = f"[tool_call {name}({_args_json(value or '{}')})]"
            else:
                text = f"[tool_result {name}] {value or ''}"
            out.setdefault(_key(row["response_id"]), []).append(text)
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
            row_key = _key(conv) if conv is not None else None
            if batch and (row_key is None or row_key != key):
                yield key or _key(batch[0]["id"]), batch
                batch = []
            key = row_key
            batch.append(row)
            self.seen.add(row_key or _key(row["id"]))
        if batch:
            yield key or _key(batch[0]["id"]), batch

    def without_responses(self) -> list[str]:
        """Conversations that no response row points at (call after ``batches``)."""
        return [cid for cid in self.names if cid not in self.seen]

    def session(
        self, key: str, rows: list[sqlite3.Row], problems: Problems
    ) -> ParsedSession | None:
        episodes: list[ParsedEpisode] = []
        last_system = ""
        for row in rows:
            rid = _key(row["id"])
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
                episodes.append(ParsedEpisode("assistant", reply, done, reply_id, meta or None))
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


# --- newer layout: threads / messages / parts / turns ------------------------------------


class _Threads:
    """Reads threads as chains of messages; keeps only the turn index in memory."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, path: Path):
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
        tid = _key(thread["id"])
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
            episodes.append(ParsedEpisode(role, content, when, text_or_none(message["hash"]), meta))
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
                yield f"[tool_call {name}({_args_json(args)})]"
            elif kind == "tool_result":
                output = text_or_none(part["output"])
                if output is None:
                    output = payload.get("output", text_or_none(part["text"]) or "")
                text = output if isinstance(output, str) else _args_json(output)
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


# --- putting it together ----------------------------------------------------------------


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    what = "an llm logs.db (no responses or threads/messages/parts tables)"
    with open_source(path, lambda s: _has_legacy(s) or _has_threads(s), what) as (conn, schema):
        yield from _sessions(conn, schema, path, problems, _has_legacy(schema), _has_threads(schema))


def _sessions(
    conn: sqlite3.Connection,
    schema: Schema,
    path: Path,
    problems: Problems,
    legacy: bool,
    threaded: bool,
) -> Iterator[ParsedSession]:
    """Legacy sessions first (a thread with the same id competes with each), then the rest."""
    reader = _Threads(conn, schema, path) if threaded else None
    pending: dict[str, sqlite3.Row] = {}
    if reader is not None:
        pending = {_key(r["id"]): r for r in reader.thread_rows() + reader.loose_turns()}
    if legacy:
        old = _Legacy(conn, schema, path)
        for key, rows in old.batches():
            scratch = Problems()
            session = old.session(key, rows, scratch)
            twin = pending.pop(key, None)
            if twin is not None and reader is not None:
                twin_scratch = Problems()
                other = reader.session(twin, twin_scratch)
                if other is not None and (
                    session is None or len(other.episodes) >= len(session.episodes)
                ):
                    session, scratch = other, twin_scratch
            problems.merge(scratch)  # the chosen twin's problems only
            if session is None:
                problems.skip("conversation with no usable messages", f"{path.name}:{key}")
            else:
                yield session
        for key in old.without_responses():
            if key not in pending:
                problems.skip("conversation with no responses", f"{path.name}:{key}")
    if reader is not None:
        for row in pending.values():
            session = reader.session(row, problems)
            if session is not None:
                yield session
