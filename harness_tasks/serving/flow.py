"""How many requests a client keeps in flight, and how its event loop ends when a signal stops it.

``InFlight`` fits the number of requests in flight to the server: a slow server (one that answers one request at a
time, or a loaded one) queues what it is sent, so a fixed 32 in flight makes the last of them wait 32 answers and
run past the client's timeout, losing answers that a smaller number would have got. As TCP does: it starts low and
grows by one for every answer that came back in under a quarter of its timeout (doubling with each round of answers:
an instant server gets the most allowed after a few dozen); from the first answer slower than that, or a timeout, a
429 or a 503 (each of which also halves it), it grows by one per round only. Growing by doubling can overshoot the
quarter twofold, which still stays within half the timeout.

``run_quietly`` runs a coroutine to its end like ``asyncio.run``. A signal (Ctrl-C, or SIGTERM/SIGHUP turned into
``g2m_cli.main.Stopped``) can land anywhere in the loop, also inside a task's step or an answer's callback; asyncio
then stores the interrupt in that task too, and logs it as "Task exception was never retrieved", with its
traceback, once the task is collected. The interrupt itself still reaches the caller, which says it in one line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from contextlib import asynccontextmanager

#: Statuses that say the server is over its capacity: fewer requests in flight, then retry.
OVERLOADED = frozenset({429, 503})
#: Requests in flight before the first answers say how fast the server is.
START = 4


class InFlight:
    """The number of requests allowed in flight (``limit``, from ``START`` up to ``most``), and the slots in use."""

    def __init__(self, most: int, start: int = START) -> None:
        self.most = max(1, int(most))
        self.limit = min(self.most, max(1, start))
        self.busy = 0
        self.peak = self.limit  # the highest limit reached (for the run's log)
        self.cautious = False  # past the first sign of a slow server: one more per round of answers, not per answer
        self._quick = 0  # quick answers since the limit last grew
        self._changed: asyncio.Condition | None = None

    @asynccontextmanager
    async def slot(self):
        """One request in flight, for as long as the block runs."""
        if self._changed is None:
            self._changed = asyncio.Condition()  # made in the running loop
        async with self._changed:
            await self._changed.wait_for(lambda: self.busy < self.limit)
            self.busy += 1
        try:
            yield
        finally:
            self.busy -= 1
            await self._wake()

    def answered(self, seconds: float, timeout: float) -> None:
        """An answer came back after ``seconds`` of a ``timeout``: quickly, more may be in flight; slowly, no more."""
        if seconds >= timeout / 4:
            self.cautious = True
            return
        self._quick += 1
        if self._quick >= (self.limit if self.cautious else 1) and self.limit < self.most:
            self._quick = 0
            self.limit += 1
            self.peak = max(self.peak, self.limit)

    def overloaded(self) -> None:
        """A timeout or an overload status: half as many in flight (at least one)."""
        self.limit = max(1, self.limit // 2)
        self.cautious, self._quick = True, 0

    async def _wake(self) -> None:
        async with self._changed:
            self._changed.notify_all()


def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The loop's exception handler: an interrupt stored in a task is the stop already being reported, not a bug."""
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return
    loop.default_exception_handler(context)


def run_quietly(coro: Coroutine):
    """``asyncio.run(coro)``, except that a signal landing inside a task leaves no "never retrieved" traceback: the
    interrupt (``KeyboardInterrupt`` or its subclass ``Stopped``) is raised to the caller, and nothing else is said."""
    with asyncio.Runner() as runner:
        runner.get_loop().set_exception_handler(_quiet)
        return runner.run(coro)
