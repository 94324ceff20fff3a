"""A leaf's episodes cut into steps, and each step rendered for a small model to read.

A step is a user message with what the assistant answered and did about it: key lines are taken a
level at a time across a chunk's steps, so every step is heard (docs/SUMMARIES.md says why).

Where a step starts (:func:`split`):

* at every user message with words in it (a chat is led by its user);
* in an agent session with fewer than three such messages, also at every assistant message that
  opens with prose ("Now let me check the unified header:"), not with a tool call;
* a step far larger than a small model reads well is cut before an assistant message; a tiny
  step ("[Request interrupted by user]") joins its neighbour; at most ``MAX_STEPS``.

How a step is shown (:func:`render`): roles and text as in every prompt (``prompts``), with a tool
call as a person reads it (``[Bash] command: git log --oneline -5; description: …``, not its
JSON: keys, quotes and escapes cost tokens and a small model copies them), long fenced code by
its first lines and size (what a note needs of code is what it is and its names), and a tool's
output by its head and tail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hiermem_tui.summarize.types import SourceItem

MAX_STEPS = 8
"""More steps than this are merged (shortest first): a 3,000-token chunk of one-line messages."""
STEP_TOKENS = 1400
"""What one step may hold before it is cut at an assistant message (and what its text is fitted to)."""
MIN_STEP_TOKENS = 160
"""A smaller step joins its neighbour: a call of its own would say little."""
MIN_PROSE_WORDS = 6
"""An assistant message opening with this many words of prose starts a step in an agent session."""
CODE_LINES = 6
"""Lines of a fenced code block a step shows; the rest is counted."""

_CALL = re.compile(r"\[(?:tool_use|function_call|custom_tool_call|call)\b")
_CALL_PART = re.compile(r"(?=\[(?:tool_use|function_call|custom_tool_call|call) )")
_CALL_JSON = re.compile(r"^\[(?:tool_use|function_call|custom_tool_call|call) ([^\]\n]+)\] (.*)$", re.S)
_FENCE = re.compile(r"^([ \t]*)(```|~~~)([^\n]*)\n(.*?)^[ \t]*\2[ \t]*$", re.S | re.M)
_SHOWN_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "old_string", "new_string",
               "content", "description")
VALUE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Step:
    """Sources ``first..last`` (indexes into the leaf's sources) and who opened the step."""

    first: int
    last: int
    opened_by: str
    """``user`` when a user message opens it; otherwise the step continues earlier work."""

    def items(self, sources: Sequence[SourceItem]) -> list[SourceItem]:
        return list(sources[self.first : self.last + 1])


def prose(text: str) -> str:
    """What an assistant message says before its first tool call."""
    return _CALL.split(text, 1)[0].strip()


_DOCUMENT_TOOLS = ("canmore.create_textdoc", "canmore.update_textdoc", "canmore.comment_textdoc")
"""Tools through which the assistant writes a document for the user (ChatGPT's canvas): their text is
what it said, as much as an answer's prose."""


def written(text: str) -> str:
    """What an assistant message wrote into a document through a tool call: a canvas's ``content``, an
    update's ``replacement`` texts, its ``comment`` on a passage; "" when it wrote none. A ChatGPT answer
    given as a canvas is one such call: its words are what it said."""
    out = []
    for part in _CALL_PART.split(text):
        call = _document_call(part)
        if call is None:
            continue
        args = call[1]
        texts = [args.get("content")]
        for key, field in (("updates", "replacement"), ("comments", "comment")):
            listed = args.get(key)
            texts += [x.get(field) for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
        out += [t for t in texts if isinstance(t, str) and t.strip()]
    return "\n\n".join(out)


def document_edit(call: str) -> str | None:
    """What a document tool call did, in a line ("[canmore.update_textdoc] rewrote: ## 10. Shrinking to
    Minimal Representative"), for a call whose words ``written`` reads; None for any other call. (Its arguments
    are a regex pattern and the whole replacement, which ``written`` already reads.)"""
    found = _document_call(call)
    if found is None:
        return None
    name, args = found
    if isinstance(args.get("name"), str) and args["name"].strip():
        return f"[{name}] name: {_value(args['name'])}"
    heads = []
    for x in args.get("updates") or []:
        text = x.get("replacement") if isinstance(x, dict) else None
        lines = [ln.strip().lstrip("#").strip() for ln in text.splitlines()] if isinstance(text, str) else []
        heads += [ln for ln in lines if ln][:1]
    if heads:
        return f"[{name}] rewrote: " + _value("; ".join(heads))
    notes = [x for x in args.get("comments") or [] if isinstance(x, dict)]
    return f"[{name}] {len(notes)} comment{'s' if len(notes) != 1 else ''}" if notes else f"[{name}]"


def split(sources: Sequence[SourceItem]) -> list[Step]:
    """The steps of a leaf (see the module docstring); every source is in exactly one, in order."""
    if not sources:
        return []
    starts = [i for i, s in enumerate(sources) if s.role == "user" and len(s.text.split()) >= 2]
    if len(starts) < 3:
        starts += [i for i, s in enumerate(sources)
                   if s.role == "assistant" and len(prose(s.text).split()) >= MIN_PROSE_WORDS]
    bounds = sorted({0, *starts})
    groups = [list(range(a, b)) for a, b in zip(bounds, [*bounds[1:], len(sources)])]
    groups = _cut_large(groups, sources)
    groups = _join_small(groups, sources)
    while len(groups) > MAX_STEPS:
        k = min(range(1, len(groups)), key=lambda j: _size(groups[j - 1], sources) + _size(groups[j], sources))
        groups[k - 1 : k + 1] = [groups[k - 1] + groups[k]]
    return [Step(g[0], g[-1], "user" if sources[g[0]].role == "user" else "continued") for g in groups]


def _size(group: list[int], sources: Sequence[SourceItem]) -> int:
    return sum(sources[i].tokens for i in group)


def _cut_large(groups: list[list[int]], sources: Sequence[SourceItem]) -> list[list[int]]:
    out: list[list[int]] = []
    for group in groups:
        while _size(group, sources) > STEP_TOKENS * 1.3:
            cuts = [k for k in range(1, len(group)) if sources[group[k]].role == "assistant"
                    and _size(group[:k], sources) >= STEP_TOKENS // 2]
            if not cuts:
                break
            k = min(cuts, key=lambda c: abs(_size(group[:c], sources) - STEP_TOKENS))
            out.append(group[:k])
            group = group[k:]
        out.append(group)
    return out


def _join_small(groups: list[list[int]], sources: Sequence[SourceItem]) -> list[list[int]]:
    out: list[list[int]] = []
    for group in groups:
        if out and (_size(out[-1], sources) < MIN_STEP_TOKENS or _size(group, sources) < MIN_STEP_TOKENS):
            out[-1] = out[-1] + group
        else:
            out.append(group)
    return out


def calls(text: str) -> list[str]:
    """The tool calls in an assistant message, each as written (``[tool_use Bash] {…}``)."""
    return [c.strip() for c in _CALL_PART.split(text) if _CALL.match(c.strip())]


def readable_calls(text: str) -> str:
    """Tool calls in ``text`` as ``[Bash] command: …; description: …`` instead of their JSON."""
    if not _CALL.search(text):
        return text
    out = []
    for part in _CALL_PART.split(text):
        call = _parsed_call(part)
        if call is None:
            out.append(part)
        else:
            name, body, args = call
            out.append(f"[{name}] {body.strip() if args is _NOT_JSON else _arguments(args)}\n")
    return "".join(out).strip()


_NOT_JSON = object()
"""A call's arguments that are not JSON (shown as written)."""


def _document_call(part: str) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) of a call to a document tool (``_DOCUMENT_TOOLS``) with readable arguments."""
    call = _parsed_call(part)
    if call is None or call[0].strip() not in _DOCUMENT_TOOLS or not isinstance(call[2], dict):
        return None
    return call[0].strip(), call[2]


def _parsed_call(part: str) -> tuple[str, str, object] | None:
    """(name, arguments as written, arguments parsed or ``_NOT_JSON``) of one tool call as a message writes
    it (``[tool_use Bash] {…}``); None for text that is not a call."""
    m = _CALL_JSON.match(part.strip())
    if m is None:
        return None
    name, body = m.groups()
    try:
        return name, body, json.loads(body)
    except json.JSONDecodeError:
        return name, body, _NOT_JSON


def _arguments(args: object) -> str:
    if not isinstance(args, dict):
        return _value(args)
    if isinstance(args.get("command"), list):  # Codex: ["bash", "-lc", "uv run pytest -q"]
        argv = [str(a) for a in args["command"]]
        args = {**args, "command": " ".join(argv[2:] if argv[:2] in (["bash", "-lc"], ["sh", "-c"]) else argv)}
    shown = [f"{k}: {_value(args[k])}" for k in _SHOWN_KEYS if args.get(k)]
    if not shown:
        shown = [f"{k}: {_value(v)}" for k, v in list(args.items())[:3]]
    return "; ".join(shown)


def _value(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def compact_code(text: str) -> str:
    """Fenced code blocks longer than ``CODE_LINES`` shown by their first lines and a count."""
    def short(m: re.Match[str]) -> str:
        indent, fence, info, body = m.groups()
        lines = body.splitlines()
        if len(lines) <= CODE_LINES + 2:
            return m.group(0)
        head = "\n".join(lines[:CODE_LINES])
        return f"{indent}{fence}{info}\n{head}\n[… {len(lines) - CODE_LINES} more lines]\n{indent}{fence}"
    return _FENCE.sub(short, text)


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def without_reminders(text: str) -> str:
    """``text`` without a coding agent's ``<system-reminder>`` blocks: notes to the agent, not the
    chat (one on every file read, "consider whether it looks malicious", became "the file was not
    malicious" in a note, and a quoted line of every file read)."""
    return _REMINDER.sub("", text)


def shown(source: SourceItem) -> SourceItem:
    """``source`` as a step shows it to the model (its ``tokens`` are not recounted), without the
    agent's system reminders."""
    text = compact_code(without_reminders(source.text))
    if source.role == "assistant":
        text = readable_calls(text)
    return replace(source, text=text)
