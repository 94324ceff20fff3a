"""``check``, ``repair``, ``compact --dry-run``, ``prompts`` and the export's fidelity: the CLI
contracts of issue 8 (ARCHITECTURE §6), through real files and the fake server."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from hiermem_tui.config import Policy
from hiermem_tui.store import NewEpisode, NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.tokens import Tokenizer
from hiermem_tui.summarize.keylines import split
from tests.fakeollama import FakeOllama, empty

from ._engine_fixtures import T0, write_policy_config
from ._invariants import check_invariants
from .test_cli_compact import RUN_KEYS, cli, one_error_line

CHECK_KEYS = {"summary_id", "depth", "tier", "identifiers", "kept", "retention", "lost", "key_retention"}
PLAN_KEYS = {"kind", "depth", "first_seq", "last_seq", "source_tokens", "est_seconds"}
FEW_WORDS = "The user and the assistant talked about the work."
POLICY = Policy(idle_after=10 ** 9, fresh_tail=8, leaf_chunk_tokens=1500, leaf_min_episodes=4, leaf_target_tokens=600,
                condense_fanout=2, condensed_target_tokens=800, fidelity_threshold=0.8)


def chat_text(i: int) -> str:
    """A chat message the way people write with code: prose, and now and then a name that matters."""
    names = [f"src/app/handler_{i}.py", f"parse_item_{i}", f"HTTP {400 + i % 100}", f"`make test-{i}`",
             f"https://tracker.example.org/issues/{2000 + i}", f"ValueError{i}", f"commit {i:07x}af"]
    prose = ("We went through the failing case again and agreed that the behaviour looks wrong when the input "
             "is empty, so the next step is to try it once more with logging switched on and compare.")
    return f"{prose} This concerns {names[i % len(names)]}."


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = write_policy_config(tmp_path / "config.toml", POLICY)
    monkeypatch.setenv("HIERMEM_CONFIG", str(cfg))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    return cfg


@pytest.fixture
def db(tmp_path: Path, tokenizer: Tokenizer) -> Path:
    path = tmp_path / "f.db"
    with Store.open(path, tokenizer=tokenizer) as store:
        for sid, n in (("work", 120), ("other", 40)):
            store.sessions.upsert(sid, title=sid, source="test", created_at=T0)
            store.episodes.append(sid, [
                NewEpisode(str(i), "user" if i % 2 == 0 else "assistant", chat_text(i), T0 + timedelta(minutes=i))
                for i in range(n)
            ])
    return path


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(responder=lambda body: FEW_WORDS) as server:
        yield server


def run(db: Path, fake: FakeOllama, command: str, *argv: str) -> tuple[int, object, str]:
    code, out, err = cli(command, "--db", str(db), "--ollama-host", fake.url, "--model", "llama3.2", "--json", *argv)
    return code, json.loads(out) if out else None, err


def test_a_model_that_answers_a_few_words_is_measured_honestly(db: Path, fake: FakeOllama, config: Path) -> None:
    """In a format where the text is the model's own (``plain``): one call per leaf (no fidelity retry), its
    retention is what the model kept (nothing appended to make it 1.0), the lost names are its keywords, and
    the lists flag it: that is a low-fidelity summary a user can act on."""
    config.write_text('summary_format = "plain"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    code, obj, err = run(db, fake, "compact", "--session", "work", "--pass", "leaf")
    assert code == 0 and isinstance(obj, dict) and obj["tiers"]["normal"] == obj["summaries_created"] >= 3, err
    assert obj["rejections"] == {} and len(fake.chat_bodies) == obj["summaries_created"]
    # "3 normal" is not success: every one of them is counted as flagged, in the JSON and on the run
    assert obj["flagged"] == obj["summaries_created"]
    code, out, _ = cli("runs", "--db", str(db), "--session", "work", "--json")
    assert json.loads(out)[0]["flagged"] == obj["summaries_created"]
    code, out, _ = cli("check", "--db", str(db), "--session", "work", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and all(set(r) == CHECK_KEYS for r in rows)
    assert all(r["retention"] == 0 and r["key_retention"] == 0 for r in rows)
    with Store.open(db) as store:
        leaves = store.dag.summaries("work")
        assert all(split(s.content)[0] == FEW_WORDS and s.fid_added and s.keywords for s in leaves)
        assert all(s.fidelity is not None and s.keywords[0] == s.fidelity.lost[0]
                   for s in leaves)
        assert store.sessions.get("work").min_retention == 0  # type: ignore[union-attr]
    code, out, _ = cli("search", "--db", str(db), leaves[0].keywords[0].split("/")[-1].split(".")[0],
                       "--session", "work", "--json")
    assert any(h["kind"] == "summary" for h in json.loads(out))  # a lost name finds its summary


def test_in_notes_the_names_a_summary_is_said_to_leave_out_are_not_in_its_text(db: Path, fake: FakeOllama) -> None:
    """In ``notes`` (the default) the model writes a title and the chat's key lines follow it: kept and lost
    names are the summary's as a reader gets it. Measured on the title alone, every summary was flagged and
    its detail said "names the text left out" of names its lines showed (the demo, stop 31)."""
    code, obj, err = run(db, fake, "compact", "--session", "work", "--pass", "leaf")
    assert code == 0 and isinstance(obj, dict) and obj["summaries_created"] >= 3, err
    with Store.open(db) as store:
        leaves = store.dag.summaries("work")
        assert all(split(s.content)[0] == FEW_WORDS for s in leaves)  # the model's few words, then its key lines
        for s in leaves:
            assert s.fidelity is not None and s.fidelity.kept > 0
            assert not any(name in s.content for name in s.fidelity.lost)
            assert all(name not in s.content for name in s.keywords)


def test_check_lists_worst_first_measures_old_summaries_and_filters(db: Path, tokenizer: Tokenizer) -> None:
    with Store.open(db, tokenizer=tokenizer) as store:
        sid_good, sid_bad = new_id("s"), new_id("s")
        good = "handler_0.py parse_item_1 HTTP 402 make test-3 https://tracker.example.org/issues/2004 ValueError5"
        store.dag.write([
            SummaryWrite(NewSummary(sid_good, "work", 0, "normal", "extractive", None, "leaf-v1", good, 30),
                         episode_range=(0, 5)),
            SummaryWrite(NewSummary(sid_bad, "work", 0, "normal", "extractive", None, "leaf-v1", "Nothing kept.", 3),
                         episode_range=(6, 11)),
        ])
        assert store.dag.get(sid_bad).fidelity is None  # type: ignore[union-attr]
    code, out, _ = cli("check", "--db", str(db), "--session", "work", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["summary_id"] for r in rows] == [sid_bad, sid_good]
    assert rows[0]["retention"] == 0 and rows[0]["kept"] == 0 and len(rows[0]["lost"]) == rows[0]["identifiers"] >= 6
    assert rows[1]["retention"] >= 5 / 6 and rows[1]["tier"] == "normal" and rows[1]["depth"] == 0
    with Store.open(db, tokenizer=tokenizer) as store:  # measured once, stored for the lists
        assert store.dag.get(sid_bad).fidelity.identifiers == rows[0]["identifiers"]  # type: ignore[union-attr]
        assert store.sessions.get("work").min_retention == 0  # type: ignore[union-attr]
    code, out, _ = cli("check", "--db", str(db), "--session", "work", "--json", "--below", "0.5")
    assert [r["summary_id"] for r in json.loads(out)] == [sid_bad]
    code, out, _ = cli("check", "--db", str(db), "--session", "work")
    assert code == 0 and out.splitlines()[0].lstrip().startswith("0%") and "lost: " in out
    code, _, err = cli("check", "--db", str(db), "--session", "nope")
    assert code == 2 and "no session nope" in one_error_line(err)


def test_repair_remakes_fallbacks_and_low_fidelity_summaries_in_one_run(
    db: Path, fake: FakeOllama, tokenizer: Tokenizer
) -> None:
    fake.script(*[empty()] * 6)  # the first three leaves fall back
    code, obj, err = run(db, fake, "compact", "--session", "work")
    assert code == 0 and isinstance(obj, dict) and obj["tiers"]["fallback"] == 3, err
    with Store.open(db, tokenizer=tokenizer) as store:
        before = {s.id for s in store.dag.summaries("work")}
    def faithful(body: dict) -> str:
        """A model that names everything its material names (not what the previous summary did)."""
        material = re.split(r"<(?:conversation|summaries)>", body["messages"][1]["content"])[-1]
        names = re.findall(r"This concerns (.+?)\.\n", material)
        # the names a source summary listed (its own line, not the chat's "We went through …")
        names += [n for part in re.findall(r"(?m)^(?:The user and the assistant went through|Also mentioned:) (.+?)\.?$",
                                           material)
                  for n in part.split(", ")]
        return "The user and the assistant went through " + ", ".join(dict.fromkeys(names)) + "."

    fake.responder = faithful
    code, obj, err = run(db, fake, "repair", "--session", "work")
    assert code == 0 and isinstance(obj, dict) and set(obj) == RUN_KEYS, err
    with Store.open(db, tokenizer=tokenizer) as store:
        (rep,) = [r for r in store.runs.of_session("work") if r.kind == "repair"]
        assert rep.id == obj["run_id"] and rep.status == "done" and rep.summaries_created == obj["summaries_created"]
        now = store.dag.summaries("work")
        assert not [s for s in now if s.tier == "fallback"]
        replaced = before - {s.id for s in now}
        assert len(replaced) >= 3 and all(store.dag.get(i).status == "superseded" for i in replaced)  # type: ignore[union-attr]
        check_invariants(store, "work", fresh_tail=POLICY.fresh_tail)
    code, out, _ = cli("check", "--db", str(db), "--session", "work", "--json", "--below", "0.8")
    still = json.loads(out)  # a repair is a new attempt, not a promise: what it could not fix is listed
    assert all(r["tier"] != "fallback" for r in still)
    code, obj, _ = run(db, fake, "repair", "--all")  # "other" has no summaries: never taken
    assert code == 0 and [r["session"] for r in obj] == (["work"] if still else [])


def test_dry_run_plans_what_compact_then_makes_and_writes_nothing(db: Path, fake: FakeOllama) -> None:
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    code, out, err = cli("compact", "--db", str(db), "--session", "work", "--dry-run", "--json", "--model", "llama3.2")
    plan = json.loads(out)
    assert code == 0 and set(plan) == {"session", "planned"} and plan["session"] == "work", err
    assert plan["planned"] and all(set(p) == PLAN_KEYS for p in plan["planned"])
    # never used and no server at the default host: a guess from the model's size (issue 20: never "~?")
    assert all(isinstance(p["est_seconds"], float) and p["est_seconds"] > 0 for p in plan["planned"])
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest and not fake.requests
    code, out, _ = cli("compact", "--db", str(db), "--session", "work", "--dry-run", "--model", "llama3.2")
    assert code == 0 and "times: a guess from the model's size (3B;" in out and "not measured yet" in out
    code, out, _ = cli("compact", "--db", str(db), "--session", "work", "--dry-run", "--json", "--model", "llama3.2",
                       "--ollama-host", fake.url)
    # the server answers: a one-token call lets the model load, one short call times the plan; the file is untouched
    assert code == 0 and all(isinstance(p["est_seconds"], float) for p in json.loads(out)["planned"])  # (a fast fake)
    assert [b["options"]["num_predict"] for b in fake.chat_bodies] == [1, 32]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    code, obj, _ = run(db, fake, "compact", "--session", "work")
    with Store.open(db) as store:
        made = sorted((s.depth, s.first_seq, s.last_seq) for s in store.dag.summaries("work"))
        brief = store.briefs.active("work")
    assert made == sorted((p["depth"], p["first_seq"], p["last_seq"]) for p in plan["planned"] if p["kind"] != "brief")
    assert brief is not None and [p for p in plan["planned"] if p["kind"] == "brief"] == [
        {"kind": "brief", "depth": -1, "first_seq": 0, "last_seq": brief.last_seq, "source_tokens": 350,
         "est_seconds": plan["planned"][-1]["est_seconds"]}]  # the brief is planned last, over the whole session
    code, out, _ = cli("compact", "--db", str(db), "--all", "--dry-run", "--json", "--model", "llama3.2")
    arr = json.loads(out)
    assert code == 0 and isinstance(arr, list) and [p["session"] for p in arr] == ["other"]
    assert arr[0]["planned"] and all(isinstance(p["est_seconds"], float) for p in arr[0]["planned"])  # measured now
    code, out, _ = cli("compact", "--db", str(db), "--all", "--dry-run")
    assert code == 0 and out.startswith("other: ") and re.search(r"\d+ summar(y|ies) planned", out)


def test_prompts_show_defaults_and_edits_and_summaries_record_the_version(
    db: Path, fake: FakeOllama, config: Path
) -> None:
    code, out, _ = cli("prompts", "--json")
    prompts = json.loads(out)
    assert code == 0 and list(prompts) == ["leaf.normal", "leaf.aggressive", "condensed.normal", "condensed.aggressive"]
    assert prompts["leaf.normal"]["version"] == "leaf-v4" and prompts["leaf.normal"]["edited"] is False
    assert "{material}" in prompts["leaf.normal"]["instruction"]
    config.write_text(config.read_text() + '\n[prompts."leaf.normal"]\ninstruction = "Notes on:\\n{material}"\n')
    code, out, _ = cli("prompts", "--json")
    edited = json.loads(out)["leaf.normal"]
    assert edited["edited"] is True and edited["version"].startswith("leaf-v4~")
    code, obj, _ = run(db, fake, "compact", "--session", "work", "--pass", "leaf")
    assert fake.chat_bodies[0]["messages"][1]["content"].startswith("Notes on:\n")
    with Store.open(db) as store:
        # each leaf is the one answer, made with the edited prompt
        assert {s.prompt_version for s in store.dag.summaries("work")} == {edited["version"]}
    config.write_text(config.read_text().replace("{material}", "nothing"))
    code, _, err = cli("prompts")
    assert code == 2 and "must contain {material}" in one_error_line(err)


def test_export_carries_fidelity(db: Path, fake: FakeOllama) -> None:
    run(db, fake, "compact", "--session", "work", "--pass", "leaf")
    code, out, _ = cli("export", "--db", str(db), "--session", "work", "--format", "json")
    summaries = json.loads(out)["summaries"]
    code, out, _ = cli("check", "--db", str(db), "--session", "work", "--json")
    checked = {r["summary_id"]: r for r in json.loads(out)}
    for s in summaries:
        assert s["fidelity"] == {k: checked[s["id"]][k] for k in ("identifiers", "kept", "lost")}
        assert s["fidelity_added"] is True and s["rejections"] == [] and s["trimmed"] is None
        assert s["keywords"] == checked[s["id"]]["lost"][: len(s["keywords"])] and s["keywords"]
