"""A game to play, as the arena is handed it: its seats, its deal's seed, its bots' seeds."""

from __future__ import annotations

from dataclasses import dataclass

from hearts_core.deal import keyed_seed


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a schedule (a tournament's, or a league block's).

    Attributes:
        index: Its position in the schedule (the order games are started in).
        key: Its stable name, ``d003-r02`` (deal 3, rotation 2) or ``d003`` without duplicate.
        deal: The deal's number.
        rotation: Which of the deal's games this is (0 without duplicate).
        seed: The deal seed.
        seats: The bot at each seat.
        bot_seeds: The seed given to the bot at each seat.
    """

    index: int
    key: str
    deal: int
    rotation: int
    seed: str
    seats: tuple[str, ...]
    bot_seeds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play, as the driver hands it to an executor.

    Attributes:
        game: The scheduled game.
        absent: Per seat, whether its bot is quarantined (the referee plays the seat).
        seed: The deal's real seed (keyed by the deal secret, which stays with the driver).
        bot_seeds: The seed of each seat's bot.
        released: Per seat (or empty: none), whether nobody plays it: the referee plays it by
            its default rule from the start, and that is no fault (the bot test kit's other
            seats).
    """

    game: ScheduledGame
    absent: tuple[bool, ...]
    seed: str
    bot_seeds: tuple[str, ...]
    released: tuple[bool, ...] = ()

    @classmethod
    def of(cls, game: ScheduledGame, absent: tuple[bool, ...], deal_secret: bytes) -> GameJob:
        """The job of ``game``, its seeds derived from the tournament's ``deal_secret``."""
        return cls(
            game=game,
            absent=absent,
            seed=deal_seed(deal_secret, game),
            bot_seeds=tuple(bot_seed(deal_secret, game, seat) for seat in range(len(game.seats))),
        )


def deal_seed(secret: bytes, game: ScheduledGame) -> str:
    """The real deal seed of ``game``: the same for every rotation of its deal."""
    return keyed_seed(secret, "deal", game.seed)


def bot_seed(secret: bytes, game: ScheduledGame, seat: int) -> str:
    """The seed given to the bot in ``seat`` of ``game`` for its own random choices."""
    return keyed_seed(secret, "bot", game.bot_seeds[seat])
