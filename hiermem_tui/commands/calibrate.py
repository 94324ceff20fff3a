"""``hiermem-tui calibrate``: measure which way a model summarises, and keep it for that model.

Runs the built-in pack of chats both ways (``summarize/calibrate.py``) against the model a run would use (``--model``,
else the configured one, else the one Ollama has loaded) on the first host, and stores the verdict in the file
(``store.ways``): later runs of that model summarise that way unless ``summary_way`` (the settings, or
``--summary-way`` for a run) says otherwise.

Output: one line (``--json``: ``{"model", "way", "scores": {"titles", "writes"}, "invented": {"titles", "writes"},
"calls", "seconds", …}``). Exit codes: 0 measured and stored; 1 the server is unreachable, the model is missing, or
the server went away mid-way (nothing stored); 2 bad usage (``--backend extractive``, an unwritable file).
"""

from __future__ import annotations

import argparse
import asyncio
import json

from ..compaction import make_backend
from ..store.ways import ModelWay
from ..summarize import BackendUnavailable, ModelMissing, RunAborted
from ..summarize.calibrate import MARGIN, PACK_VERSION, Calibration, Chat, Progress, WayResult, calibrate
from ..summarize.prompts import PromptSet
from ..textsafe import one_line
from ..tokens import Tokenizer
from ..words import duration
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext, CliError
from .compact import add_backend_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("calibrate", help="measure whether a model should write its summaries or title key lines")
    add_backend_options(p, way=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    settings = ctx.settings
    if settings.backend == "extractive":
        raise CliError("calibrate measures a model: the extractive backend has none (use --backend ollama)", EXIT_USAGE)
    ctx.tokenizer = ctx.tokenizer or Tokenizer()
    store = ctx.open_writable()
    try:
        result = asyncio.run(_measure(ctx))
        host = settings.ollama_host if settings.backend == "ollama" else ""
        store.ways.record(ModelWay(result.model, result.way, result.backend, host, result.scores["titles"].value,
                                   result.scores["writes"].value, result.scores["titles"].invented,
                                   result.scores["writes"].invented, PACK_VERSION, result.calls, result.seconds))
    finally:
        store.close()
    if args.json:
        ctx.say(json.dumps(result.as_json(), ensure_ascii=False))
    else:
        ctx.say(describe(result))
    if settings.summary_way != "measured":
        ctx.warn(f"hiermem-tui: note: summary_way = {settings.summary_way} in the settings makes every model "
                 f"summarise by {settings.summary_way}, whatever it measured")
    return EXIT_OK


async def _measure(ctx: CliContext) -> Calibration:
    assert ctx.tokenizer is not None
    backend = make_backend(ctx.settings, ctx.tokenizer)
    try:
        try:
            await backend.check()
        except (BackendUnavailable, ModelMissing) as exc:
            raise CliError(one_line(str(exc), 1000), EXIT_FAILED) from None
        try:
            return await calibrate(backend, ctx.tokenizer, prompts=PromptSet(ctx.settings.prompts),
                                   on_result=_progress(ctx))
        except (RunAborted, ModelMissing) as exc:
            raise CliError(f"{one_line(str(exc), 1000)}; nothing was stored", EXIT_FAILED) from None
    finally:
        await backend.aclose()


def _progress(ctx: CliContext) -> Progress:
    """A line on stderr per chat and way, on a terminal only (a real model takes minutes)."""
    def said(chat: Chat, way: str, got: WayResult) -> None:
        if ctx.is_tty:
            ctx.warn(f"  {chat.id:<18} {way:<7} {got.keys}/{len(chat.keys)} keys, {got.traps} traps, "
                     f"{got.tier}, {got.calls} call{'s' * (got.calls != 1)}")
    return said


def describe(result: Calibration) -> str:
    """The verdict in one line: the way kept, both scores, and why."""
    titles, writes = result.scores["titles"], result.scores["writes"]
    if result.way == "writes":
        why = f"its written summaries answered {_points(writes.value - titles.value)} more with nothing invented"
    elif writes.invented:
        why = f"its written summaries invented {writes.invented} name{'s' * (writes.invented != 1)}"
    else:
        why = f"writing must answer {_points(MARGIN)} more to be kept"
    return (f"{one_line(result.model, 60)} summarises by {result.way}: titles answered {titles.value:.0%} of the "
            f"probes, writes {writes.value:.0%} ({why}) · {result.calls} calls · {duration(result.seconds)}")


def _points(share: float) -> str:
    return f"{round(share * 100)} point{'s' * (round(share * 100) != 1)}"
