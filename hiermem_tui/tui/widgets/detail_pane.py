"""The detail pane: everything about the selected node (a summary, an episode, a range of episodes).

Why literal ``Text`` everywhere: summary and episode text, titles and ids come from chat
data; each goes through :func:`visible` / :func:`one_line` into a ``rich.text.Text`` built
directly, so ``[bold]`` or ``[@click=app.quit]`` is shown, never obeyed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.table import Table
from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from hiermem_tui.store import IMPORTED_PROMPT, Episode, Session, Summary
from hiermem_tui.textsafe import one_line, strip_combining_excess, visible
from hiermem_tui.tui import format as fmt
from hiermem_tui.tui.widgets.themed import Themed
from hiermem_tui.tui.app_base import AppBase
from hiermem_tui.words import counted

MAX_LISTED_SOURCES = 12


def _literal(text: str) -> str:
    return strip_combining_excess(visible(text))


def summary_line(s: Summary, palette: fmt.Palette, ref_year: int | None) -> Text:
    """One summary on one line (chain picker, versions list)."""
    return Text.assemble(
        fmt.depth_chip(s.depth, palette, s.tier), " ", fmt.tier_badge(s.tier, palette), " ",
        (fmt.seq_span(s.first_seq, s.last_seq), fmt.style(palette.foreground, bold=True)), "  ",
        (f"{fmt.tokens(s.tokens)} tok", fmt.style(palette.foreground)), "  ",
        (fmt.time_range(s.start_at, s.end_at, ref_year=ref_year), fmt.style(palette.muted)), "  ",
        (one_line(s.id, 40), fmt.style(palette.muted)),
    )


def made_by(s: Summary) -> Text:
    """``ollama · llama3.2 · prompt leaf-v3``; a summary another tool made: ``lossless-claw · <model>``."""
    if s.prompt_version == IMPORTED_PROMPT:
        return Text(f"{one_line(s.backend, 30)} · {one_line(s.model or 'model unknown', 50)}")
    return Text(f"{one_line(s.backend, 30)} · {one_line(s.model or 'no model', 50)} · "
                f"prompt {one_line(s.prompt_version, 40)}")


def _names(items: Sequence[str], limit: int = 24) -> str:
    shown = ", ".join(one_line(x, 60) for x in items[:limit])
    return shown + (f", … and {len(items) - limit} more" if len(items) > limit else "")


def _same(names: Sequence[str]) -> list[str]:
    return list(names)


def fidelity_rows(s: Summary, p: fmt.Palette, threshold: float,
                  shown: Callable[[Sequence[str]], list[str]] = _same) -> list[tuple[str, Text | str]]:
    """What the summary kept of its sources' identifiers, what it lost or made up, and why
    earlier attempts were rejected — every name shown literally (through ``shown``: the app masks
    secrets there while the screen is shared)."""
    fid = s.fidelity
    if fid is None:
        kept = Text("not measured (made before fidelity was measured): press ", style=fmt.style(p.muted))
        kept.append("M", style=fmt.style(p.accent, bold=True))
        kept.append(" to measure this session", style=fmt.style(p.muted))
        rows: list[tuple[str, Text | str]] = [("fidelity", kept)]
    else:
        low = s.low_fidelity(threshold)
        kept = Text(f"kept {fid.kept} of {fid.identifiers} identifiers ({fmt.percent(fid.retention)})",
                    style=fmt.style(p.foreground))
        if fid.key is not None and fid.key_kept is not None:
            kept.append(f" · {fid.key_kept} of its {fid.key} key names",
                        style=fmt.style(p.warning if low else p.success, bold=low))
        if low:
            what = "of its key names" if fid.key is not None else "of its identifiers"
            kept.append(f"  under {fmt.percent(threshold)} {what}: x repairs it", style=fmt.style(p.warning))
        if s.trimmed:
            kept.append(f"\nthe model's answer ran past its target and was {s.trimmed} at a boundary",
                        style=fmt.style(p.muted))
        rows = [("fidelity", kept)]
        if s.keywords:  # the lost names, kept beside the text (searchable), most important first
            words = Text(_names(shown(s.keywords)), style=fmt.style(p.warning))
            words.append("  (names the text left out, kept with it)", style=fmt.style(p.muted))
            rows.append(("keywords", words))
        elif fid.lost:
            rows.append(("lost", Text(_names(shown(fid.lost)), style=fmt.style(p.warning))))
        if fid.novel:
            rows.append(("in no source", Text(_names(shown(fid.novel)), style=fmt.style(p.error))))
    if s.fid_pins_missing:
        rows.append(("pins missing", Text(_names(s.fid_pins_missing), style=fmt.style(p.error, bold=True))))
    if s.rejections:
        why = Text()
        for i, r in enumerate(s.rejections):
            why.append("\n" if i else "")
            why.append(f"{one_line(str(r.get('tier', '?')), 12)}: ", style=fmt.style(p.muted))
            why.append(one_line(str(r.get("reason", "?")).replace("_", " "), 30), style=fmt.style(p.warning, bold=True))
            detail = r.get("detail")
            if detail:
                why.append(f" — {one_line(str(detail), 120)}", style=fmt.style(p.foreground))
        rows.append(("rejected", why))
    return rows


class DetailPane(VerticalScroll, Themed):
    """Shows one node. Public: ``show_summary``, ``show_episode``, ``show_range``, ``show_empty``;
    :attr:`plain` is the text currently shown (for tests and copy)."""

    DEFAULT_CSS = """
    DetailPane { background: $surface; padding: 0 1; }
    DetailPane > #detail-head { margin: 1 0 0 0; }
    DetailPane > #detail-meta { margin: 1 0; }
    DetailPane > #detail-rule { color: $text-muted; }
    DetailPane > #detail-body { margin: 0 0 1 0; }
    """

    app = getters.app(AppBase)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ref_year: int | None = None
        self.fidelity_threshold = 0.5
        self.plain = ""
        self.key: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="detail-head")
        yield Static(id="detail-meta")
        yield Static(id="detail-rule")
        yield Static(id="detail-body")

    # ------------------------------------------------------------------ building blocks
    def _set(self, key: str, head: Text, rows: Sequence[tuple[str, Text | str]], rule: str, body: Text) -> None:
        p = self.palette
        table = Table.grid(padding=(0, 2))
        table.add_column(style=fmt.style(p.muted), no_wrap=True)
        table.add_column(overflow="fold")
        for label, value in rows:
            table.add_row(Text(label), value if isinstance(value, Text) else Text(value))
        rule_text = Text(f"── {rule} " + "─" * 40, style=fmt.style(p.muted)) if rule else Text("")
        for wid, renderable in (("#detail-head", head), ("#detail-meta", table),
                                ("#detail-rule", rule_text), ("#detail-body", body)):
            self.query_one(wid, Static).update(renderable)
        self.key = key
        rows_plain = "\n".join(f"{label}: {value if isinstance(value, str) else value.plain}" for label, value in rows)
        self.plain = "\n".join((head.plain, rows_plain, rule_text.plain, body.plain))
        if key != getattr(self, "_last_key", None):
            self.scroll_home(animate=False)
        self._last_key = key

    def _title(self, *parts: Text | tuple[str, object] | str) -> Text:
        return Text.assemble(*parts)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ views
    def show_summary(self, s: Summary, *, sources: list[str], versions: list[Summary]) -> None:
        """A summary with every figure ARCHITECTURE §4 asks to keep, then its text, literally."""
        p = self.palette
        y = self.ref_year
        head = self._title(
            fmt.depth_chip(s.depth, p, s.tier), " ", fmt.tier_badge(s.tier, p), " ",
            (f"{s.kind} summary", fmt.style(p.foreground, bold=True)),
            ("  superseded" if s.status == "superseded" else "", fmt.style(p.warning, bold=True)),
            "\n",
            (f"covers episodes {fmt.seq_span(s.first_seq, s.last_seq)}", fmt.style(p.foreground, bold=True)),
            (f"  ·  {fmt.time_range(s.start_at, s.end_at, ref_year=y)}", fmt.style(p.muted)),
        )
        ratio = f"ratio {s.ratio:.2f}" + (f" ({1 / s.ratio:.1f}× smaller)" if 0 < s.ratio < 1 else "")
        if s.kind == "leaf" and sources:
            # A leaf's sources are its episodes: the first and last id say it all. Ids are
            # "<session id>/<key>"; the session is on screen already, the key is what tells them apart.
            # A key that is only the episode's position (a source without message ids) adds nothing.
            keys = [x.removeprefix(f"{s.session_id}/") for x in (sources[0], sources[-1])]
            src = f"{counted(len(sources), 'episode')}, {fmt.seq_range(s.first_seq, s.last_seq)}"
            if keys != [str(s.first_seq), str(s.last_seq)]:
                src += f" · ids {one_line(keys[0], 36)}" + (f" … {one_line(keys[1], 36)}" if len(sources) > 1 else "")
        else:
            shown = [one_line(x, 60) for x in sources[:MAX_LISTED_SOURCES]]
            more = len(sources) - len(shown)
            src = f"{counted(len(sources), 'summary')}: " + ", ".join(shown) + (f", … and {more} more" if more else "")
        superseded = [v for v in versions if v.status == "superseded" and v.id != s.id]
        status = Text(s.status + (f" (replaced by {one_line(s.superseded_by, 40)})" if s.superseded_by else ""))
        status.append(f" · {len(versions)} version{'s' * (len(versions) != 1)} · {len(superseded)} superseded",
                      style=fmt.style(p.muted))
        if len(versions) < 2:
            versions = []
        for n, v in enumerate(versions, 1):
            status.append(f"\nv{n} ", style=fmt.style(p.muted))
            status.append(one_line(v.id, 40), style=fmt.style(p.foreground, bold=v.id == s.id))
            status.append(" ")
            status.append_text(fmt.tier_badge(v.tier, p))
            status.append(f" {fmt.tokens(v.tokens)} tok · {v.status}", style=fmt.style(p.muted))
            status.append("  ← this one" if v.id == s.id else "", style=fmt.style(p.accent))
        rows: list[tuple[str, Text | str]] = [
            ("id", Text(one_line(s.id, 80))),
            ("made by", made_by(s)),
            ("created", Text(fmt.timestamp(s.created_at, ref_year=y) + (
                " · imported" if s.prompt_version == IMPORTED_PROMPT else f" · run {one_line(s.run_id or '–', 40)}"))),
            ("tokens", f"{fmt.tokens(s.source_tokens)} in → {fmt.tokens(s.tokens)} out · {ratio}"),
            ("model i/o", model_io(s)),
            ("sources", Text(src)),
            ("parent", Text(one_line(s.parent_id, 80)) if s.parent_id else "– (top level)"),
            ("status", status),
            *fidelity_rows(s, p, self.fidelity_threshold, self.app.shown_names),
        ]
        body = Text(_literal(self.app.shown(s.content)), style=fmt.style(p.foreground))
        self._set(f"s:{s.id}", head, rows, f"text · {fmt.tokens(s.tokens)} tok", body)

    def show_episode(self, ep: Episode, chain: list[Summary], where: str | None = None) -> None:
        """An episode, the summaries covering it (leaf → top), then its content, literally."""
        p = self.palette
        y = self.ref_year
        head = self._title(
            (f"Episode #{ep.seq}", fmt.style(p.foreground, bold=True)), "  ",
            (ep.role, fmt.style(p.role_color(ep.role), bold=True)),
        )
        covered = Text()
        for i, s in enumerate(chain):
            if i:
                covered.append("\n")
            covered.append_text(summary_line(s, p, y))
        if not chain:
            covered = Text(where or "not under any summary yet", style=fmt.style(p.muted))
        rows: list[tuple[str, Text | str]] = [
            ("id", Text(one_line(ep.id, 80))),
            ("seq", f"#{ep.seq}"),
            ("role", ep.role),
            ("time", fmt.timestamp(ep.created_at, ref_year=y, seconds=True) + (" (synthetic)" if ep.synthetic_time else "")),
            ("tokens", fmt.tokens(ep.tokens)),
            ("covered by", covered),
        ]
        hint = "  (c: jump to one)" if chain else ""
        body = Text(_literal(self.app.shown(ep.content)), style=fmt.style(p.foreground))
        self._set(f"e:{ep.seq}", head, rows, f"content{hint}", body)

    def show_range(self, kind: str, first: int, last: int, *, tokens: int, start_at: str, end_at: str,
                   session_id: str, fresh_tail: int, owner: str | None = None) -> None:
        """A run of raw episodes: a leaf's episodes, an unsummarised gap, or the fresh tail."""
        p = self.palette
        titles = {"gap": ("Unsummarised episodes", p.error), "tail": ("Fresh tail", p.success),
                  "episodes": ("Episodes of a leaf summary", p.primary)}
        title, colour = titles.get(kind, ("Episodes", p.primary))
        head = self._title(
            (f" {title} ", fmt.style(fmt.on(colour), colour, bold=True)), "\n",
            (f"covers episodes {fmt.seq_span(first, last)}", fmt.style(p.foreground, bold=True)),
        )
        rows: list[tuple[str, Text | str]] = [
            ("tokens", f"{fmt.tokens(tokens)} tok"),
            ("time range", fmt.time_range(start_at, end_at, ref_year=self.ref_year)),
        ]
        if owner:
            rows.append(("leaf", Text(one_line(owner, 80))))
        if kind == "gap":
            body = Text.assemble(
                "These episodes are not under any leaf summary yet, so a model reading this session sees "
                "them raw. Press ",
                ("p", fmt.style(p.accent, bold=True)),
                " to compact the session here, or from a shell:\n\n  ",
                (f"hiermem-tui compact --session {one_line(session_id, 200)}", fmt.style(p.accent, bold=True)),
            )
        elif kind == "tail":
            body = Text(
                f"The newest {fresh_tail} episodes (policy.fresh_tail) are kept raw on purpose: a leaf pass "
                "never summarises them, so recent turns stay verbatim.",
                style=fmt.style(p.foreground),
            )
        else:
            body = Text("Expand the node (enter) to list the episodes; the transcript tab (t) shows them in full.",
                        style=fmt.style(p.muted))
        self._set(f"{kind}:{first}", head, rows, "about", body)

    def show_empty(self, session: Session | None, session_id: str, *, missing: bool = False) -> None:
        """The empty state: no summaries (or no episodes, or no such session), and what to do."""
        p = self.palette
        if missing:
            head = self._title(("Session not found", fmt.style(p.foreground, bold=True)))
            body = Text(f"There is no session {one_line(session_id, 80)} in this database (any more). "
                        "Press esc to go back to the list.", style=fmt.style(p.muted))
            self._set("missing", head, [], "", body)
            return
        if session is None or session.episodes == 0:
            head = self._title(("No episodes", fmt.style(p.foreground, bold=True)))
            body = Text("This session holds no episodes yet; import some with `hiermem-tui import`.",
                        style=fmt.style(p.muted))
            self._set("empty", head, [], "", body)
            return
        head = self._title((" No summaries yet ", fmt.style(fmt.on(p.warning), p.warning, bold=True)))
        rows: list[tuple[str, Text | str]] = [
            ("episodes", f"{session.episodes:,}"),
            ("tokens", f"{fmt.tokens(session.tokens)} tok, all raw"),
        ]
        body = Text.assemble(
            ("This session has not been compacted: there is no summary DAG to inspect yet.\n"
             "Press ", fmt.style(p.foreground)),
            ("p", fmt.style(p.accent, bold=True)),
            (" to build one here (pick Ollama or the offline extractive backend), or from a shell:\n\n  ",
             fmt.style(p.foreground)),
            (f"hiermem-tui compact --session {one_line(session_id, 200)}", fmt.style(p.accent, bold=True)),
            ("\n\nThe tree lists the raw episodes meanwhile.", fmt.style(p.muted)),
        )
        self._set("empty", head, rows, "how to compact", body)


def model_io(s: Summary) -> str:
    """What the model read and wrote, and how long it took; an imported summary's time is not ours
    to know (its tool did not record it): it says so instead of "0.0 s (model 0.0 s)"."""
    io = f"prompt {fmt.tokens(s.input_tokens)} · answer {fmt.tokens(s.output_tokens)} · "
    if s.prompt_version == IMPORTED_PROMPT:
        return io + "imported (made by another tool: no time recorded)"
    return io + f"{fmt.duration(s.duration_s)} (model {fmt.duration(s.llm_seconds)})"
