"""The app's class for Textual's ``getters.app``, so screens and widgets get ``self.app`` typed.

Why a function in its own module: ``getters.app`` calls it when a screen or widget class is
defined; the app module imports screens and widgets only inside its methods, so importing
it from here is never a cycle, and nothing needs a ``cast`` to reach the app's store,
settings, navigator or run controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hiermem_tui.tui.app import HiermemApp


def app_class() -> type[HiermemApp]:
    """:class:`~hiermem_tui.tui.app.HiermemApp`, imported on first use."""
    from hiermem_tui.tui.app import HiermemApp

    return HiermemApp
