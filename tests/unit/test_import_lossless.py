"""lossless-claw (lcm.db) and lossless-code (vault.db): episodes, their summary DAG checked
against ours, idempotent and growing re-imports, read-only access, and our tools on their summaries."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from hiermem_tui.cli import main
from hiermem_tui.importers import FormatError, detect, import_paths
from hiermem_tui.store import Store, Summary
from hiermem_tui.tokens import Tokenizer
from tests.unit._imported import fresh_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LCM = FIXTURES / "lossless_claw" / "lcm.db"
LCM_GROWN = FIXTURES / "lossless_claw" / "lcm-grown.db"
LCM_BROKEN = FIXTURES / "lossless_claw" / "lcm-broken-dag.db"
VAULT = FIXTURES / "lossless_code" / "vault.db"
VAULT_GROWN = FIXTURES / "lossless_code" / "vault-grown.db"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / src.name
    shutil.copy(src, dest)
    return dest


def summaries(store: Store) -> dict[str, Summary]:
    return {s.id: s for sess in store.sessions.each() for s in store.dag.summaries(sess.id, status=None)}


def snapshot(store: Store) -> tuple[object, ...]:
    """Everything an import could change, as plain values."""
    sessions = [(s.id, s.title, s.episodes, s.summaries, s.fallbacks, s.metadata) for s in store.sessions.each()]
    episodes = [(e.id, e.seq, e.content) for s in store.sessions.each() for e in store.episodes.each(s.id)]
    dag = sorted((s.id, s.status, s.parent_id, s.superseded_by, s.first_seq, s.last_seq)
                 for s in summaries(store).values())
    return sessions, episodes, dag


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- lossless-claw


def test_lcm_is_detected_and_imported_with_its_dag(tmp_path: Path, tokenizer: Tokenizer) -> None:
    assert detect(LCM) == "lossless-claw"
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        report = import_paths(store, [LCM])
        assert (report.sessions_created, report.episodes_appended, report.summaries_added) == (2, 20, 5)
        assert report.describe() == ("2 session(s), 2 new; 20 episode(s) added, 0 already present; "
                                     "5 summaries added, 0 already present")
        blog, old = sorted(store.sessions.each(), key=lambda s: -s.episodes)
        assert blog.title == "Move the blog to Fly.io" and blog.source == "lossless-claw"
        assert blog.id.startswith("lossless-claw:1-") and old.id.startswith("lossless-claw:2-")
        assert blog.metadata == {"conversation_id": "1", "session_id": "7c1e2a90-3b4d-4f5e-9a6b-0c1d2e3f4a5b",
                                 "session_key": "agent:main:main"}
        assert old.metadata["archived"] is True and old.title == "What does `ulimit -n` control on macOS?"
        assert (blog.episodes, blog.summaries, blog.max_depth, blog.covered_episodes, blog.fallbacks) == (14, 4, 1, 12, 1)
        assert (old.episodes, old.summaries, old.fallbacks) == (6, 1, 1)

        eps = list(store.episodes.each(blog.id))
        assert eps[0].created_at == "2025-11-03T19:12:05.000Z" and not eps[0].synthetic_time
        # Parts: text parts joined in order, reasoning in the metadata, ignored parts left out.
        assert eps[1].content.startswith("Start with `fly launch --no-deploy`")
        assert "tiny nginx image" not in eps[1].content
        assert eps[1].metadata == {"reasoning": "The user has a static site; a tiny nginx image is the cheapest option."}
        assert eps[5].content == ("That works.\n\nPin the nginx tag too (`nginx:1.27-alpine`) so a rebuild does "
                                  "not change under you.")
        assert eps[6].role == "tool" and "quiet-river-7.fly.dev" in eps[6].content

        dag = {s.id.rsplit("/", 1)[1]: s for s in summaries(store).values()}
        top = dag["sum_d8812f"]
        assert (top.kind, top.depth, top.first_seq, top.last_seq, top.parent_id) == ("condensed", 1, 0, 11, None)
        assert store.dag.source_ids(top.id) == [dag[k].id for k in ("sum_a1f3c9", "sum_b27e0d", "sum_c9d441")]
        assert [(dag[k].first_seq, dag[k].last_seq, dag[k].parent_id) for k in ("sum_a1f3c9", "sum_b27e0d", "sum_c9d441")] \
            == [(0, 3, top.id), (4, 7, top.id), (8, 11, top.id)]
        assert [k for k, s in sorted(dag.items()) if s.tier == "fallback"] == ["sum_b27e0d", "sum_e05b7a"]
        assert dag["sum_e05b7a"].model == "emergency-fallback"
        leaf = dag["sum_a1f3c9"]
        assert (leaf.backend, leaf.model, leaf.prompt_version, leaf.run_id) == (
            "lossless-claw", "claude-haiku-4-5", "imported", None)
        assert leaf.created_at == "2025-11-03T19:42:05.000Z"  # when lossless-claw made it
        assert (leaf.input_tokens, leaf.output_tokens) == (160, 54)  # lossless-claw's own counts
        assert (leaf.start_at, leaf.end_at) == (eps[0].created_at, eps[3].created_at)
        assert leaf.tokens == tokenizer.count(leaf.content)
        # Measured on import, like a summary we made: kept / lost names and the lost ones as keywords.
        for s in dag.values():
            assert s.fidelity is not None and s.fidelity.key is not None, s.id
        assert leaf.fidelity is not None and leaf.fidelity.kept < leaf.fidelity.identifiers and "/usr/share/nginx/html" in leaf.keywords


def test_lcm_import_again_changes_nothing_and_a_grown_file_adds_only_the_new(tmp_path: Path,
                                                                             tokenizer: Tokenizer) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        import_paths(store, [LCM])
        before = snapshot(store)
        again = import_paths(store, [LCM])
        assert (again.sessions_created, again.episodes_appended, again.summaries_added, again.summaries_present) \
            == (0, 0, 0, 5)
        assert snapshot(store) == before
        grown = import_paths(store, [LCM_GROWN])
        assert (grown.sessions_created, grown.episodes_appended, grown.episodes_present) == (1, 6, 20)
        assert (grown.summaries_added, grown.summaries_present) == (1, 5)
        blog = next(s for s in store.sessions.each() if s.title == "Move the blog to Fly.io")
        assert (blog.episodes, blog.summaries, blog.covered_episodes) == (18, 5, 16)
        newest = store.dag.covering_chain(blog.id, 15)
        assert [s.id.rsplit("/", 1)[1] for s in newest] == ["sum_f4410c"]
        settled = snapshot(store)
        import_paths(store, [LCM_GROWN])
        assert snapshot(store) == settled


def test_lcm_dag_that_breaks_our_rules_is_imported_without_the_bad_summaries(tmp_path: Path,
                                                                             tokenizer: Tokenizer) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        report = import_paths(store, [LCM_BROKEN])
        assert report.episodes_appended == 8  # episodes always come in
        assert report.summaries_added == 4
        assert report.problems.summaries == {
            "leaf over non-contiguous messages": 1,
            "leaf overlapping another leaf": 1,
            "condensed over a summary that was not imported": 1,
            "a source is already condensed into another summary": 1,
            "condensed over mixed depths": 1,
        }
        assert "5 summaries not imported: " in report.describe()
        kept = sorted(s.id.rsplit("/", 1)[1] for s in summaries(store).values())
        assert kept == ["sum_ok12", "sum_ok34", "sum_ok56", "sum_top"]
        (session,) = store.sessions.each()
        leaves = [(s.first_seq, s.last_seq) for s in store.dag.summaries(session.id) if s.depth == 0]
        assert leaves == [(0, 1), (2, 3), (4, 5)]
        again = import_paths(store, [LCM_BROKEN])
        assert (again.summaries_added, again.summaries_present) == (0, 4)


# ---------------------------------------------------------------- lossless-code


def test_vault_is_detected_and_imported_with_its_dag(tmp_path: Path, tokenizer: Tokenizer) -> None:
    assert detect(VAULT) == "lossless-code"
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        report = import_paths(store, [VAULT])
        assert (report.sessions_created, report.episodes_appended, report.summaries_added) == (3, 20, 7)
        assert report.problems.summaries == {"spans several sessions": 1,
                                             "a source is already condensed into another summary": 1}
        bakery = store.sessions.get("lossless-code:0f5e2d1c-7b3a-4c69-9e8d-2a1b0c9d8e7f")
        assert bakery is not None and bakery.source == "lossless-code"
        assert bakery.metadata["working_dir"] == "/home/ana/src/bakery-api"
        assert (bakery.episodes, bakery.summaries, bakery.max_depth, bakery.covered_episodes) == (12, 4, 1, 12)
        eps = list(store.episodes.each(bakery.id))
        # Ordered by timestamp though its ids interleave with the other session's.
        assert [e.content[:20] for e in eps[5:7]] == ["Raising ValidationEr", "orders/validate.py: "]
        assert eps[2].role == "tool" and eps[2].metadata == {"tool_name": "Read"}
        assert eps[0].created_at == "2025-11-03T18:00:00.000Z"

        dag = {s.id.rsplit("/", 1)[1]: s for s in summaries(store).values()}
        merged = dag["sum_6f7a8b9c0d1e"]
        for old in ("sum_2b3c4d5e6f7a", "sum_3c4d5e6f7a8b"):  # consolidated by the dream pass
            assert (dag[old].status, dag[old].superseded_by, dag[old].parent_id) == ("superseded", merged.id, None)
            assert (dag[old].first_seq, dag[old].last_seq) == (4, 7)
        assert (merged.status, merged.first_seq, merged.last_seq) == ("active", 4, 7)
        top = dag["sum_7a8b9c0d1e2f"]
        assert store.dag.source_ids(top.id) == [dag[k].id for k in ("sum_1a2b3c4d5e6f", "sum_6f7a8b9c0d1e",
                                                                    "sum_4d5e6f7a8b9c")]
        assert "sum_8b9c0d1e2f3a" not in dag and "sum_9c0d1e2f3a4b" not in dag
        capped = dag["sum_5e6f7a8b9c0d"]
        assert (capped.trimmed, capped.backend, capped.model, capped.tier) == ("clipped", "lossless-code", None, "normal")
        assert all(s.fidelity is not None for s in dag.values())
        quiet = store.sessions.get("lossless-code:c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f")
        assert quiet is not None and (quiet.episodes, quiet.summaries) == (2, 0)


def test_vault_import_again_changes_nothing_and_a_grown_vault_adds_only_the_new(tmp_path: Path,
                                                                                tokenizer: Tokenizer) -> None:
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        import_paths(store, [VAULT])
        before = snapshot(store)
        again = import_paths(store, [VAULT])
        assert (again.episodes_appended, again.summaries_added, again.summaries_present) == (0, 0, 7)
        assert snapshot(store) == before
        grown = import_paths(store, [VAULT_GROWN])
        assert (grown.sessions_created, grown.episodes_appended, grown.summaries_added) == (1, 6, 1)
        bakery = store.sessions.get("lossless-code:0f5e2d1c-7b3a-4c69-9e8d-2a1b0c9d8e7f")
        assert bakery is not None and (bakery.episodes, bakery.covered_episodes) == (16, 16)
        settled = snapshot(store)
        import_paths(store, [VAULT_GROWN])
        assert snapshot(store) == settled


def test_our_own_database_is_not_taken_for_a_vault(tmp_path: Path, tokenizer: Tokenizer) -> None:
    """Ours has sessions, summaries and summary_sources tables too."""
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        import_paths(store, [VAULT])
    with pytest.raises(FormatError, match="cannot tell what format"):
        detect(tmp_path / "h.db")
    with pytest.raises(FormatError, match="not a lossless-code vault.db"):
        with fresh_store(tmp_path / "other.db", tokenizer) as other:
            import_paths(other, [tmp_path / "h.db"], "lossless-code")


# ---------------------------------------------------------------- both: read-only, bad files, our tools


@pytest.mark.parametrize("source", [LCM, VAULT], ids=["lcm", "vault"])
def test_the_source_is_never_written(tmp_path: Path, tokenizer: Tokenizer, source: Path) -> None:
    path = copy(source, tmp_path)
    os.chmod(path, 0o444)  # read-only, as for a file another user owns
    before = digest(path)
    with fresh_store(tmp_path / "h.db", tokenizer) as store:
        detect(path)
        report = import_paths(store, [path])
        assert report.summaries_added > 0
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(path.name)) == [path.name]  # no -wal/-shm


@pytest.mark.parametrize("fmt", ["lossless-claw", "lossless-code"])
def test_a_file_that_cannot_be_read_is_one_line_exit_2(tmp_path: Path, fmt: str) -> None:
    db = str(tmp_path / "h.db")
    garbage = tmp_path / "lcm.db"
    garbage.write_bytes(b"SQLite format 3\x00" + b"\x07" * 200)
    code, out, err = run("import", "--db", db, "--format", fmt, str(garbage))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    truncated = tmp_path / "cut.db"
    truncated.write_bytes((LCM if fmt == "lossless-claw" else VAULT).read_bytes()[:3000])
    code, _, err = run("import", "--db", db, "--format", fmt, str(truncated))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    code, _, err = run("import", "--db", db, "--format", fmt, str(other))
    assert code == 2 and "is not a lossless-c" in err
    code, out, _ = run("sessions", "--db", db, "--json")
    assert json.loads(out) == []  # nothing written


def test_cli_import_line_counts_summaries(tmp_path: Path) -> None:
    code, out, err = run("import", "--db", str(tmp_path / "h.db"), str(copy(VAULT, tmp_path)))
    assert code == 0, err
    assert out.strip().endswith("(lossless-code): 3 session(s), 3 new; 20 episode(s) added, 0 already present; "
                                "7 summaries added, 0 already present; 2 summaries not imported: "
                                "spans several sessions (1), a source is already condensed into another summary (1)")


def test_check_repair_and_resummarise_work_on_imported_summaries(tmp_path: Path) -> None:
    db = str(tmp_path / "h.db")
    assert run("import", "--db", db, str(copy(LCM, tmp_path)))[0] == 0
    blog = next(s for s in json.loads(run("sessions", "--db", db, "--json")[1]) if s["episodes"] == 14)
    code, out, err = run("check", "--db", db, "--session", blog["id"], "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 4 and {r["tier"] for r in rows} == {"normal", "fallback"}
    code, out, err = run("repair", "--db", db, "--session", blog["id"], "--below", "0", "--backend", "extractive",
                         "--json")
    assert code == 0, err
    with Store.open(db) as store:
        versions = {s.id: s for s in store.dag.summaries(blog["id"], status=None)}
        theirs = next(s for s in versions.values() if s.id.endswith("/sum_b27e0d"))
        assert theirs.status == "superseded" and theirs.superseded_by in versions  # kept, replaced by ours
        ours = versions[theirs.superseded_by]
        assert (ours.backend, ours.status, ours.first_seq, ours.last_seq) == ("extractive", "active", 4, 7)
        assert store.sessions.get(blog["id"]).fallbacks == 0  # type: ignore[union-attr]
        leaf = next(s for s in store.dag.summaries(blog["id"]) if s.id.endswith("/sum_c9d441"))
    code, out, err = run("resummarize", "--db", db, "--session", blog["id"], "--summary", leaf.id,
                         "--backend", "extractive", "--json")
    assert code == 0, err
    with Store.open(db) as store:
        assert store.dag.get(leaf.id).status == "superseded"  # type: ignore[union-attr]
    # A later import of the same file leaves our versions alone.
    code, out, _ = run("import", "--db", db, str(tmp_path / "lcm.db"))
    assert code == 0 and "0 summaries added, 5 already present" in out
