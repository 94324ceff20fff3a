"""Simon Willison's ``llm`` — ``logs.db``, in both of its layouts.

Legacy: ``conversations`` + ``responses`` (one row = a prompt and its reply). Newer: a
content-addressed message tree — ``threads`` point at a tip message, ``messages`` link to
their parent, ``parts`` hold the content, ``turns`` record each model call (with its time).
During the transition llm writes both, reusing the conversation id as the thread id and the
response id as the turn id, so one chat can be stored twice: each id is emitted once, from
whichever layout holds more of it (ties go to the newer layout, which keeps tool parts).

Schema assumptions (columns are found with sqlite-utils; a missing one reads as NULL):
a part has ``type`` and either ``text`` or text borrowed from ``fragments`` (through
``parts.fragment_id`` or a ``part_fragments`` table — joined in order, an approximation of how
llm composes them); tool parts name the tool in ``tool_name`` or ``name`` and keep
``arguments``/``output`` in columns or in a JSON ``payload``. Message times are those of the
earliest turn whose chain reaches the message (llm's own ``message_tree`` view does the same).

Regenerations: llm never rewrites a logged message (a new answer is a new response, a new
content hash), so re-imports only append. Should a stored message's text change under its id
anyway, the new text is added as a new version of it (``importers._versions``).

Reasoning: a reply whose text opens with ``<think>…</think>`` (an Ollama reasoning model through an
older plugin) keeps that block in the episode's metadata (``reasoning``), not in its text
(``_util.take_reasoning``).

This module detects the format and decides between the layouts; each layout is read in its own
module (``_llm_legacy``, ``_llm_threads``), with what both need in ``_llm_cells``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from hiermem_tui.importers import _llm_cells
from hiermem_tui.importers._llm_cells import id_text
from hiermem_tui.importers._llm_legacy import LegacyReader
from hiermem_tui.importers._llm_threads import ThreadReader
from hiermem_tui.importers._sqlite import Schema, count_sessions, open_source, sniff_sqlite
from hiermem_tui.importers.base import ParsedSession, Problems

NAME = _llm_cells.NAME
DESCRIPTION = "Simon Willison's llm logs.db (legacy responses and newer threads/messages)"


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

def count(path: Path) -> int | None:
    """Conversations of a legacy logs.db; None once it has threads (a chat can be in both layouts)."""
    return count_sessions(path, lambda s: _has_legacy(s) or _has_threads(s), lambda s: None if _has_threads(s) else
                          "SELECT count(DISTINCT coalesce(conversation_id, id)) FROM responses")


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
    reader = ThreadReader(conn, schema, path) if threaded else None
    pending: dict[str, sqlite3.Row] = {}
    if reader is not None:
        pending = {id_text(r["id"]): r for r in reader.thread_rows() + reader.loose_turns()}
    if legacy:
        old = LegacyReader(conn, schema, path)
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
