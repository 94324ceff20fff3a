"""The app's summaries made by a REAL small model, on real long chats with code (not in CI).

    .venv/bin/python bench/bench_real_model.py --ollama-host http://127.0.0.1:11500 \\
        --model qwen2.5-coder:1.5b-instruct-q4_K_M [--sessions PREFIX ...] [--limit-leaves N] \\
        [--budget-minutes M] [--pass leaf|full] [--summary-format plain|sections] [--samples DIR] \\
        [--json-out FILE] [--keep-db FILE]

Without ``--ollama-host`` it prints one "skipped: …" line and exits 0 (``run_all.py`` runs it
that way). With a server, it imports every chat export in ``--samples`` (default
``../shared/samples`` next to the repo; read at run time, never copied) into a temporary
database with the app's own importers, then runs the app's own Runner (``make_runner`` with
the ``ollama`` backend and the shipped default policy and prompts) over the chosen sessions:
leaves in rounds, one more per session each round, oldest chunks first, until each session has
``--limit-leaves`` or ``--budget-minutes`` have gone by (a CPU model takes tens of seconds to
many minutes per call: these bound the run, and the rounds share a budget fairly between
sessions); each leaf is one run of the app's Runner, with the previous leaf as its context
exactly as in a whole pass. ``--pass full`` condenses after.

Measured per session and in total (definitions in ``_real_model_stats.py``): summaries per
tier, compression, the model's own identifier retention (pooled and median; the stored text is
the model's, lost names are keywords beside it), key-name retention and the summaries the lists
flag (each printed with what it lost, to judge the flag's precision by hand), answers clipped,
answers over target, rejected attempts by reason (``runs.rejections``), model seconds spent on
discarded answers ÷ all model seconds, the share of each retry's prompt the server evaluated
anew (its prompt cache), model seconds per leaf ÷ one call's floor at the measured speeds,
timeouts, and the model's measured speed (``model_speed``). The baseline, measured in the same
run on the same requests, is the extractive digest (the app's fallback tier). Every rejected
attempt is written to the JSON with the answer it judged, so a rule that misfires can be read.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model_stats import TABLE_HEAD, Call, Record, aggregate, pick_quotes, render_table, table_row  # noqa: E402

from hiermem_tui.compaction import (  # noqa: E402
    Runner, RunEvent, SummaryAttempt, SummaryStarted, SummaryWritten, make_runner,
)
from hiermem_tui.config import SUMMARY_FORMATS, Settings  # noqa: E402
from hiermem_tui.importers import FormatError, detect, import_paths  # noqa: E402
from hiermem_tui.store import Run, Store, StoreError, Summary  # noqa: E402
from hiermem_tui.summarize import (  # noqa: E402
    Answered,
    BackendUnavailable, ExtractiveBackend, ModelMissing, Summariser, SummariserError, SummaryRequest,
)
from hiermem_tui.textsafe import one_line, visible  # noqa: E402

SKIPPED = "skipped: no --ollama-host given (this benchmark needs a real model; see bench/README.md)"
DEFAULT_SAMPLES = ROOT.parent / "shared" / "samples"
DEFAULT_SESSIONS = ("chatgpt:687ec129", "claude-code:e80aa543", "claude-code:6dc88126")


class BenchError(Exception):
    """Bad input for the benchmark: one line on stderr, exit 2."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class FirstLeaves(Runner):
    """The app's Runner, planning only the first ``limit`` leaf chunks of each session: a
    contiguous start, so every leaf still gets the previous leaf as context, as in a full pass."""

    def __init__(self, *args: Any, limit: int | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit = limit

    def plan_leaf(self, session_id: str):  # type: ignore[no-untyped-def]
        chunks = super().plan_leaf(session_id)
        return chunks if self.limit is None else chunks[: self.limit]


class Tap:
    """Records what the app's summariser was asked and answered, without changing it: the
    summariser's ``summarise`` and its backend's ``generate`` are wrapped on the instances
    (the runner and the summariser look them up per call), so the result before the store
    (its fidelity, every rejection, every call) and each raw model answer can be reported."""

    def __init__(self, summariser: Summariser) -> None:
        self.made: list[tuple[SummaryRequest, Any, list[Call]]] = []
        self._calls: list[Call] = []
        inner_answer, inner_generate = summariser.answer, summariser.backend.generate

        async def answer(request: SummaryRequest, *, on_event: Any = None) -> Answered:
            self._calls = calls = []
            got = await inner_answer(request, on_event=on_event)

            def finish(req: SummaryRequest) -> Any:
                result = got.finish(req)
                self.made.append((request, result, calls))
                return result

            return Answered(got.request, finish)

        async def generate(system: str, prompt: str, **kwargs: Any) -> Any:
            began = time.monotonic()
            try:
                gen = await inner_generate(system, prompt, **kwargs)
            except BackendUnavailable as exc:
                self._calls.append(Call(None, seconds=time.monotonic() - began, error=str(exc), reachable=False))
                raise
            except SummariserError as exc:
                self._calls.append(Call(None, seconds=time.monotonic() - began, error=str(exc)))
                raise
            self._calls.append(Call(gen.text, gen.done_reason, gen.eval_count, gen.prompt_eval_count, gen.seconds,
                                    prompt_tokens=gen.prompt_tokens, fresh_prompt_tokens=gen.fresh_prompt_tokens,
                                    thinking_tokens=gen.thinking_tokens))
            return gen

        summariser.answer = answer  # type: ignore[method-assign]
        summariser.backend.generate = generate  # type: ignore[method-assign]

    def take(self, stored: Summary) -> tuple[SummaryRequest, Any, list[Call]]:
        """The recorded summarise() call whose text is the stored summary's."""
        for i, (_, result, _) in enumerate(self.made):
            if result.text == stored.content:
                return self.made.pop(i)
        raise RuntimeError(f"no recorded result for summary {stored.id}")


class Progress:
    """Run events as lines on stderr: what is being made, each attempt, what came of it."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()

    def __call__(self, ev: RunEvent) -> None:
        clock = f"[{(time.monotonic() - self.started) / 60:5.1f} min]"
        if isinstance(ev, SummaryStarted):
            log(f"{clock} {ev.session_id[:24]} {ev.what} ({self.done + 1}/{self.total} leaves planned)")
        elif isinstance(ev, SummaryAttempt):
            log(f"{clock}   call {ev.attempt}: {ev.tier}" + (f" (server unreachable: {ev.message})" if ev.retry else ""))
        elif isinstance(ev, SummaryWritten):
            s = ev.summary
            self.done += s.depth == 0
            fid = s.fidelity
            kept = f"kept {fid.kept}/{fid.identifiers}" if fid and fid.identifiers else "no identifiers"
            why = Counter(r.get("reason", "?") for r in s.rejections)
            log(f"{clock}   → {s.tier}, {s.tokens} tokens from {s.source_tokens} ({kept}, key "
                f"{fid.key_kept if fid else None}/{fid.key if fid else None}), {s.llm_seconds:.0f} s model" + (f", {s.trimmed}" if s.trimmed else "")
                + (f"; rejected: {dict(why)}" if why else ""))


def import_samples(store: Store, samples: Path) -> None:
    """Every chat export directly in ``samples`` the app recognises (README, LICENSE are not)."""
    if not samples.is_dir():
        raise BenchError(f"--samples {samples} is not a directory")
    paths = []
    for path in sorted(samples.iterdir()):
        try:
            detect(path)
        except (FormatError, OSError):
            continue
        paths.append(path)
    if not paths:
        raise BenchError(f"no chat export the app can import in {samples}")
    report = import_paths(store, paths)
    log(f"imported {report.sessions_created} sessions, {report.episodes_appended} episodes from {samples}")


def resolve_sessions(store: Store, prefixes: Sequence[str]) -> list[str]:
    ids = [s[0] for s in store.db.conn.execute("SELECT id FROM sessions ORDER BY id")]
    out = []
    for p in prefixes:
        found = [i for i in ids if i.startswith(p)]
        if len(found) != 1:
            raise BenchError(f"--sessions {p!r} matches {len(found)} imported sessions (need exactly one)")
        out.append(found[0])
    return out


async def run(store: Store, args: argparse.Namespace, sids: list[str]) -> tuple[list[Record], dict[str, Any]]:
    """Leaves in rounds (one more leaf per session each round, oldest chunks first) until
    ``--limit-leaves`` or ``--budget-minutes`` says stop; then condensation for a full pass."""
    settings = Settings(db_path=store.path, ollama_host=args.ollama_host, model=args.model, backend="ollama",
                        timeout_s=args.timeout_s, summary_format=args.summary_format)
    base = make_runner(store, settings)
    tap = Tap(base.summariser)
    planned = sum(len(base.plan_leaf(sid)[: args.limit_leaves]) for sid in sids)
    progress = Progress(planned)
    runner = FirstLeaves(store, base.summariser, base.policy, limit=1, on_event=progress)
    extractive = Summariser(ExtractiveBackend(store.tokenizer), store.tokenizer)
    runs: dict[str, list[Run]] = {sid: [] for sid in sids}
    deadline = time.monotonic() + args.budget_minutes * 60 if args.budget_minutes else None
    stopped = None
    try:
        await runner.check()
        log(f"model {runner.summariser.backend.model} at {settings.ollama_host}: {planned} leaves planned "
            f"over {len(sids)} sessions ({args.pass_} pass)")
        for _ in range(args.limit_leaves or sys.maxsize):
            made = 0
            for sid in sids:
                if deadline is not None and time.monotonic() > deadline:
                    stopped = f"the {args.budget_minutes:g}-minute budget was spent"
                    break
                run_row = await runner.compact(sid, "leaf", skip_idle=True)
                if run_row is not None:
                    runs[sid].append(run_row)
                    made += run_row.summaries_created
                    if run_row.status != "done":
                        stopped = f"the run on {sid} ended {run_row.status}: {run_row.error}"
                        break
            if stopped or not made:
                break
        if args.pass_ == "full":
            for sid in sids:
                run_row = await runner.compact(sid, "condense", skip_idle=True)
                if run_row is not None:
                    runs[sid].append(run_row)
    finally:
        await runner.summariser.backend.aclose()
    if stopped:
        log(f"stopped early: {stopped}")
    records = []
    for sid in sids:
        ids = {r.id for r in runs[sid]}
        for s in sorted((x for x in store.dag.summaries(sid) if x.run_id in ids), key=lambda x: (x.depth, x.first_seq)):
            request, result, calls = tap.take(s)
            records.append(Record(sid, request, result, s, calls, await extractive.summarise(request)))
    speed = store.speeds.get("ollama", runner.summariser.backend.model, getattr(runner.summariser.backend, "host", None))
    meta = {
        "runs": {sid: [{"id": r.id, "kind": r.kind, "status": r.status, "error": r.error,
                        "wall_seconds": round(r.wall_seconds, 1), "rejections": r.rejections, "tiers": r.tiers}
                       for r in rs] for sid, rs in runs.items()},
        "model_speed": {"calls": speed.calls, "prompt_tokens_per_s": round(speed.prompt_tps, 1),
                        "output_tokens_per_s": round(speed.output_tps, 1), "measured": speed.measured},
        "model": runner.summariser.backend.model, "planned_leaves": planned, "stopped_early": stopped,
    }
    return records, meta


def report(store: Store, args: argparse.Namespace, sids: list[str], records: list[Record],
           meta: dict[str, Any], wall: float) -> dict[str, Any]:
    titles = {sid: store.sessions.get(sid) for sid in sids}
    threshold = Settings().policy.fidelity_threshold
    speed = meta["model_speed"]
    tps = (speed["prompt_tokens_per_s"], speed["output_tokens_per_s"]) if speed["measured"] else None
    per_session, rows = {}, []
    for sid in sids:
        recs = [r for r in records if r.session_id == sid and r.stored.depth == 0]
        from_runs = Counter()  # type: Counter[str]
        for r in meta["runs"][sid]:
            if r["kind"] == "leaf":
                from_runs.update(r["rejections"])
        agg = aggregate(recs, from_runs, threshold=threshold, speed=tps)
        s = titles[sid]
        per_session[sid] = {"title": s.title if s else None, "episodes": s.episodes if s else None,
                            "tokens": s.tokens if s else None, **agg}
        rows.append(table_row(sid[:20], agg))
    leaves = [r for r in records if r.stored.depth == 0]
    total = aggregate(leaves, threshold=threshold, speed=tps)
    rows.append(table_row("**total**", total))
    condensed = [r for r in records if r.stored.depth > 0]
    everything = aggregate(records, threshold=threshold, speed=tps)
    out = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": args.ollama_host, "model": meta["model"], "pass": args.pass_, "limit_leaves": args.limit_leaves,
        "summary_format": args.summary_format,
        "budget_minutes": args.budget_minutes, "planned_leaves": meta["planned_leaves"],
        "stopped_early": meta["stopped_early"],
        "wall_seconds": round(wall, 1), "model_speed": meta["model_speed"], "runs": meta["runs"],
        "sessions": per_session, "total_leaves": total,
        "condensed": aggregate(condensed, threshold=threshold, speed=tps) if condensed else None,
        "all_summaries": everything,
        "summaries": [r.as_dict() | {"session_id": r.session_id} for r in records],
    }
    print(f"\nReal model {meta['model']} at {args.ollama_host}, {args.pass_} pass ({args.summary_format}), up to "
          f"{args.limit_leaves or 'all'} leaves per session: {len(leaves)} of {meta['planned_leaves']} made in "
          f"{wall / 60:.1f} min" + (f" (stopped early: {meta['stopped_early']})" if meta["stopped_early"] else ""))
    print(f"model speed (model_speed table): {speed['prompt_tokens_per_s']} prompt tok/s, "
          f"{speed['output_tokens_per_s']} output tok/s over {speed['calls']} calls\n")
    print(render_table(rows, TABLE_HEAD))
    print("\ntier shares (leaves): " + ", ".join(f"{t} {v:.0%}" for t, v in total["tier_shares"].items() if v is not None))
    print(f"compression of model-tier leaves: {total['compression_model_tiers'] or '—'}×; the model's own retention "
          f"pooled {total['retention']}, median {total['retention_median']} (by tier "
          f"{total['retention_median_by_tier']}); key names {total['key_retention']}")
    print(f"rejections by reason: {total['rejections'] or 'none'} (for length alone: {total['length_rejections']}); "
          f"clipped and kept: {total['clipped']}; over target: {everything['over_target']}; "
          f"timeouts: {total['timeouts']}; model calls: {total['model_calls']}")
    print(f"model seconds on discarded answers: {everything['discarded_seconds']} of "
          f"{everything['model_seconds_all_calls']} ({everything['discarded_share']}); retries re-evaluated "
          f"{everything['retry_reevaluated']}; leaf seconds ÷ one call's floor: {total['floor_ratio']}")
    if condensed:
        c = out["condensed"]
        print(f"condensed: {c['summaries']} ({c['tiers']}), compression {c['compression']}×, "
              f"retention {c['retention']} (median {c['retention_median']}), key names {c['key_retention']}")
    flagged = [r for r in records if r.stored.low_fidelity(threshold)]
    print(f"\nflagged low-fidelity (under {threshold:.0%} of their key names): {len(flagged)} of {len(records)}")
    for r in flagged:
        s, fid = r.stored, r.stored.fidelity
        assert fid is not None  # flagged: measured
        print(f"  {s.tier} d{s.depth} {r.session_id[:24]} #{s.first_seq}–{s.last_seq}: key {fid.key_kept}/"
              f"{fid.key}; lost: {', '.join(one_line(x, 50) for x in fid.lost[:8])}")
    for r in pick_quotes(records):
        s, fid = r.stored, r.stored.fidelity
        print(f"\n--- {s.tier} leaf {r.session_id} #{s.first_seq}–{s.last_seq} ({s.tokens} tokens from "
              f"{r.result.source_tokens}, target {r.target}; kept {fid.kept if fid else None}/"
              f"{fid.identifiers if fid else None}), verbatim:")
        print(visible(s.content))
        if s.keywords:
            print(f"    [keywords: {', '.join(one_line(k, 40) for k in s.keywords)}]")
        for a in r.attempts():
            print(f"    [rejected {a['tier']}: {a['reason']} — {one_line(a['detail'], 100)}]")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ollama-host", help="URL of an Ollama(-compatible) server with a real model")
    ap.add_argument("--model", help="model name (default: the one the server has loaded)")
    ap.add_argument("--sessions", nargs="+", default=list(DEFAULT_SESSIONS), metavar="PREFIX",
                    help="session id prefixes after import (default: %(default)s)")
    ap.add_argument("--limit-leaves", type=int, default=3, metavar="N",
                    help="summarise only the first N leaf chunks of each session (default 3; 0 = all)")
    ap.add_argument("--budget-minutes", type=float, metavar="M",
                    help="start no new leaf after M minutes (the leaf in progress finishes)")
    ap.add_argument("--pass", dest="pass_", choices=["leaf", "full"], default="leaf")
    ap.add_argument("--summary-format", choices=SUMMARY_FORMATS, default=Settings().summary_format,
                    help="how the model is asked to write (default: the app's, %(default)s)")
    ap.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES, help="folder of chat exports (default: %(default)s)")
    ap.add_argument("--timeout-s", type=float, default=Settings().timeout_s, help="base per-call timeout (the app's default)")
    ap.add_argument("--json-out", type=Path, help="write every figure and summary here")
    ap.add_argument("--keep-db", type=Path, help="build the database here (a new file) and keep it, to browse in the TUI")
    args = ap.parse_args(argv)
    if not args.ollama_host:
        print(SKIPPED)
        return 0
    if args.limit_leaves is not None and args.limit_leaves < 0:
        ap.error("--limit-leaves must be 0 or more")
    args.limit_leaves = args.limit_leaves or None
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = args.keep_db or Path(tmp) / "bench.db"
            if args.keep_db and path.exists():
                raise BenchError(f"--keep-db {path} already exists")
            with Store.open(path) as store:
                import_samples(store, args.samples)
                sids = resolve_sessions(store, args.sessions)
                records, meta = asyncio.run(run(store, args, sids))
                out = report(store, args, sids, records, meta, time.monotonic() - started)
        if args.json_out:
            args.json_out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            log(f"wrote {args.json_out}")
        if out["stopped_early"] and "budget" not in out["stopped_early"]:
            return 1  # a run failed: the figures above are what was made before it
    except (BenchError, StoreError, FormatError) as exc:
        log(f"bench_real_model: {one_line(str(exc), 200)}")
        return 2
    except (BackendUnavailable, ModelMissing, SummariserError) as exc:
        log(f"bench_real_model: {one_line(str(exc), 200)}")
        return 1
    except KeyboardInterrupt:
        log("bench_real_model: interrupted")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
