"""Blind reading of leaves and briefs against the floor and the ceiling (issue 35).

    .venv/bin/python lab/blind.py pack SET OUT --runs LABEL=RUN.json ... [--ceiling DIR] --groups a+b,c+d [--seed N]
        SET: a probe folder (lab/probes/heldout4). Each run is a lab/probe.py run file; the ceiling is a
        folder of <chat>.json ({"leaves": {key: text}, "brief": text}) written by careful writers blind to the
        probes. Writes OUT/packetK.md per group (each leaf: its episodes, its probes with answers and traps,
        the summaries shuffled as A, B, …; then each chat's briefs with its session probes), OUT/keymap.json
        and OUT/RUBRIC.md. A reader writes OUT/verdictsK.json.
    .venv/bin/python lab/blind.py score OUT [--set SET]
        Unblinds OUT/verdicts*.json: per summary kind, probes yes/partly/no and their score, per probe kind,
        readability (1-5), unsupported statements per 10 summaries, tokens a summary.

Readers are helpers who never learn which summary is which.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probeset import load_leaves  # noqa: E402

from hiermem_tui.tokens import Tokenizer  # noqa: E402

SAMPLES = ROOT.parent / "shared" / "samples"
SCORES = {"yes": 1.0, "partly": 0.5, "no": 0.0}
RUBRIC = """# How to judge (blind)

You judge summaries of stretches of real chats ("leaves") and briefs of whole chats. You do not know who or
what wrote each one: some were written by people, some by programs. Judge each **alone**, as a reader who has
not seen the chat would read it, and apply the same bar to all.

For every LEAF you get its episodes (the chat, numbered), four probes (questions a reader may ask of this
stretch, each with its answer from the episodes) and traps (wrong things a summary might say), then the
summaries A, B, … For every BRIEF (a summary of a whole chat) you get five session probes and the briefs; the
whole chat is in the leaves of that chat above it.

1. **Verdict per probe**: `yes` (a reader gets the answer from the summary alone, specifically enough to act on
   it), `partly` (part of the answer, or only vaguely / without the specific name or number), `no` (not there,
   or wrong). Write `"yes: a few words why"`, `"partly: …"`, `"no: …"`, one string per probe, in order.
2. **Unsupported statements**: every statement the episodes contradict or do not contain — wrong attribution
   (who said/asked/did it), invented events, numbers on the wrong thing, proposals reported as done, a request
   said to be unanswered that was answered (or the reverse). Quote the summary's words, then ` — ` and why.
   Quotes of the chat's own words are supported where the chat says them (lines like `- user: …`; a line under
   a request with no speaker is the assistant's). Vagueness and omissions are not unsupported.
3. **Readability** (1–5): could a busy reader tell in 30 seconds what the stretch (or chat) was about, what was
   decided and where it ended? 1 = no idea, 3 = with effort, 5 = at a glance.

Length is not a merit: a longer summary that says the answer no more clearly gets no more credit.

Write your result as JSON to the path in your task:
{"<leaf key>": {"A": {"verdicts": ["yes: …", "…", "…", "…"], "unsupported": ["… — …"], "readability": 4}, "B": …},
 "brief:<chat>": {"A": {"verdicts": [5 strings], "unsupported": […], "readability": 3}, …}, …}
"""


def _runs(specs: list[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for spec in specs:
        label, _, path = spec.partition("=")
        out[label] = json.loads(Path(path).read_text(encoding="utf-8"))
    return out


def pack(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    runs = _runs(args.runs)
    texts: dict[tuple[str, str], str] = {}
    briefs: dict[tuple[str, str], str] = {}
    for label, run in runs.items():
        texts.update({(label, x["leaf"]): x["text"] for x in run["leaves"]})
        briefs.update({(label, b["file"]): b["text"] for b in run.get("briefs", [])})
    if args.ceiling:
        for f in sorted(Path(args.ceiling).glob("*.json")):
            data = json.loads(f.read_text(encoding="utf-8"))
            texts.update({("ceiling", k): v for k, v in data["leaves"].items()})
            briefs[("ceiling", f.stem)] = data["brief"]
    labels = sorted({label for label, _ in texts} | {label for label, _ in briefs})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    leaves = load_leaves(Path(args.set), samples=SAMPLES)
    session_probes = {f.stem: json.loads(f.read_text(encoding="utf-8")).get("session_probes", [])
                      for f in Path(args.set).glob("*.json")}
    keymap: dict[str, dict[str, str]] = {}
    for k, group in enumerate(args.groups.split(","), 1):
        files = group.split("+")
        items = []
        for leaf in leaves:
            if leaf.file not in files:
                continue
            have = [lb for lb in labels if (lb, leaf.key) in texts]
            order = rng.sample(have, len(have))
            keymap[leaf.key] = {chr(65 + i): lb for i, lb in enumerate(order)}
            eps = "\n\n".join(f"[{leaf.first_seq + i}] {s.role}: {s.text[:args.chars]}" for i, s in enumerate(leaf.sources))
            probes = "\n".join(f"{i}. ({p.kind}) {p.question}\n   answer: {p.answer}" for i, p in enumerate(leaf.probes, 1))
            traps = ("\nTraps: " + "; ".join(leaf.traps)) if leaf.traps else ""
            sums = "\n\n".join(f"### Summary {chr(65 + i)}\n{texts[(lb, leaf.key)]}" for i, lb in enumerate(order))
            items.append(f"# LEAF {leaf.key}\n\n## Episodes\n{eps}\n\n## Probes\n{probes}{traps}\n\n## Summaries\n{sums}\n")
        for f in files if not args.no_briefs else ():
            have = [lb for lb in labels if (lb, f) in briefs]
            if not have or not session_probes.get(f):
                continue
            if not any(leaf.file == f for leaf in leaves):  # a set with session probes only: the chat itself
                items.append(f"# CHAT {f}\n\n## Messages\n{_chat_text(Path(args.set), f, args.chars)}\n")
            order = rng.sample(have, len(have))
            keymap[f"brief:{f}"] = {chr(65 + i): lb for i, lb in enumerate(order)}
            probes = "\n".join(f"{i}. ({p['kind']}) {p['question']}\n   answer: {p['answer']}"
                               for i, p in enumerate(session_probes[f], 1))
            sums = "\n\n".join(f"### Brief {chr(65 + i)}\n{briefs[(lb, f)]}" for i, lb in enumerate(order))
            items.append(f"# BRIEF brief:{f}\n\nBriefs of the whole chat {f} (the chat, or its leaves, are above).\n\n"
                         f"## Session probes\n{probes}\n\n## Briefs\n{sums}\n")
        (out / f"packet{k}.md").write_text("\n\n---\n\n".join(items), encoding="utf-8")
    (out / "keymap.json").write_text(json.dumps(keymap, indent=1), encoding="utf-8")
    (out / "RUBRIC.md").write_text(RUBRIC, encoding="utf-8")
    print(f"{len(keymap)} items in {k} packets under {out}")


def _chat_text(probe_set: Path, name: str, chars: int) -> str:
    """A probe file's chat (JSONL, one message a line) as numbered messages."""
    spec = json.loads((probe_set / f"{name}.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (probe_set / spec["chat"]).read_text(encoding="utf-8").splitlines() if line.strip()]
    return "\n\n".join(f"[{i}] {r.get('role')}: {str(r.get('content', ''))[:chars]}" for i, r in enumerate(rows))


def verdict_of(text: str) -> str:
    return text.split(":", 1)[0].strip().lower()


def score(args: argparse.Namespace) -> None:
    out = Path(args.out)
    keymap = json.loads((out / "keymap.json").read_text(encoding="utf-8"))
    tok = Tokenizer()
    probe_kinds: dict[str, list[str]] = {}
    if args.set:
        for leaf in load_leaves(Path(args.set), samples=SAMPLES):
            probe_kinds[leaf.key] = [p.kind for p in leaf.probes]
        for f in Path(args.set).glob("*.json"):
            probe_kinds[f"brief:{f.stem}"] = [p["kind"] for p in json.loads(f.read_text(encoding="utf-8")).get(
                "session_probes", [])]
    acc: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"n": 0, "sum": 0.0, "yes": 0, "partly": 0, "no": 0,
                                                                         "read": [], "unsupported": [], "items": 0,
                                                                         "kinds": defaultdict(list)})
    for f in sorted(out.glob("verdicts*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, by_letter in data.items():
            what = "brief" if key.startswith("brief:") else "leaf"
            for letter, v in by_letter.items():
                label = keymap[key][letter]
                a = acc[(what, label)]
                a["items"] += 1
                for i, t in enumerate(v.get("verdicts", [])):
                    word = verdict_of(t)
                    a["n"] += 1
                    a["sum"] += SCORES.get(word, 0.0)
                    a[word if word in SCORES else "no"] += 1
                    kinds = probe_kinds.get(key, [])
                    if i < len(kinds):
                        a["kinds"][kinds[i]].append(SCORES.get(word, 0.0))
                if "readability" in v:
                    a["read"].append(float(v["readability"]))
                a["unsupported"] += [f"{key} {label}: {u}" for u in v.get("unsupported", [])]
    for (what, label), a in sorted(acc.items()):
        kinds = " ".join(f"{k} {sum(x) / len(x):.0%}" for k, x in sorted(a["kinds"].items()))
        read = sum(a["read"]) / len(a["read"]) if a["read"] else float("nan")
        print(f"{what:5s} {label:14s} {a['items']:3d} items  {a['yes']}/{a['partly']}/{a['no']}  "
              f"score {a['sum'] / max(1, a['n']):.0%}  readability {read:.1f}  "
              f"unsupported {len(a['unsupported'])} ({10 * len(a['unsupported']) / max(1, a['items']):.1f} per 10)  [{kinds}]")
    if args.list:
        for (_, _), a in sorted(acc.items()):
            for u in a["unsupported"]:
                print("  -", u)
    _ = tok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pk = sub.add_parser("pack")
    pk.add_argument("set")
    pk.add_argument("out")
    pk.add_argument("--runs", nargs="+", required=True)
    pk.add_argument("--ceiling")
    pk.add_argument("--groups", required=True)
    pk.add_argument("--seed", type=int, default=35)
    pk.add_argument("--chars", type=int, default=40000)
    pk.add_argument("--no-briefs", action="store_true", help="leaves only")
    sc = sub.add_parser("score")
    sc.add_argument("out")
    sc.add_argument("--set")
    sc.add_argument("--list", action="store_true")
    args = ap.parse_args()
    (pack if args.cmd == "pack" else score)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
