"""Every version of a summary, superseded ones included: read any of them, restore one.

Why restoring is "revert the run that replaced it": versions are never edited in place
(ARCHITECTURE §3, rule 5); a re-summarise run supersedes them, and the store can undo exactly that run
(``revert_run``), putting back the whole chain it replaced. So the screen works out which
run that is — the replacing summary's run, or ``run:<id>`` for a whole-session redo — and
shows the store's refusal word for word when the run has been built upon since.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from hiermem_tui.tui.widgets.lists import KeyedOptionList
from hiermem_tui.store import Store, StoreError, Summary
from hiermem_tui.textsafe import one_line, strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import SessionsChanged
from hiermem_tui.words import engine_label
from hiermem_tui.tui.screens.base import AppModal


def restore_run(store: Store, version: Summary) -> tuple[str | None, str]:
    """(the run to revert to make ``version`` active again, or None with the reason it cannot be)."""
    if version.status == "active":
        return None, "This version is the active one already."
    replaced_by = version.superseded_by
    if not replaced_by:
        return None, "Nothing records what replaced this version, so there is no run to revert."
    if replaced_by.startswith("run:"):
        return replaced_by[4:], ""
    if replaced_by.startswith("revert:"):
        return None, (f"This version was undone by reverting run {replaced_by[7:]}; "
                      "re-summarise the active one to make a new version.")
    newer = store.dag.get(replaced_by)
    if newer is None or not newer.run_id:
        return None, f"The version that replaced it ({replaced_by}) was not made by a run, so there is no run to revert."
    return newer.run_id, ""


def version_row(n: int, s: Summary, palette: fmt.Palette, ref_year: int | None) -> Text:
    active = s.status == "active"
    return Text.assemble(
        (f"v{n:<3}", fmt.style(palette.muted)),
        ("● active     " if active else "○ superseded ", fmt.style(palette.success if active else palette.muted,
                                                                      bold=active)),
        fmt.depth_chip(s.depth, palette, s.tier), " ", fmt.tier_badge(s.tier, palette), " ",
        (fmt.seq_span(s.first_seq, s.last_seq), fmt.style(palette.foreground, bold=True)), "  ",
        (f"{fmt.tokens(s.tokens)} tok", fmt.style(palette.foreground)), "  ",
        (engine_label(s.backend, s.model), fmt.style(palette.foreground)), "  ",
        (fmt.timestamp(s.created_at, ref_year=ref_year), fmt.style(palette.muted)),
    )


class VersionsScreen(AppModal[bool]):
    """Versions of one summary; enter restores the highlighted one. Dismisses True if anything changed."""

    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("escape,q", "close", "Close", key_display="esc", id="versions.close"),
        Binding("enter,r", "restore", "Restore", key_display="enter", id="versions.restore"),
    ]

    def __init__(self, summary_id: str, *, ref_year: int | None = None) -> None:
        super().__init__()
        self.summary_id = summary_id
        self.ref_year = ref_year
        self.versions: list[Summary] = []
        self.changed = False


    def compose(self) -> ComposeResult:
        with Vertical(id="versions-panel", classes="dialog") as panel:
            panel.border_title = "Versions"
            panel.border_subtitle = "enter restore · esc close"
            yield KeyedOptionList(id="versions-list")
            yield Static(id="versions-error")
            with VerticalScroll(id="versions-view"):
                yield Static(id="versions-head")
                yield Static(id="versions-text", classes="compare-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#versions-error").display = False
        self._load()
        self.query_one(OptionList).focus()

    def _load(self) -> None:
        store = self.app.store
        keep = [v.id for v in self.versions]
        picker = self.query_one(OptionList)
        highlighted = picker.highlighted
        self.versions = store.dag.versions_with_replaced(self.summary_id, keep)
        p = fmt.Palette.from_app(self.app)
        picker.clear_options()
        picker.add_options([Option(version_row(i, v, p, self.ref_year), id=v.id)
                            for i, v in enumerate(self.versions, 1)])
        base = store.dag.get(self.summary_id)
        self.query_one("#versions-panel").border_title = (
            f"Versions of d{base.depth} {fmt.seq_span(base.first_seq, base.last_seq)}" if base else "Versions")
        if not self.versions:
            self.query_one("#versions-head", Static).update(Text("This summary is not in the database (any more)."))
            return
        if highlighted is None:
            highlighted = next((i for i, v in enumerate(self.versions) if v.id == self.summary_id), 0)
        picker.highlighted = min(highlighted, len(self.versions) - 1)
        self._show(self.versions[picker.highlighted])

    @on(OptionList.OptionHighlighted, "#versions-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.versions):
            self._show(self.versions[event.option_index])

    @on(OptionList.OptionSelected, "#versions-list")
    def _selected(self) -> None:
        self.action_restore()  # enter on the list (the list's own enter binding comes first)

    @property
    def current(self) -> Summary | None:
        index = self.query_one(OptionList).highlighted
        return self.versions[index] if index is not None and 0 <= index < len(self.versions) else None

    def _show(self, v: Summary) -> None:
        p = fmt.Palette.from_app(self.app)
        muted = fmt.style(p.muted)
        head = Text.assemble(
            fmt.depth_chip(v.depth, p, v.tier), " ", fmt.tier_badge(v.tier, p), " ",
            (v.status, fmt.style(p.success if v.status == "active" else p.warning, bold=True)),
            ("  ", muted), (one_line(v.id, 60), fmt.style(p.foreground)),
            (f"\nmade by {engine_label(v.backend, v.model)} · prompt {one_line(v.prompt_version, 30)} · "
             f"{fmt.timestamp(v.created_at, ref_year=self.ref_year)} · run {one_line(v.run_id or '–', 40)}", muted),
            (f"\n{fmt.tokens(v.source_tokens)} in → {fmt.tokens(v.tokens)} tok out", muted),
            (f" · replaced by {one_line(v.superseded_by, 60)}" if v.superseded_by else "", muted),
        )
        if v.status != "active":
            run_id, why = restore_run(self.app.store, v)
            hint = f"\nenter: restore (reverts run {run_id})" if run_id else f"\n{why}"
            head.append(hint, style=fmt.style(p.accent if run_id else p.muted))
        self.query_one("#versions-head", Static).update(head)
        self.query_one("#versions-text", Static).update(
            Text(strip_combining_excess(visible(self.app.shown(v.content))), style=fmt.style(p.foreground)))

    def _error(self, message: str) -> None:
        box = self.query_one("#versions-error", Static)
        box.update(Text(f"▲ {message}"))
        box.display = True

    def action_restore(self) -> None:
        v = self.current
        if v is None:
            return
        store = self.app.store
        run_id, why = restore_run(store, v)
        if run_id is None:
            self._error(why)
            self.app.notify(why, title="Cannot restore", severity="warning", markup=False)
            return
        try:
            restored = store.dag.revert_run(run_id)
        except StoreError as exc:
            self._error(str(exc))
            self.app.notify(str(exc), title="Cannot restore", severity="error", markup=False)
            return
        self.changed = True
        self.query_one("#versions-error").display = False
        self.app.notify(f"Reverted run {run_id}: {restored} earlier version{'s' * (restored != 1)} active again.",
                        title="Restored", markup=False)
        self.app.post_message(SessionsChanged((v.session_id,)))
        self._load()

    def action_close(self) -> None:
        self.dismiss(self.changed)

