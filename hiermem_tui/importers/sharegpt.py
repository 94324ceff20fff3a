"""ShareGPT-style datasets: ``[{"id", "conversations": [{"from", "value"}]}]`` (array or JSONL).

Datasets, not personal logs: no timestamps, sometimes no ids, and long chats cut into
``<id>_<k>`` pieces. We rejoin the pieces so a session is the whole conversation again, and
derive stable ids from content when the record has none, so re-importing is idempotent.

A record's own id is only unique inside its dataset (many use ``"0"``, ``"1"``…), so the session
id is ``sharegpt:<id>-<12 hex>``, the hash over the id and the conversation's first two turns:
two datasets' conversation ``"0"`` stay two sessions. Sessions an earlier version imported as
``sharegpt:<id>`` keep that id when they hold this conversation (``ParsedSession.former_ids``).
Turns have no ids of their own, so a turn whose text differs from the one stored at its place
is reported, not imported (see ``importers._versions``). A reply's leading ``<think>…</think>``
(reasoning datasets) goes to its metadata (``_util.take_reasoning``); the id hashes the turns as written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hiermem_tui.importers._util import ONLY_REASONING, first_user_title, take_reasoning
from hiermem_tui.importers._versions import first_exchange_digest
from hiermem_tui.importers.base import FormatError, ParsedEpisode, ParsedSession, Problems

NAME = "sharegpt"
DESCRIPTION = "ShareGPT-style dataset: JSON array or JSONL of {id, conversations: [{from, value}]}"

# Speaker labels seen in ShareGPT derivatives, mapped onto our four roles.
SPEAKERS = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "function_call": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "function_response": "tool",
    "observation": "tool",
}
PROBE_RECORDS = 20
# At most 18 digits: a piece number, never a number too long for int() (Python refuses > 4300 digits).
_SPLIT = re.compile(r"^(.+)_(\d{1,18})$")


@dataclass(slots=True)
class _Record:
    """One valid record, reduced to what a session needs."""

    id: str
    episodes: list[ParsedEpisode]
    where: str


def _load(path: Path) -> list[tuple[Any, str]]:
    """The file's records with a location each; FormatError when it is not JSON at all."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path.name} is not UTF-8 text (byte {exc.start})") from exc
    stripped = text.lstrip()
    if not stripped:
        raise FormatError(f"{path.name} is empty")
    try:
        data = json.loads(text)
    except RecursionError as exc:
        if stripped.startswith("{"):
            return _load_lines(text, path)  # JSONL: only that line is bad
        raise FormatError(f"{path.name}: JSON nested too deeply to read") from exc
    except json.JSONDecodeError as exc:
        if stripped.startswith("{"):
            return _load_lines(text, path)  # JSONL (or one broken object: no records then)
        raise FormatError(
            f"{path.name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit limit
        if stripped.startswith("{"):
            return _load_lines(text, path)
        raise FormatError(f"{path.name} is not valid JSON ({exc})") from exc
    if isinstance(data, list):
        return [(item, f"{path.name}[{index}]") for index, item in enumerate(data)]
    if isinstance(data, dict):
        return [(data, path.name)]
    raise FormatError(f"{path.name} is not a ShareGPT dataset: top level is not an array")


def _load_lines(text: str, path: Path) -> list[tuple[Any, str]]:
    """JSONL: a bad line is one skipped record, not a reason to reject the file."""
    out: list[tuple[Any, str]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{lineno}"
        try:
            out.append((json.loads(line), where))
        except (ValueError, RecursionError):  # ValueError: also ints over Python's digit limit
            out.append((_BAD_JSON, where))
    return out


_BAD_JSON = object()


def _record(obj: Any, where: str, problems: Problems) -> _Record | str:
    """Validate one record; turns that are unusable are skipped one by one."""
    if obj is _BAD_JSON:
        return "not valid JSON"
    if not isinstance(obj, dict):
        return "record is not a JSON object"
    turns = obj.get("conversations")
    if not isinstance(turns, list):
        return "missing or invalid 'conversations' list"
    raw_id = obj.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
        if raw_id is not None and raw_id != "":
            return "invalid 'id'"
        canonical = json.dumps(turns, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        # surrogatepass: JSON escapes can leave lone surrogates, which strict UTF-8 refuses; valid
        # text encodes to the same bytes either way, so existing ids do not change.
        record_id = "sha1-" + hashlib.sha1(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    else:
        record_id = str(raw_id).strip()
    episodes: list[ParsedEpisode] = []
    for index, turn in enumerate(turns):
        turn_where = f"{where} turn {index}"
        if not isinstance(turn, dict):
            problems.skip("turn is not an object", turn_where)
            continue
        speaker = turn.get("from", turn.get("role"))
        value = turn.get("value", turn.get("content"))
        role = SPEAKERS.get(speaker.strip().lower()) if isinstance(speaker, str) else None
        if role is None:
            problems.skip(f"unknown speaker {str(speaker)[:40]!r}", turn_where)
            continue
        if not isinstance(value, str):
            problems.skip("turn 'value' is not text", turn_where)
            continue
        if not value.strip():
            problems.skip("empty turn", turn_where)
            continue
        metadata = {"from": speaker} if speaker not in ("human", "gpt", "system") else None
        episode = ParsedEpisode(role=role, content=value, metadata=metadata)
        if not take_reasoning(episode):
            problems.skip(ONLY_REASONING, turn_where)
            continue
        episodes.append(episode)
    return _Record(record_id, episodes, where)


def _group(records: list[_Record], problems: Problems) -> list[tuple[str, list[_Record]]]:
    """Join ``<id>_<k>`` pieces into ``<id>`` (in numeric k order); everything else stands alone.

    A suffix counts as a piece number only when it is numeric and the piece has siblings or
    k > 0 (a lone ``x_0`` is just an id), and never when a record literally named ``<id>``
    exists, so real ids are not merged by accident.
    """
    plain_ids = {r.id for r in records}
    bases: dict[str, list[int]] = {}
    for record in records:
        match = _SPLIT.match(record.id)
        if match:
            bases.setdefault(match.group(1), []).append(int(match.group(2)))
    groups: dict[str, list[tuple[int, _Record]]] = {}
    for record in records:
        key, k = record.id, -1
        match = _SPLIT.match(record.id)
        if match and match.group(1) not in plain_ids:
            pieces = bases[match.group(1)]
            if len(pieces) > 1 or int(match.group(2)) > 0:
                key, k = match.group(1), int(match.group(2))
        members = groups.setdefault(key, [])
        if any(existing_k == k for existing_k, _ in members):
            problems.skip(f"duplicate conversation id {record.id!r}", record.where)
            continue
        members.append((k, record))
    return [(key, [r for _, r in sorted(m, key=lambda kr: kr[0])]) for key, m in groups.items()]


def parse(path: Path, problems: Problems) -> Iterator[ParsedSession]:
    """Read the whole dataset (pieces of one chat may be anywhere in it), then yield sessions
    in order of first appearance."""
    loaded = _load(path)
    records: list[_Record] = []
    for index, (obj, where) in enumerate(loaded):
        result = _record(obj, where, problems)
        if isinstance(result, str):
            problems.skip(result, where)
            if not records and index + 1 >= PROBE_RECORDS:
                raise FormatError(
                    f"{path.name} is not a ShareGPT dataset: none of the first {PROBE_RECORDS} "
                    "records has a 'conversations' list"
                )
            continue
        records.append(result)
    if not records:
        raise FormatError(
            f"{path.name} is not a ShareGPT dataset: no record has a 'conversations' list"
        )
    for key, members in _group(records, problems):
        episodes = [e for record in members for e in record.episodes]
        if not episodes:
            problems.skip("conversation has no usable turns", members[0].where)
            continue
        metadata: dict[str, Any] = {}
        if len(members) > 1 or members[0].id != key:
            metadata["pieces"] = [r.id for r in members]
        derived = key.startswith("sha1-")  # already unique to its content
        yield ParsedSession(
            id=f"{NAME}:{key}" if derived else f"{NAME}:{key}-{first_exchange_digest(key, episodes, as_sourced=True)}",
            former_ids=[] if derived else [f"{NAME}:{key}"],
            # Datasets have no titles of their own (turns are never blank, so this has text).
            title=first_user_title(episodes, trim_cut=True) or key,
            source=NAME,
            episodes=episodes,
            metadata=metadata,
        )


_HEAD_SHAPE = re.compile(r'"conversations"\s*:\s*\[\s*(\]|\{\s*"(from|value|role|content)"\s*:)')


def sniff(path: Path, head: bytes) -> bool:
    """Decode the first record when the head holds it whole; otherwise look for the key
    shape ``"conversations": [{"from": …`` that ChatGPT/Claude exports never have."""
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff").lstrip()
    if not text or text[0] not in "[{":
        return False
    decoder = json.JSONDecoder()
    start = 0
    if text[0] == "[":
        start = len(text) - len(text[1:].lstrip())
    try:
        first, _ = decoder.raw_decode(text, start)
    except (ValueError, RecursionError):
        if len(head) < 65536:
            return False
        first_obj = text[start : start + 4096]
        return _HEAD_SHAPE.search(first_obj) is not None and '"mapping"' not in first_obj
    if not isinstance(first, dict) or not isinstance(first.get("conversations"), list):
        return False
    turns = first["conversations"]
    return not turns or (
        isinstance(turns[0], dict) and ("from" in turns[0] or "value" in turns[0])
    )
