"""The ``hiermem-tui`` command: opens the TUI, or runs one of the subcommands (ARCHITECTURE §6).

The TUI is imported only when it is opened, so CLI commands start fast and the headless
core never pulls Textual in.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TextIO

from . import __version__
from .commands.common import EXIT_USAGE, CliContext, CliError, add_db_option
from .commands.compact import BASE_URL_HELP, MODEL_HELP
from .config import BACKENDS, ConfigError, load_settings

SUBCOMMANDS = ("import_", "sessions", "export", "demo", "compact", "resummarize", "repair", "check", "prompts",
               "watch", "search", "context", "stats", "runs", "sources", "doctor", "backup", "mcp", "backlog", "calibrate")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 (no multi-line usage dump).

    The program name (``hiermem-tui`` or ``hiermem-tui import``) travels as ``CliError.prog``
    rather than inside the message, so ``main`` prints it once.
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{message} (see --help)", EXIT_USAGE, prog=self.prog)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hiermem-tui",
        description="Browse and compact your local LLM chat history into a hierarchical summary DAG.",
    )
    parser.add_argument("--version", action="version", version=f"hiermem-tui {__version__}")
    add_db_option(parser)
    parser.add_argument("--model", metavar="NAME", help=MODEL_HELP)
    parser.add_argument("--backend", choices=BACKENDS, help="what writes summaries (default: the settings file's, "
                                                             "else ollama)")
    parser.add_argument("--ollama-host", metavar="URL", action="append",
                        help="Ollama server (default: $OLLAMA_HOST or 127.0.0.1:11434); repeat it for several")
    parser.add_argument("--base-url", metavar="URL", action="append", help=BASE_URL_HELP)
    parser.add_argument("--demo", action="store_true", help="open the TUI on a fresh copy of the bundled demo data")
    parser.add_argument("--config", metavar="FILE", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f".commands.{name}", __package__)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Entry point. Returns the exit code (0 ok, 1 job failed, 2 bad usage or input)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        from pathlib import Path

        settings = load_settings(
            Path(args.config) if getattr(args, "config", None) else None,
            db=getattr(args, "db", None),
            model=getattr(args, "model", None),
            ollama_host=getattr(args, "ollama_host", None),
            base_url=getattr(args, "base_url", None),
            backend=getattr(args, "backend", None),
            parallel=getattr(args, "parallel", None),
            summary_way=getattr(args, "summary_way", None),
        )
        ctx = CliContext(settings=settings, stdout=out, stderr=err)
        if args.command is None:
            from .launch import launch_tui

            return launch_tui(ctx, demo=args.demo)
        return int(args.func(args, ctx))
    except CliError as exc:
        print(f"{exc.prog}: {exc.message}", file=err)
        return exc.code
    except ConfigError as exc:
        print(f"hiermem-tui: {exc}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hiermem-tui: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
