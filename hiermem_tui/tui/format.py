"""Shared formatting for the TUI: token counts, times, episode ranges, tier badges, colours.

Why one module: every screen shows the same figures ("12.3k", "#259–263",
"Jul 3 10:02 → Jul 5 18:40") and the same tier colours, and users learn them once.
Nothing here touches chat text, so none of it needs :mod:`hiermem_tui.textsafe`; callers
still pass chat text through it before appending it to the ``Text`` built here.

Colours come from the running theme (:class:`Palette`), so every theme — light ones too —
keeps fallbacks in its own warning colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from rich.style import Style
from rich.text import Text
from textual.color import Color

from hiermem_tui.store.models import parse_iso, synthetic_stamp
from hiermem_tui import words

if TYPE_CHECKING:
    from textual.app import App

EN_DASH = "–"
UNKNOWN_TIME = "—"
"""What a time the store filled in (the source kept none) shows as."""
NO_TIMES = "no times"
ARROW = "→"


def tokens(n: int | None) -> str:
    """A token count the way people read them: ``850``, ``12.3k``, ``1.2M`` (``–`` for unknown)."""
    if n is None:
        return EN_DASH
    if n < 1000:
        return str(n)
    if n < 999_950:
        value = f"{n / 1000:.1f}".removesuffix(".0")
        return f"{value}k"
    value = f"{n / 1_000_000:.1f}".removesuffix(".0")
    return f"{value}M"


def seq_range(first: int, last: int) -> str:
    """``#259–263`` (or ``#259`` for one episode): the UI's name for a run of episodes."""
    return f"#{first}" if first == last else f"#{first}{EN_DASH}{last}"


def seq_span(first: int, last: int) -> str:
    """``#259–263 (5)``: a range with its episode count."""
    return f"{seq_range(first, last)} ({last - first + 1})"


def local(text: str, tz: tzinfo | None = None) -> datetime:
    """A stored UTC timestamp in the viewer's time zone (or ``tz``)."""
    return parse_iso(text).astimezone(tz)


def timestamp(text: str, *, ref_year: int | None = None, seconds: bool = False, tz: tzinfo | None = None) -> str:
    """``Jul 3 10:02``; the year is added only when it differs from ``ref_year``.

    ``ref_year`` is the session's own year rather than today's, so what a screen shows
    does not change with the calendar. A time the store filled in shows as unknown (``—``).
    """
    if synthetic_stamp(text):
        return UNKNOWN_TIME
    dt = local(text, tz)
    clock = f"{dt:%H:%M:%S}" if seconds else f"{dt:%H:%M}"
    return f"{day(dt, ref_year)} {clock}"


def day(dt: datetime, ref_year: int | None = None) -> str:
    """``Jul 3``, or ``Jul 3 2024`` in another year than ``ref_year``: the one way every screen
    writes a date (the sessions list, the tree, run history, search, the detail pane)."""
    text = f"{dt:%b} {dt.day}"
    return text if ref_year is None or dt.year == ref_year else f"{text} {dt.year}"


def time_range(start: str, end: str, *, ref_year: int | None = None, tz: tzinfo | None = None) -> str:
    """``Jul 3 10:02 → Jul 5 18:40``; ``Jul 3 10:02 → 18:40`` within one day; one stamp if equal;
    ``no times`` over a source that kept none."""
    if synthetic_stamp(start) and synthetic_stamp(end):
        return NO_TIMES
    a, b = local(start, tz), local(end, tz)
    left = timestamp(start, ref_year=ref_year, tz=tz)
    if (a.year, a.month, a.day, a.hour, a.minute) == (b.year, b.month, b.day, b.hour, b.minute):
        return left
    if a.date() == b.date():
        return f"{left} {ARROW} {b:%H:%M}"
    return f"{left} {ARROW} {timestamp(end, ref_year=ref_year, tz=tz)}"


def duration(seconds: float | None) -> str:
    """``0.4 s``, ``12 s``, ``3 m 05 s``, ``2 h 07 m`` (``words.duration``); an en dash for None."""
    if seconds is None:
        return EN_DASH
    return words.duration(seconds)


def percent(fraction: float) -> str:
    """``87%``; keeps ``<1%`` and ``>99%`` honest instead of rounding to 0 or 100."""
    if 0 < fraction < 0.01:
        return "<1%"
    if 0.99 < fraction < 1:
        return ">99%"
    return f"{fraction * 100:.0f}%"


@dataclass(frozen=True, slots=True)
class Palette:
    """Concrete colours for Rich styles, taken from the running theme.

    Widgets drawing with the Line API build Rich ``Style`` objects, which cannot use
    Textual CSS variables; a palette resolves them once per theme change.
    """

    background: Color
    surface: Color
    panel: Color
    foreground: Color
    muted: Color
    primary: Color
    accent: Color
    warning: Color
    error: Color
    success: Color
    aggressive: Color
    cursor: Color
    highlight: Color
    user: Color
    assistant: Color
    system: Color
    tool: Color

    @classmethod
    def from_app(cls, app: App[Any]) -> Palette:
        """Resolve the current theme's variables into colours."""
        v = app.get_css_variables()

        def c(name: str, default: str) -> Color:
            try:
                return Color.parse(v.get(name, default))
            except Exception:  # a theme may leave a variable in a form Color cannot parse
                return Color.parse(default)

        background = c("background", "#121212")
        foreground = c("foreground", "#e0e0e0")
        primary = c("primary", "#0178d4")
        dark = background.brightness < 0.5
        return cls(
            background=background,
            surface=c("surface", "#1e1e1e"),
            panel=c("panel", "#242f38"),
            foreground=foreground,
            muted=foreground.blend(background, 0.45),
            primary=primary,
            accent=c("accent", "#fea62b"),
            warning=c("warning", "#fea62b"),
            error=c("error", "#b93c5b"),
            success=c("success", "#4ebf71"),
            # No theme variable means "worse than normal, better than fallback": a violet
            # that sits between the theme's blue and its warning orange on dark and light.
            aggressive=Color.parse("#a779e9" if dark else "#7a48c4"),
            cursor=c("block-cursor-background", "#0178d4"),
            highlight=c("primary-muted", "#0c304c"),
            user=c("text-primary", "#57a5e2"),
            assistant=c("text-success", "#8ad4a1"),
            system=c("text-warning", "#ffc473"),
            tool=Color.parse("#b89ae8" if dark else "#6a3fb0"),
        )

    def tier_color(self, tier: str) -> Color:
        if tier == "fallback":
            return self.warning
        if tier == "aggressive":
            return self.aggressive
        return self.primary

    def role_color(self, role: str) -> Color:
        return {"user": self.user, "assistant": self.assistant, "system": self.system}.get(role, self.tool)


@lru_cache(maxsize=4096)
def style(fg: Color | None = None, bg: Color | None = None, *, bold: bool = False, dim: bool = False,
          italic: bool = False, reverse: bool = False) -> Style:
    """A Rich style from Textual colours (``None`` leaves a colour unset)."""
    return Style(
        color=fg.rich_color if fg is not None else None,
        bgcolor=bg.rich_color if bg is not None else None,
        bold=bold or None,
        dim=dim or None,
        italic=italic or None,
        reverse=reverse or None,
    )


TIER_LABELS = {"normal": "normal", "aggressive": "aggressive", "fallback": "fallback"}


def tier_badge(tier: str, palette: Palette) -> Text:
    """The tier as a badge: quiet for normal, violet for aggressive, loud for fallback."""
    label = TIER_LABELS.get(tier, tier)
    if tier == "fallback":
        return Text(f" {label} ", style=style(on(palette.warning), palette.warning, bold=True))
    if tier == "aggressive":
        return Text(label, style=style(palette.aggressive, bold=True))
    return Text(label, style=style(palette.muted))


def depth_chip(depth: int, palette: Palette, tier: str = "normal") -> Text:
    """``d2`` on the tier colour: the shape of a node at a glance."""
    bg = palette.tier_color(tier)
    return Text(f" d{depth} ", style=style(on(bg), bg, bold=True))


def on(background: Color) -> Color:
    """Black or white, whichever reads better on ``background`` (themes differ)."""
    return background.get_contrast_text(1.0)


def figure(first: str, second: str, palette: Palette) -> Text:
    """Two words, the figure among them bold: ``60 episodes``, ``depth 2``, ``model sees 868 tok``."""

    def part(word: str) -> tuple[str, Style]:
        number = word[:1].isdigit() or word[:1] in "<>–"
        return word, style(palette.foreground, bold=True) if number else style(palette.muted)

    return Text.assemble(part(first), " ", part(second))

