"""Blind reading for the probe benchmark: packets for readers, and their verdicts unblinded.

    probe_blind.py pack RUN,RUN,… OUT GROUPS [--seed N] [--condensed-only] [--leaves KEY …] [--condensed-of CHAT …]
        GROUPS: the chats each reader gets, e.g. bom-trailcam+chatgpt-peer-review,cc-vsla-repair
        Writes OUT/packetK.md (each leaf: its episodes, its probes with answers and traps, the runs'
        summaries shuffled as A, B, …; then each chat's condensed summaries), OUT/keymap.json and
        OUT/RUBRIC.md (bench/probes/RUBRIC.md). A reader writes OUT/verdictsK.json.
    probe_blind.py unblind OUT SUFFIX "who judged"
        Writes bench/probes/verdicts/RUN+SUFFIX.json for every run in the packets.
    probe_blind.py titles TITLES.json OUT GROUPS [--seed N] [--stored RUN …]
        Packets of part titles (``probe_titles.py``'s output) for a truth reading: each part's
        material, then every distinct title the variants (and the stored runs' titles of that part)
        gave it, shuffled as T1, T2, …. A reader writes OUT/verdictsK.json:
        ``{leaf: {part: {label: "true" | "false: why"}}}``.
    probe_blind.py count OUT
        False titles per variant, unblinded.

Then ``bench_probes.py score RUN@RUN+SUFFIX --baseline digest@digest+SUFFIX``. Readers used so far
were helpers (one per chat group), never told which run is which.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

from probeset import PROBE_DIR, load_leaves

from bench_probes import pick_condensed

RUNS = PROBE_DIR / "runs"
VERDICTS = PROBE_DIR / "verdicts"
EPISODE_CHARS = 12000


def pack(runs: list[str], out: Path, groups: list[list[str]], seed: int, condensed_only: bool = False,
         only: list[str] | None = None, condensed_of: list[str] | None = None, probe_dir: Path = PROBE_DIR) -> None:
    rng = random.Random(seed)
    texts: dict[tuple[str, str], str] = {}
    condensed: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for r in runs:
        data = json.loads((RUNS / f"{r}.json").read_text(encoding="utf-8"))
        texts.update({(r, x["leaf"]): x["text"] for x in data["leaves"]})
        condensed.update({(r, c["file"]): (c["text"], c["sources"]) for c in data["condensed"]})
    out.mkdir(parents=True, exist_ok=True)
    leaves = load_leaves(probe_dir)
    by_key = {leaf.key: leaf for leaf in leaves}
    keymap: dict[str, dict[str, str]] = {}
    for k, files in enumerate(groups, 1):
        items = []
        for leaf in leaves:
            if condensed_only or leaf.file not in files or not all((r, leaf.key) in texts for r in runs):
                continue
            if only is not None and leaf.key not in only:
                continue
            order = rng.sample(runs, len(runs))
            keymap[leaf.key] = {chr(65 + i): r for i, r in enumerate(order)}
            eps = "\n\n".join(f"[{i}] {s.role}: {s.text[:EPISODE_CHARS]}" for i, s in enumerate(leaf.sources))
            probes = "\n".join(f"{i}. ({p.kind}) {p.question}\n   answer: {p.answer}" for i, p in enumerate(leaf.probes, 1))
            traps = ("\nTraps (things a summary might wrongly say): " + "; ".join(leaf.traps)) if leaf.traps else ""
            sums = "\n\n".join(f"### Summary {chr(65 + i)}\n{texts[(r, leaf.key)]}" for i, r in enumerate(order))
            items.append(f"# LEAF {leaf.key}\n\n## Episodes\n{eps}\n\n## Probes\n{probes}{traps}\n\n## Summaries\n{sums}\n")
        for f in files:
            if not all((r, f) in condensed for r in runs) or condensed_of is not None and f not in condensed_of:
                continue
            order = rng.sample(runs, len(runs))
            keymap[f"condensed:{f}"] = {chr(65 + i): r for i, r in enumerate(order)}
            sources = condensed[(runs[0], f)][1]
            probes = "\n".join(
                f"{i}. (from {key}; {pick_condensed(by_key[key]).kind}) {pick_condensed(by_key[key]).question}\n"
                f"   answer: {pick_condensed(by_key[key]).answer}" for i, key in enumerate(sources, 1))
            sums = "\n\n".join(f"### Summary {chr(65 + i)}\n{condensed[(r, f)][0]}" for i, r in enumerate(order))
            items.append(f"# CONDENSED condensed:{f}\n\nSummaries of the whole chat (over the leaves {', '.join(sources)} "
                         f"{'' if condensed_only else 'judged above'}). Judge the probes only (no unsupported list needed).\n\n## Probes\n{probes}\n\n"
                         f"## Summaries\n{sums}\n")
        (out / f"packet{k}.md").write_text("\n\n---\n\n".join(items), encoding="utf-8")
        print(f"{out / f'packet{k}.md'}: {len(items)} items")
    (out / "keymap.json").write_text(json.dumps(keymap, indent=1), encoding="utf-8")
    shutil.copy(PROBE_DIR / "RUBRIC.md", out / "RUBRIC.md")


TITLE_RUBRIC = """# Judging part titles

Each item is one part of a chat (a user's message and what the assistant said and did about it, or a
stretch of an agent's work), then several titles someone wrote for that part, in random order.

For every title write `"true"` or `"false: <a few words why>"`:
- **false**: the title says or implies something the part contradicts or does not contain: a wrong
  relation between names it holds ("X for Y" when X was for Z), something proposed or deferred told
  as done, a thing the part rejected told as chosen, a document, plan, phase or version the part does
  not have, a wrong actor.
- **true**: everything it says is in the part. A vague or incomplete title is true (do not judge
  usefulness); so is a title whose words differ from the part's as long as the meaning holds.
Judge against the part's material only, as shown. Write valid JSON.
"""


def titles_pack(path: Path, out: Path, groups: list[list[str]], seed: int, stored: list[str]) -> None:
    from hiermem_tui.summarize import keylines

    rng = random.Random(seed)
    data = json.loads(path.read_text(encoding="utf-8"))
    kept: dict[tuple[str, str], list[str]] = {}
    for r in stored:
        for x in json.loads((RUNS / f"{r}.json").read_text(encoding="utf-8"))["leaves"]:
            kept[(r, x["leaf"])] = [ln.removeprefix("- ") for ln in keylines.split(x["text"])[0].splitlines() if ln.strip()]
    out.mkdir(parents=True, exist_ok=True)
    keymap: dict[str, dict[str, dict[str, list[str]]]] = {}
    for k, files in enumerate(groups, 1):
        items = []
        for leaf in data["leaves"]:
            if leaf["leaf"].split("#")[0] not in files:
                continue
            n = len(leaf["parts"])
            for part in leaf["parts"]:
                by_title: dict[str, list[str]] = {}
                for name, t in part["titles"].items():
                    by_title.setdefault(t["title"], []).append(name)
                for r in stored:
                    got = kept.get((r, leaf["leaf"]), [])
                    if len(got) == n and got[part["index"] - 1]:
                        by_title.setdefault(got[part["index"] - 1], []).append(r)
                order = rng.sample(sorted(t for t in by_title if t), len([t for t in by_title if t]))
                labels = {f"T{i}": by_title[t] for i, t in enumerate(order, 1)}
                keymap.setdefault(leaf["leaf"], {})[str(part["index"])] = labels
                listed = "\n".join(f"- T{i}: {t}" for i, t in enumerate(order, 1))
                items.append(f"# LEAF {leaf['leaf']} PART {part['index']} of {n}\n\n## Material\n{part['material']}"
                             f"\n\n## Titles\n{listed}\n")
        (out / f"packet{k}.md").write_text("\n\n---\n\n".join(items), encoding="utf-8")
        print(f"{out / f'packet{k}.md'}: {len(items)} parts")
    (out / "keymap.json").write_text(json.dumps(keymap, indent=1), encoding="utf-8")
    (out / "RUBRIC.md").write_text(TITLE_RUBRIC, encoding="utf-8")


def titles_count(out: Path) -> dict[str, list[int]]:
    """Per variant: [false, judged], and the false titles listed."""
    keymap = json.loads((out / "keymap.json").read_text(encoding="utf-8"))
    counts: dict[str, list[int]] = {}
    for f in sorted(out.glob("verdicts*.json")):
        for leaf, parts in json.loads(f.read_text(encoding="utf-8")).items():
            for index, labels in parts.items():
                for label, verdict in labels.items():
                    for name in keymap[leaf][index][label]:
                        c = counts.setdefault(name, [0, 0])
                        c[1] += 1
                        if str(verdict).lower().startswith("false"):
                            c[0] += 1
                            print(f"{name}: {leaf} part {index}: {verdict}")
    for name, (false, judged) in sorted(counts.items()):
        print(f"{name}: {false} false of {judged} titles ({false / max(judged, 1):.0%})")
    return counts


def unblind(out: Path, suffix: str, who: str) -> None:
    keymap = json.loads((out / "keymap.json").read_text(encoding="utf-8"))
    runs: dict[str, dict[str, dict[str, object]]] = {}
    for f in sorted(out.glob("verdicts*.json")):
        for key, by_label in json.loads(f.read_text(encoding="utf-8")).items():
            for label, v in by_label.items():
                d = runs.setdefault(keymap[key][label], {"leaves": {}, "condensed": {}})
                if key.startswith("condensed:"):
                    d["condensed"][key.split(":", 1)[1]] = {"verdicts": v["verdicts"]}
                else:
                    d["leaves"][key] = {"verdicts": v["verdicts"], "unsupported": v.get("unsupported", [])}
    for run, d in runs.items():
        path = VERDICTS / f"{run}{suffix}.json"
        path.write_text(json.dumps({"run": run, "judged_by": who, **d}, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        print(f"{path}: {len(d['leaves'])} leaves, {len(d['condensed'])} condensed")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("runs")
    p.add_argument("out", type=Path)
    p.add_argument("groups")
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--condensed-only", action="store_true", help="only the condensed summaries (runs whose leaves are the same)")
    p.add_argument("--leaves", nargs="*", help="only these leaves (the ones the runs differ on)")
    p.add_argument("--condensed-of", nargs="*", help="only these chats' condensed summaries")
    p.add_argument("--probes", type=Path, default=PROBE_DIR, help="the probe files' folder (a held-out set)")
    u = sub.add_parser("unblind")
    u.add_argument("out", type=Path)
    u.add_argument("suffix")
    u.add_argument("who")
    t = sub.add_parser("titles")
    t.add_argument("titles", type=Path)
    t.add_argument("out", type=Path)
    t.add_argument("groups")
    t.add_argument("--seed", type=int, default=31)
    t.add_argument("--stored", nargs="*", default=[])
    c = sub.add_parser("count")
    c.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "titles":
        titles_pack(args.titles, args.out, [g.split("+") for g in args.groups.split(",")], args.seed, args.stored)
    elif args.cmd == "count":
        titles_count(args.out)
    elif args.cmd == "pack":
        pack(args.runs.split(","), args.out, [g.split("+") for g in args.groups.split(",")], args.seed, args.condensed_only,
             args.leaves, args.condensed_of, args.probes)
    else:
        unblind(args.out, args.suffix, args.who)
    return 0


if __name__ == "__main__":
    sys.exit(main())
