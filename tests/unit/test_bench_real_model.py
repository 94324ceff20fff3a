"""bench/bench_real_model.py: skips cleanly without a server, and its figures add up.

The benchmark itself is meant for a real model and never runs one in CI; here it runs
against the fake Ollama server on a small native-JSONL export, so the script cannot rot:
its importing, its use of the app's Runner, its pairing of each rejection with the answer
it judged, and its extractive baseline are all checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.fakeollama import FakeOllama, Reply, continues_chat

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_real_model.py"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
SUMMARY = "The user and the assistant changed `parse_config` in src/app/config.py and set retries to 42."


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def _samples(tmp: Path) -> Path:
    """A folder like ../shared/samples: one export the app imports, and a README it skips."""
    folder = tmp / "samples"
    folder.mkdir()
    (folder / "README.md").write_text("not a chat export\n")
    lines = []
    for i in range(60):
        role = "user" if i % 2 == 0 else "assistant"
        body = "Edit `parse_config` in src/app/config.py and set retries to 42. " + "The build log says nothing new. " * 40
        lines.append(json.dumps({"session": "bench-a", "title": "Bench A", "role": role, "content": body,
                                 "created_at": (T0 + timedelta(minutes=i)).isoformat()}))
    (folder / "chat.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_without_a_server_it_says_skipped_and_exits_0() -> None:
    res = _bench()
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines() == [
        "skipped: no --ollama-host given (this benchmark needs a real model; see bench/README.md)"
    ]


def test_bad_samples_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    res = _bench("--ollama-host", "http://127.0.0.1:9", "--samples", str(tmp_path / "missing"))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [f"bench_real_model: --samples {tmp_path / 'missing'} is not a directory"]


def test_figures_against_the_fake_server_add_up(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    with FakeOllama(responder=lambda body: SUMMARY) as fake:
        # the first leaf's normal answer is a chat reply, after a fifth of a second: rejected, and discarded
        fake.script(Reply(continues_chat().text, latency_s=0.2))
        res = _bench("--ollama-host", fake.url, "--model", "llama3.2", "--samples", str(_samples(tmp_path)),
                     "--sessions", "bench-a", "--limit-leaves", "2", "--json-out", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    total = data["total_leaves"]
    assert total["summaries"] == 2  # the limit held: the session has more chunks than that
    assert sum(total["tiers"].values()) == 2
    assert total["rejections"] == {"continues_chat": 1}
    runs = data["runs"]["bench-a"]  # one run of the app's Runner per leaf (rounds)
    assert [(r["kind"], r["status"], r["rejections"]) for r in runs] == [
        ("leaf", "done", {"continues_chat": 1}), ("leaf", "done", {})]
    first = data["summaries"][0]
    assert (first["first_seq"], first["tier"]) == (0, "aggressive")
    assert first["rejections"][0]["reason"] == "continues_chat"
    assert first["rejections"][0]["answer"] == continues_chat().text  # paired with the answer it judged
    assert first["calls"][1]["text"] == SUMMARY
    for s in data["summaries"]:
        assert s["compression"] == round(s["source_tokens"] / s["tokens"], 2)
        assert s["tokens"] <= s["target"] and s["keywords"] == s["lost"][: len(s["keywords"])]
        assert s["extractive"]["tokens"] > 0 and s["extractive"]["compression"] > 1
    assert total["retention"] == round(
        sum(s["kept"] for s in data["summaries"]) / sum(s["identifiers"] for s in data["summaries"]), 3)
    assert total["timeouts"] == 0 and total["length_rejections"] == 0 and data["all_summaries"]["over_target"] == 0
    # the rejected chat reply's seconds are the discarded share; its retry hit the fake's prompt cache
    assert first["discarded_seconds"] >= 0.2
    assert abs(data["all_summaries"]["discarded_seconds"] - first["discarded_seconds"]) <= 0.05  # the only one
    # (the prompt is the system text, the leaf's key lines and the ask: a retry evaluates its own ask only, about a
    # quarter of this small leaf's prompt; without the cache it would be all of it)
    assert first["retry_shares"] and all(0 < x <= 0.4 for x in first["retry_shares"])
    # every answer is measured: two leaves (in notes, a call each) and the one rejected attempt
    assert data["model_speed"]["calls"] == sum(len(s["calls"]) for s in data["summaries"]) >= 3
    assert "| **total** | 2 |" in res.stdout
    assert SUMMARY in res.stdout  # a summary quoted verbatim
