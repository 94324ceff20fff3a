"""Claude Code session logs: ``~/.claude/projects/<project>/<sessionId>.jsonl``.

Input is one ``.jsonl`` file or a folder (the projects folder or one project folder); every
``*.jsonl`` below it is read in sorted order and records are grouped by ``sessionId`` across
files, because subagent files (``agent-*.jsonl``) share their parent's session id.

What becomes an episode, in file order:

* ``assistant`` lines. One API reply is split over several lines with the same ``message.id``;
  consecutive ones (nothing emitted in between) merge into one episode whose ``source_id`` is the
  ``message.id``. Text blocks are kept literally, ``tool_use`` becomes ``[tool_use Bash] {json}``
  (compact JSON, clipped), ``thinking`` is left out and counted in metadata.
* ``user`` lines that are not ``isMeta``: text/image blocks (or a string) → role ``user``;
  ``tool_result`` blocks → role ``tool`` with the result text (clipped; ``[no output]`` when
  empty, so every call keeps its answer). ``isCompactSummary``
  lines (Claude's own summary after compaction) → role ``system`` flagged ``compact_summary``.
  ``<local-command-stdout>`` strings are command output, not typing → role ``system``.
* ``system`` lines with subtype ``compact_boundary``, ``api_error`` or ``local_command`` → role
  ``system`` with a short literal content; other system lines are only counted.

Sidechain records (subagents) are excluded and counted; ``summary`` records give the title;
other record types are not episodes. Records repeated in a resumed session (same ``uuid``) are
kept once. The JSONL reading shared with ``codex`` lives in ``_jsonl_logs``, the tool rendering
in ``_util``.

A session imported while a reply was still being written (its lines share one ``message.id``)
saw only part of it: the next import adds the whole reply as a new version of that episode
(``revision_of`` in its metadata, see ``importers._versions``) and keeps the partial one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hiermem_tui.importers._jsonl_logs import head_records, iter_jsonl, read_jsonl_input, sniff_dir
from hiermem_tui.importers._util import OUTPUT_TEXT_MAX, clip, compact_json, numbered_id, title_from
from hiermem_tui.importers.base import ParsedEpisode, ParsedSession, Problems, utc_from_iso, text_field

NAME = "claude-code"
DESCRIPTION = "Claude Code session logs: a .jsonl file or a ~/.claude/projects folder"

_SYSTEM_KEPT = ("compact_boundary", "api_error", "local_command")
_PARTIAL_KEY = re.compile(rb'(?<!\\)"(sessionId|parentUuid|leafUuid)"\s*:')


def _is_record(value: Any) -> bool:
    """Shape of a Claude Code record: an object with a ``type`` and a session or summary field."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and ("sessionId" in value or "leafUuid" in value or "messageId" in value)
    )


def sniff(path: Path, head: bytes) -> bool:
    """A ``.jsonl`` whose first records carry ``sessionId``/``leafUuid`` (or a folder of them)."""
    if path.is_dir():
        return sniff_dir(path, "*.jsonl", sniff)
    records = head_records(head)
    if records:
        return any(_is_record(r) for r in records)
    # A single first line longer than the head: fall back to key shapes in the partial text.
    return head.lstrip().startswith(b"{") and _PARTIAL_KEY.search(head[:4096]) is not None


@dataclass
class _Draft:
    role: str
    parts: list[str]
    created_at: datetime | None
    source_id: str | None
    metadata: dict[str, Any]
    message_id: str | None = None


@dataclass
class _Session:
    sid: str
    drafts: list[_Draft] = field(default_factory=list)
    uuids: set[str] = field(default_factory=set)
    summaries: list[tuple[str, str]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    models: set[str] = field(default_factory=set)
    tools: Counter[str] = field(default_factory=Counter)
    tool_names: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Read every session in a file or folder, then yield them in order of first appearance."""
    sessions: dict[str, _Session] = {}
    read_jsonl_input(
        path,
        problems,
        _is_record,
        lambda file: _read_file(file, sessions, problems),
        wrong_file="not a Claude Code session log (no session records)",
        skip_reason="not a Claude Code session file",
        none_found="no Claude Code session logs found",
    )
    for acc in sessions.values():
        session = _finish(acc)
        if session is not None:
            yield session


def _read_file(file: Path, sessions: dict[str, _Session], problems: Problems) -> None:
    summaries: list[tuple[str, str]] = []
    in_file: list[_Session] = []
    last_sid = ""
    for lineno, rec in iter_jsonl(file, problems):
        where = f"{file.name}:{lineno}"
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            problems.skip("not a Claude Code record", where)
            continue
        kind = rec["type"]
        if kind == "summary":
            if isinstance(rec.get("summary"), str):
                summaries.append((str(rec.get("leafUuid") or ""), rec["summary"]))
            continue
        if isinstance(rec.get("sessionId"), str) and rec["sessionId"]:
            last_sid = rec["sessionId"]
        elif kind not in ("user", "assistant", "system") and not last_sid:
            continue  # e.g. a file-history-snapshot before any session record: nothing to count it in
        sid = last_sid or file.stem
        acc = sessions.get(sid)
        if acc is None:
            acc = sessions[sid] = _Session(sid)
        if file.name not in acc.files:
            acc.files.append(file.name)
            in_file.append(acc)
        if kind not in ("user", "assistant", "system"):
            acc.counts["other_records"] += 1
            continue
        if rec.get("isSidechain") is True:
            acc.counts["sidechain_records"] += 1
            continue
        uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else None
        if uuid and uuid in acc.uuids:
            acc.counts["duplicate_records"] += 1
            continue
        if kind != "system" and (not isinstance(rec.get("message"), dict)
                                 or not isinstance(rec["message"].get("content"), (str, list))):
            problems.skip(f"{kind} record without message content", where)
            continue
        if uuid:
            acc.uuids.add(uuid)
        for key, meta_key in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("version", "version")):
            if isinstance(rec.get(key), str) and rec[key]:
                acc.info.setdefault(meta_key, rec[key])
        {"user": _user, "assistant": _assistant, "system": _system}[kind](rec, uuid, acc)
    for acc in in_file:
        acc.summaries.extend(summaries)


def _user(rec: dict[str, Any], uuid: str | None, acc: _Session) -> None:
    content = rec["message"]["content"]
    when = utc_from_iso(rec.get("timestamp"))
    if rec.get("isCompactSummary"):
        text = content if isinstance(content, str) else "\n".join(_text_blocks(content))
        acc.drafts.append(_Draft("system", [text], when, uuid, {"compact_summary": True}))
        return
    if rec.get("isMeta"):
        acc.counts["meta_records"] += 1
        return
    if isinstance(content, str):
        if content.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>")):
            acc.drafts.append(_Draft("system", [content], when, uuid, {"local_command": True}))
        else:
            acc.drafts.append(_Draft("user", [content], when, uuid, {}))
        return
    current: _Draft | None = None
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        role = "tool" if btype == "tool_result" else "user"
        if current is None or current.role != role:
            current = _Draft(role, [], when, uuid, {})
            acc.drafts.append(current)
        if btype == "tool_result":
            result = _result_text(block.get("content"))
            # An empty result still shows the call ran; dropping it would orphan the tool_use.
            current.parts.append(clip(result, OUTPUT_TEXT_MAX) if result.strip() else "[no output]")
            name = acc.tool_names.get(str(block.get("tool_use_id")))
            if name:
                current.metadata.setdefault("tools", []).append(name)
            if block.get("is_error"):
                current.metadata["is_error"] = True
        elif btype == "text":
            if isinstance(block.get("text"), str):
                current.parts.append(block["text"])
        else:
            current.parts.append(_placeholder(block))


def _assistant(rec: dict[str, Any], uuid: str | None, acc: _Session) -> None:
    message = rec["message"]
    mid = message.get("id") if isinstance(message.get("id"), str) and message.get("id") else None
    last = acc.drafts[-1] if acc.drafts else None
    if mid and last is not None and last.role == "assistant" and last.message_id == mid:
        draft = last
    else:
        draft = _Draft("assistant", [], utc_from_iso(rec.get("timestamp")), mid or uuid, {}, mid)
        acc.drafts.append(draft)
    if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
        draft.metadata["model"] = message["model"]
        acc.models.add(message["model"])
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            draft.parts.append(block["text"])
        elif btype in ("thinking", "redacted_thinking"):
            draft.metadata["thinking_blocks"] = draft.metadata.get("thinking_blocks", 0) + 1
            acc.counts["thinking_blocks"] += 1
        elif btype == "tool_use":
            name = str(block.get("name") or "?")
            draft.parts.append(f"[tool_use {name}] {compact_json(block.get('input'))}")
            draft.metadata.setdefault("tools", []).append(name)
            acc.tools[name] += 1
            if isinstance(block.get("id"), str):
                acc.tool_names[block["id"]] = name
        else:
            draft.parts.append(_placeholder(block))


def _system(rec: dict[str, Any], uuid: str | None, acc: _Session) -> None:
    subtype = rec.get("subtype")
    if subtype not in _SYSTEM_KEPT:
        acc.counts["system_records_skipped"] += 1
        return
    text = text_field(rec, "content")
    meta: dict[str, Any] = {"subtype": subtype}
    if subtype == "compact_boundary":
        text = f"[compact_boundary] {text or 'Conversation compacted'}"
        cm = rec.get("compactMetadata")
        if isinstance(cm, dict):
            meta.update({k: cm[k] for k in ("trigger", "preTokens") if k in cm})
    elif subtype == "api_error":
        err = rec.get("error")
        detail = text or (compact_json(err, 300) if err is not None else "API error")
        text = f"[api_error] {detail}"
        if isinstance(rec.get("retryAttempt"), int):
            meta["retry_attempt"] = rec["retryAttempt"]
    if text.strip():
        acc.drafts.append(_Draft("system", [text], utc_from_iso(rec.get("timestamp")), uuid, meta))


def _text_blocks(content: list[Any]) -> list[str]:
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _result_text(content: Any) -> str:
    """A tool_result's content (string or blocks) as the text a reader would see."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else
                 _placeholder(b) if isinstance(b, dict) else str(b) for b in content]
        return "\n".join(parts)
    return "" if content is None else compact_json(content)


def _placeholder(block: dict[str, Any]) -> str:
    btype = str(block.get("type") or "block")
    source = block.get("source")
    if isinstance(source, dict) and isinstance(source.get("media_type"), str):
        return f"[{btype} {source['media_type']}]"
    return f"[{btype}]"


def _finish(acc: _Session) -> ParsedSession | None:
    """Turn drafts into episodes: drop empty ones, make repeated source ids unique, pick a title."""
    episodes: list[ParsedEpisode] = []
    used: Counter[str] = Counter()
    for d in acc.drafts:
        content = "\n\n".join(p for p in d.parts if p)
        if not content.strip():
            continue
        source_id = numbered_id(d.source_id, used)
        episodes.append(ParsedEpisode(d.role, content, d.created_at, source_id, d.metadata or None))
    if not episodes:
        return None
    title = next((s for leaf, s in reversed(acc.summaries) if leaf in acc.uuids), "")
    if not title and acc.summaries:
        title = acc.summaries[-1][1]
    if not title:
        title = next((title_from(e.content) for e in episodes
                      if e.role == "user" and not e.content.lstrip().startswith("<command-")), "")
    metadata: dict[str, Any] = dict(acc.info)
    metadata["files"] = acc.files
    if acc.models:
        metadata["models"] = sorted(acc.models)
    if acc.tools:
        metadata["tools"] = dict(sorted(acc.tools.items()))
    metadata.update(sorted(acc.counts.items()))
    times = [e.created_at for e in episodes if e.created_at is not None]
    return ParsedSession(
        id=f"{NAME}:{acc.sid}",
        title=title.strip() or "Untitled",
        source=NAME,
        episodes=episodes,
        created_at=min(times) if times else None,
        metadata=metadata,
    )
