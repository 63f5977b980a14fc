"""The Python bot SDK and the built-in bots of Cancellation Hearts.

Write a bot by subclassing :class:`Bot`, then enter it with :func:`run`::

    from hearts_client import Bot, run

    class Lowest(Bot):
        def choose_pass(self, view):
            return sorted(view.hand)[-3:]

        def choose_play(self, view):
            return min(view.legal)

    run(Lowest(), "127.0.0.1:50051", token)
"""

from hearts_client.bot import Bot
from hearts_client.sdk import BotRunError, main, run, run_async

__all__ = ["Bot", "BotRunError", "main", "run", "run_async"]
