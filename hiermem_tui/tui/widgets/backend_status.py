"""A one-line indicator of the summary backend: its server (Ollama or an OpenAI-compatible one) up or down,
its version, the model a run would use.

Why a widget of its own: every screen's header shows it, and it must follow three things
that change independently (the last probe, whether a probe is running, the settings),
so it watches the app's reactives instead of being updated by each screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, getters
from textual.widgets import Static

if TYPE_CHECKING:
    from hiermem_tui.backend_status import BackendStatus
    from hiermem_tui.config import Settings
from hiermem_tui.tui.app_base import AppBase


DEMO_TEXT = "demo: replays a model's recorded answers, no model needed"


def status_text(status: BackendStatus | None, settings: Settings, probing: bool, *,
                demo: bool = False) -> tuple[Text, str]:
    """The indicator text and a state name (``ok``, ``warn``, ``idle``) used as a CSS class.

    ``demo``: the bundled demo, which needs no model: that is said instead of a warning (or of
    "not checked") while Ollama is not there; a usable Ollama is shown as usual, since a run the
    user starts in the demo would use it."""
    if settings.backend == "extractive":
        return Text.assemble(("◆ ", "bold"), "extractive backend (built in, no model)"), "ok"
    if demo and (status is None or not status.ok):
        return Text.assemble(("◆ ", "bold"), DEMO_TEXT), "ok"
    name = "OpenAI-compatible server" if settings.backend == "openai" else "Ollama"
    if probing and status is None:
        return Text(f"◌ checking {name}…"), "idle"
    if status is None:
        host = settings.servers()[0].url if settings.servers() else settings.ollama_host
        return Text(f"○ {name} not checked ({host})"), "idle"
    if not status.reachable:
        return Text.assemble(("▲ ", "bold"), status.describe()), "warn"
    if not status.ok:
        return Text.assemble(("▲ ", "bold"), status.describe()), "warn"
    return Text.assemble(("● ", "bold"), status.describe(), ("  ↻" if probing else "")), "ok"


def status_tooltip(status: BackendStatus | None) -> Text:
    """Longer detail for the mouse: installed and loaded models."""
    if status is None:
        return Text("Backend not probed yet. Click or press ctrl+r to check.")
    lines = [f"Host: {status.host}"]
    if status.reachable and status.kind == "openai":
        lines.append("Serves: " + (", ".join(status.installed) or "none"))
    elif status.reachable:
        lines.append(f"Version: {status.version or 'unknown'}")
        lines.append("Loaded: " + (", ".join(status.loaded) or "none"))
        lines.append("Installed: " + (", ".join(status.installed) or "none"))
    if status.error:
        lines.append(status.error)
    lines.append("Click or press ctrl+r to check again.")
    return Text("\n".join(lines))


class BackendIndicator(Static):
    """Shows ``app.backend_state``; click to re-probe."""

    DEFAULT_CLASSES = "-idle"

    app = getters.app(AppBase)

    def on_mount(self) -> None:
        app = self.app
        self.watch(app, "backend_state", self._refresh_status, init=False)
        self.watch(app, "backend_probing", self._refresh_status, init=False)
        self.watch(app, "settings", self._refresh_status, init=False)
        self._refresh_status()

    def _refresh_status(self, _value: object = None) -> None:
        app = self.app
        text, state = status_text(app.backend_state, app.settings, app.backend_probing, demo=app.demo)
        self.update(text)
        self.tooltip = status_tooltip(app.backend_state)
        self.set_class(state == "ok", "-ok")
        self.set_class(state == "warn", "-warn")
        self.set_class(state == "idle", "-idle")

    def on_click(self, event: events.Click) -> None:
        self.app.refresh_backend()
