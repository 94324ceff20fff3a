"""Which sessions a compaction job takes: named ones or all, filtered by the triggers.

Triggers are decided from the session aggregates the store keeps (``iter_sessions``), so
``compact --all --if-over 8000`` over 10k sessions reads no episode at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..store import Session, Store


class UnknownSession(LookupError):
    """Named sessions that are not in the database (a usage error: exit 2)."""

    def __init__(self, missing: Sequence[str]) -> None:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        word = "session" if len(missing) == 1 else "sessions"
        super().__init__(f"no {word} {shown} in this database (see 'hiermem-tui sessions')")
        self.missing = list(missing)


def passes_triggers(session: Session, *, if_over: int | None = None, min_new: int | None = None) -> bool:
    """``--if-over``: uncompacted tokens strictly above; ``--min-new``: at least N new episodes.
    Both given: both must hold."""
    if if_over is not None and not session.uncompacted_tokens > if_over:
        return False
    if min_new is not None and not session.new_episodes >= min_new:
        return False
    return True


def select_sessions(
    store: Store,
    *,
    session_ids: Sequence[str] | None = None,
    all_sessions: bool = False,
    if_over: int | None = None,
    min_new: int | None = None,
) -> Iterator[Session]:
    """The sessions to compact, in the order named (``--all``: by id).

    Named ids are all checked first, so an unknown one raises :class:`UnknownSession`
    before anything runs; duplicates are taken once.
    """
    if all_sessions:
        return (s for s in store.sessions.each() if passes_triggers(s, if_over=if_over, min_new=min_new))
    found: list[Session] = []
    missing: list[str] = []
    for sid in dict.fromkeys(session_ids or []):
        s = store.sessions.get(sid)
        if s is None:
            missing.append(sid)
        else:
            found.append(s)
    if missing:
        raise UnknownSession(missing)
    return (s for s in found if passes_triggers(s, if_over=if_over, min_new=min_new))
