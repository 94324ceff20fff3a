"""``hiermem-tui mcp [--db PATH] [--no-redact]``: a read-only MCP server over stdio.

For agents (Claude Code, Codex, any MCP client) to read the history: tools ``sessions``,
``search``, ``describe``, ``expand`` and ``context`` (mcp_server/). The file is opened only to
read (``Store.open_reader``): nothing is written, migrated or indexed, and no -wal/-shm is left
beside it. Secrets in what it returns are masked (``--no-redact`` turns that off).

Before serving, a file it cannot serve (missing, empty, foreign, damaged, newer, or of an older
schema) is one line on stderr and exit 2. stdout carries only the protocol.

The MCP SDK is imported here, when the command runs, never when the parser is built: the TUI
and the other commands do not load it.
"""

from __future__ import annotations

import argparse

from ..redact import Redactor
from ..store import Store, StoreError
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp", help="serve the history to agents: a read-only MCP server over stdio",
        description="A read-only MCP server over stdio (tools: sessions, search, describe, expand, context). "
                    "Add it to an agent with e.g. `claude mcp add hiermem -- hiermem-tui mcp`.",
    )
    add_db_option(p)
    p.add_argument("--no-redact", action="store_true", help="do not mask secrets (API keys, tokens, passwords …)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    try:
        store = Store.open_reader(ctx.settings.db_path)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    try:
        from ..mcp_server.server import run as serve
        from ..mcp_server.tools import Reader

        reader = Reader(store, None if args.no_redact else Redactor(),
                        fidelity_threshold=ctx.settings.policy.fidelity_threshold)
        serve(reader)
        return EXIT_OK
    finally:
        store.close()
