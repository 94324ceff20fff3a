"""The kinds of line a chat offers, and the one table that ranks them (and carries the key lines' version).

A line is a quote of the chat with who said it and its kind. Selection (``select.py``) takes the lines a
level at a time across every step of a chunk — every step's level-1 lines before any step's level-2 — so
one long step cannot crowd out the rest. ``PRIORITY`` is that order; a kind missing from it is never quoted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Kind(enum.Enum):
    """What a quoted line is. The extractor of each role (``user.py``, ``assistant.py``, ``tool.py``,
    ``document.py``) says which lines of a message are of which kind."""

    USER_OPENING = "the user's first two sentences of a message"
    USER_PASTED_ERROR = "the first error line a user pasted"
    ANSWER_ENDS = "the first and last sentence of a step's last answer"
    DECIDING = "a sentence that decides something, in either voice"
    TOOL_ERROR = "an error line a tool printed"
    AGENT_ACTION = "what an agent did or planned, as its tool call says it"
    TOOL_RESULT = "a tool's short output, or its closing tally"
    CONCLUDING = "what an answer's concluding section says (its first few)"
    SPECIFIC = "an answer's sentence with numbers or names (its first few)"
    LIST = "a list or table with the sentence that introduces it (a message's first two)"
    CODE = "what a code, config or command block defines (a message's first two)"
    TOOL_OPENING = "a long tool output's first line of words"
    USER_MORE = "the user's third to eighth sentences"
    USER_CONCLUDING = "what a user's text says under a concluding heading"
    ANSWER_OPENING = "an answer's first sentence"
    SPECIFIC_MORE = "an answer's further sentences with numbers or names"
    CONCLUDING_MORE = "further sentences of an answer's concluding section"
    LIST_MORE = "a message's further lists and tables"
    CODE_MORE = "a message's further code blocks"
    OUTLINE = "a document's headings, concluding sections and sections' first sentences"
    OUTPUT_SAID = "a long tool output's comment and prose lines (its first few)"
    REST = "every other sentence and output line"


@dataclass(frozen=True)
class Priority:
    """The order in which kinds are taken (``levels``: the kinds of each level, most telling first), and the
    version of the key lines this order and the extractors make."""

    version: int
    levels: tuple[tuple[Kind, ...], ...]
    _index: dict[Kind, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {k: n for n, kinds in enumerate(self.levels) for k in kinds})

    def level(self, kind: Kind) -> int | None:
        """The level (from 0) of ``kind``; None for a kind that is never quoted."""
        return self._index.get(kind)


PRIORITY = Priority(
    version=11,
    levels=(
        (Kind.USER_OPENING, Kind.USER_PASTED_ERROR),
        (Kind.ANSWER_ENDS,),
        (Kind.LIST, Kind.CODE),
        (Kind.DECIDING,),
        (Kind.TOOL_ERROR,),
        (Kind.AGENT_ACTION,),
        (Kind.TOOL_RESULT,),
        (Kind.CONCLUDING, Kind.SPECIFIC),
        (Kind.TOOL_OPENING,),
        (Kind.USER_MORE, Kind.USER_CONCLUDING, Kind.ANSWER_OPENING, Kind.SPECIFIC_MORE, Kind.CONCLUDING_MORE,
         Kind.LIST_MORE, Kind.CODE_MORE),
        (Kind.OUTLINE,),
        (Kind.OUTPUT_SAID,),
        (Kind.REST,),
    ),
)
"""The key lines' order. Its ``version`` marks every summary that quotes key lines: ``QUOTES_VERSION`` and
``EXTRACTIVE_VERSION`` derive from it."""

QUOTES_VERSION = f"+quotes-v{PRIORITY.version}"
"""Appended to a model summary's prompt version when key lines follow its titles."""
EXTRACTIVE_VERSION = f"extractive-v{PRIORITY.version - 2}"
"""The prompt version of an extractive digest (the key lines began at the digest's third version)."""


Place = tuple[int, int]
"""Where a line is shown: (its source's index, where it begins in that message's text)."""


@dataclass(frozen=True, slots=True)
class Line:
    """A line a message offers: its kind, where it is shown, who said it and the words (a quote)."""

    kind: Kind
    place: Place
    who: str
    words: str
