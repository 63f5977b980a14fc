"""Stopping on SIGTERM as on Ctrl-C: a tournament's runner and a league's ``run`` loop alike
cancel their games (stopping the bots on the way out) and keep what is stored."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any


class Terminated(Exception):
    """The runner (a tournament's or a league's) got SIGTERM and stopped; the finished games are kept."""


async def until_terminated(work: Coroutine[Any, Any, None]) -> None:
    """Runs ``work``; SIGTERM cancels it like Ctrl-C does, so the bots are stopped on the way out.

    Raises:
        Terminated: on SIGTERM.
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    terminated = False

    def on_term() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_term)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        return await task
    try:
        await task
    except asyncio.CancelledError:
        if terminated:
            raise Terminated("terminated (SIGTERM)") from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
