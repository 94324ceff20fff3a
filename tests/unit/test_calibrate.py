"""``hiermem-tui calibrate`` against the fake server: a model scripted to write faithful summaries earns ``writes``,
one that invents names or echoes the prompt keeps ``titles``; the verdict is stored per model and a later compact
summarises that way, unless ``summary_way`` (the settings, or ``--summary-way`` for a run) overrides it; a dead
server or a missing model is one line, exit 1, nothing stored."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.cli import main
from hiermem_tui.store import Store
from hiermem_tui.summarize import writes
from hiermem_tui.summarize.calibrate import MARGIN, Score, load_pack, verdict
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, closed_port_url
from tests.replay_ollama import asked_for, careful_answers, careful_responder

from ._engine_fixtures import add_episodes, small_policy_env  # noqa: F401 (a fixture)

MODEL = "llama3.2:latest"
PLAIN = "The user and the assistant went through the task and settled how to go on."
"""A written summary of any other chat: it names nothing, so nothing in it is invented."""
INVENTED = ("The user moved the deployment to Kubernetes 1.29 with Helm, tracked the work in JIRA-4411 and set "
            "MAX_RETRIES to 17 in config/prod.yaml.")


@pytest.fixture(autouse=True)
def config(small_policy_env: Path) -> Path:
    return small_policy_env


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "cal.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        add_episodes(store, "work", 0, 40)
    return path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def writer(**kw: Any) -> Any:
    """The careful writer for the pack's chats, ``PLAIN`` for a written summary of any other chat."""
    careful = careful_responder(**kw)

    def respond(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        return careful(body) or (PLAIN if asked_for(prompt) == "writes" else "")

    return respond


@pytest.fixture
def faithful() -> Iterator[FakeOllama]:
    with FakeOllama(responder=writer()) as server:
        yield server


def calibrate(db: Path, url: str, *more: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = cli("calibrate", "--db", str(db), "--ollama-host", url, "--model", "llama3.2", "--json", *more)
    return code, (json.loads(out) if out else {}), err


def stored_way(db: Path, tokenizer: Tokenizer) -> str | None:
    with Store.open(db, tokenizer=tokenizer) as store:
        found = store.ways.get(MODEL)
        return found.way if found else None


def versions(db: Path, tokenizer: Tokenizer, session: str = "work") -> list[str]:
    with Store.open(db, tokenizer=tokenizer) as store:
        return [s.prompt_version for s in store.dag.summaries(session) if s.depth == 0]


def test_the_careful_writers_answers_are_faithful_to_the_pack() -> None:
    """The stand-in's answers answer every key, hit no trap, and a chat's prompt finds its own answer."""
    answers = careful_answers()
    for chat in load_pack():
        text = " ".join(answers[chat.id]["writes"].lower().split())
        assert all(any(s.lower() in text for s in key) for key in chat.keys), chat.id
        assert not any(any(s.lower() in text for s in trap) for trap in chat.traps), chat.id


def test_a_model_that_writes_faithfully_earns_writes_and_a_later_compact_writes(db: Path, faithful: FakeOllama,
                                                                                 tokenizer: Tokenizer) -> None:
    code, got, err = calibrate(db, faithful.url)
    assert code == 0, err
    assert set(got) >= {"model", "way", "scores", "invented", "calls", "seconds"}
    assert got["model"] == MODEL and got["way"] == "writes"
    assert got["scores"]["writes"] == 1.0 and got["scores"]["writes"] >= got["scores"]["titles"] + MARGIN
    assert got["invented"] == {"titles": 0, "writes": 0}
    assert got["calls"] == 2 * len(load_pack())  # one call a chat each way: nothing refused
    assert stored_way(db, tokenizer) == "writes"

    code, out, err = cli("compact", "--db", str(db), "--session", "work", "--ollama-host", faithful.url,
                         "--model", "llama3.2", "--pass", "leaf", "--json")
    assert code == 0, err
    made = versions(db, tokenizer)
    assert made and all(v.endswith(writes.WRITES_SUFFIX) for v in made)
    leaf_prompts = [b for b in faithful.chat_bodies[-len(made):]]
    assert all(asked_for(b["messages"][-1]["content"]) == "writes" for b in leaf_prompts)


def test_the_override_wins_over_the_measured_way(db: Path, faithful: FakeOllama, tokenizer: Tokenizer,
                                                 config: Path) -> None:
    assert calibrate(db, faithful.url)[1]["way"] == "writes"
    code, _, err = cli("compact", "--db", str(db), "--session", "work", "--ollama-host", faithful.url,
                       "--model", "llama3.2", "--pass", "leaf", "--summary-way", "titles")
    assert code == 0, err
    assert versions(db, tokenizer) and not any(v.endswith(writes.WRITES_SUFFIX) for v in versions(db, tokenizer))

    with Store.open(db, tokenizer=tokenizer) as store:
        add_episodes(store, "other", 0, 40)
    config.write_text('summary_way = "titles"\n' + config.read_text())
    code, _, err = cli("compact", "--db", str(db), "--session", "other", "--ollama-host", faithful.url,
                       "--model", "llama3.2", "--pass", "leaf")
    assert code == 0, err
    assert versions(db, tokenizer, "other") and not any(v.endswith(writes.WRITES_SUFFIX)
                                                         for v in versions(db, tokenizer, "other"))


def test_writes_for_a_run_on_a_model_never_calibrated(db: Path, faithful: FakeOllama, tokenizer: Tokenizer) -> None:
    code, _, err = cli("compact", "--db", str(db), "--session", "work", "--ollama-host", faithful.url,
                       "--model", "llama3.2", "--pass", "leaf", "--summary-way", "writes")
    assert code == 0, err
    assert stored_way(db, tokenizer) is None
    assert versions(db, tokenizer) and all(v.endswith(writes.WRITES_SUFFIX) for v in versions(db, tokenizer))


def test_a_model_that_invents_names_keeps_titles(db: Path, tokenizer: Tokenizer) -> None:
    with FakeOllama(responder=writer(override={"writes": INVENTED})) as server:
        code, got, err = calibrate(db, server.url)
    assert code == 0, err
    assert got["way"] == "titles" and got["invented"]["writes"] == 2 * len(load_pack())  # both tiers, every chat
    assert all(c["writes"]["tier"] == "fallback" and "Kubernetes" not in c["writes"]["text"] for c in got["chats"])
    assert stored_way(db, tokenizer) == "titles"


def test_a_model_that_echoes_keeps_titles(db: Path, tokenizer: Tokenizer) -> None:
    def echo(body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])[-600:]

    with FakeOllama(responder=echo) as server:
        code, got, err = calibrate(db, server.url)
    assert code == 0, err
    assert got["way"] == "titles"
    assert all(c[w]["tier"] == "fallback" for c in got["chats"] for w in ("titles", "writes"))
    assert got["scores"]["writes"] == got["scores"]["titles"]
    assert stored_way(db, tokenizer) == "titles"


def test_human_output_says_the_way_and_both_scores(db: Path, faithful: FakeOllama) -> None:
    code, out, err = cli("calibrate", "--db", str(db), "--ollama-host", faithful.url, "--model", "llama3.2")
    assert code == 0, err
    line, = out.strip().splitlines()
    assert line.startswith(f"{MODEL} summarises by writes: titles answered ") and "writes 100%" in line


def test_a_dead_server_is_one_line_exit_1_and_nothing_stored(db: Path, tokenizer: Tokenizer) -> None:
    code, got, err = calibrate(db, closed_port_url())
    assert code == 1 and got == {}
    line, = err.strip().splitlines()
    assert "not reachable" in line and "Traceback" not in err
    assert stored_way(db, tokenizer) is None


def test_a_missing_model_is_one_line_exit_1(db: Path, faithful: FakeOllama, tokenizer: Tokenizer) -> None:
    code, out, err = cli("calibrate", "--db", str(db), "--ollama-host", faithful.url, "--model", "nope:1b")
    assert code == 1 and out == ""
    line, = err.strip().splitlines()
    assert "nope:1b" in line
    assert stored_way(db, tokenizer) is None


def test_the_extractive_backend_cannot_be_calibrated(db: Path) -> None:
    code, _, err = cli("calibrate", "--db", str(db), "--backend", "extractive")
    assert code == 2 and "extractive" in err.strip()


def test_the_verdict_needs_the_margin_and_nothing_invented() -> None:
    def score(keys: int, invented: int = 0) -> Score:
        return Score(keys, 20, 0, 10, invented, 0)

    assert verdict(score(10), score(13)) == "writes"  # +10 points of 30 probes
    assert verdict(score(10), score(12)) == "titles"  # +6.7: not clearly more
    assert verdict(score(10), score(20, invented=1)) == "titles"
