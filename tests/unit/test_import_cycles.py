"""No import circle in the headless core, counting every import: at module level, inside functions and
those made for the type checker only. A circle of type-only imports is no crash, but it ties modules
together that should each be readable on their own (``summarize/types.py`` once imported
``acceptance.Rejection``, which closed a circle through ``prompts.py`` and the key lines)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ("compaction", "demo", "importers", "mcp_server", "search", "store", "summarize", "watch")
"""The packages checked, with the modules at the package's top level (tui/ and commands/ are front ends)."""


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in (root / "hiermem_tui").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        named: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                named += [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
        for target in named:
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph.setdefault(name, set()).add(target)
    return graph


def circles(graph: dict[str, set[str]], keep: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module among ``keep`` (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, set()) & keep:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                out.append(sorted([v, *component]))

    for v in sorted(keep):
        if v not in index:
            visit(v)
    return out


def core(root: Path) -> set[str]:
    keep = set()
    for name, path in modules(root).items():
        parts = name.split(".")
        if len(parts) > 1 and (parts[1] in CORE or (len(parts) == 2 and path.name != "__init__.py")):
            keep.add(name)
    return keep


def test_the_headless_core_has_no_import_circle() -> None:
    keep = core(ROOT)
    assert {"hiermem_tui.summarize.types", "hiermem_tui.store.dag", "hiermem_tui.fidelity_value"} <= keep
    assert circles(imports(ROOT), keep) == []


def test_the_check_finds_a_circle_of_type_only_imports(tmp_path: Path) -> None:
    package = tmp_path / "hiermem_tui" / "summarize"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (package / "b.py").write_text("from hiermem_tui.summarize import a\n")
    assert circles(imports(tmp_path), core(tmp_path)) == [["hiermem_tui.summarize.a", "hiermem_tui.summarize.b"]]
