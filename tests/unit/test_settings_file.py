"""The settings file: precedence flag > environment > file > default, and a save that writes only
what the user changed, keeping the file's comments and unknown keys (issue 21 item 2)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hiermem_tui.config import DEFAULT_OLLAMA_HOST, Policy, load_settings, save_settings

FILE_HOST = "http://file-host:11434"
ENV_HOST = "http://env-host:11434"
FLAG_HOST = "http://flag-host:11434"


@pytest.mark.parametrize(
    ("in_file", "in_env", "flag", "expected"),
    [
        (False, False, None, DEFAULT_OLLAMA_HOST),
        (True, False, None, FILE_HOST),
        (True, True, None, ENV_HOST),
        (False, True, None, ENV_HOST),
        (True, True, FLAG_HOST, FLAG_HOST),
        (False, False, FLAG_HOST, FLAG_HOST),
    ],
)
def test_ollama_host_precedence_is_flag_then_environment_then_file_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_file: bool, in_env: bool, flag: str | None, expected: str
) -> None:
    config = tmp_path / "config.toml"
    if in_file:
        config.write_text(f'ollama_host = "{FILE_HOST}"\n')
    if in_env:
        monkeypatch.setenv("OLLAMA_HOST", ENV_HOST)
    else:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert load_settings(config, ollama_host=flag).ollama_host == expected


def test_model_and_backend_flags_win_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "file-model:1b"\nbackend = "extractive"\n')
    assert load_settings(config).model == "file-model:1b"
    s = load_settings(config, model="flag-model:7b", backend="ollama")
    assert (s.model, s.backend) == ("flag-model:7b", "ollama")


USER_FILE = """\
# my settings — do not lose this comment
theme = "nord"  # the one I like
model = "llama3.2"
experimental_thing = 42

[policy]
# smaller tails for my short chats
fresh_tail = 8

[my_own_table]
note = "kept"
"""


def test_a_save_writes_only_what_changed_and_keeps_comments_and_unknown_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    config = tmp_path / "config.toml"
    config.write_text(USER_FILE)
    # a run with one-off flags: they are in both settings, so never saved
    before = load_settings(config, ollama_host="http://127.0.0.1:9", model="qwen-oneoff:7b", backend="extractive")
    after = replace(before, theme="gruvbox", policy=replace(before.policy, leaf_min_episodes=6))
    save_settings(after, before)
    text = config.read_text()
    for kept in ("# my settings — do not lose this comment", "# the one I like", "experimental_thing = 42",
                 "# smaller tails for my short chats", "[my_own_table]", 'note = "kept"', 'model = "llama3.2"'):
        assert kept in text
    assert "127.0.0.1:9" not in text and "qwen-oneoff" not in text and "backend" not in text
    assert "ollama_host" not in text
    reread = load_settings(config)
    assert (reread.theme, reread.policy.fresh_tail, reread.policy.leaf_min_episodes) == ("gruvbox", 8, 6)
    assert reread.model == "llama3.2" and reread.ollama_host == DEFAULT_OLLAMA_HOST


def test_clearing_a_value_removes_it_and_a_new_file_gets_only_the_change(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(USER_FILE)
    before = load_settings(config)
    save_settings(replace(before, model=None), before)
    assert "model" not in config.read_text() and "# the one I like" in config.read_text()
    fresh = tmp_path / "new" / "config.toml"
    s = load_settings(fresh)
    save_settings(replace(s, keymap={"app.help": "f9"}, prompts={"leaf.normal": {"system": "Be brief.\nOK"}}), s)
    again = load_settings(fresh)
    assert again.keymap == {"app.help": "f9"} and again.prompts == {"leaf.normal": {"system": "Be brief.\nOK"}}
    body = "\n".join(line for line in fresh.read_text().splitlines() if not line.startswith("#"))
    assert "theme" not in body and "ollama_host" not in body and "[policy]" not in body
    assert again.policy == Policy()
