"""A stand-in for a capable model: an Ollama-protocol server that answers the app's own prompts for the calibration
pack from answers a careful writer made — an UPPER BOUND, not a model.

The server is ``tests/fakeollama.py``'s (the real protocol on loopback); its responder reads each prompt the app
sends as it is, finds which of the pack's chats it is about (``match``: strings only that chat's prompt holds) and
what it asks (a written summary, ``summarize/writes.py``, or a title, ``summarize/notes.py``), and answers with the
careful writer's summary or title of that chat (``fixtures/calibrate/careful.json``, written by reading each chat
whole, within the app's targets). A prompt it has no answer for (a brief, a chat not in the pack) gets an empty
answer, which the app refuses as any empty answer.

Run it for ``hiermem-tui calibrate`` by hand::

    .venv/bin/python -m tests.replay_ollama --port 11702
    hiermem-tui calibrate --ollama-host 127.0.0.1:11702 --model careful-writer:upper-bound
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from hiermem_tui.summarize import notes, writes
from tests.fakeollama import FakeModel, FakeOllama, Responder

CAREFUL = Path(__file__).parent / "fixtures" / "calibrate" / "careful.json"
MODEL = "careful-writer:upper-bound"
_WRITES = tuple(a.split("{")[0] for a in writes.ASKS)
_TITLES = (notes.LEAF_ASK, notes.RETRY_LEAF.split("{")[0], notes.TITLE_ASK, notes.RETRY_TITLE.split("{")[0])


def careful_answers(path: Path = CAREFUL) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8"))["chats"])


def asked_for(prompt: str) -> str | None:
    """``writes`` or ``title``: what a prompt of the app asks for (None: neither, such as a brief)."""
    if any(a in prompt for a in _WRITES):
        return "writes"
    if any(a in prompt for a in _TITLES):
        return "title"
    return None


def chat_of(prompt: str, answers: dict[str, Any]) -> str | None:
    """The pack's chat a prompt is about: the one whose ``match`` strings it holds the most of (None: none)."""
    hits = {cid: sum(m in prompt for m in a["match"]) for cid, a in answers.items()}
    best = max(hits, key=lambda cid: hits[cid], default=None)
    return best if best is not None and hits[best] else None


def careful_responder(answers: dict[str, Any] | None = None, *, missed: list[str] | None = None,
                      way: str | None = None, override: dict[str, str] | None = None) -> Responder:
    """A responder that answers the app's prompts for the pack with the careful writer's texts. ``way``: answer only
    prompts of that kind (``writes`` or ``title``), others empty; ``override``: a text to answer instead for a kind
    (tests script bad writers with it); ``missed`` collects the prompts it had no answer for."""
    known = answers if answers is not None else careful_answers()

    def respond(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        kind, cid = asked_for(prompt), chat_of(prompt, known)
        if kind is None or cid is None or (way is not None and kind != way):
            if missed is not None:
                missed.append(prompt[-200:])
            return ""
        if override and kind in override:
            return override[kind]
        return str(known[cid][kind])

    return respond


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the careful writer's answers, served as an Ollama model")
    parser.add_argument("--port", type=int, default=11702)
    args = parser.parse_args(argv)
    missed: list[str] = []
    server = FakeOllama(models=[FakeModel(MODEL, context_length=32768, parameter_size="upper bound")],
                        loaded=[MODEL], responder=careful_responder(missed=missed), port=args.port)
    server.start()
    print(f"serving {MODEL} (a careful writer's answers: an upper bound) on {server.url}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    server.stop()
    if missed:
        print(f"{len(missed)} prompt(s) had no answer", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
