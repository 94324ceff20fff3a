"""Helpers for import tests that look at what landed in a real store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from types import ModuleType

from hiermem_tui.importers import ImportReport, Problems, import_paths, load_session
from hiermem_tui.store import Store
from hiermem_tui.tokens import Tokenizer

Contents = dict[str, tuple[str, list[tuple[str, str]]]]
"""session id → (title, [(role, content), …] in seq order)."""


@contextmanager
def fresh_store(path: Path, tokenizer: Tokenizer) -> Iterator[Store]:
    store = Store.open(path, tokenizer=tokenizer)
    try:
        yield store
    finally:
        store.close()


def contents(store: Store) -> Contents:
    """Everything the store holds, as plain values to compare."""
    return {
        s.id: (s.title, [(e.role, e.content) for e in store.episodes.each(s.id)])
        for s in store.sessions.each()
    }


def import_each(store: Store, *paths: Path, fmt: str = "auto") -> list[ImportReport]:
    """Import the paths one after the other (as separate ``import`` runs would)."""
    return [import_paths(store, [path], fmt) for path in paths]


def import_as_former(store: Store, module: ModuleType, path: Path) -> None:
    """What an importer version before ``former_ids`` wrote: the same episodes under the former id."""
    report = ImportReport()
    for parsed in module.parse(path, Problems()):
        if parsed.former_ids:
            parsed.id, parsed.former_ids = parsed.former_ids[0], []
        parsed.metadata.pop("chat_id", None)  # oterm's, added with the new ids
        load_session(store, parsed, str(path), report)


def assert_keeps_both(tmp_path: Path, tokenizer: Tokenizer, first: Path, second: Path, fmt: str = "auto") -> Contents:
    """Import two sources of one format into one store: it must hold exactly what each one
    imported alone holds (every session, every episode, each title its own), nothing merged."""
    alone: list[Contents] = []
    for i, path in enumerate((first, second)):
        with fresh_store(tmp_path / f"alone-{i}.db", tokenizer) as store:
            report = import_paths(store, [path], fmt)
            assert report.sessions_created > 0 and report.episodes_appended > 0, path
            alone.append(contents(store))
    assert not alone[0].keys() & alone[1].keys(), "two different sources produced the same session id"
    with fresh_store(tmp_path / "both.db", tokenizer) as store:
        reports = import_each(store, first, second, fmt=fmt)
        both = contents(store)
        again = import_each(store, first, second, fmt=fmt)
        assert contents(store) == both
    assert both == {**alone[0], **alone[1]}
    assert [r.sessions_created for r in reports] == [len(alone[0]), len(alone[1])]
    assert [r.episodes_present for r in reports] == [0, 0]
    assert [(r.sessions_created, r.episodes_appended) for r in again] == [(0, 0), (0, 0)]
    return both
