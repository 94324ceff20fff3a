"""A brief for every session (issue 35): what it was about, decided, made, the main problem and its fix, where it
ended. The chat's own words chosen in one pass; one model call at most, for the title and the about line;
made at the end of a full pass, again only when the session gains messages; old ones kept as versions."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hiermem_tui.compaction import make_runner
from hiermem_tui.compaction.requests import brief_level, brief_material
from hiermem_tui.compaction.planner import Planner, idle
from hiermem_tui.config import Policy, Settings
from hiermem_tui.store import NewSummary, Store, SummaryWrite, new_id
from hiermem_tui.store.episodes import NewEpisode
from hiermem_tui.summarize import Summariser
from hiermem_tui.summarize.brief import BRIEF_TOKENS, LEVEL, Material, answer_fields, laid_out, render
from hiermem_tui.summarize.extractive import ExtractiveBackend
from hiermem_tui.summarize.keylines.carried import HEAD
from hiermem_tui.summarize.ollama_backend import OllamaBackend
from hiermem_tui.summarize.types import SourceItem
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

from ._cli import run as cli
from ._engine_fixtures import add_episodes
from ._invariants import check_invariants

T0 = datetime(2025, 4, 12, 9, 0, tzinfo=timezone.utc)
CHAT = [
    ("user", "I want to build a greenhouse sensor with an ESP32 and a BME280. Which pins should I use?"),
    ("assistant", "Use these pins:\n\n| Function | GPIO |\n|---|---|\n| BME280 SDA | GPIO21 |\n| BME280 SCL | GPIO22 |\n"
                  "| Soil sensor | GPIO34 |\n\nI'd go with Arduino rather than ESPHome, because you want full control "
                  "of the short awake phase. Want me to write the sketch?"),
    ("user", "ok arduino it is. write the sketch please"),
    ("assistant", "Save this as greenhouse_sensor.ino:\n\n```cpp\n#define SOIL_PIN 34\n"
                  "const char* TOPIC = \"greenhouse/sensor1/state\";\n```\n\nIt publishes one JSON state per wake."),
    ("user", "it boot-loops now:\n\nrst:0xf (BROWNOUT_RST),boot:0x13\nBrownout detector was triggered error"),
    ("assistant", "The brownout is caused by the regulator sagging when WiFi starts. The fix is a 1000 µF capacitor "
                  "across 3V3 and GND, and 15 dBm transmit power."),
    ("user", "that was it, works now 👍 last thing: how often should it wake?"),
    ("assistant", "Every 10 minutes: about 209 days on the 18650 cell by the battery table."),
    ("user", "thanks, that's it for now"),
]


def items(chat: list[tuple[str, str]] = CHAT) -> list[tuple[int, SourceItem]]:
    return [(i, SourceItem("episode", t, len(t.split()), T0, T0, role=r)) for i, (r, t) in enumerate(chat)]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


def test_a_brief_is_the_chats_words_chosen_for_what_a_reader_asks_first(tok: Tokenizer) -> None:
    material = Material().read(items())
    text = render(material, "", tok)
    lines = text.splitlines()
    assert tok.count(text) <= BRIEF_TOKENS
    assert lines[0].startswith('Asked: user: "I want to build a greenhouse sensor')  # no model: the first request
    problem = next(ln for ln in lines if ln.startswith("Problem:"))
    assert "Brownout detector was triggered" in problem and "1000 µF capacitor" in problem  # the problem, its fix
    decided = next(ln for ln in lines if ln.startswith("Decided:"))
    assert "ok arduino it is" in decided and "rather than ESPHome" in decided  # the decision with its reason
    assert next(ln for ln in lines if ln.startswith("Written")) == "Written in the chat: greenhouse_sensor.ino"
    ended = lines[-1]
    assert ended.startswith('Ended: user: "that was it, works now') and "Every 10 minutes" in ended  # answered
    assert 'then user: "thanks, that\'s it for now"' in ended  # the closing words are not the last request


def test_an_unanswered_last_request_is_said_so(tok: Tokenizer) -> None:
    material = Material().read(items(CHAT[:7]))
    assert render(material, "", tok).splitlines()[-1].endswith("→ not answered")


def test_every_quote_is_the_chats_own_words(tok: Tokenizer) -> None:
    said = " ".join(" ".join(t.split()) for _, t in CHAT)
    for ln in render(Material().read(items()), "", tok).splitlines():
        for quote in json.loads("[" + ",".join(f'"{q}"' for q in _quotes(ln)) + "]"):
            assert quote.removesuffix("…").replace("…; ", "; ").split("; ")[0][:40] in said, quote


def _quotes(line: str) -> list[str]:
    import re

    return [q.replace('"', "") for q in re.findall(r': "(.+?)"(?: →| ·|$| \()', line)]


def test_a_brief_shows_no_summary_title(tok: Tokenizer) -> None:
    material = Material().read(items())
    material.summaries = ["Wiring the BME280\nIn the chat's words:", "Fixing the brownout\nIn the chat's words:"]
    text = render(material, "", tok)
    assert "Wiring the BME280" not in text and "Steps:" not in text  # a model's titles are not the chat's words


@pytest.mark.parametrize(("said", "kept"), [
    # a log record the user shows as data to work on is not a problem they met
    ("here is a sample of our logs:\n\n2025-03-14T09:21:07Z ERROR [db::pool] connection timed out", False),
    # a list the user pasted (a draft's thresholds) is not a problem
    ("my draft, it feels flabby:\n\n- error rate over 1% for 5 minutes\n- p99 latency over 2s", False),
    ("it crashes now:\n\nTraceback (most recent call last):\nKeyError: 'Region'", True),
    # a test that went well, whatever it cannot reach, is no problem: a pasted line needs an error word
    ("guest network tested too: a friend's phone on Harbour-Guest gets 10.10.30.x, internet works, can't see "
     "anything else, client isolation on.", False),
])
def test_a_problem_is_what_went_wrong_not_what_the_user_shows(said: str, kept: bool, tok: Tokenizer) -> None:
    chat = [("user", said), ("assistant", "The cause is a header with a trailing space, so Region is not found.")]
    lines = render(Material().read(items(chat)), "", tok).splitlines()
    assert any(ln.startswith("Problem:") for ln in lines) is kept


def test_an_answer_that_names_no_word_of_the_problem_is_not_its_cause(tok: Tokenizer) -> None:
    chat = [("user", "the import fails with KeyError: 'Region'"),
            ("assistant", "That explains exactly what she is seeing in the November chart."),
            ("user", "ok and the region column?"),
            ("assistant", "The cause: the Region header has a trailing space. The fix is to strip the column names.")]
    problem = next(ln for ln in render(Material().read(items(chat)), "", tok).splitlines() if ln.startswith("Problem:"))
    assert "November" not in problem and "trailing space" in problem and "strip the column names" in problem


@pytest.mark.parametrize(("said", "decided"), [
    ("ok induction it is.", True),
    ("love it, v2 it is, ship that", True),
    ("here's the timeline table as it is now in case:", False),
    ("we agreed on induction last night.", True),
    # others agreeing with a critique is not the user's choice
    ("two others in the group kind of agreed.", False),
])
def test_a_decision_is_the_users_choice(said: str, decided: bool, tok: Tokenizer) -> None:
    chat = [("user", "which range should we get?"), ("assistant", "Induction is faster and safer than gas."),
            ("user", said), ("assistant", "Noted.")]
    lines = render(Material().read(items(chat)), "", tok).splitlines()
    assert any(ln.startswith("Decided:") for ln in lines) is decided


def test_a_reason_is_the_advice_that_names_what_was_chosen_not_a_word_of_it(tok: Tokenizer) -> None:
    chat = [("user", "Haywards sells croissants to cafés at £1.70. should i match them?"),
            ("assistant", "Some bakeries do a smaller café croissant at a lower price instead of the usual weight. "
                          "I'd suggest a trial week at list price, because tasting the difference sells it."),
            ("user", "not doing a smaller one. trial week at list price it is."), ("assistant", "Good.")]
    decided = next(ln for ln in render(Material().read(items(chat)), "", tok).splitlines() if ln.startswith("Decided:"))
    assert "tasting the difference" in decided and "smaller café croissant" not in decided
    chat[1] = ("assistant", "Some bakeries do a smaller café croissant at a lower price instead of the usual weight.")
    decided = next(ln for ln in render(Material().read(items(chat)), "", tok).splitlines() if ln.startswith("Decided:"))
    assert "why" not in decided  # one shared word ("price") names no choice


@pytest.mark.parametrize(("said", "done"), [
    ("0.1.0 is tagged and on crates.io.", True),
    ("i've never signed anything this big that wasn't a mortgage", False),
    ("they'd sign right away IF the portal is live by september.", False),
    ("i signed up for my first marathon, dublin on october 26.", False),
])
def test_only_a_release_the_user_reports_is_done(said: str, done: bool, tok: Tokenizer) -> None:
    chat = [("user", "help me finish this"), ("assistant", "Sure, here it is."), ("user", said), ("assistant", "Great.")]
    assert ("done:" in render(Material().read(items(chat)), "", tok)) is done


@pytest.mark.parametrize("answer", ['Decided: user: "ok arduino it is."', 'Problem: the brownout',
                                    'The chat: user: "which pins should I use?"'])
def test_an_answer_that_writes_the_brief_back_is_laid_out(answer: str) -> None:
    assert laid_out(answer)
    assert not laid_out("The user builds an ESP32 greenhouse sensor and fixes a brownout.")


@pytest.mark.parametrize(("answer", "fields"), [
    ("Title: Greenhouse sensor\nAbout: The user builds an ESP32 greenhouse sensor.",
     ("Greenhouse sensor", "The user builds an ESP32 greenhouse sensor.")),
    ("**Title:** Greenhouse sensor\n\n**About:** Wiring and MQTT.", ("Greenhouse sensor", "Wiring and MQTT.")),
    ("Greenhouse sensor\nThe user builds a sensor.", ("Greenhouse sensor", "The user builds a sensor.")),
    ("", ("", "")),
])
def test_the_models_title_and_about_line_are_read_from_its_answer(answer: str, fields: tuple[str, str]) -> None:
    assert answer_fields(answer) == fields


async def test_one_call_writes_the_title_and_about_line_and_a_bad_one_leaves_the_chats_words(tok: Tokenizer) -> None:
    material = Material().read(items())
    with FakeOllama() as fake:
        fake.script(Reply("Title: ESP32 greenhouse sensor\nAbout: The user builds an ESP32 greenhouse sensor with "
                          "a BME280 and fixes a brownout."),
                    Reply("Title: Flux capacitor at 88 mph\nAbout: The user builds https://example.com/deloreans."))
        backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=30)
        try:
            summariser = Summariser(backend, tok, summary_format="notes")
            good = await summariser.brief(material)
            bad = await summariser.brief(material)
        finally:
            await backend.aclose()
        assert len(fake.chat_requests) == 2  # one call a brief, never a retry
    assert (good.tier, good.backend, good.title) == ("normal", "ollama", "ESP32 greenhouse sensor")
    assert good.text.splitlines()[0] == "About: The user builds an ESP32 greenhouse sensor with a BME280 and fixes a brownout."
    assert good.about == "The user builds an ESP32 greenhouse sensor with a BME280 and fixes a brownout."
    # an about line naming what the chat never named is refused: the brief keeps the chat's own first request
    assert bad.tier == "fallback" and bad.backend == "extractive" and bad.text.startswith("Asked: user:")
    assert any(r.reason == "invented" for r in bad.rejections)
    assert bad.title == "Flux capacitor at 88 mph" or bad.title == ""


async def test_the_extractive_backend_briefs_without_a_model(tok: Tokenizer) -> None:
    made = await Summariser(ExtractiveBackend(tok), tok).brief(Material().read(items()))
    assert (made.tier, made.backend, made.model) == ("normal", "extractive", None)
    assert made.about == made.text.splitlines()[0]


# ------------------------------------------------------------------------------------------ in the store
def add(store: Store, sid: str, chat: list[tuple[str, str]], start: int = 0, when: datetime = T0) -> None:
    if store.sessions.get(sid) is None:
        store.sessions.upsert(sid, title=sid, source="test", created_at=when)
    store.episodes.append(sid, [NewEpisode(str(start + i), r, t, when + timedelta(minutes=start + i))
                                for i, (r, t) in enumerate(chat)])


async def test_a_full_pass_briefs_a_session_and_again_only_when_it_gains_messages(
    tmp_path: Path, tok: Tokenizer
) -> None:
    db = tmp_path / "b.db"
    with Store.open(db, tokenizer=tok) as store:
        add(store, "s", CHAT[:6])
        add(store, "one", CHAT[:1])  # one message: nothing to brief
        runner = make_runner(store, Settings(db_path=db, backend="extractive", model=None))
        run = await runner.compact("s", "full")
        first = store.briefs.active("s")
        assert run is not None and first is not None and (first.first_seq, first.last_seq) == (0, 5)
        assert await runner.compact("s", "full", skip_idle=True) is None  # nothing new: no run, no new brief
        assert store.briefs.active("one") is None and not Planner(store, runner.policy).brief_due("one")
        summaries = {s.id for s in store.dag.summaries("s")}
        add(store, "s", CHAT[6:], start=6)
        await runner.compact("s", "full")
        second = store.briefs.active("s")
        assert second is not None and second.id != first.id and second.last_seq == 8
        assert [b.status for b in store.briefs.versions("s")] == ["active", "superseded"]  # the old one kept
        assert {s.id for s in store.dag.summaries("s")} >= summaries  # the DAG only grew
        await runner.aclose()


def test_an_idle_session_is_summarised_to_its_end_and_one_in_use_keeps_its_fresh_tail(
    tmp_path: Path, tok: Tokenizer
) -> None:
    """The last 16 messages of a finished chat were never summarised: no summary said where it ended."""
    policy = Policy(fresh_tail=4, leaf_chunk_tokens=60, leaf_min_episodes=2)
    now = datetime.now(timezone.utc)
    with Store.open(tmp_path / "i.db", tokenizer=tok) as store:
        add(store, "old", CHAT * 2, when=T0)  # last month's import: idle
        add(store, "live", CHAT * 2, when=now - timedelta(minutes=20))  # a chat still going
        planner = Planner(store, policy)
        old, live = store.sessions.get("old"), store.sessions.get("live")
        assert old is not None and live is not None
        assert idle(old, policy, now.timestamp()) and not idle(live, policy, now.timestamp())
        assert planner.leaf("old")[-1].last_seq == old.episodes - 1  # to its end, whatever the leftover's size
        assert planner.leaf("live")[-1].last_seq < live.episodes - policy.fresh_tail


def test_sessions_json_and_the_export_carry_the_brief(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERMEM_CONFIG", str(tmp_path / "none.toml"))
    src = tmp_path / "chat.jsonl"
    src.write_text("".join(json.dumps({"session": "greenhouse", "role": r, "content": t,
                                       "created_at": (T0 + timedelta(minutes=i)).isoformat()}) + "\n"
                           for i, (r, t) in enumerate(CHAT)), encoding="utf-8")
    db = str(tmp_path / "e.db")
    assert cli("import", "--db", db, str(src))[0] == 0
    code, out, _ = cli("sessions", "--db", db, "--json")
    assert code == 0 and json.loads(out)[0]["about"] is None
    assert cli("compact", "--db", db, "--all", "--backend", "extractive")[0] == 0
    code, out, _ = cli("sessions", "--db", db, "--json")
    about = json.loads(out)[0]["about"]
    assert about.startswith('Asked: user: "I want to build a greenhouse sensor')
    code, out, _ = cli("export", "--db", db, "--session", "greenhouse", "--format", "json")
    brief: dict[str, Any] = json.loads(out)["brief"]
    assert set(brief) >= {"text", "first_seq", "last_seq", "made_by", "model", "tier"}
    assert (brief["first_seq"], brief["last_seq"], brief["made_by"], brief["model"]) == (0, 8, "extractive", None)
    assert brief["text"].splitlines()[0] == about
    with Store.open(tmp_path / "e.db") as store:
        check_invariants(store, "greenhouse", fresh_tail=0)  # an import of last month: idle, summarised to its end
        assert store.dag.summaries("greenhouse")[-1].last_seq == 8


async def test_a_server_that_echoes_the_prompt_never_writes_a_brief(tok: Tokenizer) -> None:
    """Issue 19's echo server (it answers the prompt's own tail) stored the ask as a summary; a brief's title and
    about line are judged by the same checks, so neither is kept."""
    def echo(body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])[-600:]

    with FakeOllama(responder=echo) as fake:
        backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=30)
        try:
            made = await Summariser(backend, tok, summary_format="notes").brief(Material().read(items()))
        finally:
            await backend.aclose()
    assert made.tier == "fallback" and made.backend == "extractive" and made.title == ""
    assert "Answer in exactly two lines" not in made.text and made.text.startswith("Asked: user:")


def _titled(store: Store, title: str, depth: int, *, episodes: tuple[int, int] | None = None,
            sources: list[str] | None = None) -> str:
    s = NewSummary(id=new_id("s"), session_id="s", depth=depth, tier="normal", backend="ollama", model="m",
                   prompt_version="test", content=f"{title}\n{HEAD}\n- user: \"a line\"", tokens=9)
    store.dag.write([SummaryWrite(s, episode_range=episodes, source_ids=sources)])
    return s.id


def test_a_written_briefs_level_opens_condensed_summaries_while_it_stays_within_its_count(tmp_path: Path) -> None:
    with Store.open(tmp_path / "steps.db") as store:
        add_episodes(store, "s", 0, 60)
        early = [_titled(store, f"Early {k}", 0, episodes=(3 * k, 3 * k + 2)) for k in range(3)]
        many = [_titled(store, f"Late {k}", 0, episodes=(9 + 3 * k, 11 + 3 * k)) for k in range(LEVEL)]
        _titled(store, "Early part", 1, sources=early)
        _titled(store, "Late part", 1, sources=many)
        # the first condensed opens into its three leaves; the second's eight would pass LEVEL: it stays whole
        assert [s.content.split("\n")[0] for s in brief_level(store, "s")] == ["Early 0", "Early 1", "Early 2",
                                                                                "Late part"]
        # only a model that writes the brief reads the summaries: a brief of quotes does not fetch them
        assert brief_material(store, "s").summaries == []
        assert [t.split("\n")[0] for t in brief_material(store, "s", summaries=True).summaries][-1] == "Late part"


def test_a_brief_quotes_verdicts_the_users_report_that_it_worked_and_the_answers_own_gist(tok: Tokenizer) -> None:
    chat = [
        ("user", "our aws bill is $14,212 and the cto wants it under $10k. what are the options?"),
        ("assistant", "Options:\n\n- S3 gateway endpoint\n- single NAT\n- interface endpoints"),
        ("user", "ok decisions:\n- S3 gateway endpoint: yes, doing it tomorrow\n- single NAT: no, keeping 3. the "
                 "cross AZ thing kills it\n\nnow the lifecycle file"),
        ("assistant", "Here it is:\n\n```hcl\n# s3_lifecycle.tf\nresource \"aws_s3_bucket_lifecycle_configuration\" "
                      "\"exports\" {}\n```"),
        ("user", "copied the file from legacy/buckets.tf and terraform plan blows up:\n\nError: Unsupported "
                 "argument\n  enabled = true"),
        ("assistant", "The cause is the file you copied from. It uses the provider v3 inline syntax, which the "
                      "standalone resource does not accept."),
        ("user", "validate clean, plan says 2 to add. told imani.\n\none last thing: can you make me a savings table "
                 "i can paste into the PR?"),
        ("assistant", "Great progress on the plan.\n\nHere's a paste-ready version for the PR.\n\n| Change | Saving |\n"
                      "|---|---|\n| NAT | $1,750 |\n| **Total** | $3,910 |"),
    ]
    lines = render(Material().read(items(chat)), "", tok).splitlines()
    decided = next(ln for ln in lines if ln.startswith("Decided:"))
    assert "single NAT: no, keeping 3. the cross AZ thing kills it" in decided
    problem = next(ln for ln in lines if ln.startswith("Problem:"))
    assert "provider v3 inline syntax" in problem  # a short cause is quoted with the sentence that explains it
    assert problem.endswith('→ user: "validate clean, plan says 2 to add."')
    assert "s3_lifecycle.tf" in next(ln for ln in lines if ln.startswith("Written in the chat:"))
    assert lines[-1] == ('Ended: user: "… one last thing: can you make me a savings table i can paste into the PR?" '
                         '→ assistant: "Here\'s a paste-ready version for the PR. … Total | $3,910"')


@pytest.mark.parametrize("message", [
    "two things: i want to pass levels like `-l warn,error`. and a --since flag?",  # a word of code, not an error
    "update: 90 days of logs is out, the auditor wants a year. can you redo the rule?",  # "is out" is no release
])
def test_words_in_code_or_a_plain_is_out_are_no_problem_and_nothing_done(tok: Tokenizer, message: str) -> None:
    material = Material().read(items([("user", "make me a log tool"), ("assistant", "Here it is."),
                                      ("user", message), ("assistant", "Sure.")]))
    assert material.problems == [] and material.done == []


def test_a_correction_later_in_a_message_is_a_problem_with_the_users_word_that_it_is_fixed(tok: Tokenizer) -> None:
    chat = [("user", "can you check the tide line in ch 7?"), ("assistant", "The booklet line reads well."),
            ("user", "wait. i just opened my timeline. the 9:15 tide made the dawn scene's water level wrong in ch 7."),
            ("assistant", "Then the booklet line should say 10:05; change it in both places."),
            ("user", "fixed. now the pub scene?"), ("assistant", "Cut it to the bar.")]
    problem = next(ln for ln in render(Material().read(items(chat)), "", tok).splitlines() if ln.startswith("Problem:"))
    assert "water level wrong" in problem and problem.endswith('→ user: "fixed."')


def test_a_decision_that_names_nothing_takes_its_reason_from_the_advice_it_replies_to(tok: Tokenizer) -> None:
    chat = [("user", "which battery size should we get for the solar install?"),
            ("assistant", "I'd go with the 10 kWh battery, because the 13.5 kWh one never fills in winter."),
            ("user", "ugh ok, 10 it is."), ("assistant", "Good. Next, the export limit.")]
    decided = next(ln for ln in render(Material().read(items(chat)), "", tok).splitlines() if ln.startswith("Decided:"))
    assert decided == ('Decided: user: "ugh ok, 10 it is." (why: assistant: "I\'d go with the 10 kWh battery, because '
                       'the 13.5 kWh one never fills in winter.")')
