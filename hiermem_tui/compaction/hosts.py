"""The model servers one job shares its summaries among (issue 20): :class:`HostPool`.

Each host is a summariser on its own backend (an Ollama server or an OpenAI-compatible one: the pool
does not mind which, and one job may hold both) with ``parallel`` slots. A summary takes a slot
on whichever live host has one free (:meth:`HostPool.take`), so every host takes the next
summary as soon as it is free. A host whose call fails because the server went away
(:meth:`HostPool.lose`) is dead for the rest of the job: it takes no more work, and the
summary is made again on another host. While more than one host is alive, a host gives up
on its first refused or lost connection (there is somewhere else to go); the last host alive
retries with backoff as one host always has (``Summariser.max_connection_failures``).

One host is exactly the single-server job it always was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..summarize import Summariser, SummariserError


@dataclass(eq=False, slots=True)
class Host:
    """One server: its summariser (with its backend), how many calls it has running."""

    summariser: Summariser
    busy: int = 0
    alive: bool = True
    retries: int = field(default=0)
    """The summariser's own ``max_connection_failures``, given back when it is the last host."""
    made: int = 0
    seconds: float = 0.0
    """Summaries this host made in this job, and the seconds they took."""

    def pace(self) -> float:
        """Seconds a summary took here so far (0 before any: an unknown host is tried first)."""
        return self.seconds / self.made if self.made else 0.0

    @property
    def name(self) -> str:
        """The server's URL as people read it (the backend's ``host``, else its name)."""
        return str(getattr(self.summariser.backend, "host", "") or self.summariser.backend.name)


class HostPool:
    """The hosts of one job and their slots (see the module docstring)."""

    def __init__(self, summarisers: Sequence[Summariser], parallel: int) -> None:
        self.hosts = [Host(s, retries=s.max_connection_failures) for s in summarisers]
        self.parallel = max(1, parallel)
        self._cond: tuple[asyncio.AbstractEventLoop, asyncio.Condition] | None = None
        self.last_error: SummariserError | None = None
        self._tune()

    @property
    def several(self) -> bool:
        return len(self.hosts) > 1

    def live(self) -> list[Host]:
        return [h for h in self.hosts if h.alive]

    @property
    def slots(self) -> int:
        """Summaries the live hosts can make at once."""
        return self.parallel * max(1, len(self.live()))

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._cond is None or self._cond[0] is not loop:
            self._cond = (loop, asyncio.Condition())
            for h in self.hosts:
                h.busy = 0
        return self._cond[1]

    def _tune(self) -> None:
        """Give up on the first lost connection while another host is there to take the call."""
        alone = len(self.live()) <= 1
        for h in self.hosts:
            h.summariser.max_connection_failures = h.retries if alone else 1

    def leave_out(self, host: Host, error: SummariserError) -> None:
        """``host`` failed its check at the start: it takes no work in this job."""
        host.alive = False
        self.last_error = self.last_error or error
        self._tune()

    async def take(self) -> Host:
        """A slot on the live host with the fewest calls running (of those, the quickest so far:
        a lone session at the end of a backlog goes to the faster server); waits while all are
        busy. Raises the last host's error when no host is alive."""
        cond = self._condition()
        async with cond:
            while True:
                live = self.live()
                if not live and self.last_error is not None:
                    raise self.last_error
                free = [h for h in live if h.busy < self.parallel]
                if free:
                    host = min(free, key=lambda h: (h.busy, h.pace()))
                    host.busy += 1
                    return host
                await cond.wait()

    async def give_back(self, host: Host, seconds: float | None = None) -> None:
        """The slot is free again; ``seconds``: the summary it made took that long."""
        cond = self._condition()
        async with cond:
            host.busy = max(0, host.busy - 1)
            if seconds is not None:
                host.made += 1
                host.seconds += seconds
            cond.notify_all()

    async def lose(self, host: Host, error: SummariserError) -> bool:
        """``host`` went away mid-call: dead for the rest of the job. True when another host is
        alive to make the summary again; False when it was the last (the caller raises)."""
        cond = self._condition()
        async with cond:
            if host.alive and len(self.live()) > 1:
                host.alive = False
                self._tune()
            elif host.alive:  # the last host: the job fails as one host's job does
                self.last_error = error
                return False
            cond.notify_all()
            return bool(self.live())
