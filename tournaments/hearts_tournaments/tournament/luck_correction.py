"""A tournament's luck correction: the seats whose policy is known, each stored game's luck
terms, and the corrected places and points that the standings, the separation rule and the
gauntlet's test use when ``luck_correction = true`` (or ``report --luck-correction``).

The statistics are :mod:`hearts_tournaments.results.stats.luck` (the terms of one record)
and :mod:`hearts_tournaments.results.stats.adjust` (the cross-fitted adjustment); this module
feeds them a tournament's games. docs/TOURNAMENTS.md, *Luck correction*, says what the
correction is, why it is unbiased, where it helps and where it cannot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hearts_core.record import GameRecord, RecordFileError
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats.luck import (
    KNOWN_POLICIES,
    CorrectedSeat,
    GameLuck,
    LuckError,
    LuckGame,
    LuckSettings,
    correct,
    game_luck,
)
from hearts_tournaments.tournament.schedule import Schedule


@dataclass(frozen=True, slots=True)
class LuckCorrection:
    """How a tournament's luck is corrected.

    Attributes:
        known: The bots whose decisions get action terms, with their policy: the built-in
            bots of :data:`~hearts_tournaments.results.stats.luck.KNOWN_POLICIES` entered
            without options.
        settings: The reference play-outs.
    """

    known: tuple[tuple[str, str], ...] = ()
    settings: LuckSettings = field(default_factory=LuckSettings)

    @classmethod
    def of(cls, bots: Sequence[BotSpec]) -> LuckCorrection:
        """The correction of a tournament of ``bots``."""
        return cls(tuple((b.name, b.builtin) for b in bots if b.builtin in KNOWN_POLICIES and not b.options))

    def terms(self, seats: Sequence[str], record_json: str, key: str) -> GameLuck:
        """The luck terms of one stored game.

        Raises:
            LuckError: naming the game, if its record cannot be read or replayed.
        """
        policies = dict(self.known)
        known = {s: policies[bot] for s, bot in enumerate(seats) if bot in policies}
        try:
            return game_luck(
                GameRecord.read(record_json, name=f"the record of game {key}"), self.settings, known
            )
        except (LuckError, RecordFileError) as exc:
            raise LuckError(f"game {key}: {exc}") from None

    def describe(self) -> str:
        """The correction in one line, for the report's notes."""
        known = ", ".join(f"{bot} ({policy})" for bot, policy in self.known)
        actions = f"; action terms at every decision of {known}" if known else ""
        return (
            f"Luck-corrected: each seat's points and place minus its luck terms (deal terms from "
            f"{self.settings.describe()}{actions}), with coefficients fitted on the other deals "
            "(each value keeps its expectation); mean place, points/hand, paired differences, the "
            "separation and the gauntlet's test use the corrected values, and the strength's fit is "
            "moved by one step of the pairwise likelihood to the corrected places (the same scale)."
        )

    def to_json(self) -> dict[str, Any]:
        """The correction as the report names it."""
        return {**self.settings.to_json(), "known": {bot: policy for bot, policy in self.known}}


def outcome_terms(outcomes: Sequence[GameOutcome], correction: LuckCorrection) -> dict[str, GameLuck]:
    """The luck terms of every game, from the outcomes' records.

    Raises:
        LuckError: naming the first game whose record cannot be read or replayed.
    """
    return {o.key: correction.terms(o.seats, o.record_json, o.key) for o in outcomes}


def corrected_seats(
    schedule: Schedule, outcomes: Sequence[GameOutcome], terms: Mapping[str, GameLuck], forward: bool = False
) -> dict[str, tuple[CorrectedSeat, ...]]:
    """Per game key, every seat's corrected values (see
    :func:`hearts_tournaments.results.stats.luck.correct`), the deals being the clusters.

    Args:
        schedule: The schedule (which deal each game is of).
        outcomes: The games, in the order their deals should be fitted in with ``forward``.
        terms: Each game's luck terms, by key.
        forward: Fit each deal on the deals before it only (for the gauntlet's test).
    """
    deal_of = {g.key: g.deal for g in schedule.games}
    games = [LuckGame(deal_of[o.key], o.seats, o.places, terms[o.key]) for o in outcomes]
    return {o.key: seats for o, seats in zip(outcomes, correct(games, forward), strict=True)}
