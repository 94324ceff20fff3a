"""A yes/no question before something big (re-summarising a whole session).

Why a screen of its own: the question must say exactly what will happen ("12 active
summaries will be superseded and kept; a fresh full pass will run with ollama/llama3.2"),
and the safe answer must be the easy one — esc, n and the focused button all say no.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Footer, Static

from hiermem_tui.words import engine_label
from hiermem_tui.tui.screens.base import AppModal

if TYPE_CHECKING:
    from hiermem_tui.tui.app_base import AppBase


class ConfirmScreen(AppModal[bool]):
    """Dismisses with True (confirmed) or False. ``body`` is shown literally."""

    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", key_display="n/esc", id="confirm.no"),
    ]

    def __init__(self, title: str, body: Text | str, *, confirm: str = "Yes", danger: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.body = body if isinstance(body, Text) else Text(body)
        self.confirm_label = confirm
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-panel", classes="dialog") as panel:
            panel.border_title = Content(self.title_text)  # literal, whatever the caller passes
            yield Static(self.body, id="confirm-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel  n", id="confirm-no", compact=True)
                yield Button(f"{self.confirm_label}  y", id="confirm-yes", compact=True,
                             variant="error" if self.danger else "primary")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # the safe answer is the default

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)


def redo_confirm_text(app: AppBase, session_id: str, backend: str, model: str | None) -> Text:
    """What a whole-session re-summarise will do: how many summaries it supersedes, and with what it reruns."""
    session = app.store.sessions.get(session_id)
    n = session.summaries if session else 0
    depth = session.max_depth if session and session.max_depth is not None else 0
    status = app.backend_state
    if backend != "extractive" and model is None and status is not None and status.kind == backend and status.loaded:
        model = status.loaded[0]
    text = Text()
    if n:
        text.append(f"{n} active summar{'y' if n == 1 else 'ies'} (depth ≤ {depth}) will be superseded and kept; ",
                    style="bold")
    else:
        text.append("This session has no active summaries yet; ", style="bold")
    text.append(f"a fresh full pass will run with {engine_label(backend, model)}.", style="bold")
    text.append("\n\nThe old summaries stay browsable (v on a summary lists its versions) and come back by "
                "restoring one of them. A cancel keeps what the new pass finished.")
    return text
