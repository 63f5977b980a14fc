"""The Python bot SDK and the built-in bots of Cancellation Hearts.

Write a bot by subclassing :class:`Bot`, then enter it with :func:`run`::

    from hearts_client import Bot, run

    class Lowest(Bot):
        def choose_pass(self, view):
            return sorted(view.hand)[-3:]

        def choose_play(self, view):
            return min(view.legal)

    run(Lowest(), "127.0.0.1:50051", token)

The game's vocabulary (cards, views, rules) comes from the rules core, ``hearts_core``, and is
re-exported here, so a bot needs only this package.
"""

from hearts_client.bot import Bot
from hearts_client.sdk import BotRunError, main, run, run_async
from hearts_core.cards import BLACK_MARIA, Card, CardSet, Rank, Suit
from hearts_core.rules import MoonChoice, PassDirection, Rules
from hearts_core.state import winning_index
from hearts_core.view import TrickView, View

__all__ = [
    "BLACK_MARIA",
    "Bot",
    "BotRunError",
    "Card",
    "CardSet",
    "MoonChoice",
    "PassDirection",
    "Rank",
    "Rules",
    "Suit",
    "TrickView",
    "View",
    "main",
    "run",
    "run_async",
    "winning_index",
]
