"""What the model sees: a session's top summaries and raw tail within a token budget; copy or save it.

Why items on the left and one item's text on the right (not the whole context in one view):
the context of an uncompacted session can be thousands of episodes; the list stays cheap
(the newest :data:`MAX_ROWS` rows when there are more) and only the selected text is drawn.
Copy and save always take the whole context, built a page at a time in a worker. The
budget rule (the newest part that fits) is :mod:`hiermem_tui.context`'s; this screen shows
what it left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.context import ContextItem, ContextView, build_context, item_header, render_context, shown_text
from hiermem_tui.textsafe import one_line, strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import ContextReady
from hiermem_tui.tui.palette import PaletteCommand
from hiermem_tui.tui.screens.report import ReportScreen
from hiermem_tui.tui.screens.base import AppModal

MAX_ROWS = 2000
"""Rows listed at most (the newest); copy and save take every item."""


def default_path(session_id: str) -> Path:
    """``context-<session>.md`` in the working folder, the session id made file-name safe."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in session_id)[:80] or "session"
    return Path.cwd() / f"context-{safe}.md"


class SavePrompt(AppModal[str | None]):
    """Where to write the context: a path, enter to save, esc to cancel."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", key_display="esc", id="save_prompt.cancel")]
    DEFAULT_CSS = """
    SavePrompt { align: center middle; background: $background 60%; }
    SavePrompt > Vertical { width: 90; max-width: 95%; height: auto; border: round $accent;
                            background: $surface; padding: 1 2; }
    SavePrompt .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Save the context to a file"
            yield Input(str(self.path), id="save-path")
            yield Static(Text("enter: save (replaces the file) · esc: cancel"), classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ContextScreen(ReportScreen):
    """The context of one session: items with their tokens and coverage, the selected one's text."""

    HEADING = "What the model sees"
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="context.back"),
        Binding("b", "budget", "Budget", id="context.budget"),
        Binding("y", "copy", "Copy", id="context.copy"),
        Binding("w", "save", "Save", id="context.save"),
        Binding("r", "reload", "Refresh", show=False, id="context.reload"),
    ]

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.budget: int | None = None
        self.view: ContextView | None = None
        self.rows: list[ContextItem] = []

    @property
    def sid(self) -> str:
        return self.session_id or ""

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        with Horizontal(id="context-bar"):
            yield Label(Text("budget"), id="context-budget-label")
            yield Input(placeholder="no limit", id="context-budget", type="integer", compact=True)
            yield Static(id="context-summary")
        with Horizontal(id="context-body"):
            yield KeyedOptionList(id="context-items", classes="pane")
            with VerticalScroll(id="context-text", classes="pane"):
                yield Static(id="context-item-text")
        yield Static(id="context-empty", classes="note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#context-items").border_title = "Items, oldest first"
        self.query_one("#context-text").border_title = "Text"
        self.query_one("#context-empty").display = False
        self.query_one("#context-items").focus()
        self.load()

    def fetch(self) -> object:
        return build_context(self.store, self.sid, self.budget)

    def show(self, data: object) -> None:
        assert isinstance(data, ContextView)
        self.view = data
        p = fmt.Palette.from_app(self.app)
        empty = not data.items and not data.left_out
        self.query_one("#context-body").display = not empty
        self.query_one("#context-empty").display = empty
        if empty:
            self.query_one("#context-empty", Static).update(Text("This session has no episodes yet: nothing to give "
                                                                  "a model."))
        self._summary(data, p)
        self.rows = list(data.items[-MAX_ROWS:])
        items = self.query_one("#context-items", OptionList)
        items.clear_options()
        items.add_options([Option(self._row(i, p)) for i in self.rows])
        skipped = len(data.items) - len(self.rows)
        items.border_subtitle = f"the newest {len(self.rows):,} of {len(data.items):,}" if skipped else None
        if self.rows:
            items.highlighted = len(self.rows) - 1  # the newest: what the conversation is about now
        else:
            self.query_one("#context-item-text", Static).update(
                Text("A budget of 0 tokens holds nothing.", style=fmt.style(p.warning)))

    def _summary(self, view: ContextView, p: fmt.Palette) -> None:
        parts = [fmt.figure(f"{len(view.items):,}", "items", p), Text(" · "),
                 fmt.figure(fmt.tokens(view.total_tokens), "tokens", p)]
        if view.budget is not None:
            share = view.total_tokens / view.budget if view.budget else 1.0
            parts += [Text(" · "), fmt.figure(fmt.percent(share), f"of {fmt.tokens(view.budget)}", p)]
        if view.left_out:
            first, last = view.left_out[0].first_seq, view.left_out[-1].last_seq
            parts.append(Text(f"  ▲ left out to fit: {len(view.left_out):,} older items, "
                              f"{fmt.seq_range(first, last)}, {fmt.tokens(view.left_out_tokens)} tok",
                              style=fmt.style(p.warning, bold=True)))
        if (clipped := view.clipped) is not None:
            parts.append(Text(f"  ▲ the newest item clipped to fit: {fmt.tokens(clipped.tokens)} of "
                              f"{fmt.tokens(clipped.full_tokens or 0)} tok", style=fmt.style(p.warning, bold=True)))
        elif view.items and not view.left_out:
            parts.append(Text("  every episode, once", style=fmt.style(p.success)))
        self.query_one("#context-summary", Static).update(Text.assemble(*parts))

    def _row(self, item: ContextItem, p: fmt.Palette) -> Text:
        muted = fmt.style(p.muted)
        if item.kind == "summary":
            depth = fmt.depth_chip(item.depth or 0, p, item.tier or "normal")
            chip = Text.assemble(depth, " " * max(0, 9 - depth.cell_len))
            what = fmt.seq_span(item.first_seq, item.last_seq)
        else:
            chip = Text(f"{item.role or 'episode':<9}", style=fmt.style(p.role_color(item.role or ""), bold=True))
            what = fmt.seq_range(item.first_seq, item.last_seq)
        when = fmt.timestamp(item.start_at, ref_year=self.app.clock().year)  # the whole time range is in the text pane's header
        return Text.assemble(chip, " ", (f"{what:<16}", fmt.style(p.foreground, bold=True)),
                             (f"{fmt.tokens(item.tokens):>7} tok  ", fmt.style(p.foreground)), (when, muted))

    @on(OptionList.OptionHighlighted, "#context-items")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.rows):
            item = self.rows[event.option_index]
            text = self.store.dag.get(item.id).content if item.kind == "summary" else (  # type: ignore[union-attr]
                (ep.content if (ep := self.store.episodes.at(self.sid, item.first_seq)) else ""))
            p = fmt.Palette.from_app(self.app)
            out = Text(one_line(item_header(item), 200) + "\n\n", style=fmt.style(p.muted))
            out.append(strip_combining_excess(visible(shown_text(item, self.app.shown(text)))),
                       style=fmt.style(p.foreground))
            self.query_one("#context-item-text", Static).update(out)

    @on(OptionList.OptionSelected, "#context-items")
    async def _selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.rows):
            item = self.rows[event.option_index]
            if item.kind == "summary":
                await self.app.nav.show_in_session(self.sid, summary_id=item.id)
            else:
                await self.app.nav.show_in_session(self.sid, seq=item.first_seq)

    # ------------------------------------------------------------------ budget
    def action_budget(self) -> None:
        self.query_one("#context-budget", Input).focus()

    @on(Input.Submitted, "#context-budget")
    def _budget_set(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value and (not value.isdigit()):
            self.notify("The budget is a number of tokens (empty: no limit).", severity="warning")
            return
        self.budget = int(value) if value else None
        self.query_one("#context-items").focus()
        self.load()

    # ------------------------------------------------------------------ copy and save
    def action_copy(self) -> None:
        if self.view is not None and self.view.items:
            self._export(None)

    def action_save(self) -> None:
        if self.view is None or not self.view.items:
            return
        self.app.nav.save_path(default_path(self.sid),
                               lambda path: self._export(Path(path).expanduser()) if path else None)

    def _export(self, target: Path | None) -> None:
        self.app.store_worker(self, lambda: self._export_here(target), group="context-export", exclusive=True)

    def _export_here(self, target: Path | None) -> None:
        """Build the whole text (a page of items at a time) and copy it or write it atomically; with
        secrets masked on screen (f4), masked as the screen shows them: what is shared by copying or
        saving must not carry what the screen hides."""
        view = self.view
        assert view is not None
        masked = self.app.settings.mask_secrets
        text = "".join(render_context(self.store, view, self.app.shown if masked else None))
        size = f"{len(view.items):,} items, {fmt.tokens(view.total_tokens)} tokens" + (", secrets masked" if masked else "")
        if target is None:
            self.post_message(ContextReady(text, size))
            return
        tmp = target.with_name(target.name + ".part")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            self.app.notify(f"Cannot write {target}: {exc.strerror or exc}", title="Not saved", severity="error",
                            markup=False)
            return
        self.app.notify(f"Saved the context ({size}) to {target}.", title="Saved", markup=False)

    def on_context_ready(self, message: ContextReady) -> None:
        self.app.copy_to_clipboard(message.text)
        self.notify(f"Copied the context ({message.size}) to the clipboard.", title="Copied", markup=False)

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand("Set the token budget", "Keep the newest part that fits (empty: no limit)",
                             self.action_budget, "b")
        yield PaletteCommand("Copy the context", "To the clipboard, as the model would be given it", self.action_copy,
                             "y")
        yield PaletteCommand("Save the context to a file", "Markdown-like text with a header per item",
                             self.action_save, "w")
        yield PaletteCommand("Back", "Close this view", self.action_back, "esc")
