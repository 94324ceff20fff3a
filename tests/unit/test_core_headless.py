"""The headless core must never import Textual (so the CLI stays fast and the core reusable)."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "hiermem_tui.store",
    "hiermem_tui.tokens",
    "hiermem_tui.importers",
    "hiermem_tui.export",
    "hiermem_tui.config",
    "hiermem_tui.cli",
    "hiermem_tui.textsafe",
    "hiermem_tui.summarize",
    "hiermem_tui.compaction",
    "hiermem_tui.backend_status",
    "hiermem_tui.demo",
    "hiermem_tui.demo.compose",
    "hiermem_tui.demo.generator",
    "hiermem_tui.demo.replay",
    "hiermem_tui.demo_db",
    "hiermem_tui.demo.snippets",
    "hiermem_tui.demo.topic",
    "hiermem_tui.demo.topics",
    "hiermem_tui.watch",
    "hiermem_tui.search",
    "hiermem_tui.context",
    "hiermem_tui.stats",
    "hiermem_tui.run_history",
    "hiermem_tui.redact",
    "hiermem_tui.masker",
    "hiermem_tui.commands.mcp",
    "hiermem_tui.mcp_server",
    "hiermem_tui.mcp_server.args",
    "hiermem_tui.mcp_server.schemas",
    "hiermem_tui.mcp_server.tools",
    "hiermem_tui.mcp_server.server",
]


def test_core_modules_do_not_import_textual() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "import hiermem_tui.importers as imp\n"
        f"mods = {CORE!r}\n"
        "mods += ['hiermem_tui.importers.' + m.name for m in pkgutil.iter_modules(imp.__path__)]\n"
        "for m in mods:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k == 'textual' or k.startswith('textual.'))\n"
        "print('LOADED', len(mods)); print('TEXTUAL', bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED" in out
    assert "TEXTUAL []" in out, out


def test_the_tui_starts_without_the_mcp_sdk_or_the_secret_detector() -> None:
    """The CLI's parser (which registers ``mcp``) and the app's module load neither the MCP SDK nor
    detect-secrets: ``hiermem-tui mcp`` and ``export`` import them when they run."""
    code = (
        "import sys\n"
        "from hiermem_tui.cli import build_parser\n"
        "build_parser()\n"
        "import hiermem_tui.launch, hiermem_tui.tui.app\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('mcp', 'mcp_types', 'detect_secrets'))\n"
        "print('LOADED', 'hiermem_tui.tui.app' in sys.modules); print('SDK', bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED True" in out
    assert "SDK []" in out, out
