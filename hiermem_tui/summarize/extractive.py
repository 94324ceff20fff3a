"""The deterministic digest of ARCHITECTURE §4, and a backend that uses nothing else.

It is both the fallback tier (it cannot fail, needs no model) and the ``extractive``
backend for people without Ollama. Same input, same output, always: no model, no
randomness, no clock. One bullet per source keeps the digest traceable to its input.
"""

from __future__ import annotations

import re
import time

from hiermem_tui.summarize.types import ChunkCallback, Generation, SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer

_BOUNDARY = re.compile(r"(?<=[.!?])\s+|\n+")
_HAS_WORD = re.compile(r"\w")
_SPACES = re.compile(r"\s+")
# list markers at the start of a sentence: a condensed source is itself a bulleted digest,
# and re-bulleting it would stack markers ("- - - user: …") level after level
_MARKER = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)+")
EMPTY_DIGEST = "- (no text to summarise)"


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` that contain at least one word character.

    Lines count as boundaries so code, lists and logs split sensibly; fragments with no
    word character (code fences, rules) are not worth a bullet.
    """
    parts = (_MARKER.sub("", _SPACES.sub(" ", p).strip()) for p in _BOUNDARY.split(text))
    return [p for p in parts if p and _HAS_WORD.search(p)]


_PARTIAL_WORD = re.compile(r"[\w.@/+-]*\w$")


def _word_boundary(original: str, clipped: str) -> str:
    """``clipped`` without a word it cut in half (kept when nothing else would be left).

    A number or name cut mid-way is a different identifier ("…id":299883" from 2998836):
    it would be counted as invented by the fidelity check and mislead a reader.
    """
    if len(clipped) < len(original) and clipped and clipped[-1:].isalnum() and original[len(clipped)].isalnum():
        shorter = _PARTIAL_WORD.sub("", clipped).rstrip()
        if shorter:
            return shorter
    return clipped


def _clip_sentence(sentence: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    clipped = tokenizer.clip(sentence, max_tokens)
    return sentence if clipped == sentence else _word_boundary(sentence, clipped).rstrip() + "…"


def clip_to(text: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    """Clip to ``max_tokens`` and make sure re-counting agrees (decode/encode can differ)."""
    target = max(1, max_tokens)
    limit = target
    # compare with the target, shrink only the clip point: re-encoding a clipped text can
    # give a token or two more than it was clipped to
    original = text
    while tokenizer.count(text) > target and limit > 0:
        text = tokenizer.clip(text, limit).rstrip()
        limit -= 1
    return _word_boundary(original, text) if text != original else text


def _bullet(source: SourceItem, first: str | None, last: str | None) -> str:
    """A source's bullet: its first and last sentence with "…" between them for what was left out
    (one mark, not "… …" after a first sentence that was itself clipped)."""
    body = first or last or ""
    if first and last:
        body = f"{first} {last}" if first.endswith("…") else f"{first} … {last}"
    prefix = f"{source.role}: " if source.kind == "episode" and source.role else ""
    return f"- {prefix}{body}"


def extractive_digest(request: SummaryRequest, tokenizer: Tokenizer) -> str:
    """First and last sentence of each source, de-duplicated, bulleted, clipped to the target.

    Each sentence gets at most a fair share of the target (target / (2 × sources), at least
    12 tokens) so one huge message cannot crowd every other source out of the digest.
    Never empty: a request with no text gives ``EMPTY_DIGEST``.
    """
    share = max(12, request.target_tokens // max(1, 2 * len(request.sources)))
    seen: set[str] = set()
    bullets: list[str] = []
    for source in request.sources:
        found = sentences(source.text)
        if not found:
            continue
        picked: list[str | None] = []
        for sentence in dict.fromkeys((found[0], found[-1])):  # one sentence → once
            key = sentence.casefold()
            if key in seen:
                picked.append(None)
                continue
            seen.add(key)
            picked.append(_clip_sentence(sentence, share, tokenizer))
        if any(picked):
            bullets.append(_bullet(source, picked[0], picked[1] if len(picked) > 1 else None))
    digest = "\n".join(bullets) or EMPTY_DIGEST
    return clip_to(digest, request.target_tokens, tokenizer) or EMPTY_DIGEST


class ExtractiveBackend:
    """The built-in backend: no server, no model, never fails.

    The summariser recognises it by ``name`` and calls ``extractive_digest`` on the request
    directly (it needs the sources, not a rendered prompt); ``generate`` exists so the
    backend still satisfies the protocol, digesting the prompt text as one source.
    """

    name = "extractive"
    context_limit: int | None = None
    structured = False

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.model: str | None = None

    async def check(self) -> None:
        """Always ready."""

    def digest(self, request: SummaryRequest) -> str:
        return extractive_digest(request, self.tokenizer)

    async def generate(
        self,
        system: str,
        prompt: str,
        *,
        temperature: float,
        num_predict: int,
        on_chunk: ChunkCallback | None = None,
        format: dict[str, object] | None = None,
    ) -> Generation:
        started = time.monotonic()
        lines = [f"- {s}" for s in dict.fromkeys(sentences(prompt))]
        text = clip_to("\n".join(lines) or EMPTY_DIGEST, num_predict, self.tokenizer)
        return Generation(text, None, None, time.monotonic() - started, "stop")

    async def aclose(self) -> None:
        """Nothing to release."""
