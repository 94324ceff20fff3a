"""What counts as a name a summary must keep: each case is noise a real run put in a lost list
(issue 13: a 1.5B model's leaves against real ChatGPT and Claude Code chats)."""

from __future__ import annotations

from hiermem_tui.summarize.fidelity import COMMON_WORDS, extract, key_count, measure, readable


def names(text: str, tool: bool = False) -> list[str]:
    return [i.text for i in extract([(text, tool)])]


def test_markdown_and_json_escapes_are_read_as_the_name() -> None:
    """ChatGPT exports escape underscores: ``climabench\\_data`` is one name, not ``_data``."""
    found = names(r"load `climabench\_data` then call torch.no\_grad() and model.base\_model(**tokens1)")
    assert "climabench_data" in found and "torch.no_grad" in found and "model.base_model" in found
    assert not any(n.startswith("_") or n == "torch.no" for n in found)
    assert names(r"the header says \nvsla_tensor_t count") == ["vsla_tensor_t"]
    assert names("fields: uint64_t n, size_t len, int32_t x, vsla_shape_t s") == ["vsla_shape_t"]  # C's own types
    assert readable(r"C:\new\tests\x.py and a\_b") == r"C:\new\tests\x.py and a_b"  # Windows paths kept


def test_sentences_fragments_expressions_and_common_words_are_not_names() -> None:
    text = ("`Timestamp layout at the start of each l…` `if buf.capacity() > 1 << 20 { buf.shrin…` "
            "`do not modify or take ownership. Functions returning` `(e.g.` `; caller must eventually` "
            "`capacity[i] >= shape[i]` `\\n` `true` `false` `users` `error` `data` `vsla_tensor_t` `git log -5`")
    assert names(text) == ["vsla_tensor_t", "git log -5", "buf.capacity", "20"]
    assert {"true", "false", "users", "error"} <= COMMON_WORDS


def test_traceback_line_numbers_and_copy_button_glue_are_not_names() -> None:
    text = ('File "train.py", line 2586, in step\nFile "train.py", line 2590, in run\n'
            "codeShare thisShare lossShare isLoading 0.0 PhD commit 2998836")
    found = names(text)
    assert "2586" not in found and "2590" not in found and "train.py" in found
    assert not {"codeShare", "thisShare", "lossShare", "0.0", "PhD"} & set(found)
    assert {"isLoading", "2998836"} <= set(found)
    assert names("a 3.2 GB file, 40 MB read, at 10:02 on 2026-05-11 UTC") == ["3.2", "40", "2026-05-11"]


def test_key_names_scale_with_the_summary_and_judge_the_flag() -> None:
    assert key_count(24) == 3 and key_count(400) == 10 and key_count(750) == 15 and key_count(5000) == 15
    sources = [("The fix is in src/loader.py: `load_config` now reads HIERMEM_DB; see "
                "https://example.org/issue/42 and tests/test_loader.py. Also PR 1234 and CI.", False)]
    top = [i.text for i in extract(sources)][:3]
    assert top == ["https://example.org/issue/42", "src/loader.py", "load_config"]  # by weight, then first seen
    fid = measure("The user fixed load_config in src/loader.py (see tests/test_loader.py).", sources, key=3)
    assert (fid.key, fid.key_kept) == (3, 2) and fid.identifiers > 3
    lossy = measure("The user fixed a bug.", sources, key=3)
    assert lossy.key_kept == 0 and lossy.key_retention == 0 and lossy.lost[0] == top[0]


def test_index_variables_rank_below_the_names_of_a_chat() -> None:
    text = " ".join(["a_i b_j val_a s_k"] * 6) + " vsla_tensor_t vsla_shrink"
    assert [i.text for i in extract([(text, False)])][:2] == ["vsla_tensor_t", "vsla_shrink"]
