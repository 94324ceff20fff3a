"""A brief written whole by a model whose way is ``writes``: one call, judged as a written summary is, the
quoted brief when it is refused."""

from __future__ import annotations

from typing import Any

import pytest

from hiermem_tui.summarize import Summariser
from hiermem_tui.summarize.brief import BRIEF_TOKENS, Material
from hiermem_tui.summarize.brief_writes import ASK, SUMMARIES_HEADING, WRITTEN_VERSION
from hiermem_tui.summarize.ollama_backend import OllamaBackend
from hiermem_tui.summarize.types import BriefResult
from hiermem_tui.tokens import Tokenizer
from tests.fakeollama import FakeOllama, Reply

from .test_brief import items

FAITHFUL = ("Title: ESP32 greenhouse sensor\nAbout: The user builds an ESP32 greenhouse sensor with a BME280 and "
            "fixes a brownout.\nThe user chose Arduino rather than ESPHome for control of the awake phase. The "
            "assistant wrote greenhouse_sensor.ino. The ESP32 boot-looped with a brownout; a 1000 µF capacitor "
            "fixed it. The chat ended with waking every 10 minutes, answered, and the user's thanks.")
INVENTS = FAITHFUL.replace("every 10 minutes", "every 45 minutes on a 3000 mAh pack")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


async def brief_of(reply: str, tok: Tokenizer, way: str = "writes") -> tuple[BriefResult, list[dict[str, Any]]]:
    material = Material().read(items())
    material.summaries = ["ESP32 greenhouse sensor build\n- the BME280 on GPIO21/22", "Brownout fix and wake time"]
    with FakeOllama() as fake:
        fake.script(Reply(reply))
        backend = OllamaBackend(fake.url, "llama3.2", tok, timeout_s=30)
        try:
            made = await Summariser(backend, tok, summary_format="notes", summary_way=way).brief(material)
        finally:
            await backend.aclose()
        return made, fake.chat_bodies


async def test_a_model_that_writes_writes_the_whole_brief_from_the_summaries_and_the_quotes(tok: Tokenizer) -> None:
    made, bodies = await brief_of(FAITHFUL, tok)
    assert len(bodies) == 1
    prompt = str(bodies[0]["messages"][-1]["content"])
    assert SUMMARIES_HEADING in prompt and "Brownout fix and wake time" in prompt and prompt.endswith(ASK)
    assert 'Ended: user: "' in prompt  # the quoted brief is its material too
    assert (made.tier, made.backend, made.prompt_version) == ("normal", "ollama", WRITTEN_VERSION)
    text = made.text
    assert text.startswith("About: The user builds an ESP32 greenhouse sensor")
    assert "a 1000 µF capacitor fixed it" in text and "Title:" not in text
    assert made.title == "ESP32 greenhouse sensor" and tok.count(text) <= BRIEF_TOKENS


async def test_a_written_brief_naming_a_number_no_source_holds_is_the_quoted_brief_after_one_call(tok: Tokenizer) -> None:
    made, bodies = await brief_of(INVENTS, tok)
    assert len(bodies) == 1  # at most one call a brief
    assert made.tier == "fallback" and made.text.startswith('Asked: user: "')
    assert any(r.reason == "invented" for r in made.rejections)


async def test_a_model_that_titles_is_asked_only_for_the_title_and_about(tok: Tokenizer) -> None:
    made, bodies = await brief_of("Title: ESP32 greenhouse sensor\nAbout: The user builds an ESP32 greenhouse sensor "
                                  "with a BME280 and fixes a brownout.", tok, way="titles")
    assert ASK not in str(bodies[0]["messages"][-1]["content"])
    assert made.text.splitlines()[1].startswith(("Decided:", "Problem:", "Written in the chat:"))


async def test_a_written_briefs_prompt_shows_no_time(tok: Tokenizer) -> None:
    made, bodies = await brief_of(FAITHFUL, tok)
    assert "1970" not in str(bodies[0]["messages"][-1]["content"])  # the sources carry no time to show


async def test_a_name_the_chat_holds_in_another_case_or_the_singular_is_not_invented(tok: Tokenizer) -> None:
    from hiermem_tui.summarize.brief_writes import judge, sources_of
    from hiermem_tui.summarize.prompts import Prompt
    from hiermem_tui.summarize.types import Generation
    material = Material().read(items([("user", "replicate to my parents' hp microserver; the stag group's whatsapp "
                                                "is the worry, and the sata cable"), ("assistant", "Noted.")]))
    sources = sources_of(material, tok)
    prompt = Prompt("", "", "v", 0.2, 400, ask=ASK)

    def judged(paragraph: str) -> str:
        answer = f"Title: Replication plan\nAbout: The user plans to replicate a pool to a second box.\n{paragraph}"
        return judge(Generation(answer, 0, 0, 1.0), prompt, sources).reason
    assert judged("The user replicates to the MicroServer, fears WhatsApps and swaps a SATA cable.") == ""
    assert judged("The user replicates to a Synology DS920 instead.") == "invented"
