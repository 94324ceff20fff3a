"""The probe set: chats, their leaves, and the questions a reader asks of each leaf.

A probe file (``lab/probes/*.json``, format in ``lab/README.md``) names one chat —
written for the project (``"chat"``, beside the file) or one of the real exports in
``../shared/samples`` (``"sample"``, read at run time, never copied) — the leaves to judge
(episode ranges as the app's planner cuts them) and four probes per leaf: a fact, an
artifact, a decision and what came next, each with its answer from the leaf's episodes.

:func:`open_probe_store` imports every chat with the app's own importers into one store;
:func:`load_leaves` gives each leaf's sources exactly as the app's leaf request builds them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiermem_tui.compaction.requests import leaf_request  # noqa: E402
from hiermem_tui.importers import import_paths  # noqa: E402
from hiermem_tui.store import Store  # noqa: E402
from hiermem_tui.summarize.types import SourceItem  # noqa: E402

PROBE_DIR = Path(__file__).resolve().parent / "probes"
SAMPLES = ROOT.parent / "shared" / "samples"
KINDS = ("fact", "artifact", "decision", "next")


class ProbeError(Exception):
    """A probe file that cannot be used: one line, exit 2."""


@dataclass(frozen=True)
class Probe:
    kind: str
    question: str
    answer: str
    verbatim: tuple[tuple[str, ...], ...]
    condensed: bool = False

    def present(self, text: str) -> bool:
        """The automatic pre-check: every group of the answer's key strings occurs in ``text``."""
        low = text.casefold()
        return bool(self.verbatim) and all(any(s.casefold() in low for s in group) for group in self.verbatim)


@dataclass(frozen=True)
class Leaf:
    file: str
    kind: str
    session_id: str
    first_seq: int
    last_seq: int
    probes: tuple[Probe, ...]
    traps: tuple[str, ...]
    sources: list[SourceItem] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.file}#{self.first_seq}-{self.last_seq}"

    @property
    def source_tokens(self) -> int:
        return sum(s.tokens for s in self.sources)


def read_probe_files(probe_dir: Path = PROBE_DIR, only: list[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    files = sorted(probe_dir.glob("*.json"))
    if only:
        files = [f for f in files if f.stem in only]
    if not files:
        raise ProbeError(f"no probe files in {probe_dir}" + (f" named {', '.join(only)}" if only else ""))
    out = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ProbeError(f"{f}: {exc}") from None
        out.append((f.stem, data))
    return out


def chat_path(data: dict[str, Any], probe_dir: Path, samples: Path) -> Path | None:
    """Where the chat is; None for a sample when the samples folder is not here."""
    if data.get("chat"):
        return probe_dir / data["chat"]
    if not data.get("sample"):
        raise ProbeError(f"{data.get('name')}: neither 'chat' nor 'sample'")
    path = samples / data["sample"]
    return path if path.exists() else None


def open_probe_store(path: Path, probe_dir: Path = PROBE_DIR, samples: Path = SAMPLES,
                     only: list[str] | None = None) -> tuple[Store, list[tuple[str, dict[str, Any], str]]]:
    """A store at ``path`` (made if new) with every probe file's chat imported (again: idempotent);
    each usable file with the id of its session. Files whose sample is missing are left out."""
    store = Store.open(path)
    usable = []
    for name, data in read_probe_files(probe_dir, only):
        chat = chat_path(data, probe_dir, samples)
        if chat is None:
            print(f"probes: {name}: sample {data['sample']} not found under {samples}, left out", file=sys.stderr)
            continue
        import_paths(store, [chat], data.get("format", "auto"), parallel=False)
        ids = [s.id for s in store.sessions.each() if s.id.startswith(data["session"])]
        if len(ids) != 1:
            raise ProbeError(f"{name}: session prefix {data['session']!r} matches {len(ids)} sessions")
        usable.append((name, data, ids[0]))
    return store, usable


def leaves_of(store: Store, usable: list[tuple[str, dict[str, Any], str]], *, with_sources: bool = True) -> list[Leaf]:
    out = []
    for name, data, sid in usable:
        for leaf in data["leaves"]:
            probes = tuple(
                Probe(p["kind"], p["question"], p["answer"], tuple(tuple(g) for g in p.get("verbatim", [])),
                      bool(p.get("condensed")))
                for p in leaf["probes"])
            first, last = int(leaf["first_seq"]), int(leaf["last_seq"])
            sources = leaf_request(store, sid, first, last, 1200).sources if with_sources else []
            out.append(Leaf(name, data.get("kind", "?"), sid, first, last, probes, tuple(leaf.get("traps", [])),
                            list(sources)))
    return out


def load_leaves(probe_dir: Path = PROBE_DIR, *, only: list[str] | None = None, samples: Path = SAMPLES) -> list[Leaf]:
    """Every leaf of the probe set with its sources, from a scratch store that is then removed."""
    with tempfile.TemporaryDirectory() as tmp:
        store, usable = open_probe_store(Path(tmp) / "probes.db", probe_dir, samples, only)
        try:
            return leaves_of(store, usable)
        finally:
            store.close()


def lab_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a lab script that asks a real model about the probe leaves: where its output goes
    (``out``), the server and model, and which leaves (``--only``, all by default)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ollama-host", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--only", nargs="*")
    return ap
