"""Probe-set runs made from stored ones, no model: the app's key lines, or a stored run's notes cut
to their gist with the key lines after them (issue 19; how the stop-27 variants were made).

    probe_posthoc.py keylines NEW [--size-of RUN]
        each leaf's key lines (``quotes.key_lines``) at its normal target, or filled to the size of
        RUN's summary of it; condensed summaries over those leaves, at a condensed target
    probe_posthoc.py gist RUN NEW
        each summary of RUN: the first sentence of each of its notes, then ``keylines.HEAD`` and the key
        lines in what that left of the target (at least a third), as ``summary_format = "notes"`` now
        makes them
    probe_posthoc.py dense NEW
        a lab pick, not the app's: each step's user words and error lines first (key lines' levels 0
        and 3), then every other candidate line ranked by its specifics per token (``dense_ranks``),
        every step's k-th before any step's (k+1)-th, no line repeating another (``quotes._Chosen``)
    probe_posthoc.py dense-said NEW
        as ``dense``, the agent's calls and tools' short answers first too, and only what the user and
        the assistant said ranked by specifics (a file read's code lines are not what was said)
    probe_posthoc.py firstlast NEW
        the first-and-last-sentence digest (``extractive.first_last_digest``), the digest issue 19 was
        filed against, at each leaf's normal target
    probe_posthoc.py oracle NEW
        a ceiling, never a product: each leaf's key lines at its normal target, the lines that hold
        the most of its own probes' answers (their words and key strings) per token taken first
        (``oracle_keep``). What the best pick of the chat's own lines can answer at that target.

``keylines`` and ``hybrid-kl`` in bench/probes/runs were made by an earlier ``quotes.py`` (key lines v1);
``keylines2`` and ``gist-kl2`` by this one before a line's cost was counted exactly (each line was
counted as its words + 3 tokens, so a few leaves ran up to 34 tokens over target): re-made now, 13 of
the 27 leaves come out 20–60 tokens shorter, the other 14 the same. ``keylines3``, ``gist-kl3`` and
``title-quotes``' key lines are key lines v3; ``keylines4`` and ``title-kl4`` are v4; ``keylines5``,
``title-kl5`` and ``topic-kl5`` v5; ``keylines6`` (condensed at half its sources, ``--condensed-share 0.5``),
``keylines6-c23`` (0.667) and ``title-kl6c`` (gist of ``title-kl6``, two thirds) are this code's (v6).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from probeset import PROBE_DIR, load_leaves

from hiermem_tui.summarize import keylines, notes, steps
from hiermem_tui.summarize.keylines.select import Chosen
from hiermem_tui.summarize.text import clip_sentence
from hiermem_tui.summarize.extractive import first_last_digest
from hiermem_tui.summarize.summariser import CONDENSED_SHARE, QUOTE_SHARE
from hiermem_tui.summarize.types import SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer

RUNS = PROBE_DIR / "runs"
EXTRACTIVE = ("keylines", "oracle", "dense", "dense-said", "firstlast")
"""The kinds made without a model: their condensed summaries are their leaves' key lines carried up."""
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
SHARE = CONDENSED_SHARE[0] / CONDENSED_SHARE[1]


def leaf_target(source_tokens: int) -> int:
    return min(1200, max(24, source_tokens // 4))


def condensed_target(sources: list[SourceItem], share: float = SHARE) -> int:
    """``summariser.targets_for`` at depth 1 (a condensed summary of ``share`` of its sources, at least its largest)."""
    total = sum(s.tokens for s in sources)
    return min(2000, max(total // 4, int(total * share), max(s.tokens for s in sources)))


_STOP = set("""the and for with from that this into then than are was were has have had not but its it's
their there they them his her you your our can will would should could been being what which when where
who how why all any each one two also only just more most some such via per about after before over under
user assistant said asked made make uses used use""".split())
_TERM = re.compile(r"[\w$.%/+#:-]*\w[\w$.%/+#:-]*")


def answer_terms(leaf: Any) -> set[str]:
    """The words (3+ characters, not common ones) and key strings of a leaf's probe answers, case folded."""
    terms: set[str] = set()
    for probe in leaf.probes:
        terms |= {w.casefold().strip(".:,") for w in _TERM.findall(probe.answer)
                  if len(w.strip(".:,")) >= 3 and w.casefold() not in _STOP}
        terms |= {v.casefold() for group in probe.verbatim for v in group}
    return terms


def oracle_keep(leaf: Any, budget: int, tok: Tokenizer) -> str:
    """The candidate key lines that cover most of the leaf's answer terms per token, greedily, in ``budget``:
    the ``keep`` of a key-lines pick that then fills the rest as the app does."""
    sources, terms = leaf.sources, answer_terms(leaf)
    lines: dict[str, tuple[set[str], int]] = {}
    for st in steps.split(sources):
        for level in keylines.step_levels(st.items(sources), st.first):
            for ln in level:
                line = f"- {ln.who}: {clip_sentence(ln.words, keylines.LINE_TOKENS, tok)}"
                low = line.casefold()
                lines.setdefault(line, ({t for t in terms if t in low}, tok.count(line) + 1))
    left, used, keep = set(terms), 0, []
    while True:
        best = max(((len(h & left) / c, line) for line, (h, c) in lines.items()
                    if h & left and used + c <= budget), default=None)
        if best is None:
            return "\n".join(keep)
        keep.append(best[1])
        used += lines[best[1]][1]
        left -= lines[best[1]][0]


_SPECIFICS = re.compile(r"\d+(?:[.,:]\d+)*|`[^`]+`|\"[^\"]{2,60}\"|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*"
                        r"|\b\w+(?:[._/]\w+)+|\$\s?\d")


def dense_ranks(leaf: Any, tok: Tokenizer, said_only: bool = False) -> list[list[tuple[Any, str, str]]]:
    """Per step, its candidate lines in the ``dense`` order: the user's words and error lines (levels 0
    and 3) as key lines have them, then the rest by specifics (numbers, names, identifiers, quoted
    strings) per token, most first, lines with none last in key lines' order. ``said_only``
    (``dense-said``): the agent's calls and tools' short answers (levels 4–5) come first too, and only what
    the user and the assistant said is ranked; tool output and calls follow in key lines' order."""
    out = []
    head = (0, 3, 4, 5) if said_only else (0, 3)
    for st in steps.split(leaf.sources):
        levels = [[(ln.place, ln.who, ln.words) for ln in lv] for lv in keylines.step_levels(st.items(leaf.sources), st.first)]
        first = [c for n in head for c in levels[n]]
        rest = [c for n, lv in enumerate(levels) if n not in head for c in lv]
        order = {c: n for n, c in enumerate(rest)}
        ranked = [c for c in rest if not said_only or c[1] in ("user", "assistant")]
        ranked.sort(key=lambda c: (-len(_SPECIFICS.findall(c[2])) / max(1, tok.count(c[2])), order[c]))
        out.append(first + ranked + [c for c in rest if said_only and c[1] not in ("user", "assistant")])
    return out


def dense_lines(leaf: Any, budget: int, tok: Tokenizer, said_only: bool = False) -> str:
    """The ``dense`` (or ``dense-said``) pick in ``budget`` tokens."""
    chosen = Chosen(budget)
    seen: set[str] = set()
    ranked = dense_ranks(leaf, tok, said_only)
    for k in range(max((len(r) for r in ranked), default=0)):
        for r in ranked:
            if k < len(r) and r[k][2].casefold() not in seen:
                i, who, text = r[k]
                line = clip_sentence(text, keylines.LINE_TOKENS, tok)
                if chosen.take(i, who, line, tok.count(f"- {who}: {line}") + 1, read=False):
                    seen.add(text.casefold())
    return "\n".join(f"- {who}: {line}" for _, who, line in chosen.shown())


def gist_of(text: str) -> str:
    said = [notes.gist(ln.removeprefix("- ")) for ln in keylines.split(text)[0].splitlines() if ln.strip()]
    return notes.join([s for s in said if s])


def build(kind: str, base: dict[str, Any], label: str, size_of: dict[str, Any] | None, tok: Tokenizer,
          share: float = SHARE, probe_dir: Path = PROBE_DIR) -> dict[str, Any]:
    leaves = {leaf.key: leaf for leaf in load_leaves(probe_dir)}
    out = copy.deepcopy(base)
    out.update(label=label, date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    sizes = {x["leaf"]: x["tokens"] for x in size_of["leaves"]} if size_of else {}
    if kind in EXTRACTIVE:
        out.update(backend="extractive", model=None, summary_format=f"{kind} (post-hoc)", speed=None)
    for row in out["leaves"]:
        sources = leaves[row["leaf"]].sources
        target = leaf_target(int(row["source_tokens"]))
        if kind == "firstlast":
            row.update(text=first_last_digest(SummaryRequest(0, sources, target), tok), tier="normal", calls=[],
                       rejections=[])
        elif kind in ("dense", "dense-said"):
            row.update(text=dense_lines(leaves[row["leaf"]], target, tok, kind == "dense-said"), tier="normal",
                       calls=[], rejections=[])
        elif kind in ("keylines", "oracle"):
            budget = sizes.get(row["leaf"], target)
            keep = oracle_keep(leaves[row["leaf"]], budget, tok) if kind == "oracle" else ""
            row.update(text=keylines.key_lines(sources, budget, tok, keep=keep), tier="normal", calls=[],
                       rejections=[])
        else:
            gist = gist_of(row["text"])
            lines = keylines.key_lines(sources, max(target - tok.count(gist), target // QUOTE_SHARE), tok)
            row["text"] = f"{gist}\n{keylines.HEAD}\n{lines}"
        row["tokens"] = tok.count(row["text"])
    by_leaf = {x["leaf"]: x for x in out["leaves"]}
    for row in out["condensed"]:
        sources = [SourceItem("summary", by_leaf[k]["text"], by_leaf[k]["tokens"], T0, T0, depth=0, label=k)
                   for k in row["sources"] if k in by_leaf]
        target = condensed_target(sources, share)
        if kind in EXTRACTIVE:
            row.update(text=keylines.key_lines(sources, target, tok), tier="normal", calls=[], rejections=[])
        else:
            gist = gist_of(row["text"])
            lines = keylines.key_lines(sources, max(target - tok.count(gist), target // QUOTE_SHARE), tok)
            row["text"] = f"{gist}\n{keylines.HEAD}\n{lines}"
        row["tokens"] = tok.count(row["text"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    k = sub.add_parser("keylines")
    k.add_argument("new")
    k.add_argument("--size-of")
    k.add_argument("--base", default="notes-v1f", help="the run whose leaves and condensed rows are re-made")
    k.add_argument("--condensed-share", type=float, default=SHARE,
                   help="a condensed summary's least target, of its sources (keylines6: 0.5)")
    for name in EXTRACTIVE[1:]:
        d = sub.add_parser(name)
        d.add_argument("new")
        d.add_argument("--base", default="notes-v1f", help="the run whose leaves and condensed rows are re-made")
    g = sub.add_parser("gist")
    g.add_argument("run")
    g.add_argument("new")
    ap.add_argument("--probes", type=Path, default=PROBE_DIR, help="the probe files' folder (a held-out set)")
    args = ap.parse_args(argv)
    load = lambda name: json.loads((RUNS / f"{name}.json").read_text(encoding="utf-8"))  # noqa: E731
    base = load(args.run if args.kind == "gist" else args.base)
    size_of = load(args.size_of) if args.kind == "keylines" and args.size_of else None
    out = build(args.kind, base, args.new, size_of, Tokenizer(), getattr(args, "condensed_share", SHARE), args.probes)
    path = write_run(args.new, out)
    print(f"wrote {path}: {len(out['leaves'])} leaves, mean {sum(x['tokens'] for x in out['leaves']) / len(out['leaves']):.0f} tokens")
    return 0


def write_run(name: str, out: dict[str, Any]) -> Path:
    path = RUNS / f"{name}.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.exit(main())
