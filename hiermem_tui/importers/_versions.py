"""What a re-import does with a conversation the store already holds under another id, and
with a message whose text the source has changed since the last import.

Episodes are immutable and a session only grows, so neither case may rewrite anything:

* **A changed message** (a regenerated reply that the source overwrote in place, an edited
  message, a reply that was still streaming at the first import) is appended as a *new*
  episode with the new text. Its key is ``<message id>~2`` (``~3``… for later versions) and its
  metadata says ``revision_of: <episode id of the version it replaces>`` and ``revision: n``.
  The old episode stays where it was. Re-importing the same source again finds the new text
  among the stored versions and adds nothing. Only episodes keyed by the source's own message
  id take part: positional keys (``@3``, sources without ids) cannot tell an edit from a shift.
* **An id an earlier importer version gave** (``ParsedSession.former_ids``): the conversation
  keeps it when the store's session under that id starts with the same first two messages
  (same keys, same text; system prompts are not compared, since chats share them and they can
  be edited). Anything else under that id is another conversation, which is never merged into.
* **A positionally keyed episode whose text differs** from the one stored at its position (a
  native JSONL or ShareGPT source rewritten in place, or another file reusing a session id) is
  not imported; the caller reports it as a skipped record rather than dropping it silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .base import ParsedEpisode, ParsedSession

if TYPE_CHECKING:
    from ..store import NewEpisode, Store

REVISION_MARK = "~"
COMPARED = 2
"""How many leading non-system messages must match for a former id to be this conversation."""


def episode_key(ep: ParsedEpisode, index: int) -> str:
    """The key an episode is stored under within its session: the source's id, else its position."""
    return ep.source_id if ep.source_id else f"@{index}"


def resolve_session_id(store: Store, parsed: ParsedSession) -> str:
    """``parsed.id``, or the former id under which the store already holds this very conversation."""
    if not parsed.former_ids or store.sessions.get(parsed.id) is not None:
        return parsed.id
    mine = _leading(
        (episode_key(ep, i), ep.role, ep.content) for i, ep in enumerate(parsed.episodes)
    )
    formerly = _leading(  # the text an earlier import stored, where the importer now renders it otherwise
        (episode_key(ep, i), ep.role, ep.former_content or ep.content) for i, ep in enumerate(parsed.episodes)
    )
    for old in parsed.former_ids:
        if old == parsed.id or store.sessions.get(old) is None:
            continue
        stored = _leading(
            (ep.id.removeprefix(f"{old}/"), ep.role, ep.content)
            for ep in store.episodes.page(old, limit=COMPARED + 8)
        )
        n = min(len(mine), len(stored))
        if n and all(have in (now, before) for have, now, before in zip(stored[:n], mine, formerly)):
            return old
    return parsed.id


def _leading(episodes: Iterable[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The first COMPARED non-system ``(key, text)`` pairs of ``(key, role, text)`` triples."""
    out: list[tuple[str, str]] = []
    for key, role, content in episodes:
        if role == "system":
            continue
        out.append((key, content))
        if len(out) == COMPARED:
            break
    return out


def first_exchange_digest(key: str, episodes: Sequence[ParsedEpisode], *, as_sourced: bool = False) -> str:
    """12 hex digits over a conversation's own id and its first two non-system messages.

    For sources whose ids are only unique inside one file (oterm's row numbers, a dataset's
    ``"0"``, ``"1"``…): appended to the id, it keeps two files' conversation 1 apart, while the
    same conversation read again (from the same file, a copy, or a grown version of it) keeps
    its id, because a conversation's opening does not change. ``as_sourced`` hashes a message's
    ``former_content`` where it has one (the text as the source holds it, before its reasoning was
    taken out), so taking it out does not give a conversation imported before a new id.
    """
    first = [(e.source_id, e.role, e.former_content if as_sourced and e.former_content is not None else e.content)
             for e in episodes if e.role != "system"][:COMPARED]
    canonical = json.dumps([key, first], ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: JSON sources can hold lone surrogates; valid text hashes the same either way.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def mark_revisions(
    store: Store,
    session_id: str,
    episodes: Sequence[NewEpisode],
    keyed: Sequence[bool],
    former: Sequence[str | None] | None = None,
) -> tuple[int, list[int]]:
    """Re-key (in place) every source-keyed episode whose text differs from all stored versions
    of its message, so it is appended as the next version.

    ``former`` (per episode, optional) is the text an earlier importer version stored for the
    same message: a stored version equal to it counts as this text, since only the rendering
    changed, not the source. Returns how many were re-keyed, and the indexes of positionally
    keyed episodes whose text differs from the episode stored at that position: those cannot be
    told from a shifted conversation, so the stored one stays and the caller reports them.
    """
    prefix = f"{session_id}/"
    olds = list(former) if former is not None else [None] * len(episodes)
    stored = store.episodes.texts(prefix + ep.key for ep in episodes)
    conflicts = [
        i for i, (ep, k, old) in enumerate(zip(episodes, keyed, olds))
        if not k and stored.get(prefix + ep.key, ep.content) not in (ep.content, old)
    ]
    bases = {ep.key for ep, k in zip(episodes, keyed) if k}
    versions: dict[str, list[tuple[str, str]]] = {
        key: [(key, stored[prefix + key])] for key in bases if prefix + key in stored
    }
    pending = set(versions)
    n = 2
    while pending:  # one query per version depth (rarely more than one or two)
        probe = {prefix + f"{key}{REVISION_MARK}{n}": key for key in pending}
        found = store.episodes.texts(probe)
        pending = set()
        for eid, text in found.items():
            key = probe[eid]
            versions[key].append((eid.removeprefix(prefix), text))
            pending.add(key)
        n += 1
    taken = {ep.key for ep in episodes}
    revised = 0
    for ep, k, old in zip(episodes, keyed, olds):
        chain = versions.get(ep.key) if k else None
        if not chain or any(text in (ep.content, old) for _, text in chain):
            continue
        number = len(chain) + 1
        while f"{ep.key}{REVISION_MARK}{number}" in taken:  # a source id that happens to look like one
            number += 1
        new_key = f"{ep.key}{REVISION_MARK}{number}"
        ep.metadata = {**(ep.metadata or {}), "revision_of": prefix + chain[-1][0], "revision": number}
        chain.append((new_key, ep.content))  # the same message twice in one parse adds one version
        taken.add(new_key)
        ep.key = new_key
        revised += 1
    return revised, conflicts
