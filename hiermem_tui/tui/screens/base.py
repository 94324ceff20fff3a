"""The base classes of every screen: typed access to the app, its store and its settings.

Why: a screen needs the app's store, settings, run controller and navigator; Textual's
``getters.app`` gives a property typed as :class:`~hiermem_tui.tui.app_base.AppBase` (checked
at run time), so no screen casts, there is one name for it (``self.app``), and no screen module
imports the app's own module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from textual import getters
from textual.screen import ModalScreen, Screen

from hiermem_tui.tui.app_base import AppBase

if TYPE_CHECKING:
    from hiermem_tui.config import Settings
    from hiermem_tui.store import Store

ResultType = TypeVar("ResultType")


class AppScreen(Screen[ResultType]):
    """A full screen of hiermem-tui."""

    app = getters.app(AppBase)

    @property
    def store(self) -> Store:
        return self.app.store

    @property
    def settings(self) -> Settings:
        return self.app.settings


class AppModal(ModalScreen[ResultType]):
    """A modal screen (dialog) of hiermem-tui."""

    app = getters.app(AppBase)

    @property
    def store(self) -> Store:
        return self.app.store

    @property
    def settings(self) -> Settings:
        return self.app.settings
