"""The bot interface: three decisions, each given the seat's View and nothing else."""

from __future__ import annotations

import abc
import random
from collections.abc import Sequence
from typing import ClassVar, Final

from hearts_core.cards import Card
from hearts_core.rules import MOON_POINTS, MoonChoice
from hearts_core.view import View

#: Visible points one other seat must hold alone before a bot treats it as shooting the moon
#: (the heuristic bot, and so the simulator's heuristic policy, spoils it then).
MOON_ALERT_POINTS: Final = 14


class Bot(abc.ABC):
    """Base class of every bot, in-process or over gRPC (see :func:`hearts_client.run`).

    Subclasses implement :meth:`choose_pass` and :meth:`choose_play`; :meth:`choose_moon` has
    a sensible default. A bot sees only its :class:`View`: the referee builds it for the bot's
    seat and it holds exactly what RULES.md lets that seat know.

    Args:
        seed: Seeds the bot's own random choices, so that a game is reproducible.
    """

    #: The name the bot registers under (``hearts bot NAME``, ``builtin = "NAME"``).
    name: ClassVar[str] = "bot"

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)
        #: Seconds left for the decision being made, when the referee says (over gRPC); a bot
        #: that thinks for long should stay well inside it. None in-process.
        self.time_left: float | None = None

    def reseed(self, seed: int | str) -> None:
        """Seeds the bot's random choices afresh (a new game's ``bot_seed``): as if built with ``seed``.

        A bot that keeps other random state overrides this (and calls it).
        """
        self.rng.seed(seed)

    @abc.abstractmethod
    def choose_pass(self, view: View) -> Sequence[Card]:
        """Returns three cards of ``view.hand`` to pass in ``view.pass_direction``."""

    @abc.abstractmethod
    def choose_play(self, view: View) -> Card:
        """Returns one card of ``view.legal``."""

    def choose_moon(self, view: View) -> MoonChoice:
        """Chooses the moon option by :func:`moon_choice`."""
        return moon_choice(view.seat, view.totals, view.rules.target_score)


def moon_choice(shooter: int, totals: Sequence[int], target: int) -> MoonChoice:
    """The moon option for ``shooter``: "others +26" only if it ends the game as a win.

    Both options leave the shooter the same margin over the best other total, so the only
    difference is whether the game ends now; ending it is good only when the shooter wins.

    Args:
        shooter: The seat that took every point.
        totals: The game totals before the hand.
        target: The target score.

    Returns:
        The option to take.
    """
    others = [t + MOON_POINTS for s, t in enumerate(totals) if s != shooter]
    if max(others) >= target and totals[shooter] <= min(others):
        return MoonChoice.OTHERS_PLUS_26
    return MoonChoice.SELF_MINUS_26
