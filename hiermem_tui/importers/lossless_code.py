"""lossless-code — its ``vault.db`` (``~/.lossless-code/vault.db``): Claude Code sessions and their summary DAG.

Tables read (as lossless-code's ``scripts/db/schema.py`` and its migrations create them):

* ``sessions(session_id, working_dir, started_at, last_active, …, agent_source)`` → one session each;
* ``messages(id, session_id, turn_id, role, content, tool_name, working_dir, timestamp, …)`` →
  episodes ordered by ``timestamp`` (epoch seconds), then ``id``;
* ``summaries(id, session_id, content, depth, token_count, created_at, consolidated, kind)`` and
  ``summary_sources(summary_id, source_type, source_id)``: a ``('message', id)`` row is a leaf's
  message, a ``('summary', id)`` row a condensed summary's source. lossless-code's own ``kind``
  column classifies what a summary says about files; it is not the DAG's kind.

lossless-code never deletes a summary: its "dream" pass merges summaries that share most of
their sources into a new one of the same depth and marks the merged ones ``consolidated = 1``.
Those come in as superseded, replaced by the summary they were merged into (the one at their
depth whose sources hold all of theirs). A summary with no ``session_id`` spans several
sessions (a cascade over the whole vault): no one session can hold it, so it is reported and
skipped. Text it capped (``[Capped from ~N to ~M tokens]``) is marked clipped. lossless-code
keeps no model name per summary, and no fallback marker. The DAG is checked against ours before
it is written (``importers._summaries``).

Session ids are ``lossless-code:<session id>`` (Claude Code's session uuid).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hiermem_tui.importers._sqlite import (
    Schema,
    count_sessions,
    int_or_none,
    open_source,
    select_list,
    sniff_sqlite,
    text_or_none,
)
from hiermem_tui.importers._util import EMPTY_TEXT, first_user_title
from hiermem_tui.importers.base import (
    ROLES,
    ParsedEpisode,
    ParsedSession,
    ParsedSummary,
    Problems,
    utc_from_epoch,
)

NAME = "lossless-code"
DESCRIPTION = "lossless-code vault.db (Claude Code sessions with their summary DAG)"
CAPPED = "[Capped from ~"

_SESSION = ("session_id", "working_dir", "started_at", "agent_source")
_MESSAGE = ("id", "session_id", "role", "content", "tool_name", "timestamp")
_SUMMARY = ("id", "session_id", "content", "depth", "token_count", "created_at", "consolidated")


def _is_vault(schema: Schema) -> bool:
    """lossless-code's tables. Our own database has ``sessions`` and ``summary_sources`` too,
    but ``episodes`` instead of ``messages``, and ``id`` instead of ``session_id``."""
    return (
        "session_id" in schema.get("sessions", set())
        and {"id", "session_id", "role", "content", "timestamp"} <= schema.get("messages", set())
    )


def sniff(path: Path, head: bytes) -> bool:
    return sniff_sqlite(path, head, _is_vault)


def count(path: Path) -> int | None:
    """Sessions with at least one message (what ``sources`` shows)."""
    return count_sessions(path, _is_vault, lambda _: "SELECT count(DISTINCT session_id) FROM messages WHERE "
                          "session_id IN (SELECT session_id FROM sessions)")


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    with open_source(path, _is_vault, "a lossless-code vault.db (no sessions/messages tables)") as (conn, schema):
        summaries = _summaries(conn, schema, problems)
        known: set[str] = set()
        order = "started_at, session_id" if "started_at" in schema["sessions"] else "session_id"
        rows = conn.execute(f"SELECT {select_list(schema['sessions'], _SESSION)} FROM sessions ORDER BY {order}")
        for row in rows.fetchall():
            sid = str(text_or_none(row["session_id"]))
            known.add(sid)
            session = _session(conn, schema, row, sid, summaries.pop(sid, []), path, problems)
            if session is not None:
                yield session
        for leftover in summaries.values():  # summaries of a session the vault does not list
            for _ in leftover:
                problems.skip_summary("of a session that is not in the vault")
        for (orphan,) in conn.execute("SELECT DISTINCT session_id FROM messages").fetchall():
            if str(text_or_none(orphan)) not in known:
                problems.skip("messages of a session that is not in the vault", f"{path.name}:session {orphan}")


def _session(
    conn: sqlite3.Connection, schema: Schema, row: sqlite3.Row, sid: str, summaries: list[ParsedSummary],
    path: Path, problems: Problems,
) -> ParsedSession | None:
    where = f"{path.name}:session {sid}"
    cols = select_list(schema["messages"], _MESSAGE)
    episodes: list[ParsedEpisode] = []
    for msg in conn.execute(f"SELECT {cols} FROM messages WHERE session_id = ? ORDER BY timestamp, id", (sid,)):
        role = (text_or_none(msg["role"]) or "").strip().lower()
        if role not in ROLES:
            problems.skip(f"unknown role {role[:20]!r}", f"{where} message {msg['id']}")
            continue
        tool = text_or_none(msg["tool_name"])
        text = text_or_none(msg["content"]) or ""
        episodes.append(ParsedEpisode(
            role=role, content=text if text.strip() else EMPTY_TEXT, created_at=utc_from_epoch(msg["timestamp"]),
            source_id=str(msg["id"]), metadata={"tool_name": tool} if tool else None,
        ))
    if not episodes:
        problems.skip("session with no messages", where)
        for _ in summaries:
            problems.skip_summary("of a session with no messages")
        return None
    metadata: dict[str, Any] = {"session_id": sid}
    for key in ("working_dir", "agent_source"):
        if value := text_or_none(row[key]):
            metadata[key] = value
    folder = Path(metadata.get("working_dir", "")).name
    return ParsedSession(
        id=f"{NAME}:{sid}",
        title=first_user_title(episodes, trim_cut=True) or folder or sid,
        source=NAME,
        episodes=episodes,
        created_at=utc_from_epoch(row["started_at"]),
        metadata=metadata,
        summaries=summaries,
    )


def _summaries(conn: sqlite3.Connection, schema: Schema, problems: Problems) -> dict[str, list[ParsedSummary]]:
    """Every summary of the vault by session, with its sources and what it replaced."""
    if not {"id", "session_id", "content"} <= schema.get("summaries", set()):
        return {}
    sources: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if {"summary_id", "source_type", "source_id"} <= schema.get("summary_sources", set()):
        for summary, kind, source in conn.execute(
            "SELECT summary_id, source_type, source_id FROM summary_sources ORDER BY rowid"
        ):
            sources[str(text_or_none(summary))].append((str(text_or_none(kind)), str(text_or_none(source))))
    out: dict[str, list[ParsedSummary]] = defaultdict(list)
    cols = select_list(schema["summaries"], _SUMMARY)
    for row in conn.execute(f"SELECT {cols} FROM summaries ORDER BY created_at, id"):
        sid = str(text_or_none(row["id"]))
        session = text_or_none(row["session_id"])
        if not session:
            problems.skip_summary("spans several sessions")
            continue
        edges = sources.get(sid, [])
        kinds = {kind for kind, _ in edges}
        if len(kinds) > 1:
            problems.skip_summary("mixes messages and summaries as sources")
            continue
        depth = int_or_none(row["depth"]) or 0
        content = text_or_none(row["content"]) or ""
        leaf = kinds == {"message"} or (not kinds and depth == 0)
        out[session].append(ParsedSummary(
            source_id=sid, kind="leaf" if leaf else "condensed", depth=depth, content=content, backend=NAME,
            episodes=[source for _, source in edges] if leaf else [],
            summaries=[] if leaf else [source for _, source in edges],
            created_at=utc_from_epoch(row["created_at"]), output_tokens=int_or_none(row["token_count"]),
            superseded=bool(int_or_none(row["consolidated"])), trimmed="clipped" if CAPPED in content else None,
        ))
    for listed in out.values():
        _link_merges(listed)
    return out


def _link_merges(summaries: list[ParsedSummary]) -> None:
    """Point each consolidated summary at the one it was merged into: the oldest current
    summary of its depth made no earlier than it whose sources include all of its own."""
    current = [s for s in summaries if not s.superseded]
    for old in summaries:
        if not old.superseded:
            continue
        mine = set(old.episodes or old.summaries)
        for new in current:
            if new.depth == old.depth and mine <= set(new.episodes or new.summaries) and (
                    old.created_at is None or new.created_at is None or new.created_at >= old.created_at):
                new.replaces.append(old.source_id)
                break
