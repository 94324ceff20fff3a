"""The design references in the code resolve inside the repo (a fresh clone has no other design notes)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = re.compile(r"ARCHITECTURE(?:\.md)? §(\d+)")


def sources() -> list[Path]:
    return [p for folder in ("hiermem_tui", "tests", "bench", "lab") for p in (ROOT / folder).rglob("*.py")]


def test_every_architecture_reference_names_a_section_that_exists() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## §(\d+) ", doc, flags=re.MULTILINE))
    assert sections == {str(n) for n in range(1, 9)}
    cited = {(str(p.relative_to(ROOT)), n) for p in sources() for n in SECTION.findall(p.read_text(encoding="utf-8"))}
    assert len(cited) > 20  # the code does cite it
    assert not [(path, n) for path, n in cited if n not in sections]


def test_no_reference_points_outside_the_repo() -> None:
    stale = [str(p.relative_to(ROOT)) for p in sources()
             if re.search(r"DESIGN(\.md)? ?§|\.\./shared/DESIGN", p.read_text(encoding="utf-8"))]
    assert stale == []
    for doc in ("README.md", "docs/ARCHITECTURE.md", "docs/FORMATS.md"):
        assert (ROOT / doc).is_file(), doc


def test_the_readme_names_the_schema_version_files_have() -> None:
    """Issue 21 item 10: the README said "currently 3" when files were 4."""
    from hiermem_tui.store import SCHEMA_VERSION

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [said] = re.findall(r"schema version, currently (\d+)", readme)
    assert int(said) == SCHEMA_VERSION
