"""What a reader can answer from a summary: the probe lab (issue 19; needs a model, not in CI).

    .venv/bin/python lab/probe.py make --label NAME [--backend ollama|extractive]
        [--ollama-host URL] [--model NAME] [--summary-format FMT] [--condense] [--only FILE …]
    .venv/bin/python lab/probe.py sheet NAME            # each summary beside its probes, to read
    .venv/bin/python lab/probe.py score NAME [--baseline NAME]   # NAME@VERDICTS: other verdicts

``make`` imports every chat of the probe set (``lab/probes/*.json``; the real exports in
``../shared/samples`` are read where they are, never copied) into a scratch database with the
app's importers and makes the leaves the probe files name **through the app**: the app's
Runner, Executor and Summariser with the shipped defaults (or ``--summary-format``), each
session's leaves in order, so a leaf gets what the app would give it. ``--condense`` then
merges each chat's judged leaves into one condensed summary (one probe per source is judged
on it). Every summary, its tier, its calls (prompt tokens, tokens evaluated anew, answer
tokens, seconds) and its rejections go to ``lab/probes/runs/NAME.json``. The extractive
digest is ``--backend extractive``: the baseline every report shows.

``sheet`` prints each summary beside its four probes (fact, artifact, decision, what came
next) with the automatic pre-check (``[present]`` when the answer's key strings are all in the
text: a hint, not a verdict), the leaf's traps, and how much of it copies the previous leaf's
summary. The verdicts are made by reading and written to ``lab/probes/verdicts/NAME.json``:

    {"run": NAME, "judged_by": "...", "leaves": {"<file>#<first>-<last>":
        {"verdicts": ["yes: why", "partly: why", "no: why", "yes: why"],
         "unsupported": ["a statement the leaf contradicts or does not contain — why"]}},
     "condensed": {"<file>": {"verdicts": ["yes: …", …]}}}

``score`` counts them: yes 1, partly ½, no 0, per kind of probe and of chat, the statements
the source contradicts or lacks per 10 summaries, leaves made of the previous summary's
statements, and the process figures (calls per leaf, model seconds on discarded answers,
seconds per leaf ÷ one call's floor at the measured speed). ``--baseline`` (default: the run
named ``digest``) is printed beside it: a model must beat the app's own extractive digest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probeset import KINDS, PROBE_DIR, SAMPLES, Leaf, ProbeError, leaves_of, open_probe_store  # noqa: E402

from hiermem_tui.compaction import LeafChunk, Runner, RunEvent, SummaryStarted, SummaryWritten, make_runner  # noqa: E402
from hiermem_tui.config import SUMMARY_WAYS, Settings  # noqa: E402
from hiermem_tui.store import Store  # noqa: E402
from hiermem_tui.summarize import BackendUnavailable, ModelMissing, SummariserError  # noqa: E402
from hiermem_tui.summarize.acceptance import copied_statements, statements  # noqa: E402
from hiermem_tui.textsafe import one_line  # noqa: E402

RUNS = PROBE_DIR / "runs"
VERDICTS = PROBE_DIR / "verdicts"
SCORES = {"yes": 1.0, "partly": 0.5, "no": 0.0}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class ProbeRunner(Runner):
    """The app's Runner, planning exactly the probe file's leaves of a session (in order)."""

    chunks: dict[str, list[LeafChunk]]
    app_leaves = False
    """A session whose probe file names no leaves gets the leaves the app's planner cuts (``--app-leaves``)."""

    def plan_leaf(self, session_id: str) -> list[LeafChunk]:
        if self.app_leaves and session_id not in self.chunks:
            return super().plan_leaf(session_id)
        done = {(s.first_seq, s.last_seq) for s in self.store.dag.summaries(session_id)
                if s.depth == 0 and s.status == "active"}
        return [c for c in self.chunks.get(session_id, []) if (c.first_seq, c.last_seq) not in done]


class Calls:
    """Every model call of the summary being made (the backend's generate, wrapped)."""

    def __init__(self, runner: Runner) -> None:
        self.current: list[dict[str, Any]] = []
        self.by_summary: dict[str, list[dict[str, Any]]] = {}
        backend = runner.summariser.backend
        inner = backend.generate

        async def generate(system: str, prompt: str, **kwargs: Any) -> Any:
            gen = await inner(system, prompt, **kwargs)
            self.current.append({"seconds": round(gen.seconds, 2), "prompt_tokens": gen.prompt_tokens,
                                 "prompt_eval": gen.prompt_eval_count, "fresh": gen.fresh_prompt_tokens,
                                 "eval": gen.eval_count, "done": gen.done_reason,
                                 "format": "format" in kwargs and kwargs["format"] is not None})
            return gen

        if backend.name != "extractive":
            backend.generate = generate  # type: ignore[method-assign]

    def __call__(self, ev: RunEvent) -> None:
        if isinstance(ev, SummaryStarted):
            self.current = []
            log(f"  {ev.session_id[:28]} {ev.what}")
        elif isinstance(ev, SummaryWritten):
            self.by_summary[ev.summary.id] = self.current
            s = ev.summary
            log(f"    → {s.tier}, {s.tokens} tokens from {s.source_tokens}, {len(self.current)} call(s), "
                f"{s.llm_seconds:.0f} s model" + (f", rejected {[r.get('reason') for r in s.rejections]}"
                                                   if s.rejections else ""))


def summary_row(s: Any, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": s.id, "text": s.content, "tier": s.tier, "backend": s.backend, "model": s.model,
            "prompt_version": s.prompt_version, "tokens": s.tokens, "source_tokens": s.source_tokens,
            "llm_seconds": round(s.llm_seconds, 2), "trimmed": s.trimmed, "rejections": list(s.rejections),
            "keywords": list(s.keywords), "key": [s.fidelity.key_kept, s.fidelity.key] if s.fidelity else [None, None], "calls": calls}


async def make(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store, usable = open_probe_store(Path(tmp) / "probes.db", args.probes, args.samples, args.only)
        try:
            return await _make(store, usable, args)
        finally:
            store.close()


async def _make(store: Store, usable: list[tuple[str, dict[str, Any], str]], args: argparse.Namespace) -> dict[str, Any]:
    leaves = leaves_of(store, usable, with_sources=False)
    settings = Settings(db_path=store.path, backend=args.backend, ollama_host=args.ollama_host or Settings().ollama_host,
                        model=args.model, summary_format=args.summary_format or Settings().summary_format,
                        timeout_s=args.timeout_s, summary_way=args.summary_way or Settings().summary_way)
    base = make_runner(store, settings)
    runner = ProbeRunner(store, base.summariser, base.policy)
    runner.chunks = {}
    runner.app_leaves = args.app_leaves
    for leaf in leaves:
        tokens = sum(e.tokens for e in store.episodes.range(leaf.session_id, leaf.first_seq, leaf.last_seq))
        runner.chunks.setdefault(leaf.session_id, []).append(LeafChunk(leaf.first_seq, leaf.last_seq, tokens))
    calls = Calls(runner)
    runner.on_event = calls
    started = time.monotonic()
    out: dict[str, Any] = {"label": args.label, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "backend": args.backend, "summary_format": settings.summary_format,
                           "summary_way": settings.summary_way,
                           "leaves": [], "condensed": []}
    try:
        await runner.check()
        out["model"] = runner.summariser.backend.model
        for name, data, sid in usable:
            log(f"{name} ({sid})")
            run = None if args.briefs_only else await runner.compact(sid, "leaf", skip_idle=True)
            if run is not None and run.status != "done":
                raise SummariserError(f"the run on {sid} ended {run.status}: {run.error}")
            if args.condense and len(runner.chunks.get(sid, [])) >= 2:
                n = len(runner.chunks[sid])
                runner.planner.policy = replace(runner.policy, condense_fanout=n)
                await runner.compact(sid, "condense", skip_idle=True)
                runner.planner.policy = runner.policy
            if args.brief or args.briefs_only:
                passes = runner.passes

                async def body(st: Any, passes: Any = passes) -> None:
                    await passes.brief(st)

                await runner.executor.execute(sid, "full", None, 0, body)
    finally:
        await runner.summariser.backend.aclose()
    out["wall_seconds"] = round(time.monotonic() - started, 1)
    if args.backend != "extractive":
        sp = store.speeds.get("ollama", out.get("model"), getattr(runner.summariser.backend, "host", None))
        out["speed"] = {"prompt_tps": round(sp.prompt_tps, 1), "output_tps": round(sp.output_tps, 1),
                        "calls": sp.calls, "measured": sp.measured}
    for leaf in leaves:
        rows = {(s.first_seq, s.last_seq, s.depth): s for s in store.dag.summaries(leaf.session_id)
                if s.status == "active"}
        s = rows.get((leaf.first_seq, leaf.last_seq, 0))
        if s is None:
            continue
        out["leaves"].append({"leaf": leaf.key, "file": leaf.file, "kind": leaf.kind, "session": leaf.session_id,
                              "first_seq": leaf.first_seq, "last_seq": leaf.last_seq,
                              **summary_row(s, calls.by_summary.get(s.id, []))})
    out["briefs"] = []
    for name, data, sid in usable:
        brief = store.briefs.active(sid)
        if brief is not None:
            out["briefs"].append({"file": name, "session": sid, "text": brief.text, "title": brief.title,
                                  "about": brief.about, "tier": brief.tier, "backend": brief.backend,
                                  "model": brief.model, "tokens": brief.tokens, "llm_seconds": round(brief.llm_seconds, 2),
                                  "first_seq": brief.first_seq, "last_seq": brief.last_seq})
    for name, data, sid in usable:
        for s in store.dag.summaries(sid):
            if s.depth > 0 and s.status == "active":
                sources = [f"{name}#{c.first_seq}-{c.last_seq}" for c in store.dag.children(s.id)]
                out["condensed"].append({"file": name, "sources": sources, "first_seq": s.first_seq,
                                         "last_seq": s.last_seq, **summary_row(s, calls.by_summary.get(s.id, []))})
    return out


# ---------------------------------------------------------------------------------------- reading
def copied_from(text: str, prior: str | None) -> tuple[int, int]:
    """(statements of ``text`` that near-copy one of ``prior``, statements of ``text``): the app's own
    copy check (``acceptance.copied_statements``), applied whether or not the prompt showed ``prior``."""
    if not prior:
        return 0, len(statements(text))
    return copied_statements(text, prior)


def load_run(name: str) -> dict[str, Any]:
    path = Path(name) if name.endswith(".json") else RUNS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def probe_leaves(args: argparse.Namespace) -> dict[str, Leaf]:
    with tempfile.TemporaryDirectory() as tmp:
        store, usable = open_probe_store(Path(tmp) / "p.db", args.probes, args.samples, None)
        try:
            return {leaf.key: leaf for leaf in leaves_of(store, usable, with_sources=False)}
        finally:
            store.close()


def previous(run: dict[str, Any]) -> dict[str, str | None]:
    """Each leaf's previous leaf's text in the same run and chat (None for a chat's first)."""
    out: dict[str, str | None] = {}
    last: dict[str, tuple[int, str]] = {}
    for row in sorted(run["leaves"], key=lambda r: (r["file"], r["first_seq"])):
        prev = last.get(row["file"])
        out[row["leaf"]] = prev[1] if prev is not None and prev[0] == row["first_seq"] - 1 else None
        last[row["file"]] = (row["last_seq"], row["text"])
    return out


def sheet(args: argparse.Namespace) -> None:
    run = load_run(args.name)
    leaves = probe_leaves(args)
    prior = previous(run)
    print(f"# {run['label']}: {run.get('model') or run['backend']} ({run.get('summary_format')}), {run['date']}\n")
    for row in run["leaves"]:
        if args.leaf and not any(k in row["leaf"] for k in args.leaf):
            continue
        leaf = leaves.get(row["leaf"])
        n, of = copied_from(row["text"], prior.get(row["leaf"]))
        print(f"## {row['leaf']} ({row['kind']}) — {row['tier']}, {row['tokens']} tokens from {row['source_tokens']}, "
              f"{len(row['calls'])} call(s), {row['llm_seconds']} s; {n}/{of} statements copy the previous leaf's\n")
        print(row["text"].rstrip() + "\n")
        if leaf is None:
            print("(no probes: the probe file changed)\n")
            continue
        for i, p in enumerate(leaf.probes, 1):
            mark = "[present]" if p.present(row["text"]) else "[ ]"
            print(f"{i}. {mark} ({p.kind}) {p.question}\n   answer: {p.answer}")
        for t in leaf.traps:
            print(f"   trap: {t}")
        print()
    for row in run.get("condensed", []):
        print(f"## condensed {row['file']} #{row['first_seq']}-{row['last_seq']} — {row['tier']}, {row['tokens']} "
              f"tokens from {row['source_tokens']}\n")
        print(row["text"].rstrip() + "\n")
        for key in row["sources"]:
            leaf = leaves.get(key)
            if leaf is None:
                continue
            p = pick_condensed(leaf)
            mark = "[present]" if p.present(row["text"]) else "[ ]"
            print(f"- {key}: {mark} ({p.kind}) {p.question}\n   answer: {p.answer}")
        print()


def pick_condensed(leaf: Leaf) -> Any:
    """The probe a condensed summary is judged on for this source: the one marked, else the decision."""
    marked = [p for p in leaf.probes if p.condensed]
    if marked:
        return marked[0]
    return next((p for p in leaf.probes if p.kind == "decision"), leaf.probes[0])


# ---------------------------------------------------------------------------------------- scoring
def verdict_of(text: str) -> str:
    word = text.split(":", 1)[0].strip().lower()
    if word not in SCORES:
        raise ProbeError(f"a verdict must start with yes, partly or no: {text!r}")
    return word


def figures(run: dict[str, Any], verdicts: dict[str, Any] | None) -> dict[str, Any]:
    leaves = run["leaves"]
    prior = previous(run)
    out: dict[str, Any] = {"label": run["label"], "leaves": len(leaves)}
    copies = [copied_from(r["text"], prior.get(r["leaf"])) for r in leaves]
    out["made_of_previous"] = sum(1 for n, of in copies if of and n * 2 >= of and n >= 2)
    out["copied_statements"] = sum(n for n, _ in copies)
    calls = [c for r in leaves for c in r["calls"]]
    out["calls_per_leaf"] = round(len(calls) / len(leaves), 2) if leaves and calls else None
    model_s = sum(c["seconds"] for c in calls)
    discarded = sum(float(x.get("seconds", 0)) for r in leaves for x in r["rejections"])
    out["model_seconds"] = round(model_s, 1)
    out["discarded_share"] = round(discarded / model_s, 3) if model_s else None
    out["tiers"] = {t: sum(1 for r in leaves if r["tier"] == t) for t in ("normal", "aggressive", "fallback")}
    out["tokens_mean"] = round(sum(r["tokens"] for r in leaves) / len(leaves)) if leaves else 0
    speed = run.get("speed")
    if speed and speed.get("prompt_tps") and calls:
        ratios = []
        for r in leaves:
            if not r["calls"]:
                continue
            target = min(1200, max(24, r["source_tokens"] // 4))
            floor = r["calls"][0]["prompt_tokens"] / speed["prompt_tps"] + target / speed["output_tps"]
            ratios.append(sum(c["seconds"] for c in r["calls"]) / floor)
        ratios.sort()
        out["floor_ratio"] = {"median": round(ratios[len(ratios) // 2], 2), "max": round(ratios[-1], 2),
                              "mean": round(sum(ratios) / len(ratios), 2)}
    if verdicts is None:
        return out
    by_kind: dict[str, list[float]] = {k: [] for k in KINDS}
    by_chat: dict[str, list[float]] = {}
    counts = {"yes": 0, "partly": 0, "no": 0}
    unsupported: list[str] = []
    judged = 0
    for r in leaves:
        v = verdicts["leaves"].get(r["leaf"])
        if v is None:
            continue
        judged += 1
        for kind, text in zip(KINDS, v["verdicts"]):
            word = verdict_of(text)
            counts[word] += 1
            by_kind[kind].append(SCORES[word])
            by_chat.setdefault(r["kind"], []).append(SCORES[word])
        unsupported += [f"{r['leaf']}: {u}" for u in v.get("unsupported", [])]
    every = [x for xs in by_kind.values() for x in xs]
    out["judged"] = judged
    out["counts"] = counts
    out["score"] = round(sum(every) / len(every), 3) if every else None
    out["by_kind"] = {k: round(sum(v) / len(v), 2) for k, v in by_kind.items() if v}
    out["by_chat"] = {k: round(sum(v) / len(v), 2) for k, v in sorted(by_chat.items())}
    out["unsupported"] = unsupported
    out["unsupported_per_10"] = round(10 * len(unsupported) / judged, 2) if judged else None
    cond = verdicts.get("condensed") or {}
    cv = [SCORES[verdict_of(t)] for row in run.get("condensed", []) for t in cond.get(row["file"], {}).get("verdicts", [])]
    if cv:
        out["condensed_score"] = round(sum(cv) / len(cv), 3)
        out["condensed_probes"] = len(cv)
    return out


def load_verdicts(name: str) -> dict[str, Any] | None:
    path = VERDICTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def score(args: argparse.Namespace) -> None:
    rows = []
    for name in [args.name] + ([args.baseline] if args.baseline and args.baseline != args.name else []):
        run_name, _, judged_as = name.partition("@")  # RUN@VERDICTS: a run judged by another reader
        rows.append(figures(load_run(run_name), load_verdicts(judged_as or run_name)))
    head = "| run | leaves | yes | partly | no | score | fact | artifact | decision | next | unsupported /10 | made of previous | calls/leaf | discarded | ÷ floor (median, max) |"
    print(head)
    print("|" + "---|" * head.count("|")[:-1] if False else "|" + "---|" * (head.count("|") - 1))
    for f in rows:
        c = f.get("counts", {})
        k = f.get("by_kind", {})
        fl = f.get("floor_ratio") or {}
        print(f"| {f['label']} | {f['leaves']} | {c.get('yes', '–')} | {c.get('partly', '–')} | {c.get('no', '–')} | "
              f"{_pct(f.get('score'))} | {_pct(k.get('fact'))} | {_pct(k.get('artifact'))} | {_pct(k.get('decision'))} | "
              f"{_pct(k.get('next'))} | {f.get('unsupported_per_10', '–')} | {f['made_of_previous']} | "
              f"{f.get('calls_per_leaf') or '–'} | {_pct(f.get('discarded_share'))} | "
              f"{fl.get('median', '–')}, {fl.get('max', '–')} |")
    for f in rows:
        if f.get("by_chat"):
            print(f"\n{f['label']}: by chat " + ", ".join(f"{k} {_pct(v)}" for k, v in f["by_chat"].items())
                  + f"; tiers {f['tiers']}; mean {f['tokens_mean']} tokens"
                  + (f"; condensed {_pct(f['condensed_score'])} of {f['condensed_probes']}" if "condensed_score" in f else ""))
        for u in f.get("unsupported", []):
            print(f"  unsupported: {one_line(u, 160)}")
    if args.json:
        print(json.dumps(rows, indent=1))


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.0%}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probes", type=Path, default=PROBE_DIR)
    ap.add_argument("--samples", type=Path, default=SAMPLES)
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="make the summaries through the app")
    mk.add_argument("--label", required=True)
    mk.add_argument("--backend", choices=["ollama", "extractive"], default="ollama")
    mk.add_argument("--ollama-host")
    mk.add_argument("--model")
    mk.add_argument("--summary-format", help="the app's summary_format setting (default: the app's)")
    mk.add_argument("--summary-way", choices=SUMMARY_WAYS, help="the app's summary_way setting (default: the app's)")
    mk.add_argument("--condense", action="store_true", help="also one condensed summary over each chat's leaves")
    mk.add_argument("--brief", action="store_true", help="also each chat's brief, after its leaves")
    mk.add_argument("--app-leaves", action="store_true",
                    help="a chat whose probe file names no leaves gets the app's own (for session probes alone)")
    mk.add_argument("--briefs-only", action="store_true", help="each chat's brief and no leaves (a brief reads the raw chat)")
    mk.add_argument("--only", nargs="*", help="probe files to use (default: all)")
    mk.add_argument("--timeout-s", type=float, default=Settings().timeout_s)
    mk.add_argument("--force", action="store_true", help="replace a run of that name")
    sh = sub.add_parser("sheet", help="each summary beside its probes")
    sh.add_argument("name")
    sh.add_argument("--leaf", nargs="*", help="only leaves whose key contains one of these")
    sc = sub.add_parser("score", help="count the verdicts")
    sc.add_argument("name")
    sc.add_argument("--baseline", default="digest")
    sc.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "make":
            if args.backend == "ollama" and not args.ollama_host:
                print("skipped: no --ollama-host given (the probe lab needs a real model; see lab/README.md)")
                return 0
            out_path = RUNS / f"{args.label}.json"
            if out_path.exists() and not args.force:
                raise ProbeError(f"{out_path} exists (--force replaces it)")
            out = asyncio.run(make(args))
            RUNS.mkdir(parents=True, exist_ok=True)
            out_path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            log(f"wrote {out_path} ({len(out['leaves'])} leaves, {len(out['condensed'])} condensed) in "
                f"{out['wall_seconds'] / 60:.1f} min")
        elif args.cmd == "sheet":
            sheet(args)
        else:
            score(args)
    except (ProbeError, OSError, json.JSONDecodeError) as exc:
        log(f"probe: {one_line(str(exc), 200)}")
        return 2
    except (BackendUnavailable, ModelMissing, SummariserError) as exc:
        log(f"probe: {one_line(str(exc), 200)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
