"""A stored probe run with the app's no-user rule applied after the fact (issue 19; no model needed).

    .venv/bin/python bench/probe_refilter.py notes-v1 notes-v1f

Each line of a notes summary is one part's note, in order: the leaf's parts are cut again
(``notes.parts_for``) and, in a part where no user says anything, the sentences whose subject is
the user are dropped (``notes.unheard``), as the summariser now does to every note. The model's
answers are the run's own, so the difference is the rule's alone; the dropped sentences are
printed to be read against their parts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probeset import PROBE_DIR, load_leaves  # noqa: E402

from hiermem_tui.summarize import notes, titles  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: probe_refilter.py RUN NEW_LABEL", file=sys.stderr)
        return 2
    runs = PROBE_DIR / "runs"
    data = json.loads((runs / f"{argv[0]}.json").read_text(encoding="utf-8"))
    leaves = {leaf.key: leaf for leaf in load_leaves()}
    data["label"] = argv[1]
    dropped = 0
    for row in data["leaves"]:
        lines = row["text"].split("\n") if row["text"].startswith("- ") else [row["text"]]
        parts = notes.parts_for(leaves[row["leaf"]].sources, 0)
        if len(parts) != len(lines):
            print(f"{row['leaf']}: {len(lines)} lines for {len(parts)} parts, left as it is", file=sys.stderr)
            continue
        kept = []
        for part, line in zip(parts, lines):
            note = line.removeprefix("- ")
            after = titles.unheard(part, note)
            if after != note:
                dropped += 1
                print(f"{row['leaf']} part {part.index}: {note}\n    -> {after}\n")
            if after:
                kept.append(after)
        row["text"] = notes.join(kept)
    (runs / f"{argv[1]}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{dropped} notes changed; wrote {runs / (argv[1] + '.json')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
