"""Finding the chat histories already on this machine, at the places each tool keeps them.

``hiermem-tui sources``, ``import --discover`` and the TUI's Import screen all list what
:func:`discover` finds. A place counts only when the file or folder there exists *and* its
format's own ``sniff`` recognises it, so a stray file of the same name is never offered. Looking
is read-only like importing: SQLite files are opened with ``mode=ro`` (and ``immutable`` when no
``-wal`` is beside them), folders are only walked. The session count is one cheap query where a
database can answer it, and None where only reading everything could tell (JSONL folders, where
a session may span files; an llm file holding both of its layouts).

The places, in the order they are listed (environment variables first, as each tool reads them):

* Claude Code — ``$CLAUDE_CONFIG_DIR/projects``, ``~/.claude/projects``, ``$XDG_CONFIG_HOME/claude/projects``;
* Codex — ``$CODEX_HOME/sessions``, ``~/.codex/sessions``;
* oterm — ``$OTERM_DATA_DIR/store.db``, ``$XDG_DATA_HOME/oterm/store.db``, macOS's Application Support;
* llm — ``$LLM_USER_PATH/logs.db``, ``$XDG_CONFIG_HOME/io.datasette.llm/logs.db``, Application Support;
* Open WebUI — ``$DATA_DIR/webui.db``, ``~/.open-webui/``, and the ``data`` folder of an
  ``open-webui`` installed with pipx or ``uv tool``;
* lossless-claw — ``~/.openclaw/lcm.db``; lossless-code — ``$LOSSLESS_VAULT_DIR/vault.db``,
  ``~/.lossless-code/vault.db``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .registry import get_importer
from .base import read_head

MAX_COUNTED_FILES = 100_000
"""A folder's log files are counted up to this many (the count is a hint, not a promise)."""


@dataclass(frozen=True, slots=True)
class Source:
    """A chat history found at a standard place."""

    format: str
    path: Path
    sessions: int | None
    """Conversations in it, when one cheap look can tell (None: only a full read could)."""
    files: int | None = None
    """For a folder of logs: how many ``.jsonl`` files it holds."""

    @property
    def count_label(self) -> str:
        """``12 sessions``, ``1 session``, or ``212 files`` where only a full read could count sessions."""
        if self.sessions is not None:
            return f"{self.sessions:,} session{'s' * (self.sessions != 1)}"
        if self.files is not None:
            return f"{self.files:,} file{'s' * (self.files != 1)}"
        return "—"

    def as_json(self) -> dict[str, Any]:
        """The ``sources --json`` element: ``format``, ``path``, ``sessions`` (and ``files`` for a folder)."""
        out: dict[str, Any] = {"format": self.format, "path": str(self.path), "sessions": self.sessions}
        if self.files is not None:
            out["files"] = self.files
        return out


PLACES_HELP = """\
where it looks (each tool's own variable first, then its usual places; macOS: also ~/Library/Application Support):
  claude-code    $CLAUDE_CONFIG_DIR/projects, ~/.claude/projects, ~/.config/claude/projects
  codex          $CODEX_HOME/sessions, ~/.codex/sessions
  oterm          $OTERM_DATA_DIR/store.db, ~/.local/share/oterm/store.db
  llm            $LLM_USER_PATH/logs.db, ~/.config/io.datasette.llm/logs.db
  openwebui      $DATA_DIR/webui.db, ~/.open-webui/webui.db, ~/.open-webui/data/webui.db,
                 and a pipx or uv tool install's open_webui/data/webui.db
  lossless-claw  ~/.openclaw/lcm.db
  lossless-code  $LOSSLESS_VAULT_DIR/vault.db, ~/.lossless-code/vault.db
($XDG_CONFIG_HOME and $XDG_DATA_HOME stand for ~/.config and ~/.local/share when set.)"""
"""What ``sources --help`` says of :func:`standard_places` (a test keeps the two in step)."""


def standard_places(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[tuple[str, Path]]:
    """Every ``(format, path)`` a tool may keep its history at, whether or not it exists."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    support = home / "Library" / "Application Support"

    def under(var: str, *rest: str) -> list[Path]:
        return [Path(env[var]).expanduser().joinpath(*rest)] if env.get(var) else []

    places: list[tuple[str, list[Path]]] = [
        ("claude-code", [*under("CLAUDE_CONFIG_DIR", "projects"), home / ".claude" / "projects",
                         config / "claude" / "projects"]),
        ("codex", [*under("CODEX_HOME", "sessions"), home / ".codex" / "sessions"]),
        ("oterm", [*under("OTERM_DATA_DIR", "store.db"), data / "oterm" / "store.db",
                   support / "oterm" / "store.db"]),
        ("llm", [*under("LLM_USER_PATH", "logs.db"), config / "io.datasette.llm" / "logs.db",
                 support / "io.datasette.llm" / "logs.db"]),
        ("openwebui", [*under("DATA_DIR", "webui.db"), home / ".open-webui" / "webui.db",
                       home / ".open-webui" / "data" / "webui.db", *_installed_webui(data)]),
        ("lossless-claw", [home / ".openclaw" / "lcm.db"]),
        ("lossless-code", [*under("LOSSLESS_VAULT_DIR", "vault.db"), home / ".lossless-code" / "vault.db"]),
    ]
    return [(fmt, path) for fmt, paths in places for path in paths]


def _installed_webui(data: Path) -> list[Path]:
    """Where a pipx or ``uv tool`` install of open-webui keeps its database (inside the package)."""
    found: list[Path] = []
    for tools in (data / "pipx" / "venvs", data / "uv" / "tools"):
        try:
            found += sorted((tools / "open-webui" / "lib").glob("python3*/site-packages/open_webui/data/webui.db"))
        except OSError:
            continue
    return found


def discover(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Source]:
    """The histories that exist at the standard places and are of the format expected there."""
    seen: set[Path] = set()
    out: list[Source] = []
    for fmt, path in standard_places(env, home):
        try:
            if not path.exists():
                continue
            real = path.resolve()
            if real in seen or not _recognised(fmt, path):
                continue
        except OSError:
            continue
        seen.add(real)
        out.append(describe(fmt, path))
    return out


def _recognised(fmt: str, path: Path) -> bool:
    try:
        return bool(get_importer(fmt).sniff(path, read_head(path)))
    except (OSError, ValueError):
        return False


def describe(fmt: str, path: Path) -> Source:
    """``path`` as a source of format ``fmt``, with what a cheap look can count of it."""
    if path.is_dir():
        return Source(fmt, path, None, sum(1 for _ in _logs(path)))
    counter = getattr(get_importer(fmt), "count", None)
    return Source(fmt, path, counter(path) if counter is not None else None)


def _logs(folder: Path) -> Iterator[Path]:
    """The ``.jsonl`` files below ``folder`` (hidden folders skipped), up to MAX_COUNTED_FILES."""
    n = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".jsonl"):
                n += 1
                yield Path(root) / name
                if n >= MAX_COUNTED_FILES:
                    return
