"""CLI contracts of search, context, stats and runs: JSON shapes, one-line errors, exit 2 on bad input."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.store import NewEpisode, Store
from hiermem_tui.tokens import Tokenizer

from ._engine_fixtures import add_episodes, extractive_runner
from .test_search_index import write_version_2


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*argv: str, tty: bool = False) -> tuple[int, str, str]:
    out = Tty() if tty else io.StringIO()
    err = io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "h.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "alpha", 0, 30)
        add_episodes(store, "beta", 0, 6)
        asyncio.run(extractive_runner(store, tokenizer).compact("alpha"))
        store.episodes.append("beta", [NewEpisode("evil", "user", "\x1b]0;pwned\x07[bold]wombat[/] \x1b[2J", None)])
    return path


def test_search_json_is_exactly_the_contract(db: Path) -> None:
    code, out, err = run("search", "--db", str(db), "item", "--limit", "5", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert 0 < len(hits) <= 5
    for hit in hits:
        assert set(hit) == {"session", "kind", "id", "first_seq", "last_seq", "snippet"}
        assert hit["kind"] in ("episode", "summary")
        if hit["kind"] == "episode":
            assert hit["first_seq"] == hit["last_seq"]
    code, out, _ = run("search", "--db", str(db), "Episode", "--session", "beta", "--json", "--limit", "100")
    assert code == 0 and {h["session"] for h in json.loads(out)} == {"beta"} and len(json.loads(out)) == 6


@pytest.mark.parametrize("argv", [
    ["search", "foo AND"],
    ["search", "???"],
    ["search", '"unclosed'],
    ["search", "x", "--limit", "0"],
    ["search", "x", "--session", "nope"],
    ["context", "--session", "nope"],
    ["context", "--session", "alpha", "--budget", "-5"],
    ["stats", "--session", "nope"],
    ["runs", "--session", "nope"],
    ["runs", "--limit", "-1"],
])
def test_bad_input_is_one_line_and_exit_2(db: Path, argv: list[str]) -> None:
    code, out, err = run(*argv[:1], "--db", str(db), *argv[1:])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("hiermem-tui: ") and "Traceback" not in err


def test_missing_file_is_exit_2_and_creates_nothing(tmp_path: Path) -> None:
    for argv in (["search", "x"], ["context", "--session", "s"], ["stats"], ["runs"]):
        code, _, err = run(*argv[:1], "--db", str(tmp_path / "none.db"), *argv[1:])
        assert code == 2 and "does not exist" in err
    assert not (tmp_path / "none.db").exists()


def test_search_text_output_is_literal_and_bold_only_on_a_terminal(db: Path) -> None:
    code, out, _ = run("search", "--db", str(db), "wombat")
    assert code == 0 and "\x1b" not in out and "␛]0;pwned␇[bold]wombat[/] ␛[2J" in out
    code, out, _ = run("search", "--db", str(db), "wombat", tty=True)
    assert "\x1b[1mwombat\x1b[22m" in out and out.count("\x1b") == 2  # our bold, never the chat's escapes


def test_context_json_and_text(db: Path) -> None:
    code, out, err = run("context", "--db", str(db), "--session", "alpha", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"session", "budget", "total_tokens", "items"} and data["budget"] is None
    seqs = [s for i in data["items"] for s in range(i["first_seq"], i["last_seq"] + 1)]
    assert seqs == list(range(30))
    code, out, _ = run("context", "--db", str(db), "--session", "alpha", "--budget", "60")
    assert code == 0 and out.startswith("# Context of session alpha:") and "left out to fit" in out
    code, out, _ = run("context", "--db", str(db), "--session", "beta")
    assert "\x1b]0;pwned\x07" in out  # to a pipe: exactly what a model is given
    code, out, _ = run("context", "--db", str(db), "--session", "beta", tty=True)
    assert "\x1b" not in out and "␛]0;pwned␇" in out  # to a terminal: never acted on


def test_stats_json_and_text(db: Path) -> None:
    code, out, err = run("stats", "--db", str(db), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["scope"] == "file" and data["sessions"] == 2 and data["episodes"] == 37
    assert set(data) == {"scope", "session", "sessions", "episodes", "tokens", "coverage", "summaries", "fallbacks",
                         "fidelity", "model_time", "runs"}
    assert data["runs"]["by_status"]["done"] == 1 and data["summaries"]["by_depth"][0]["depth"] == 0
    code, out, _ = run("stats", "--db", str(db), "--session", "alpha")
    assert code == 0 and "compression" in out and "per depth" in out and "█" in out


def test_runs_lists_newest_first(db: Path) -> None:
    code, out, err = run("runs", "--db", str(db), "--json")
    assert code == 0, err
    runs = json.loads(out)
    assert len(runs) == 1 and runs[0]["session"] == "alpha" and runs[0]["status"] == "done"
    code, out, _ = run("runs", "--db", str(db))
    assert "full pass" in out and "extractive" in out


def test_search_builds_an_upgraded_files_index_once_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    write_version_2(path)
    code, out, err = run("search", "--db", str(path), "pelican", "--json", "--limit", "100")
    assert code == 0 and len(json.loads(out)) == 50
    assert err == ""  # 51 rows: indexed without a word (a big file gets a line, a terminal a bar)
    code, out, err = run("search", "--db", str(path), "heron", "--json")
    assert code == 0 and err == "" and json.loads(out)[0]["id"] == "s_old"


def test_index_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    from hiermem_tui.commands.common import CliContext
    from hiermem_tui.commands.index_progress import ensure_search_index
    from hiermem_tui.config import Settings

    path = tmp_path / "v2.db"
    write_version_2(path)
    err = Tty()
    ctx = CliContext(Settings(db_path=path), stdout=io.StringIO(), stderr=err)
    with Store.open(path) as store:
        status = ensure_search_index(ctx, store)
    assert not status.pending
    text = err.getvalue()
    assert "indexing for search" in text and "100%" in text and "51 of 51 rows" in text
    assert "\r\x1b[K" in text  # the bar is cleared before the summary line
