"""The leaves the app would make of a chat, to write probes for (issue 19; no model).

    .venv/bin/python lab/probe_leaves.py CHAT                        # its sessions: id, title, episodes
    .venv/bin/python lab/probe_leaves.py CHAT --session PREFIX [--chars 4000] [--fresh-tail N] > leaves.md

CHAT is an export the app imports (a sample under ``../shared/samples`` or a chat written for the
set); it is imported into a scratch database with the app's importers, and with ``--session`` the
session's leaf chunks are planned as the app plans them (shipped policy: ``Runner.plan_leaf``) and
printed with their episodes, each cut at ``--chars``. A probe file's ``first_seq``/``last_seq`` must be
one of these chunks: ``lab/probe.py make`` summarises a session's leaves in the app's order.
``--fresh-tail 0`` plans a short chat's last episodes too (a user's ``policy.fresh_tail = 0``): the app keeps
its newest 16 raw, and most of the samples' unused chats are shorter than that.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from probeset import ROOT  # noqa: F401  (puts the checkout on the path)

from hiermem_tui.compaction import make_runner
from hiermem_tui.config import Policy, Settings
from hiermem_tui.importers import import_paths
from hiermem_tui.store import Store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chat", type=Path)
    ap.add_argument("--session", help="a session id prefix: print its leaves")
    ap.add_argument("--format", default="auto")
    ap.add_argument("--chars", type=int, default=4000, help="each episode cut at this many characters")
    ap.add_argument("--fresh-tail", type=int, default=Policy().fresh_tail, help="newest episodes kept raw")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "leaves.db")
        try:
            import_paths(store, [args.chat], args.format, parallel=False)
            sessions = list(store.sessions.each())
            if not args.session:
                for s in sessions:
                    print(f"{s.id}\t{s.episodes} episodes\t{s.tokens} tokens\t{s.title}")
                return 0
            ids = [s.id for s in sessions if s.id.startswith(args.session)]
            if len(ids) != 1:
                print(f"probe_leaves: {args.session!r} matches {len(ids)} sessions", file=sys.stderr)
                return 2
            runner = make_runner(store, Settings(db_path=store.path, backend="extractive", model=None,
                                                  policy=Policy(fresh_tail=args.fresh_tail)))
            for chunk in runner.plan_leaf(ids[0]):
                print(f"# LEAF first_seq {chunk.first_seq}, last_seq {chunk.last_seq} ({chunk.tokens} tokens)\n")
                for ep in store.episodes.range(ids[0], chunk.first_seq, chunk.last_seq):
                    print(f"[{ep.seq}] {ep.role}: {ep.content[:args.chars]}\n")
        finally:
            store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
