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
    "hiermem_tui.demo.snippets",
    "hiermem_tui.demo.topic",
    "hiermem_tui.demo.topics",
    "hiermem_tui.watch",
    "hiermem_tui.search",
    "hiermem_tui.context",
    "hiermem_tui.stats",
    "hiermem_tui.run_history",
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
