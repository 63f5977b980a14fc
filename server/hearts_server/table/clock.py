"""The referee's clock, as a dependency: the event loop's clock live, a manual one in tests.

Every deadline of a table (a decision's limit, the join timeout, the reconnection grace, the
flood allowance's refill) is read from a :class:`Clock`. :class:`LoopClock` is the running event
loop's monotonic clock; :class:`ManualClock` only moves when a test calls
:meth:`ManualClock.advance`, so timeout and fault tests run in milliseconds instead of seconds.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    """What a table needs of time."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    async def wait_for(self, awaitable: Awaitable[T], timeout: float) -> T:
        """Awaits ``awaitable`` for at most ``timeout`` seconds.

        Raises:
            TimeoutError: when the time is up first (the awaitable is cancelled).
        """
        ...


class LoopClock:
    """The running event loop's clock (``loop.time()``)."""

    def now(self) -> float:
        """The event loop's time."""
        return asyncio.get_running_loop().time()

    async def wait_for(self, awaitable: Awaitable[T], timeout: float) -> T:
        """:func:`asyncio.wait_for`."""
        return await asyncio.wait_for(awaitable, timeout)


class ManualClock:
    """A clock that stands still until :meth:`advance` moves it (for tests)."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        """The clock's time."""
        return self._now

    async def wait_for(self, awaitable: Awaitable[T], timeout: float) -> T:
        """Awaits ``awaitable`` until the clock has been advanced ``timeout`` seconds."""
        task: asyncio.Future[T] = asyncio.ensure_future(awaitable)
        timer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self._now + timeout, next(self._order), timer))
        waiting: set[asyncio.Future[object]] = {task, timer}  # type: ignore[arg-type]
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            timer.cancel()
        if task.done():
            return task.result()
        task.cancel()
        raise TimeoutError

    async def advance(self, seconds: float) -> None:
        """Moves the clock on, firing every timer that falls due, and lets the loop run."""
        self._now += seconds
        while self._timers and self._timers[0][0] <= self._now:
            _, _, timer = heapq.heappop(self._timers)
            if not timer.done():
                timer.set_result(None)
        await settle()


async def settle(rounds: int = 20) -> None:
    """Lets every ready task run (a few event loop turns)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
