"""A reasoning model's ``<think>…</think>`` written into its reply (issue 36 item 9): every importer whose
source keeps a reply as the model streamed it (oterm, in test_import_oterm.py; native JSONL, ShareGPT, both
llm layouts here) keeps the thinking in the episode's metadata, not in the text a reader sees and a
summary is made of."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hiermem_tui.importers import jsonl, llm, sharegpt
from hiermem_tui.importers.base import ParsedSession, Problems
from tests.unit.test_import_llm import LEGACY_SCHEMA, THREADS_SCHEMA, _iso, _Tree

THOUGHT = "<think>\nThe user asks for 2 + 2. That is 4.\n</think>\n\n"
ANSWER = "2 + 2 = 4."
REASONING = {"reasoning": "The user asks for 2 + 2. That is 4."}
USER = "Why do you write <think> first?"  # a user's words are never taken apart


def _parse(module: object, path: Path) -> tuple[list[ParsedSession], Problems]:
    problems = Problems()
    return list(module.parse(path, problems)), problems  # type: ignore[attr-defined]


def _shown(session: ParsedSession) -> list[tuple[str, str]]:
    return [(e.role, e.content) for e in session.episodes]


def test_native_jsonl(tmp_path: Path) -> None:
    src = tmp_path / "chat.jsonl"
    lines = [("user", USER), ("assistant", THOUGHT + ANSWER), ("user", "And 3 + 3?"),
             ("assistant", "<think>\nHmm, 6.")]  # cut off while thinking: nothing was answered
    src.write_text("".join(json.dumps({"session": "s", "role": r, "content": c}) + "\n" for r, c in lines))
    (session,), problems = _parse(jsonl, src)
    assert _shown(session) == [("user", USER), ("assistant", ANSWER), ("user", "And 3 + 3?")]
    assert session.episodes[1].metadata == REASONING
    assert session.episodes[1].former_content == THOUGHT + ANSWER  # what an earlier import stored
    assert problems.examples == ["chat.jsonl:4: message with only reasoning"]
    assert jsonl.parse_line(json.dumps({"session": "s", "role": "assistant", "content": THOUGHT + ANSWER}).encode(),
                            1)[2].content == ANSWER  # watch mode reads lines through the same check


def test_sharegpt_dataset_keeps_the_id_hashed_over_the_turns_as_written(tmp_path: Path) -> None:
    src = tmp_path / "data.json"
    record = {"id": "7", "conversations": [{"from": "human", "value": "What is 2 + 2?"},
                                           {"from": "gpt", "value": THOUGHT + ANSWER}]}
    src.write_text(json.dumps([record]))
    (session,), problems = _parse(sharegpt, src)
    assert problems.count == 0 and _shown(session)[1] == ("assistant", ANSWER)
    assert session.episodes[1].metadata == REASONING
    plain = tmp_path / "plain.json"  # the same record without the block has another opening, another id
    plain.write_text(json.dumps([{**record, "conversations": [record["conversations"][0],
                                                               {"from": "gpt", "value": ANSWER}]}]))
    assert _parse(sharegpt, plain)[0][0].id != session.id
    assert session.id == "sharegpt:7-" + _digest_over_raw(record)


def _digest_over_raw(record: dict) -> str:
    """The id suffix an importer that kept the block in the text gave this record."""
    from hiermem_tui.importers._versions import first_exchange_digest
    from hiermem_tui.importers.base import ParsedEpisode

    roles = {"human": "user", "gpt": "assistant"}
    raw = [ParsedEpisode(roles[t["from"]], t["value"]) for t in record["conversations"]]
    return first_exchange_digest(record["id"], raw)


def test_llm_logs_in_both_layouts(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.db"
    with sqlite3.connect(legacy) as db:
        db.executescript(LEGACY_SCHEMA)
        db.execute("INSERT INTO conversations VALUES ('c1', 'Sums', 'deepseek-r1')")
        db.executemany(
            "INSERT INTO responses (id, model, prompt, response, conversation_id, datetime_utc) VALUES (?,?,?,?,?,?)",
            [("r1", "deepseek-r1", "What is 2 + 2?", THOUGHT + ANSWER, "c1", _iso(0)),
             ("r2", "deepseek-r1", USER, "<think>\nNo answer yet", "c1", _iso(1))])
    (session,), problems = _parse(llm, legacy)
    assert _shown(session) == [("user", "What is 2 + 2?"), ("assistant", ANSWER), ("user", USER)]
    assert session.episodes[1].metadata == {"model": "deepseek-r1", **REASONING}
    assert problems.examples == ["legacy.db:responses r2: message with only reasoning"]

    threads = tmp_path / "threads.db"
    with sqlite3.connect(threads) as db:
        db.executescript(THREADS_SCHEMA)
        tree = _Tree(db)
        u = tree.add(None, "user", ("text", "What is 2 + 2?", None, None))
        a = tree.add(u, "assistant", ("text", THOUGHT + ANSWER, None, None))
        db.execute("INSERT INTO threads (id, name, tip_message_hash, datetime_utc) VALUES ('t1', 'Sums', ?, ?)",
                   (a, _iso(0)))
    (session,), problems = _parse(llm, threads)
    assert problems.count == 0 and _shown(session) == [("user", "What is 2 + 2?"), ("assistant", ANSWER)]
    assert session.episodes[1].metadata == REASONING
