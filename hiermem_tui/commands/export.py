"""``hiermem-tui export --session ID [--format json|markdown] [-o FILE] [--no-redact]``.

Secrets in the chat text (API keys, tokens, private keys, passwords in URLs …) are masked as
``[secret: <kind>]`` unless ``--no-redact``; the JSON then ends with ``"redacted"`` (how many, by
kind), the Markdown with a line saying so. The stored file is never changed.

To a file or a pipe the export is exact; on a terminal a chat's escape sequences and bidi
controls are shown as the TUI shows them (visible stand-ins: ``␛[2J``, ``<U+202E>``), never acted on.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import TextIO

from ..export import export_json, export_markdown
from ..masker import Masker
from ..redact import Redactor
from ..store import StoreError
from ..textsafe import visible
from .common import EXIT_OK, EXIT_USAGE, CliContext, CliError, add_db_option, is_tty, path_state


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="export one session as JSON or Markdown")
    add_db_option(p)
    p.add_argument("--session", required=True, metavar="ID")
    p.add_argument("--format", default="json", choices=["json", "markdown"])
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--no-redact", action="store_true",
                   help="keep secrets as they are (by default API keys, tokens, passwords … are masked)")
    p.set_defaults(func=run)


class _Visible(io.TextIOBase):
    """A terminal written to through :func:`visible`: what a chat holds is shown, not obeyed."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self._out = out

    def write(self, text: str) -> int:
        self._out.write(visible(text, tabs=8))
        return len(text)

    def flush(self) -> None:
        self._out.flush()


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    state = path_state(ctx.settings.db_path)
    if state == "missing":
        raise CliError(f"{ctx.settings.db_path} does not exist", EXIT_USAGE)
    if state == "empty":
        raise CliError(f"no session {args.session!r} in {ctx.settings.db_path} (the database is empty)", EXIT_USAGE)
    store = ctx.open_store(readonly=True)
    try:
        if store.sessions.get(args.session) is None:
            raise CliError(f"no session {args.session!r} in {ctx.settings.db_path}", EXIT_USAGE)
        writer = export_json if args.format == "json" else export_markdown
        masker = Masker(None if args.no_redact else Redactor())
        if args.output:
            target = Path(args.output).expanduser()
            tmp = target.with_name(target.name + ".part")
            try:
                with tmp.open("w", encoding="utf-8") as fh:
                    writer(store, args.session, fh, masker)
                os.replace(tmp, target)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise CliError(f"cannot write {target}: {exc.strerror or exc}", EXIT_USAGE) from None
        else:
            out = ctx.stdout
            if out is sys.stdout and hasattr(out, "reconfigure"):
                out.reconfigure(encoding="utf-8")
            writer(store, args.session, _Visible(out) if is_tty(out) else out, masker)
        return EXIT_OK
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    finally:
        store.close()
