"""Command palette: every action of the app and of the current screen, searchable by name.

Why one provider that asks objects for their commands (instead of a provider per screen):
screens are written by different people; a screen only has to define
``palette_commands() -> Iterable[PaletteCommand]`` and its actions show up, next to the
app's, with their key as a hint so the palette also teaches the keyboard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from hiermem_tui.textsafe import one_line
from hiermem_tui.words import counted

SESSION_HITS = 8


def literal_markup(text: str) -> str:
    """``text`` made safe for a field Textual parses as markup (the palette's ``help``).

    Escaping every ``[`` is stricter than ``textual.markup.escape``, which lets ``[$var]`` through.
    """
    return text.replace("[", "\\[")


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    """One palette entry: a title to search, a line of help, what to run, and its key (if any)."""

    title: str
    help: str
    callback: Callable[[], object]
    key: str | None = None

    @property
    def help_line(self) -> str:
        return f"{self.help}  ·  {self.key}" if self.key else self.help


@runtime_checkable
class HasPaletteCommands(Protocol):
    """What an app or a screen implements to contribute palette commands."""

    def palette_commands(self) -> Iterable[PaletteCommand]: ...


def collect_commands(*sources: object) -> list[PaletteCommand]:
    """Commands of each source that has any, screen first (most specific), without duplicate titles."""
    seen: set[str] = set()
    out: list[PaletteCommand] = []
    for source in sources:
        if isinstance(source, HasPaletteCommands):
            for command in source.palette_commands():
                if command.title not in seen:
                    seen.add(command.title)
                    out.append(command)
    return out


def highlight_plain(matcher: Matcher, text: str) -> Content:
    """Like ``Matcher.highlight``, but ``text`` is plain (``highlight`` parses it as markup)."""
    content = Content(text)
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class HiermemCommands(Provider):
    """The app's and the calling screen's commands, plus sessions whose title matches the query.

    Titles may be chat-derived (a screen may name a session in a command): they are shown as
    plain :class:`Content`, never parsed as markup, and help lines are escaped because the
    palette parses ``help`` strings.
    """

    def _commands(self) -> list[PaletteCommand]:
        return collect_commands(self.screen, self.app)

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(
                Content(command.title), command.callback, text=command.title, help=literal_markup(command.help_line)
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = max(matcher.match(command.title), matcher.match(f"{command.title} {command.help}") * 0.5)
            if score > 0:
                yield Hit(
                    score,
                    highlight_plain(matcher, command.title),
                    command.callback,
                    text=command.title,
                    help=literal_markup(command.help_line),
                )
        async for hit in self._session_hits(query):
            yield hit

    async def _session_hits(self, query: str) -> Hits:
        store = getattr(self.app, "store", None)
        opener = getattr(self.app, "open_session", None)
        if store is None or opener is None or len(query.strip()) < 2:
            return
        for session in store.sessions.page(text=query.strip(), limit=SESSION_HITS):
            title = one_line(session.title or session.id, 70)
            detail = f"{counted(session.episodes, 'episode')} · {one_line(session.source, 20)} · {one_line(session.id, 40)}"
            yield Hit(
                0.2,  # below any command whose name matches
                Content.assemble(("Open ", "$foreground-muted"), (title, "bold")),
                lambda sid=session.id: opener(sid),
                text=f"Open {title}",
                help=literal_markup(detail),
            )
