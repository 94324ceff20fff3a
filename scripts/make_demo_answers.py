"""Record a real model's answers for the bundled demo (needs Ollama and a model; never run in CI).

    python scripts/make_demo_answers.py --ollama-host http://127.0.0.1:11434 --model qwen2.5-coder:1.5b-instruct-q4_K_M

Builds the demo database the normal way (import, full extractive pass), then re-summarises every
summarised session through the app's own path (the compaction runner, the app's default settings)
with the live Ollama backend, recording each call's answer by what was sent
(``hiermem_tui.demo.replay.answer_key``). Writes ``hiermem_tui/assets/demo/model_answers.json``,
which the demo build replays with no model (``hiermem_tui/demo_db.py``). Then builds the demo from
the new file and checks that the replay gives the same summaries the live run made.

With ``--reuse``, a call whose exact prompt the current file already answers is given that answer (and
kept) instead of going to the model: only the calls whose prompts changed cost model time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from hiermem_tui import __version__
from hiermem_tui.demo.replay import Recording, ReplayBackend, answer_key, answers_path, prompt_versions
from hiermem_tui.demo_db import build_demo_db, demo_settings, resummarize_sessions
from hiermem_tui.store import Run, Store
from hiermem_tui.summarize.ollama_backend import OllamaBackend
from hiermem_tui.summarize.speed import ModelSpeed
from hiermem_tui.summarize.types import ChunkCallback, Generation
from hiermem_tui.tokens import Tokenizer


class RecordingBackend:
    """The live backend, every answer it gives also added to a :class:`Recording`."""

    def __init__(self, inner: OllamaBackend, recording: Recording, reuse: Recording | None = None) -> None:
        self.inner = inner
        self.recording = recording
        self.reuse = ReplayBackend(reuse) if reuse is not None else None
        self.reused = 0
        self.name = inner.name
        self.model = inner.model
        self.structured = inner.structured
        self.host = inner.host

    # what the summariser and the runner read of a live backend, passed through
    @property
    def context_limit(self) -> int | None:
        return self.inner.context_limit

    def thinking_headroom(self) -> int:
        return self.inner.thinking_headroom()

    @property
    def speed(self) -> ModelSpeed:
        return self.inner.speed

    @speed.setter
    def speed(self, value: ModelSpeed) -> None:
        self.inner.speed = value

    async def check(self) -> None:
        await self.inner.check()
        self.model, self.structured = self.inner.model, self.inner.structured

    async def generate(self, system: str, prompt: str, *, temperature: float, num_predict: int,
                       on_chunk: ChunkCallback | None = None, format: dict[str, object] | None = None) -> Generation:
        key = answer_key(system, prompt, temperature, num_predict, format)
        if self.reuse is not None and self.reuse.recording.answers.get(key):
            gen = await self.reuse.generate(system, prompt, temperature=temperature, num_predict=num_predict,
                                            format=format)
            self.reused += 1
            self.recording.add(key, gen)
            return gen
        gen = await self.inner.generate(system, prompt, temperature=temperature, num_predict=num_predict,
                                        on_chunk=on_chunk, format=format)
        self.recording.add(answer_key(system, prompt, temperature, num_predict, format), gen)
        print(f"  call {self.recording.calls}: {gen.seconds:.1f}s, {gen.eval_count} tokens: {gen.text[:70]!r}",
              flush=True)
        return gen

    async def aclose(self) -> None:
        await self.inner.aclose()


def contents(db: Path) -> list[tuple[str, int, int, str, str | None, str, str]]:
    """The active summaries of a demo database, comparable between two builds."""
    store = Store.open(db, readonly=True)
    try:
        return sorted((s.session_id, s.depth, s.first_seq, s.backend, s.model, s.tier, s.content)
                      for sess in store.sessions.each() for s in store.dag.summaries(sess.id))
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ollama-host", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", type=Path, default=answers_path())
    ap.add_argument("--db", type=Path, help="keep the live run's database here (default: a temporary file)")
    ap.add_argument("--reuse", action="store_true",
                    help="answer a call the current --out file already answers from it, not from the model")
    args = ap.parse_args()

    tokenizer = Tokenizer()
    workdir = Path(tempfile.mkdtemp(prefix="demo-answers-"))
    live_db = args.db or workdir / "live.db"
    build_demo_db(live_db, tokenizer, replay=False)
    settings = replace(demo_settings(live_db), backend="ollama", model=args.model, ollama_host=args.ollama_host)
    recording = Recording(model=args.model, recorded_at=datetime.now(timezone.utc).strftime("%Y-%m-%d"),
                          app_version=__version__, summary_format=settings.summary_format,
                          prompt_versions=prompt_versions())
    backend = RecordingBackend(OllamaBackend(args.ollama_host, args.model, tokenizer, timeout_s=settings.timeout_s,
                                             keep_alive=settings.keep_alive), recording,
                               Recording.load(args.out) if args.reuse and args.out.exists() else None)

    async def record() -> list[Run]:
        try:
            return await resummarize_sessions(store, settings, backend)
        finally:
            await backend.aclose()  # on the loop its client was made on

    store = Store.open(live_db, tokenizer=tokenizer)
    try:
        runs = asyncio.run(record())
    finally:
        store.close()
    for run in runs:
        print(f"{run.session_id}: {run.status} normal={run.normal} aggressive={run.aggressive} "
              f"fallback={run.fallback} {run.error or ''}")
    if any(run.status != "done" for run in runs):
        print("a run did not finish: nothing written", file=sys.stderr)
        return 1
    recording.model = backend.model or args.model
    recording.context_limit = backend.context_limit
    recording.thinking_headroom = backend.thinking_headroom()
    recording.structured = backend.structured
    args.out.write_text(recording.dumps(), encoding="utf-8")
    print(f"wrote {args.out}: {recording.calls} answers to {len(recording.answers)} prompts "
          f"({backend.reused} reused from the file before)")

    replayed = build_demo_db(workdir / "replayed.db", tokenizer, answers=args.out)
    live, again = contents(live_db), contents(replayed)
    same = [a[:3] == b[:3] and a[5:] == b[5:] for a, b in zip(live, again)]
    print(f"replay check: {sum(same)} of {len(live)} active summaries made again alike ({len(again)} replayed)")
    return 0 if len(live) == len(again) and all(same) else 1


if __name__ == "__main__":
    raise SystemExit(main())
