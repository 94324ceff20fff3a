"""Small helpers every importer shares: text clipping, fallback titles, tool-input JSON, ids.

They live here rather than in one format module so that no format depends on another (the
ChatGPT, Claude.ai, Claude Code and Codex importers were each reaching into a sibling), and so
that a fix to how text is clipped or titled lands in every format at once. The bigger shared
readers have modules of their own: ``_export`` (whole-JSON exports), ``_jsonl_logs`` (JSONL
logs) and ``_sqlite`` (SQLite sources).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from hiermem_tui.importers.base import ParsedEpisode

HEAD_BYTES = 65536  # what ``base.read_head`` hands to ``sniff``; inner files are sniffed by as much
TITLE_MAX = 80  # a fallback title is one line of at most this many characters
OUTPUT_TEXT_MAX = 16_000  # tool output kept per message
TOOL_INPUT_MAX = 4000  # compact JSON of a tool call's input
EMPTY_TEXT = "[empty message]"
"""The text of a message kept although it has none: another tool's summaries name it as a source."""


def clip(text: str, limit: int) -> str:
    """Cut long text to ``limit`` characters and say so, so huge tool payloads stay readable."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [clipped {len(text) - limit} chars]"


_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""Where ``str.splitlines`` cuts a line."""


def title_from(text: str | None, limit: int = TITLE_MAX, *, trim_cut: bool = False) -> str:
    """First non-empty line of ``text``, cut to ``limit`` characters with an ellipsis: the fallback title.

    ``trim_cut`` also drops white space left at the cut before the ellipsis. The SQLite and
    ShareGPT importers always did; the JSON/JSONL ones never did. Both are kept so that titles
    already stored do not change on re-import. Lines are cut as ``str.splitlines`` cuts them, one at
    a time: a 50 MB message is not split whole to read its first line.
    """
    text = text or ""
    pos = 0
    while pos < len(text):
        brk = _LINE_BREAK.search(text, pos)
        end = brk.start() if brk else len(text)
        line = text[pos:end].strip()
        if line:
            if len(line) <= limit:
                return line
            cut = line[: limit - 1]
            return (cut.rstrip() if trim_cut else cut) + "…"
        pos = brk.end() if brk else len(text)
    return ""


def first_user_title(episodes: Iterable[ParsedEpisode], *, trim_cut: bool = False) -> str:
    """``title_from`` of the first user episode ("" when there is none): what a chat is about."""
    return next((title_from(e.content, trim_cut=trim_cut) for e in episodes if e.role == "user"), "")


_THINK = re.compile(r"\s*<think>(.*?)(?:</think>|\Z)", re.S)
_BLANK_LINES = re.compile(r"\A(?:[ \t]*\r?\n)+")
ONLY_REASONING = "message with only reasoning"
"""How a reply that is all ``<think>`` and no answer is reported (it is not imported)."""


def split_think(text: str) -> tuple[str, str]:
    """``(answer, reasoning)``: a reply's leading ``<think>…</think>`` blocks taken out of its text.

    Ollama's reasoning models (DeepSeek-R1, Qwen3 …) wrote their thinking into the reply itself,
    in such a block before the answer; chat tools that kept the reply as streamed (oterm, llm,
    datasets made from them) hold it there. An unclosed block is a reply cut off while thinking:
    all reasoning. A ``<think>`` anywhere but at the start is part of what was said.
    """
    if not text.lstrip().startswith("<think>"):
        return text, ""
    thoughts: list[str] = []
    pos = 0
    while match := _THINK.match(text, pos):
        thoughts.append(match[1].strip())
        pos = match.end()
    return _BLANK_LINES.sub("", text[pos:]), "\n\n".join(t for t in thoughts if t)


def take_reasoning(episode: ParsedEpisode) -> bool:
    """Move an assistant reply's leading ``<think>`` blocks into its metadata (``reasoning``, clipped, as
    Open WebUI's and lossless-claw's reasoning is kept), so they are neither shown as the answer nor
    summarised as said. The text as the source holds it becomes ``former_content``: what an earlier
    import stored for this message. False when no answer is left (report it as ``ONLY_REASONING``).
    """
    if episode.role != "assistant":
        return True
    answer, reasoning = split_think(episode.content)
    if answer == episode.content:
        return True
    if reasoning:
        episode.metadata = {**(episode.metadata or {}), "reasoning": clip(reasoning, OUTPUT_TEXT_MAX)}
    if episode.former_content is None:
        episode.former_content = episode.content
    episode.content = answer
    return bool(answer.strip())


def compact_json(value: Any, limit: int = TOOL_INPUT_MAX) -> str:
    """One-line JSON of a tool input, clipped so a whole written file does not become one episode."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return clip(text, limit)


def numbered_id(source_id: str | None, used: Counter[str]) -> str | None:
    """``source_id`` the first time, then ``<id>#1``, ``#2``…: a log can repeat one id (a reply
    split around a tool result), but the store needs each episode's key unique to stay idempotent."""
    if source_id is None:
        return None
    used[source_id] += 1
    return source_id if used[source_id] == 1 else f"{source_id}#{used[source_id] - 1}"
