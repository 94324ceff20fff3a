"""The TUI's layers (ARCHITECTURE §7): no widget or screen module imports the app's module, the
engine or the Ollama client, so there is no import cycle for function-level imports to hide.

Each module is imported on its own in a child of one interpreter that has loaded Textual and none
of ours (a fork per module: what a fresh process would load of ours, at a fraction of the cost).
"""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = (
    "hiermem_tui.tui.app",  # the app's module: screens and widgets type the app as AppBase
    "hiermem_tui.tui.navigation",  # it imports the screens; they reach it as app.nav
    "hiermem_tui.tui.runs",
    "hiermem_tui.tui.run_plans",
    "hiermem_tui.compaction",  # the engine's package (its __init__ loads the runner and the summariser)
    "hiermem_tui.summarize.ollama_backend",
    "ollama",
)

CHILD = r"""
import importlib, os, pkgutil, sys
import textual.app, textual.widgets, textual.screen  # shared by all: loaded once, before the forks

FORBIDDEN = @FORBIDDEN@
names = []
for package in ("hiermem_tui.tui.widgets", "hiermem_tui.tui.screens"):
    path = os.path.join(os.path.dirname(importlib.util.find_spec("hiermem_tui.tui").origin), package.rsplit(".", 1)[1])
    names += [package + "." + m.name for m in pkgutil.iter_modules([path])]
ours = sorted(k for k in sys.modules if k.startswith("hiermem_tui"))
assert set(ours) <= {"hiermem_tui", "hiermem_tui.tui"}, ours  # packages find_spec opened, no module
for name in names:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        importlib.import_module(name)
        bad = sorted(k for k in sys.modules if k in FORBIDDEN or k.startswith(tuple(f + "." for f in FORBIDDEN)))
        os.write(write, (name + " " + ",".join(bad)).encode())
        os._exit(0)
    os.close(write)
    out = os.read(read, 65536).decode()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    print(out if status == 0 else name + " FAILED", flush=True)
"""


def test_no_widget_or_screen_module_imports_the_app_the_engine_or_ollama() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD.replace("@FORBIDDEN@", repr(FORBIDDEN))], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    modules = dict(line.partition(" ")[::2] for line in out)
    assert len(modules) >= 25 and "hiermem_tui.tui.widgets.detail_pane" in modules, out
    assert "hiermem_tui.tui.screens.session" in modules, out
    loaded = {name: bad for name, bad in modules.items() if bad}
    assert loaded == {}, loaded
