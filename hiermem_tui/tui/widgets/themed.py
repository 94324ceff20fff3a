"""The base of the widgets that draw with a :class:`~hiermem_tui.tui.format.Palette`.

Why a base class and not a mixin: it needs the widget's app and its ``watch``; as a ``Widget``
it has both, typed, so it needs no ``type: ignore``. It comes after the Textual widget among the
bases (``class DagTree(Tree[NodeRef], Themed)``): Textual takes a widget's CSS and component
classes from its first base only, and Python's method order still puts ``Themed`` before ``Widget``.
"""

from __future__ import annotations

from textual.widget import Widget

from hiermem_tui.tui.format import Palette


class Themed(Widget):
    """Caches the palette of the current theme and drops it when the theme changes. Override
    ``_theme_changed`` (calling super) to repaint whatever the widget cached with the old colours."""

    _palette: Palette | None = None

    @property
    def palette(self) -> Palette:
        if self._palette is None:
            self._palette = Palette.from_app(self.app)
        return self._palette

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self._palette = None
