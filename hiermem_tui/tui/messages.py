"""Small message dataclasses the TUI passes around (DESIGN §7: core work reports back as messages).

Why here and not on the widgets: these cross screens. A worker posts them to the app,
and any screen or widget may handle them, so they live in one place others can import
without importing each other's screens.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from hiermem_tui.backend_status import BackendStatus
from hiermem_tui.config import Settings


@dataclass
class BackendProbed(Message):
    """A backend probe finished (posted by the app's ``backend`` worker)."""

    status: BackendStatus


@dataclass
class OpenSession(Message):
    """Ask the app to open one session (any widget may post it; the app pushes the screen)."""

    session_id: str


@dataclass
class SessionsChanged(Message):
    """Sessions in the store changed (import, compaction): lists should re-read their pages.

    ``session_ids`` names the sessions touched, or is empty when anything may have changed.
    """

    session_ids: tuple[str, ...] = ()
    broadcast: bool = False
    """True on the copies the app hands to each screen: those bubble back up and are ignored."""


@dataclass
class SettingsChanged(Message):
    """The app's settings were replaced (already saved); ``previous`` is what they were."""

    settings: Settings
    previous: Settings
