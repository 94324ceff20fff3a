"""The prompts screen: the exact text every summary is asked for, per depth class and tier.

Why a screen and not only the config file: what a small model does depends mostly on its
prompt, and the user should see what is sent — the template, and below it the prompt as it
is sent for an example chunk, with every placeholder filled. Edits are saved to the config
file; each summary made with an edited template records its own version (the default's
version plus a hash of the text), so summaries made before and after stay told apart.
``ctrl+s`` saves, ``ctrl+r`` puts the built-in default back in the editors (saved with the
next ``ctrl+s``), ``esc`` closes without saving.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.summarize.prompts import (
    DEFAULT_TEMPLATES,
    LEAF_NOTES_SUFFIX,
    NOTES_SUFFIX,
    PLACEHOLDERS,
    PromptSet,
    first_prompt,
    validate_template,
)
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.screens.base import AppModal


_T0 = datetime(2025, 3, 4, 9, 30, tzinfo=timezone.utc)
EXAMPLE = [
    ("user", "The nightly build fails with `ImportError: cannot import name 'load_config'` since commit 4e1f9a2."),
    ("assistant", "load_config moved to settings/loader.py in that commit; update the import in cli/main.py."),
    ("user", "Fixed, the build is green again. Should I keep a shim for old imports?"),
]


def example_request(depth: int) -> SummaryRequest:
    """A small, fixed piece of chat (or two summaries of it) to preview a template with."""
    if depth == 0:
        items = [SourceItem("episode", text, len(text.split()), _T0 + timedelta(minutes=i), _T0 + timedelta(minutes=i),
                            role=role, label=f"#{i}") for i, (role, text) in enumerate(EXAMPLE)]
        return SummaryRequest(0, items, 120, prior_summary="The user set up the nightly build on the CI server.")
    texts = ["The nightly build broke: load_config moved to settings/loader.py in commit 4e1f9a2.",
             "The user fixed the import in cli/main.py; a compatibility shim was discussed."]
    items = [SourceItem("summary", t, len(t.split()), _T0 + timedelta(hours=i), _T0 + timedelta(hours=i, minutes=40),
                        depth=0, label=f"s{i}") for i, t in enumerate(texts)]
    return SummaryRequest(1, items, 120)


class PromptsScreen(AppModal[bool]):
    """View and edit the four prompt templates; dismisses with True when saved."""

    CSS_PATH = "prompts.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="prompts.save"),
        Binding("ctrl+r", "reset", "Default", priority=True, id="prompts.reset"),  # ctrl+d deletes in a TextArea
        Binding("escape", "cancel", "Close", key_display="esc", id="prompts.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.key = next(iter(DEFAULT_TEMPLATES))
        self.edits: dict[str, dict[str, str]] = {}


    def compose(self) -> ComposeResult:
        with Vertical(id="prompts-panel") as panel:
            panel.border_title = "Prompts"
            panel.border_subtitle = "ctrl+s save · ctrl+r default · esc close"
            with Horizontal(id="prompts-body"):
                yield KeyedOptionList(*[Option(t.title, id=k) for k, t in DEFAULT_TEMPLATES.items()], id="prompts-list")
                with Vertical(id="prompts-editors"):
                    yield Static(id="prompts-version")
                    yield Label("System", classes="prompts-label")
                    yield TextArea(id="prompts-system", soft_wrap=True, show_line_numbers=False)
                    yield Label(Text(f"Instruction · placeholders {' '.join(PLACEHOLDERS)}"), classes="prompts-label")
                    yield TextArea(id="prompts-instruction", soft_wrap=True, show_line_numbers=False)
                    yield Static(id="prompts-error")
            yield Label("Sent for an example chunk (exactly as the model receives it)", classes="prompts-label")
            with VerticalScroll(id="prompts-preview-box"):
                yield Static(id="prompts-preview")
        yield Footer()

    def on_mount(self) -> None:
        current = PromptSet(self.app.settings.prompts)
        for key, t in current.templates.items():
            self.edits[key] = {"system": t.system, "instruction": t.instruction}
        self.query_one("#prompts-error").display = False
        self._load(self.key)
        self.query_one("#prompts-list", OptionList).highlighted = 0
        self.query_one("#prompts-instruction", TextArea).focus()

    # ------------------------------------------------------------------ editing
    def _load(self, key: str) -> None:
        self.key = key
        edit = self.edits[key]
        self.query_one("#prompts-system", TextArea).load_text(edit["system"])
        self.query_one("#prompts-instruction", TextArea).load_text(edit["instruction"])
        self._refresh()

    def _store_editors(self) -> None:
        self.edits[self.key] = {
            "system": self.query_one("#prompts-system", TextArea).text,
            "instruction": self.query_one("#prompts-instruction", TextArea).text,
        }

    def _refresh(self) -> None:
        """Version line, validity and the preview for what is in the editors now."""
        p = fmt.Palette.from_app(self.app)
        prompts = PromptSet(self.edits)
        default = DEFAULT_TEMPLATES[self.key]
        edited = (self.edits[self.key]["system"], self.edits[self.key]["instruction"]) != (
            default.system, default.instruction)
        version = Text.assemble(
            (default.title, fmt.style(p.foreground, bold=True)), "  ",
            (" edited " if edited else " default ", fmt.style(fmt.on(p.warning if edited else p.success),
                                                             p.warning if edited else p.success, bold=True)),
            (f"  version {prompts.version(self.key)}", fmt.style(p.muted)),
        )
        self.query_one("#prompts-version", Static).update(version)
        problem = validate_template(self.edits[self.key]["instruction"])
        error = self.query_one("#prompts-error", Static)
        error.display = problem is not None
        if problem:
            error.update(Text(f"▲ {problem}", style=fmt.style(p.error, bold=True)))
            return
        depth = 0 if self.key.startswith("leaf") else 1
        summary_format = self.app.settings.summary_format
        sent = first_prompt(example_request(depth), summary_format, tokenizer=self.store.tokenizer,
                            aggressive=self.key.endswith("aggressive"), prompts=prompts)
        preview = Text()
        preview.append("system: ", style=fmt.style(p.accent, bold=True))
        preview.append(sent.system + "\n\n", style=fmt.style(p.foreground))
        preview.append("user: ", style=fmt.style(p.accent, bold=True))
        preview.append(sent.prompt, style=fmt.style(p.foreground))
        shape = " · answer: a JSON object of sections (format = its schema)" if sent.format is not None else ""
        if sent.version.endswith((NOTES_SUFFIX, LEAF_NOTES_SUFFIX)):
            shape = " · notes: one call like this per leaf, of its key lines (per source when condensing)"
        preview.append(f"\n\ntemperature {sent.temperature} · num_predict {sent.num_predict}{shape}",
                       style=fmt.style(p.muted))
        self.query_one("#prompts-preview", Static).update(preview)

    @on(OptionList.OptionHighlighted, "#prompts-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.key:
            self._store_editors()
            self._load(event.option.id)

    @on(TextArea.Changed)
    def _typed(self) -> None:
        self._store_editors()
        self._refresh()

    # ------------------------------------------------------------------ actions
    def action_reset(self) -> None:
        default = DEFAULT_TEMPLATES[self.key]
        self.edits[self.key] = {"system": default.system, "instruction": default.instruction}
        self._load(self.key)
        self.notify(f"{default.title}: back to the built-in default (ctrl+s saves it).", timeout=3)

    def action_save(self) -> None:
        self._store_editors()
        bad = [k for k, e in self.edits.items() if validate_template(e["instruction"])]
        if bad:
            self.notify(f"Not saved: the instruction of {', '.join(bad)} must contain {{material}}.",
                        severity="error", markup=False)
            return
        edited = PromptSet(self.edits).edited()
        self.app.update_settings(replace(self.app.settings, prompts=edited))
        self.notify(f"Prompts saved ({len(edited)} edited); new summaries record their versions.", timeout=3)
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
