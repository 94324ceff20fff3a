"""The deterministic digest of ARCHITECTURE §4, and a backend that uses nothing else.

It is both the fallback tier (it cannot fail, needs no model) and the ``extractive``
backend for people without Ollama. Same input, same output, always: no model, no
randomness, no clock. The digest is the chat's key lines (``keylines``), each a quote with
who said it; over summaries that quote nothing, one bullet per source (its first and last
sentence) keeps it traceable to its input.
"""

from __future__ import annotations

import time

from hiermem_tui.summarize.keylines import key_lines
from hiermem_tui.summarize.text import clip_sentence, sentences, word_boundary
from hiermem_tui.summarize.types import ChunkCallback, Generation, SourceItem, SummaryRequest
from hiermem_tui.tokens import Tokenizer

EMPTY_DIGEST = "- (no text to summarise)"


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
    return word_boundary(original, text) if text != original else text


def _bullet(source: SourceItem, first: str | None, last: str | None) -> str:
    """A source's bullet: its first and last sentence with "…" between them for what was left out
    (one mark, not "… …" after a first sentence that was itself clipped)."""
    body = first or last or ""
    if first and last:
        body = f"{first} {last}" if first.endswith("…") else f"{first} … {last}"
    prefix = f"{source.role}: " if source.kind == "episode" and source.role else ""
    return f"- {prefix}{body}"


def extractive_digest(request: SummaryRequest, tokenizer: Tokenizer) -> str:
    """The app's own summary: the chat's key lines (``keylines``), or, over sources that quote
    nothing (model notes made before key lines were), the first and last sentence of each."""
    return key_lines(request.sources, request.target_tokens, tokenizer) or first_last_digest(request, tokenizer)


def first_last_digest(request: SummaryRequest, tokenizer: Tokenizer) -> str:
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
            picked.append(clip_sentence(sentence, share, tokenizer))
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
