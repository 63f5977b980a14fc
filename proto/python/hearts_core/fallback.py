"""The referee's default decisions, used when a seat faults (timeout, disconnection, retirement).

The rule is simple so that bot authors can predict it (it is also stated in the .proto):

* pass: the three highest cards, by rank, ties broken by suit order S, H, D, C;
* play: the lowest legal card, by rank, ties broken by suit order C, D, H, S;
* moon: subtract 26 from the shooter's own score (RULES.md's default).
"""

from __future__ import annotations

from collections.abc import Sequence

from hearts_core.cards import Card, CardSet
from hearts_core.rules import DEFAULT_MOON_CHOICE, MoonChoice


def default_pass(hand: CardSet) -> list[Card]:
    """The three highest cards of ``hand`` (rank, then suit order S, H, D, C)."""
    return sorted(hand, key=lambda c: (c.rank, c.suit), reverse=True)[:3]


def default_play(legal: Sequence[Card]) -> Card:
    """The lowest of the legal cards (rank, then suit order C, D, H, S).

    Raises:
        ValueError: if ``legal`` is empty (the engine never offers an empty legal set).
    """
    if not legal:
        raise ValueError("no legal card to choose from")
    return min(legal, key=lambda c: (c.rank, c.suit))


def default_moon() -> MoonChoice:
    """The moon option the referee applies when the shooter does not answer."""
    return DEFAULT_MOON_CHOICE
