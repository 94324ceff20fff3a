"""Exporting one session as JSON (ARCHITECTURE §6, exact) or Markdown.

Both stream: episodes are written page by page, so a 100k-episode session never sits in
memory. Markdown shows chat content literally by fencing it with a fence longer than any
backtick run inside, so nothing in the content can become formatting.

Secrets are masked when a ``mask`` (a :class:`~.masker.Masker`) is given, as ``export`` does unless
``--no-redact``: every piece of chat text (episodes, summaries, the title, keywords, the names a
summary lost, rejected answers' details) goes through it, and the JSON ends with ``"redacted"``
(``{"masked", "secrets", "by_kind"}``), the Markdown with a line saying how many were masked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .masker import Masker
from .store import Store, StoreError, Summary
from .store.models import synthetic_stamp
from .textsafe import literal_block

Mask = Callable[[str], str]
Names = Callable[[Sequence[str]], list[str]]


def _same(text: str) -> str:
    return text


def _same_names(names: Sequence[str]) -> list[str]:
    return list(names)


def _fidelity(store: Store, s: Summary, names: Names) -> dict[str, Any]:
    """Stored figures, or measured now (not stored: an export only reads) for older summaries."""
    fid = s.fidelity
    if fid is None:
        from .compaction.check import check_summary

        fid = check_summary(store, s, save=False).fidelity
    return {"identifiers": fid.identifiers, "kept": fid.kept, "lost": names(fid.lost)}


def _rejection(r: dict[str, Any], mask: Mask) -> dict[str, Any]:
    out = dict(r)
    if isinstance(out.get("detail"), str):
        out["detail"] = mask(out["detail"])
    return out


def _summary_json(store: Store, s: Summary, mask: Mask = _same, names: Names = _same_names) -> dict[str, Any]:
    return {
        "id": s.id,
        "depth": s.depth,
        "kind": s.kind,
        "status": s.status,
        "tier": s.tier,
        "backend": s.backend,
        "model": s.model,
        "tokens": s.tokens,
        "source_tokens": s.source_tokens,
        "first_seq": s.first_seq,
        "last_seq": s.last_seq,
        "start_at": s.start_at,
        "end_at": s.end_at,
        "sources": store.dag.source_ids(s.id),
        "parent": s.parent_id,
        "content": mask(s.content),
        "created_at": s.created_at,
        "run_id": s.run_id,
        "prompt_version": s.prompt_version,
        "input_tokens": s.input_tokens,
        "output_tokens": s.output_tokens,
        "duration_s": s.duration_s,
        "supersedes": s.supersedes,
        "superseded_by": s.superseded_by,
        "fidelity": _fidelity(store, s, names),
        "novel_identifiers": names(s.fidelity.novel if s.fidelity else ()),
        "fidelity_added": s.fid_added,
        "rejections": [_rejection(r, mask) for r in s.rejections],
        "keywords": names(s.keywords),
        "trimmed": s.trimmed,
    }


class TextSink(Protocol):
    """Where an export is written: a file, stdout, or a terminal seen through ``visible``."""

    def write(self, text: str, /) -> int: ...


def export_json(store: Store, session_id: str, out: TextSink, mask: Masker | None = None) -> None:
    """Write the §6 export object; summaries include superseded versions, runs all runs. With
    ``mask``, every piece of chat text is masked and the object ends with ``"redacted"``.

    One read snapshot: a run writing meanwhile cannot make the parts contradict each other.
    """
    with store.db.read_snapshot():
        _export_json(store, session_id, out, mask)


def _export_json(store: Store, session_id: str, out: TextSink, masker: Masker | None) -> None:
    mask: Mask = masker or _same
    session = store.sessions.get(session_id)
    if session is None:
        raise StoreError(f"no session {session_id!r}")

    def dump(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=False)

    head = {
        "id": session.id,
        "title": mask(session.title),
        "source": session.source,
        "episodes": session.episodes,
        "tokens": session.tokens,
    }
    out.write('{"session": ' + dump(head) + ',\n "episodes": [')
    for i, ep in enumerate(store.episodes.each(session_id)):
        row = {
            "id": ep.id,
            "seq": ep.seq,
            "role": ep.role,
            "created_at": ep.created_at,
            "tokens": ep.tokens,
            "content": mask(ep.content),
        }
        out.write(("," if i else "") + "\n  " + dump(row))
    out.write('\n ],\n "summaries": [')
    # after the episodes: a summary's names that are pieces of a secret they held are known by now
    names: Names = masker.names if masker is not None else _same_names
    for i, s in enumerate(store.dag.summaries(session_id, status=None)):
        out.write(("," if i else "") + "\n  " + dump(_summary_json(store, s, mask, names)))
    out.write('\n ],\n "runs": [')
    for i, r in enumerate(store.runs.of_session(session_id)):
        out.write(("," if i else "") + "\n  " + dump(r.as_json()))
    # after the episodes, as the summaries: a secret a brief's clipped quote holds a piece of is known by now
    brief = store.briefs.active(session_id)
    said = None
    if brief is not None:
        said = brief.as_json()
        said.update(text=mask(brief.text), title=mask(brief.title), about=mask(brief.about))
    out.write('\n ],\n "brief": ' + dump(said))
    out.write((',\n "redacted": ' + dump(masker.json()) if masker is not None else "") + "}\n")


def _md_inline(text: str) -> str:
    """Escape Markdown metacharacters in a one-line value (titles, ids)."""
    flat = " ".join(text.split())
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~])", r"\\\1", flat)


def _md_code(text: str) -> str:
    """A one-line value as a code span: shown literally, with a delimiter longer than any backtick run
    inside (a session id is the source's own text: its backticks or line breaks must not end the span
    or start a heading)."""
    flat = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _kept(s: Summary) -> str:
    if s.fidelity is None:
        return ""
    return f" · kept {s.fidelity.kept}/{s.fidelity.identifiers} identifiers"


def export_markdown(store: Store, session_id: str, out: TextSink, mask: Masker | None = None) -> None:
    """A readable transcript with the active summary tree first. Content is fenced, never rendered.
    With ``mask``, chat text is masked and the last line says how many secrets were."""
    with store.db.read_snapshot():
        _export_markdown(store, session_id, out, mask)


NO_TIME = "no time in the source"
"""What the Markdown export says where the source kept no time: the store's filled-in stamps
(January 2000, one second apart) keep the order, but printed they read as real times. The JSON
export keeps the stamps as stored (its contract)."""


def _md_span(start: str, end: str) -> str:
    if synthetic_stamp(start) and synthetic_stamp(end):
        return NO_TIME
    return f"{start} → {end}"


def _export_markdown(store: Store, session_id: str, out: TextSink, masker: Masker | None) -> None:
    mask: Mask = masker or _same
    session = store.sessions.get(session_id)
    if session is None:
        raise StoreError(f"no session {session_id!r}")
    out.write(f"# {_md_inline(mask(session.title) or session.id)}\n\n")
    out.write(
        f"- session: {_md_code(session.id)}\n- source: {_md_inline(session.source)}\n- episodes: {session.episodes}\n"
        f"- tokens: {session.tokens}\n- active summaries: {session.summaries}\n"
        f"- max depth: {'-' if session.max_depth is None else session.max_depth}\n\n"
    )
    brief = store.briefs.active(session_id)
    if brief is not None:
        out.write(f"## Brief\n\nepisodes #{brief.first_seq}–{brief.last_seq} · {brief.tier} · "
                  f"{_md_inline(brief.backend)}\n\n{literal_block(mask(brief.text))}\n\n")
    tops = store.dag.top(session_id)
    if tops:
        out.write("## Summaries\n\n")

        def walk(s: Summary, level: int) -> None:
            hashes = "#" * min(6, 3 + level)
            out.write(
                f"{hashes} d{s.depth} {s.kind} · episodes #{s.first_seq}–{s.last_seq} · {_md_span(s.start_at, s.end_at)}"
                f" · {s.tier} · {s.tokens} tokens{_kept(s)}\n\n{literal_block(mask(s.content))}\n\n"
            )
            for child in store.dag.children(s.id):
                walk(child, level + 1)

        for top in tops:
            walk(top, 0)
    out.write("## Transcript\n\n")
    for ep in store.episodes.each(session_id):
        when = NO_TIME if ep.synthetic_time else ep.created_at
        out.write(f"### #{ep.seq} {ep.role} · {when}\n\n{literal_block(mask(ep.content))}\n\n")
    if masker is not None:
        out.write(f"---\n\n{masker.line()[0].upper()}{masker.line()[1:]}.\n")
