"""Making untrusted chat text safe to show: literal, one glyph per character, no escapes.

Chat content can hold Rich/Textual markup (``[bold]``, ``[@click=app.quit]``), ANSI and OSC
escape sequences, or other control characters. Shown raw, a terminal would act on them.
Everything the UI displays from the store goes through :func:`visible` (then into a
``rich.text.Text`` built directly, never parsed as markup).
"""

from __future__ import annotations

import re
import unicodedata

# C0 controls except \t and \n, DEL, C1 controls, and bidi/format controls that could
# reorder or hide the surrounding UI text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ … ␟
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


def visible(text: str, *, tabs: int = 4) -> str:
    """``text`` with every control character replaced by a visible stand-in (``␛`` for ESC).

    Newlines stay; tabs become spaces; a lone ``\\r`` becomes ``␍`` so it cannot overwrite a line.
    """
    if not text:
        return ""
    out = _CONTROL.sub(_escape, text.replace("\r\n", "\n"))
    return out.expandtabs(tabs) if "\t" in out else out


def one_line(text: str, width: int = 80) -> str:
    """A single-line preview: whitespace folded, controls made visible, clipped with an ellipsis."""
    flat = " ".join(visible(text).split())
    if len(flat) <= width:
        return flat
    return flat[: max(0, width - 1)] + "…"


def is_printable(text: str) -> bool:
    """True if ``visible`` would leave ``text`` unchanged (no controls at all)."""
    return not _CONTROL.search(text) and "\t" not in text and "\r" not in text


def strip_combining_excess(text: str, limit: int = 8) -> str:
    """Cap runs of combining marks ("zalgo" text) so one episode cannot smear the screen."""
    out: list[str] = []
    run = 0
    for ch in text:
        if unicodedata.combining(ch):
            run += 1
            if run > limit:
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out)


def fence_for(text: str) -> str:
    """A Markdown code fence longer than any backtick run in ``text``, so nothing inside can close it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def literal_block(text: str) -> str:
    """``text`` fenced as a ``text`` block: shown as it is, never read as formatting (or as instructions
    addressed to whoever reads it: the fence says where the quoted chat starts and ends)."""
    fence = fence_for(text)
    return f"{fence}text\n{text}\n{fence}"
