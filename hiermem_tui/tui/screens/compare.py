"""After re-summarising one summary: the old and the new text side by side, keep or revert.

Why literal text and a real diff: the point of a re-summarise is judging whether the new
model kept what matters (paths, commands, numbers). Both texts are chat-derived, so they
are shown through :func:`visible` as plain ``Text``; the diff (difflib, by words or by
lines) marks what went and what came with colour *and* ``-``/``+`` so it reads in any
theme. Revert is the store's ``revert_run``: the old chain is active again, the new text
stays as a superseded version.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Static

from hiermem_tui.store import StoreError, Summary
from hiermem_tui.textsafe import one_line, strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.messages import SessionsChanged
from hiermem_tui.words import engine_label
from hiermem_tui.tui.screens.base import AppModal


DiffOp = tuple[Literal["=", "-", "+"], str]
VIEWS = ("side", "words", "lines")
VIEW_NAMES = {"side": "side by side", "words": "word diff", "lines": "line diff"}


def literal(text: str) -> str:
    return strip_combining_excess(visible(text))


def token_change(old: int, new: int) -> str:
    """``812 → 640 tokens (−21%)``; a true minus sign, ``+`` for growth, ``±0%`` for none."""
    if old <= 0:
        return f"{old:,} → {new:,} tokens"
    pct = round((new - old) * 100 / old)
    sign = "−" if pct < 0 else ("+" if pct > 0 else "±")
    return f"{old:,} → {new:,} tokens ({sign}{abs(pct)}%)"


def word_diff(old: str, new: str) -> list[DiffOp]:
    """Insertions and deletions between two texts, word by word (whitespace kept)."""
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    out: list[DiffOp] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(("-", "".join(a[i1:i2])))
        if op in ("insert", "replace"):
            out.append(("+", "".join(b[j1:j2])))
    return [op for op in out if op[1]]


def line_diff(old: str, new: str) -> list[DiffOp]:
    """Lines only in the old text (``-``), only in the new (``+``), or in both (``=``)."""
    a, b = old.splitlines(), new.splitlines()
    out: list[DiffOp] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(("=", line) for line in a[i1:i2])
            continue
        if op in ("delete", "replace"):
            out.extend(("-", line) for line in a[i1:i2])
        if op in ("insert", "replace"):
            out.extend(("+", line) for line in b[j1:j2])
    return out


def render_diff(ops: list[DiffOp], palette: fmt.Palette, *, lines: bool) -> Text:
    """Deleted text struck through in the error colour, inserted text in the success colour.

    Line diffs also get a ``-``/``+``/space gutter, so they read without colour too.
    """
    gone = fmt.style(palette.error, palette.background.blend(palette.error, 0.22), bold=True)
    if not lines:  # in a word diff, striking through is what tells a deletion from an insertion without colour
        gone += Style(strike=True)
    came = fmt.style(palette.success, palette.background.blend(palette.success, 0.22), bold=True)
    same = fmt.style(palette.foreground)
    text = Text()
    for kind, chunk in ops:
        style = gone if kind == "-" else came if kind == "+" else same
        if lines:
            gutter = {"-": "- ", "+": "+ ", "=": "  "}[kind]
            text.append(gutter + literal(chunk) + "\n", style=style)
        else:
            text.append(literal(chunk), style=style)
    return text


def version_head(label: str, s: Summary, palette: fmt.Palette) -> Text:
    """``Before · superseded`` then the tier badge, backend/model and size of one version."""
    return Text.assemble(
        (f"{label} ", fmt.style(palette.foreground, bold=True)), (f"· {s.status}\n", fmt.style(palette.muted)),
        fmt.tier_badge(s.tier, palette), " ",
        (engine_label(s.backend, s.model), fmt.style(palette.foreground)),
        (f" · {fmt.tokens(s.tokens)} tok · prompt {one_line(s.prompt_version, 20)}", fmt.style(palette.muted)),
    )


class CompareScreen(AppModal[bool]):
    """Old vs new text of one summary. Dismisses with True if the run was reverted."""

    CSS_PATH = "runs.tcss"
    BINDINGS = [
        Binding("enter,escape,k", "keep", "Keep", key_display="enter", id="compare.keep"),
        Binding("u", "revert", "Revert", id="compare.revert"),
        Binding("d", "cycle_view", "Diff", id="compare.cycle_view"),
        Binding("tab", "other_side", "Pane", show=False, id="compare.other_side"),
    ]

    def __init__(self, old: Summary, new: Summary, run_id: str) -> None:
        super().__init__()
        self.old = old
        self.new = new
        self.run_id = run_id
        self.view: str = "side"
        self.reverted = False


    def compose(self) -> ComposeResult:
        with Vertical(id="compare-panel", classes="dialog") as panel:
            panel.border_title = f"Re-summarised d{self.old.depth} {fmt.seq_span(self.old.first_seq, self.old.last_seq)}"
            panel.border_subtitle = "enter keep · u revert · d diff"
            yield Static(id="compare-summary")
            with Horizontal(id="compare-sides"):
                with VerticalScroll(id="compare-old", classes="compare-side"):
                    yield Static(id="compare-old-head", classes="compare-head")
                    yield Static(id="compare-old-text", classes="compare-text")
                with VerticalScroll(id="compare-new", classes="compare-side"):
                    yield Static(id="compare-new-head", classes="compare-head")
                    yield Static(id="compare-new-text", classes="compare-text")
            with VerticalScroll(id="compare-diff"):
                yield Static(id="compare-diff-text", classes="compare-text")
            yield Static(id="compare-error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#compare-error").display = False
        self._draw()
        self.query_one("#compare-new").focus()

    # ------------------------------------------------------------------ drawing
    def _draw(self) -> None:
        p = fmt.Palette.from_app(self.app)
        old, new = self.old, self.new
        change = token_change(old.tokens, new.tokens)
        ancestors = self._ancestors()
        summary = Text.assemble(
            (change, fmt.style(p.foreground, bold=True)),
            (f"  ·  tier {old.tier} → {new.tier}", fmt.style(p.muted)),
            (f"  ·  {ancestors} ancestor{'s' * (ancestors != 1)} re-condensed too" if ancestors else "",
             fmt.style(p.muted)),
            ("  ·  identical text" if old.content == new.content else "", fmt.style(p.warning, bold=True)),
            (f"  ·  {VIEW_NAMES[self.view]} (d)", fmt.style(p.accent)),
        )
        if self.view != "side":
            summary.append("  ")
            summary.append_text(render_diff([("-", "removed"), ("=", " "), ("+", "added")], p, lines=False))
        self.query_one("#compare-summary", Static).update(summary)
        self.query_one("#compare-old-head", Static).update(version_head("Before", old, p))
        self.query_one("#compare-new-head", Static).update(version_head("After", new, p))
        shown, fg = self.app.shown, fmt.style(p.foreground)
        self.query_one("#compare-old-text", Static).update(Text(literal(shown(old.content)), style=fg))
        self.query_one("#compare-new-text", Static).update(Text(literal(shown(new.content)), style=fg))
        side = self.view == "side"
        self.query_one("#compare-sides").display = side
        self.query_one("#compare-diff").display = not side
        if not side:
            a, b = self.app.shown(old.content), self.app.shown(new.content)
            ops = word_diff(a, b) if self.view == "words" else line_diff(a, b)
            self.query_one("#compare-diff-text", Static).update(render_diff(ops, p, lines=self.view == "lines"))

    def _ancestors(self) -> int:
        """How many summaries above this one the same run replaced (the re-condensed chain)."""
        store = self.app.store
        count, cur = 0, store.dag.get(self.new.parent_id) if self.new.parent_id else None
        while cur is not None and cur.run_id == self.run_id:
            count += 1
            cur = store.dag.get(cur.parent_id) if cur.parent_id else None
        return count

    @property
    def plain(self) -> str:
        """What the screen shows as text (tests read it)."""
        parts = [self.query_one(f"#{wid}", Static).content for wid in (
            "compare-summary", "compare-old-head", "compare-old-text", "compare-new-head", "compare-new-text")]
        if self.view != "side":
            parts.append(self.query_one("#compare-diff-text", Static).content)
        return "\n".join(p.plain if isinstance(p, Text) else str(p) for p in parts)

    # ------------------------------------------------------------------ actions
    def action_keep(self) -> None:
        self.dismiss(self.reverted)

    def action_cycle_view(self) -> None:
        self.view = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        self._draw()
        (self.query_one("#compare-new") if self.view == "side" else self.query_one("#compare-diff")).focus()

    def action_other_side(self) -> None:
        if self.view == "side":
            left = self.query_one("#compare-old")
            (self.query_one("#compare-new") if self.focused is left else left).focus()

    def action_revert(self) -> None:
        """Undo the run: the old chain is active again (the store refuses if it was built upon since)."""
        try:
            restored = self.app.store.dag.revert_run(self.run_id)
        except StoreError as exc:
            box = self.query_one("#compare-error", Static)
            box.update(Text(f"▲ {exc}"))
            box.display = True
            self.app.notify(str(exc), title="Cannot revert", severity="error", markup=False)
            return
        self.reverted = True
        self.app.notify(f"Reverted run {self.run_id}: {restored} previous version{'s' * (restored != 1)} active "
                        "again; the new text is kept as a superseded version.", title="Reverted", markup=False)
        self.app.post_message(SessionsChanged((self.old.session_id,)))
        self.dismiss(True)
