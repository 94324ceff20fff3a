"""A capable model's written briefs, stood in for by a careful writer: the upper bound of the writes way.

The app asks a model whose way is ``writes`` for the whole brief (``summarize/brief_writes.py``). No model on the
rig earns that way, so a careful writer answers the app's exact brief prompts instead, and the app judges the
answers as it would a model's. Two steps, each through ``probe.py make --summary-way writes --brief --app-leaves``
against the test suite's fake Ollama server (a loopback server speaking the real protocol):

    .venv/bin/python lab/standin.py record lab/probes/heldout8 OUT
        every call is answered with nothing, so each leaf falls back to its digest and each brief is refused: the
        brief prompts (what a writing model would read: the digests at the brief's level and the quoted brief) are
        written to OUT/<sha>.prompt.txt with OUT/index.json (sha → session);
    (the writer answers each prompt in OUT/<sha>.answer.txt, blind to the probes)
    .venv/bin/python lab/standin.py replay lab/probes/heldout8 OUT --label h8-standin
        the same calls again — the leaves fall back alike, so the brief prompts are the same — each brief prompt
        answered from OUT: the run (briefs kept or refused by the app's checks) in probes/runs/LABEL.json.

Leaves here are digests, not a writing model's own summaries: the prompts carry less than a capable model's run
would give it. Labelled so wherever its figures are shown.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hiermem_tui.summarize.brief_writes import ASK  # noqa: E402
from tests.fakeollama import FakeOllama  # noqa: E402

import probe  # noqa: E402

MODEL = "llama3.2"


def _prompt(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return str(messages[-1].get("content", ""))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run(set_dir: Path, out: Path, label: str, answers: dict[str, str] | None) -> dict[str, Any]:
    seen: dict[str, str] = {}

    def responder(body: dict[str, Any]) -> str:
        text = _prompt(body)
        if ASK not in text:
            return ""
        sha = _sha(text)
        seen[sha] = text
        return (answers or {}).get(sha, "")

    with FakeOllama(models=(f"{MODEL}:latest",), responder=responder) as fake:
        args = argparse.Namespace(probes=set_dir, samples=probe.SAMPLES, label=label, backend="ollama",
                                  ollama_host=fake.url, model=MODEL, summary_format=None, summary_way="writes",
                                  condense=False, brief=True, app_leaves=True, briefs_only=False, only=None,
                                  timeout_s=60.0, force=True)
        made = asyncio.run(probe.make(args))
    if answers is None:
        out.mkdir(parents=True, exist_ok=True)
        index = {}
        for sha, text in seen.items():
            (out / f"{sha}.prompt.txt").write_text(text, encoding="utf-8")
            session = next((b["session"] for b in made["briefs"] if b["text"].split("\n")[0][:60] in text), "")
            index[sha] = session
        (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        print(f"{len(seen)} brief prompts in {out}")
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("set", type=Path)
    rec.add_argument("out", type=Path)
    rep = sub.add_parser("replay")
    rep.add_argument("set", type=Path)
    rep.add_argument("out", type=Path)
    rep.add_argument("--label", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "record":
        run(args.set, args.out, "standin-record", None)
        return 0
    answers = {p.name.split(".")[0]: p.read_text(encoding="utf-8") for p in args.out.glob("*.answer.txt")}
    made = run(args.set, args.out, args.label, answers)
    path = probe.RUNS / f"{args.label}.json"
    path.write_text(json.dumps(made, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    kept = sum(b["tier"] == "normal" for b in made["briefs"])
    print(f"wrote {path}: {kept} of {len(made['briefs'])} written briefs kept")
    for b in made["briefs"]:
        print(f"  {b['file']}: {b['tier']} {b['tokens']} tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
