"""A real model's answers for the bundled demo, recorded once and replayed with no model.

``scripts/make_demo_answers.py`` re-summarises the demo sessions through the app's own path
with a live Ollama model, recording every call's answer under :func:`answer_key` (a hash of
exactly what was sent: system text, prompt, temperature, ``num_predict`` and ``format``) in
``assets/demo/model_answers.json``. The demo build (``demo_db.py``) re-summarises the same
sessions with a :class:`ReplayBackend` over that file: the summariser sends the same prompts, so
every call is answered by what the model said to it, and the summaries are the model's own.

A call that was not recorded (a prompt changed since the recording, another policy) gets the
error a failed model call gets (:class:`~hiermem_tui.summarize.types.ModelError`), so the
summariser falls back to its extractive digest as it would with a live model: nothing is ever
made up. Summaries made here say so: their backend is :data:`REPLAY_BACKEND`, their model the
recorded one. Headless: nothing here imports Textual (nor the Ollama client).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from hiermem_tui.summarize.prompts import PromptSet
from hiermem_tui.summarize.types import ChunkCallback, Generation, ModelError

REPLAY_BACKEND = "ollama-recorded"
"""The backend a replayed summary records: an Ollama model's answer, recorded, not a live call."""
ANSWER_FIELDS = tuple(f.name for f in fields(Generation))
"""What is kept of each answer: every field of :class:`Generation`, the summariser's view of a call."""


def answers_path() -> Path:
    """The bundled answers file (next to ``demo.jsonl``)."""
    return Path(__file__).resolve().parent.parent / "assets" / "demo" / "model_answers.json"


def answer_key(system: str, prompt: str, temperature: float, num_predict: int,
               format: Mapping[str, object] | None) -> str:
    """What one call is recorded and looked up by: a hash of everything sent that shapes the answer."""
    sent = json.dumps([system, prompt, temperature, num_predict, format], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(sent.encode("utf-8")).hexdigest()


def prompt_versions(prompts: PromptSet | None = None) -> dict[str, str]:
    """The version of each prompt template (what a recording was made with)."""
    prompts = prompts or PromptSet()
    return {key: prompts.version(key) for key in sorted(prompts.templates)}


@dataclass(slots=True)
class Recording:
    """The answers file: who answered, with which prompts, and each call's answers in the order given.

    ``context_limit``, ``thinking_headroom`` and ``structured`` are what the live backend reported:
    the summariser sizes its prompts by them, so a replay must report the same to send the same prompts.
    """

    model: str
    recorded_at: str
    app_version: str
    summary_format: str
    prompt_versions: dict[str, str]
    context_limit: int | None = None
    thinking_headroom: int = 0
    structured: bool = False
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, key: str, gen: Generation) -> None:
        self.answers.setdefault(key, []).append(asdict(gen))

    @property
    def calls(self) -> int:
        return sum(len(a) for a in self.answers.values())

    def dumps(self) -> str:
        """One answer per line, the header on top: small enough to read and to diff."""
        head = {k: v for k, v in asdict(self).items() if k != "answers"}
        lines = [json.dumps(head, ensure_ascii=False, indent=1)[:-2] + ',\n "answers": {']
        items = sorted(self.answers.items())
        for i, (key, gens) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"  {json.dumps(key)}: {json.dumps(gens, ensure_ascii=False)}{comma}")
        lines.append(" }\n}\n")
        return "\n".join(lines)

    @classmethod
    def load(cls, path: Path) -> Recording:
        data = json.loads(path.read_text(encoding="utf-8"))
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class ReplayBackend:
    """The :class:`~hiermem_tui.summarize.types.Backend` of a recording: each call answered by what the
    model answered to exactly that call (several answers to one call are given in turn, the last
    repeated), or :class:`ModelError` when it was never asked it. No network, no model."""

    name = REPLAY_BACKEND

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.model: str | None = recording.model
        self.structured = recording.structured
        self.context_limit = recording.context_limit
        self._given: dict[str, int] = {}
        self.missed = 0
        """Calls that had no recorded answer (each fell back as a failed call does)."""

    def thinking_headroom(self) -> int:
        return self.recording.thinking_headroom

    async def check(self) -> None:
        return None

    async def generate(self, system: str, prompt: str, *, temperature: float, num_predict: int,
                       on_chunk: ChunkCallback | None = None, format: dict[str, object] | None = None) -> Generation:
        key = answer_key(system, prompt, temperature, num_predict, format)
        answers = self.recording.answers.get(key)
        if not answers:
            self.missed += 1
            raise ModelError(f"no recorded answer of model '{self.model}' to this prompt "
                             "(the prompts changed since the recording)")
        n = self._given.get(key, 0)
        self._given[key] = n + 1
        recorded = answers[min(n, len(answers) - 1)]
        return Generation(**{k: v for k, v in recorded.items() if k in ANSWER_FIELDS})

    async def aclose(self) -> None:
        return None
