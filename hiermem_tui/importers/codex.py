"""OpenAI Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Input is one ``.jsonl`` file or a folder tree (every ``*.jsonl`` below it, sorted). Lines are
``{timestamp, type, payload}`` envelopes; older files hold bare response items after a
``{id, timestamp, instructions}`` header line. Both are read. Episodes, in file order:

* human turns from ``event_msg`` ``user_message`` (``response_item`` user messages repeat them
  and also carry injected instructions). Files without any ``user_message`` event (old format)
  fall back to ``response_item`` user messages minus injected ``<environment_context>`` /
  ``<user_instructions>`` / AGENTS.md blocks;
* replies from ``response_item`` messages with role ``assistant`` (``event_msg`` ``agent_message``
  only when a file has no such item);
* the model's tool calls (``function_call``, ``custom_tool_call``, ``local_shell_call``,
  ``web_search_call``) as role ``assistant``, rendered ``[function_call shell] {json}`` — the
  call is the model's action, as a Claude Code ``tool_use`` lives in the assistant reply;
* tool output (``function_call_output``, ``custom_tool_call_output``) as role ``tool``;
* ``compacted`` (Codex's own summary of earlier turns) as role ``system`` flagged ``compact_summary``.

``reasoning`` and developer/system messages are left out and counted. Session id: the
``session_meta`` (or old header) ``id``, else the file stem; files sharing an id are merged.

Rollout items mostly carry no ids, so episodes are keyed by position. Rollouts are append-only;
should an item's text differ from the episode stored at its place, it is reported, not imported
(an item with an id is added as a new version instead, see ``importers._versions``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hiermem_tui.importers._jsonl_logs import head_records, iter_jsonl, read_jsonl_input, sniff_dir
from hiermem_tui.importers._util import OUTPUT_TEXT_MAX, clip, compact_json, first_user_title, numbered_id
from hiermem_tui.importers.base import ParsedEpisode, ParsedSession, Problems, utc_from_iso

NAME = "codex"
DESCRIPTION = "OpenAI Codex CLI rollouts: a rollout-*.jsonl file or ~/.codex/sessions"

_ENVELOPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_ITEMS = ("message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
          "custom_tool_call_output", "local_shell_call", "web_search_call")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_INJECTED = re.compile(
    r"^\s*(<(user_instructions|environment_context|developer_instructions|permissions instructions)>"
    r"|# AGENTS\.md instructions)"
)


def _is_line(value: Any) -> bool:
    """Shape of a rollout line: an envelope, an old header, or a bare response item."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind in _ENVELOPES:
        return isinstance(value.get("payload"), dict)
    if kind is None:
        return value.get("record_type") == "state" or (
            "id" in value and "timestamp" in value and ("instructions" in value or "git" in value)
        )
    return kind in _ITEMS and ("role" in value or "call_id" in value or "summary" in value
                               or "arguments" in value or "action" in value)


def sniff(path: Path, head: bytes) -> bool:
    """A ``.jsonl`` whose first lines are rollout envelopes or bare response items (or a folder of them)."""
    if path.is_dir():
        return sniff_dir(path, "*.jsonl", sniff)
    records = head_records(head)
    if records:
        return any(_is_line(r) for r in records)
    # A first line longer than the head (long instructions in session_meta): look at its start.
    return re.match(rb'\s*\{"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"session_meta"', head) is not None


@dataclass
class _Item:
    kind: str  # ev_user | ri_user | ri_assistant | ev_agent | other
    role: str
    text: str
    created_at: datetime | None
    source_id: str | None
    metadata: dict[str, Any]


@dataclass
class _Session:
    sid: str
    items: list[_Item] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    info: dict[str, Any] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    calls: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    started: datetime | None = None


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Read every rollout in a file or folder, then yield sessions in order of first appearance."""
    sessions: dict[str, _Session] = {}
    read_jsonl_input(
        path,
        problems,
        _is_line,
        lambda file: _read_file(file, sessions, problems),
        wrong_file="not a Codex rollout (no session or response lines)",
        skip_reason="not a Codex rollout file",
        none_found="no Codex rollouts found",
    )
    for acc in sessions.values():
        session = _finish(acc)
        if session is not None:
            yield session


def _read_file(file: Path, sessions: dict[str, _Session], problems: Problems) -> None:
    lines = list(iter_jsonl(file, problems))
    sid = file.stem
    for _, rec in lines:  # the id comes from session_meta (or the old header) wherever it sits
        if isinstance(rec, dict) and rec.get("type") == "session_meta" and isinstance(rec.get("payload"), dict):
            sid = str(rec["payload"].get("id") or sid)
            break
        if isinstance(rec, dict) and "type" not in rec and "instructions" in rec and rec.get("id"):
            sid = str(rec["id"])
            break
    acc = sessions.get(sid)
    if acc is None:
        acc = sessions[sid] = _Session(sid)
    acc.files.append(file.name)
    model: str | None = None
    for lineno, rec in lines:
        where = f"{file.name}:{lineno}"
        if not _is_line(rec) and not (isinstance(rec, dict) and isinstance(rec.get("type"), str)):
            problems.skip("not a Codex rollout line", where)
            continue
        kind = rec.get("type")
        when = utc_from_iso(rec.get("timestamp")) if kind in _ENVELOPES else None
        payload = rec.get("payload") if kind in _ENVELOPES else rec
        if kind in _ENVELOPES and not isinstance(payload, dict):
            problems.skip(f"{kind} line without payload", where)
            continue
        if kind == "session_meta" or (kind is None and "instructions" in rec):
            _meta(payload, acc)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                model = payload["model"]
                acc.models.add(model)
        elif kind == "event_msg":
            _event(payload, when, acc)
        elif kind == "compacted":
            text = payload.get("message")
            if isinstance(text, str) and text.strip():
                acc.items.append(_Item("other", "system", text, when, None, {"compact_summary": True}))
        elif kind == "response_item" or kind in _ITEMS:
            _response_item(payload, when, model, acc)
        else:
            acc.counts["other_lines"] += 1


def _meta(payload: dict[str, Any], acc: _Session) -> None:
    acc.started = acc.started or utc_from_iso(payload.get("timestamp"))
    for key in ("cwd", "cli_version", "originator", "source"):
        if isinstance(payload.get(key), str) and payload[key]:
            acc.info.setdefault(key, payload[key])
    git = payload.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        acc.info.setdefault("git_branch", git["branch"])


def _event(payload: dict[str, Any], when: datetime | None, acc: _Session) -> None:
    etype = payload.get("type")
    message = payload.get("message")
    if etype == "user_message" and isinstance(message, str):
        if payload.get("kind") not in (None, "plain"):
            acc.counts["injected_messages"] += 1
            return
        images = payload.get("images")
        text = message + ("\n" + "\n".join("[image]" for _ in images) if isinstance(images, list) and images else "")
        acc.items.append(_Item("ev_user", "user", text, when, None, {}))
    elif etype == "agent_message" and isinstance(message, str):
        acc.items.append(_Item("ev_agent", "assistant", message, when, None, {}))


def _response_item(item: dict[str, Any], when: datetime | None, model: str | None, acc: _Session) -> None:
    itype = item.get("type")
    sid = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
    if itype == "message":
        role = item.get("role")
        text = _message_text(item.get("content"))
        if role == "assistant":
            acc.items.append(_Item("ri_assistant", "assistant", text, when, sid, {"model": model} if model else {}))
        elif role == "user":
            if _INJECTED.match(text):
                acc.counts["injected_messages"] += 1
            else:
                acc.items.append(_Item("ri_user", "user", text, when, sid, {}))
        else:
            acc.counts[f"{role}_messages"] += 1
    elif itype == "reasoning":
        acc.counts["reasoning_items"] += 1
    elif itype in _CALLS:
        name = str(item.get("name") or itype.removesuffix("_call"))
        text = f"[{itype} {name}] {_call_body(item)}"
        call_id = item.get("call_id")
        if isinstance(call_id, str):
            acc.calls[call_id] = name
        meta: dict[str, Any] = {"tool": name}
        if model:
            meta["model"] = model
        acc.items.append(_Item("other", "assistant", text, when, sid, meta))
    elif itype in ("function_call_output", "custom_tool_call_output"):
        text, meta = _output(item.get("output"))
        called = acc.calls.get(str(item.get("call_id")))
        if called:
            meta["tool"] = called
        acc.items.append(_Item("other", "tool", text, when, sid, meta))
    else:
        acc.counts[f"{itype}_items"] += 1


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            parts.append(f"[{'image' if 'image' in str(block.get('type')) else block.get('type') or 'block'}]")
    return "\n".join(parts)


def _call_body(item: dict[str, Any]) -> str:
    """Arguments as compact JSON when they are JSON, else the literal text (patches, freeform input)."""
    if item.get("type") == "function_call":
        args = item.get("arguments")
        if isinstance(args, str):
            try:
                return compact_json(json.loads(args))
            except (ValueError, RecursionError):
                return clip(args, OUTPUT_TEXT_MAX)
        return compact_json(args)
    if item.get("type") == "custom_tool_call" and isinstance(item.get("input"), str):
        return clip(item["input"], OUTPUT_TEXT_MAX)
    return compact_json(item.get("action") if "action" in item else item.get("input"))


def _output(output: Any) -> tuple[str, dict[str, Any]]:
    """Tool output text; the older JSON-in-a-string ``{"output", "metadata"}`` shape is unwrapped."""
    meta: dict[str, Any] = {}
    text = output
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            decoded = json.loads(output)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            text = decoded["output"]
            if isinstance(decoded.get("metadata"), dict) and "exit_code" in decoded["metadata"]:
                meta["exit_code"] = decoded["metadata"]["exit_code"]
    elif isinstance(output, dict):
        text = output.get("content") if isinstance(output.get("content"), str) else compact_json(output)
    elif isinstance(output, list):
        text = _message_text(output)
    if not isinstance(text, str):
        text = "" if text is None else compact_json(text)
    return (clip(text, OUTPUT_TEXT_MAX) if text.strip() else "[no output]"), meta


def _finish(acc: _Session) -> ParsedSession | None:
    kinds = {i.kind for i in acc.items}
    drop = {"ri_user" if "ev_user" in kinds else "ev_user", "ev_agent" if "ri_assistant" in kinds else "ri_assistant"}
    episodes: list[ParsedEpisode] = []
    used: Counter[str] = Counter()
    for item in acc.items:
        if item.kind in drop or not item.text.strip():
            continue
        source_id = numbered_id(item.source_id, used)
        episodes.append(ParsedEpisode(item.role, item.text, item.created_at, source_id, item.metadata or None))
    if not episodes:
        return None
    times = [e.created_at for e in episodes if e.created_at is not None]
    title = first_user_title(episodes) or "Untitled"
    metadata: dict[str, Any] = dict(acc.info)
    metadata["files"] = acc.files
    if acc.models:
        metadata["models"] = sorted(acc.models)
    metadata.update(sorted(acc.counts.items()))
    return ParsedSession(
        id=f"{NAME}:{acc.sid}",
        title=title,
        source=NAME,
        episodes=episodes,
        created_at=acc.started or (min(times) if times else None),
        metadata=metadata,
    )
