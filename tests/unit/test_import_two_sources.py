"""Every importer, on fixtures written by the other tool's own code or shaped like its real files
(see the make_fixtures.py next to them): two different sources of one format both land whole,
and a message a source changed under the same id is never dropped in silence."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from hiermem_tui.importers import detect
from hiermem_tui.tokens import Tokenizer
from tests.unit._imported import assert_keeps_both, contents, fresh_store, import_each
from tests.unit.test_import_openwebui import webui_db_from_export

F = Path(__file__).resolve().parents[1] / "fixtures"
PROJECTS = F / "claude_code" / "projects"
BAKERY = PROJECTS / "-home-ana-bakery" / "5d1e2f3a-0b4c-4d5e-8f60-7a8b9c0d1e2f.jsonl"


def _same(path: Path, tmp_path: Path) -> Path:
    return path


def _webui_db(export: Path, tmp_path: Path) -> Path:
    return webui_db_from_export(export, tmp_path / f"{export.stem}.db")


# name → (format auto-detection must give, first source, second source, how to make a source a path)
PAIRS: dict[str, tuple[str, Path, Path, Callable[[Path, Path], Path]]] = {
    "jsonl": ("jsonl", F / "jsonl" / "two_sessions.jsonl", F / "jsonl" / "another_tool.jsonl", _same),
    "chatgpt": ("chatgpt", F / "chatgpt" / "conversations.json", F / "chatgpt" / "account-b.json", _same),
    "claude": ("claude", F / "claude_ai" / "account-a.json", F / "claude_ai" / "account-b.json", _same),
    "claude-code": ("claude-code", PROJECTS / "-home-ana-bakery", PROJECTS / "-home-ana-notes", _same),
    "codex": ("codex", F / "codex" / "sessions" / "2024", F / "codex" / "sessions" / "2025", _same),
    "sharegpt": ("sharegpt", F / "sharegpt" / "dataset.json", F / "sharegpt" / "other_dataset.json", _same),
    "llm-0.36": ("llm", F / "llm" / "logs-036-a.db", F / "llm" / "logs-036-b.db", _same),
    "llm-0.27": ("llm", F / "llm" / "logs-027-a.db", F / "llm" / "logs-027-b.db", _same),
    "oterm": ("oterm", F / "oterm" / "machine-a.db", F / "oterm" / "machine-b.db", _same),
    "openwebui-export": ("openwebui", F / "openwebui" / "chat-export-a.json", F / "openwebui" / "chat-export-b.json",
                         _same),
    "openwebui-db": ("openwebui", F / "openwebui" / "chat-export-a.json", F / "openwebui" / "chat-export-b.json",
                     _webui_db),
}


@pytest.mark.parametrize("name", list(PAIRS))
def test_two_sources_of_one_format_keep_both(name: str, tmp_path: Path, tokenizer: Tokenizer) -> None:
    fmt, first, second, make = PAIRS[name]
    first, second = make(first, tmp_path), make(second, tmp_path)
    assert (detect(first), detect(second)) == (fmt, fmt)
    both = assert_keeps_both(tmp_path, tokenizer, first, second)
    assert len(both) >= 2


def test_llm_file_upgraded_by_a_newer_llm_adds_nothing(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """llm 0.36 migrates a 0.27 logs.db on open, so it then holds the same chats in both layouts."""
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        old, upgraded = import_each(store, F / "llm" / "logs-027-a.db", F / "llm" / "logs-027-a-upgraded-036.db")
        assert (upgraded.sessions_created, upgraded.episodes_appended) == (0, 0)
        assert upgraded.episodes_present == old.episodes_appended


def _replace_text(old: str, new: str) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        target = next(path.rglob("*.jsonl")) if path.is_dir() else path
        text = target.read_text(encoding="utf-8")
        assert old in text, old
        target.write_text(text.replace(old, new), encoding="utf-8")

    return edit


def _run_sql(sql: str) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        with sqlite3.connect(path) as db:
            assert db.execute(sql).rowcount == 1
        db.close()

    return edit


# A message changed in place under the same id: what an in-place regenerate or edit leaves.
# "version": the new text is appended as a new version; "reported": the source has no message
# ids (positions only), so the stored text stays and the difference is reported.
CHANGES: dict[str, tuple[Path, Callable[[Path], None], str]] = {
    "oterm": (F / "oterm" / "machine-b.db",
              _run_sql("UPDATE message SET text = 'Yes, if it is used only for work.' WHERE id = 4"), "version"),
    "llm-0.36": (F / "llm" / "logs-036-b.db", _run_sql(
        "UPDATE parts SET text = 'Often, if used only for work.' WHERE text = 'Usually, if you use it only for work.'"),
        "version"),
    "llm-0.27": (F / "llm" / "logs-027-b.db", _run_sql(
        "UPDATE responses SET response = 'Often.' WHERE response = 'Usually, if you use it only for work.'"),
        "version"),
    "openwebui": (F / "openwebui" / "chat-export-b.json",
                  _replace_text("Usually, if the room is used", "Often, if the room is used"), "version"),
    "chatgpt": (F / "chatgpt" / "account-b.json", _replace_text("so 2027 is prime.", "hence prime."), "version"),
    "claude": (F / "claude_ai" / "account-b.json",
               _replace_text("Usually, if you use the room", "Often, if you use the room"), "version"),
    "claude-code": (PROJECTS / "-home-ana-bakery",
                    _replace_text("Let me look at the timer code.", "Looking at the timer."), "version"),
    "codex": (F / "codex" / "sessions" / "2025", _replace_text("About 254 litres", "Roughly 254 litres"), "reported"),
    "jsonl": (F / "jsonl" / "two_sessions.jsonl", _replace_text("The south-facing beds", "The sunny beds"), "reported"),
    "sharegpt": (F / "sharegpt" / "dataset.json",
                 _replace_text("The last one leaves at 22:10.", "The last one leaves at 22:40."), "reported"),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_changed_message_is_a_new_version_or_reported(name: str, tmp_path: Path, tokenizer: Tokenizer) -> None:
    source, edit, outcome = CHANGES[name]
    copy = tmp_path / "src" / source.name
    copy.parent.mkdir()
    (shutil.copytree if source.is_dir() else shutil.copy)(source, copy)
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        (first,) = import_each(store, copy)
        before = contents(store)
        edit(copy)
        changed, again = import_each(store, copy, copy)
        after = contents(store)
    assert changed.sessions_created == 0 and again.episodes_appended == 0  # the second re-import adds nothing
    kept = {sid: eps for sid, (_, eps) in before.items()}
    assert all(after[sid][1][: len(eps)] == eps for sid, eps in kept.items())  # nothing stored was lost
    if outcome == "version":
        assert (changed.episodes_appended, changed.episodes_revised) == (1, 1)
        assert changed.problems.reasons == first.problems.reasons  # the source's own problems, nothing more
        assert changed.episodes_present == first.episodes_appended - 1
    else:
        assert (changed.episodes_appended, changed.episodes_revised) == (0, 0)
        assert changed.problems.reasons - first.problems.reasons == {
            "message differs from the one already stored at its place (stored one kept)": 1
        }
        assert after == before


def test_claude_code_session_imported_mid_reply_gets_the_whole_reply_later(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    """Claude Code writes one reply as several lines; an import between them saw part of it."""
    lines = BAKERY.read_text(encoding="utf-8").splitlines(keepends=True)
    live = tmp_path / BAKERY.name
    live.write_text("".join(lines[:5]), encoding="utf-8")  # up to the reply's text, before its tool_use line
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        (early,) = import_each(store, live)
        shutil.copy(BAKERY, live)
        (later,) = import_each(store, live)
        (session,) = list(store.sessions.each())
        episodes = list(store.episodes.each(session.id))
    assert later.episodes_revised == 1 and later.problems.count == 0
    partial = next(e for e in episodes if e.id.endswith("/msg_01A"))
    whole = next(e for e in episodes if e.id.endswith("/msg_01A~2"))
    assert partial.content == "Let me look at the timer code."
    assert whole.content.startswith("Let me look at the timer code.\n\n[tool_use ")
    assert whole.metadata is not None and whole.metadata["revision_of"] == partial.id
