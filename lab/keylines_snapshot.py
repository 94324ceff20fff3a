"""Key lines of every chat this checkout can read, written to one JSON file, to prove a reshaping of the
key-lines code keeps its output byte for byte (issue 35, step 1).

    .venv/bin/python lab/keylines_snapshot.py OUT.json          # write
    .venv/bin/python lab/keylines_snapshot.py OUT.json --check  # compare with OUT.json, print the differences

Chats: the shared samples (ChatGPT and Claude Code), the probe set's own chats, the demo, and the tests'
fixtures of every format. Each session is planned as the app plans it with no fresh tail, and for each leaf
the key lines are taken at several budgets (the title's, the leaf's target, a third of it, with and without
lines kept from a smaller budget), its extractive digest, and the key lines of every run of four leaves'
digests as a condensed summary's sources.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiermem_tui.compaction import make_runner  # noqa: E402
from hiermem_tui.compaction.requests import leaf_request  # noqa: E402
from hiermem_tui.config import Policy, Settings  # noqa: E402
from hiermem_tui.importers import import_paths  # noqa: E402
from hiermem_tui.store import Store  # noqa: E402
from hiermem_tui.summarize import keylines as quotes  # noqa: E402
from hiermem_tui.summarize.extractive import extractive_digest  # noqa: E402
from hiermem_tui.summarize.prompts import leaf_lines_budget  # noqa: E402
from hiermem_tui.summarize.summariser import targets_for  # noqa: E402
from hiermem_tui.summarize.types import SourceItem, SummaryRequest  # noqa: E402
from hiermem_tui.tokens import Tokenizer  # noqa: E402

SAMPLES = ROOT.parent / "shared" / "samples"


def sources_of_chats() -> list[Path]:
    paths = [SAMPLES / "chatgpt_conversations.json", SAMPLES / "claude-code"]
    paths += sorted((ROOT / "lab" / "probes" / "chats").glob("*"))
    paths += sorted((ROOT / "lab" / "probes" / "chats").glob("*")) if (ROOT / "lab" / "probes" / "chats").exists() else []
    paths += [ROOT / "hiermem_tui" / "assets" / "demo" / "demo.jsonl"]
    for d in sorted((ROOT / "tests" / "fixtures").iterdir()):
        paths += [p for p in sorted(d.rglob("*")) if p.is_file() and not p.name.startswith(("broken", "malformed", "make_"))]
    return [p for p in paths if p.exists()]


def snapshot() -> dict[str, str]:
    tok = Tokenizer()
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "snap.db")
        for p in sources_of_chats():
            try:
                import_paths(store, [p], "auto", parallel=False)
            except Exception as exc:  # a fixture the auto-detection refuses is left out
                print(f"left out {p.name}: {exc}", file=sys.stderr)
        runner = make_runner(store, Settings(db_path=store.path, backend="extractive", model=None,
                                             policy=Policy(fresh_tail=0, leaf_min_episodes=1)))
        for s in sorted(store.sessions.each(), key=lambda s: s.id):
            digests: list[SourceItem] = []
            for chunk in runner.plan_leaf(s.id):
                req = leaf_request(store, s.id, chunk.first_seq, chunk.last_seq, 1200)
                if not req.sources:
                    continue
                t = targets_for(req)
                key = f"{s.id}#{chunk.first_seq}-{chunk.last_seq}"
                small = quotes.key_lines(req.sources, leaf_lines_budget(t.normal), tok)
                out[key + "@title"] = small
                out[key + "@target"] = quotes.key_lines(req.sources, t.normal, tok)
                out[key + "@kept"] = quotes.key_lines(req.sources, t.normal - 15, tok, keep=small)
                out[key + "@third"] = quotes.key_lines(req.sources, max(20, t.normal // 3), tok)
                digest = extractive_digest(SummaryRequest(0, req.sources, t.normal), tok)
                out[key + "@digest"] = digest
                first, last = req.sources[0], req.sources[-1]
                digests.append(SourceItem("summary", digest, tok.count(digest), first.start_at, last.end_at, depth=0,
                                          label=key))
            for i in range(0, max(0, len(digests) - 1), 2):
                group = digests[i:i + 4]
                total = sum(g.tokens for g in group)
                out[f"{s.id}#condensed{i}"] = quotes.key_lines(group, max(60, total * 2 // 3), tok)
                out[f"{s.id}#condensed{i}@digest"] = extractive_digest(SummaryRequest(1, group, max(60, total // 2)), tok)
        store.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    snap = snapshot()
    digest = hashlib.sha256(json.dumps(snap, sort_keys=True).encode()).hexdigest()[:16]
    if not args.check:
        args.out.write_text(json.dumps(snap, indent=1, sort_keys=True, ensure_ascii=False), encoding="utf-8")
        print(f"{len(snap)} outputs, sha {digest}")
        return 0
    old = json.loads(args.out.read_text(encoding="utf-8"))
    differ = [k for k in sorted(set(old) | set(snap)) if old.get(k) != snap.get(k)]
    for k in differ[:20]:
        print(f"DIFF {k}\n--- before\n{old.get(k)}\n--- after\n{snap.get(k)}\n")
    print(f"{len(snap)} outputs, {len(differ)} differ, sha {digest}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
