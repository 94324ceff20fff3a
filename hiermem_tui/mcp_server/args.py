"""Checking a tool's arguments against its JSON Schema, with one clear line when they do not fit.

Only the few keywords the tools' input schemas use are understood (``type`` integer / string /
boolean, ``minimum``, ``maximum``, ``minLength``, ``maxLength``, ``enum``, ``required``,
``additionalProperties: false``), which keeps the messages ours: an agent reads "budget must be
from 1 to 1,000,000 tokens, not 0" and can correct its call. A general validator's messages
("0 is less than the minimum of 1") name no argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ToolError(Exception):
    """A call the tool cannot answer: the message is one line, for the agent that made the call."""


_TYPE_WORDS = {"integer": "a whole number", "string": "a string", "boolean": "true or false"}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def check_args(schema: Mapping[str, Any], args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments with the schema's defaults filled in; :class:`ToolError` when they do not fit."""
    args = dict(args or {})
    props: Mapping[str, Any] = schema.get("properties", {})
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolError(f"unknown argument {unknown[0]!r} (this tool takes: {', '.join(props) or 'nothing'})")
    for name in schema.get("required", ()):
        if args.get(name) is None:
            raise ToolError(f"missing argument {name!r}: {props[name].get('description', '')}".rstrip(": "))
    out: dict[str, Any] = {}
    for name, spec in props.items():
        value = args.get(name)
        if value is None:
            out[name] = spec.get("default")
            continue
        out[name] = _check_one(name, spec, value)
    return out


def _check_one(name: str, spec: Mapping[str, Any], value: Any) -> Any:
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    kind = next((k for k in kinds if k != "null"), "null")
    ok = {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
    }.get(kind, False)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value, ok = int(value), True
    if not ok:
        raise ToolError(f"{name} must be {_TYPE_WORDS.get(kind, kind)}, not {_shown(value)}")
    if kind == "integer":
        low, high = spec.get("minimum"), spec.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            unit = f" {spec['x-unit']}" if "x-unit" in spec else ""
            span = f"from {low:,} to {high:,}" if high is not None else f"{low:,} or more"
            raise ToolError(f"{name} must be {span}{unit}, not {value:,}")
    if kind == "string":
        if len(value) < spec.get("minLength", 0):
            raise ToolError(f"{name} must not be empty")
        if len(value) > spec.get("maxLength", len(value)):
            raise ToolError(f"{name} is too long ({len(value):,} characters; at most {spec['maxLength']:,})")
        if "enum" in spec and value not in spec["enum"]:
            raise ToolError(f"{name} must be one of {', '.join(spec['enum'])}, not {_shown(value)}")
    return value
