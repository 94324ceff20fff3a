"""The settings screen: backend and compaction policy, checked before they are saved.

Why validate here and not just on the next run: a typo in a policy number (a fan-out of 1,
a zero chunk size) would only surface as a confusing failure much later. Every value is
parsed and checked as a whole (:func:`settings_from_form`); a bad one keeps the form open
with a one-line message, and nothing is written until all of them are good.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any
from urllib.parse import urlsplit

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.suggester import SuggestFromList
from textual.widgets import Button, Footer, Input, Label, Select, Static

from hiermem_tui.config import BACKENDS, SUMMARY_FORMATS, SUMMARY_WAYS, ConfigError, Policy, Settings, normalise_base_url
from hiermem_tui.tui.screens.base import AppModal


POLICY_HINTS = {
    "fresh_tail": "newest episodes kept raw",
    "idle_after": "seconds unchanged: no fresh tail",
    "leaf_chunk_tokens": "input tokens per leaf summary",
    "leaf_min_episodes": "smaller leftovers wait",
    "leaf_target_tokens": "size a leaf should stay under",
    "condense_fanout": "summaries per condensation (≥ 2)",
    "condensed_target_tokens": "size a condensed one stays under",
    "fidelity_threshold": "min share of key names kept (0–1)",
}
FRACTION_FIELDS = {"fidelity_threshold"}


def _fraction(name: str, raw: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a number from 0 to 1, not {raw.strip()!r}") from None
    if not 0 <= value <= 1:
        raise ConfigError(f"{name} must be a number from 0 to 1, not {value:g}")
    return value


def _whole(name: str, raw: str, minimum: int) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw.strip()!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, not {value}")
    return value


def _summary_format(value: str) -> str:
    if value not in SUMMARY_FORMATS:
        raise ConfigError(f"summary format must be one of {', '.join(SUMMARY_FORMATS)}, not {value!r}")
    return value


def _base_url(raw: str) -> str | None:
    """The OpenAI-compatible server's URL from the form (None: empty), normalised."""
    text = raw.strip()
    if not text:
        return None
    url = normalise_base_url(text)
    parts = urlsplit(url)
    given = urlsplit(text if "://" in text else f"http://{text}")
    if parts.scheme not in ("http", "https") or not given.hostname or " " in text:
        raise ConfigError(f"OpenAI base URL must look like http://127.0.0.1:8080/v1, not {raw!r}")
    try:
        parts.port
    except ValueError:
        raise ConfigError(f"OpenAI base URL has a bad port: {raw!r}") from None
    return url


def _summary_way(value: str) -> str:
    if value not in SUMMARY_WAYS:
        raise ConfigError(f"summary way must be one of {', '.join(SUMMARY_WAYS)}, not {value!r}")
    return value


def settings_from_form(values: dict[str, str], base: Settings) -> Settings:
    """New settings from the form's raw strings; raises ConfigError (one line) on the first bad value."""
    host = values["ollama_host"].strip()
    if "://" not in host:
        host = "http://" + host
    host = host.rstrip("/")
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in host:
        raise ConfigError(f"Ollama host must look like http://127.0.0.1:11434, not {values['ollama_host']!r}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"Ollama host has a bad port: {values['ollama_host']!r}") from None
    if port is None:
        host = f"{host}:11434" if parts.scheme == "http" and not parts.path else host
    backend = values["backend"]
    if backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    base_url = _base_url(values.get("openai_base_url", base.openai_base_url or ""))
    if backend == "openai" and base_url is None:
        raise ConfigError("the openai backend needs the OpenAI base URL of its server")
    try:
        timeout = float(values["timeout_s"].strip())
    except ValueError:
        raise ConfigError(f"timeout must be a number of seconds, not {values['timeout_s'].strip()!r}") from None
    if not timeout > 0:
        raise ConfigError("timeout must be more than 0 seconds")
    keep_alive = values["keep_alive"].strip()
    if not keep_alive:
        raise ConfigError("keep alive must not be empty (for example 10m, 1h or -1)")
    # a field the form does not show keeps its current value
    raw = {f.name: values.get(f.name, str(getattr(base.policy, f.name))) for f in fields(Policy)}
    policy_values: dict[str, Any] = {
        name: _fraction(f"policy.{name}", text) if name in FRACTION_FIELDS else _whole(f"policy.{name}", text, 0)
        for name, text in raw.items()
    }
    policy = replace(base.policy, **policy_values)
    policy.validate()
    return replace(
        base,
        ollama_host=host,
        openai_base_url=base_url,
        model=values["model"].strip() or None,
        backend=backend,
        timeout_s=timeout,
        keep_alive=keep_alive,
        parallel=_whole("parallel", values["parallel"], 1),
        theme=values.get("theme") or base.theme,
        summary_format=_summary_format(values.get("summary_format") or base.summary_format),
        summary_way=_summary_way(values.get("summary_way") or base.summary_way),
        policy=policy,
    )


class SettingsScreen(AppModal[bool]):
    """Edit and save settings; dismisses with True when saved."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="settings.save"),
        Binding("escape", "cancel", "Cancel", id="settings.cancel"),
    ]


    def _row(self, key: str, label: str, value: str, hint: str, kind: str = "text", **kw: object) -> ComposeResult:
        yield Label(label, classes="field-label")
        yield Input(
            value, id=f"field-{key}", type=kind, classes="field-input", compact=True, **kw  # type: ignore[arg-type]
        )
        yield Label(Text(hint), classes="field-hint")

    def compose(self) -> ComposeResult:
        s = self.app.settings
        status = self.app.backend_state
        installed = list(status.installed) if status else []
        with Vertical(id="settings-panel") as panel:
            panel.border_title = "Settings"
            panel.border_subtitle = Text(f"saved to {s.config_path}" if s.config_path else "not saved (no config file)")
            with VerticalScroll(id="settings-scroll"):
                yield Static("Backend", classes="section")
                with Grid(classes="form"):
                    yield Label("Backend", classes="field-label")
                    yield Select(
                        [(b, b) for b in BACKENDS], value=s.backend, allow_blank=False, id="field-backend", compact=True
                    )
                    yield Label("openai: OpenAI-compatible server", classes="field-hint")
                    yield from self._row("ollama_host", "Ollama host", s.ollama_host, "URL of the Ollama server")
                    yield from self._row("openai_base_url", "OpenAI base URL", s.openai_base_url or "",
                                         "key from $OPENAI_API_KEY",
                                         placeholder="(none)")
                    yield from self._row(
                        "model", "Model", s.model or "", "empty: the one loaded, or served",
                        placeholder="(loaded model)", suggester=SuggestFromList(installed, case_sensitive=False),
                    )
                    yield from self._row("timeout_s", "Timeout (s)", f"{s.timeout_s:g}", "base, + the model's measured time", "number")
                    yield from self._row("keep_alive", "Keep alive", s.keep_alive, "how long Ollama keeps the model")
                    yield from self._row("parallel", "Parallel", str(s.parallel), "summaries made at once", "integer")
                    yield Label("Summary format", classes="field-label")
                    yield Select([(f, f) for f in SUMMARY_FORMATS], value=s.summary_format, allow_blank=False,
                                 id="field-summary_format", compact=True)
                    yield Label("bullets, or fixed sections", classes="field-hint")
                    yield Label("Summary way", classes="field-label")
                    yield Select([(w, w) for w in SUMMARY_WAYS], value=s.summary_way, allow_blank=False,
                                 id="field-summary_way", compact=True)
                    model = s.model or (status.loaded[0] if status and status.loaded else None)
                    yield Label(Text(self.app.planner.way(model) if model else "measured: as calibrate found"),
                                id="settings-way", classes="field-hint")
                    yield Label("Theme", classes="field-label")
                    themes = sorted(self.app.available_themes)
                    yield Select(
                        [(t, t) for t in themes], value=self.app.theme, allow_blank=False, id="field-theme", compact=True
                    )
                    yield Label("also: ctrl+t, or Theme in ctrl+p", classes="field-hint")
                yield Static("Compaction policy", classes="section")
                with Grid(classes="form"):
                    for f in fields(Policy):
                        label = f.name.replace("_", " ").capitalize()
                        value = str(getattr(s.policy, f.name))
                        kind = "number" if f.name in FRACTION_FIELDS else "integer"
                        yield from self._row(f.name, label, value, POLICY_HINTS.get(f.name, ""), kind)
            yield Static(id="settings-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary", compact=True)
                yield Button("Cancel  esc", id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#settings-error").display = False
        self.query_one("#field-ollama_host", Input).focus()

    def form_values(self) -> dict[str, str]:
        values = {i.id.removeprefix("field-"): i.value for i in self.query(Input) if i.id}
        values["backend"] = str(self.query_one("#field-backend", Select).value)
        values["theme"] = str(self.query_one("#field-theme", Select).value)
        values["summary_format"] = str(self.query_one("#field-summary_format", Select).value)
        values["summary_way"] = str(self.query_one("#field-summary_way", Select).value)
        return values

    def show_error(self, message: str) -> None:
        box = self.query_one("#settings-error", Static)
        box.update(Text(f"▲ {message}"))
        box.display = True

    def action_save(self) -> None:
        try:
            new = settings_from_form(self.form_values(), self.app.settings)
        except ConfigError as exc:
            self.show_error(str(exc))
            return
        saved = self.app.update_settings(new)
        if saved and new.config_path:
            self.app.notify(f"Settings saved to {new.config_path}", timeout=3, markup=False)
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_save()
