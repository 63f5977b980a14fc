"""The built-in bots, by name (:data:`BUILTIN_BOTS`, the one list of them: the command line's
help, the configuration checks and the tests take their names from it)."""

from __future__ import annotations

from collections.abc import Callable

from hearts_client.bot import Bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.ismcts import IsmctsBot
from hearts_client.bots.montecarlo import MonteCarloBot
from hearts_client.bots.random_bot import RandomBot

BotFactory = Callable[[int | str | None], Bot]

#: Built-in bots by name; each factory takes a seed.
BUILTIN_BOTS: dict[str, BotFactory] = {
    RandomBot.name: RandomBot,
    HeuristicBot.name: HeuristicBot,
    MonteCarloBot.name: MonteCarloBot,
    IsmctsBot.name: IsmctsBot,
}


def describe(name: str) -> str:
    """What the built-in bot ``name`` does, in one line: the first line of its class's docstring
    (``hearts bot run --help`` lists them).

    Raises:
        KeyError: if there is no built-in bot of that name.
    """
    doc = BUILTIN_BOTS[name].__doc__ or ""
    return doc.strip().partition("\n")[0].strip()


def make_bot(name: str, seed: int | str | None = None) -> Bot:
    """Creates the built-in bot called ``name``.

    Raises:
        ValueError: if there is no built-in bot of that name.
    """
    try:
        factory = BUILTIN_BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_BOTS))
        raise ValueError(f"unknown bot {name!r}: built-in bots are {known}") from None
    return factory(seed)
