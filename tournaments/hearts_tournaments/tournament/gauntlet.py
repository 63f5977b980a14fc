"""Gauntlets: one candidate against a fixed field, stopped early by a sequential test.

Every deal seats the candidate in one seat and the field in the others (field bots in turn,
copies when the field is smaller than the table); with ``duplicate`` the deal is played in
every rotation, so the candidate holds every seat's cards once and the field holds them in
the other rotations. The candidate's **advantage** on a deal is the field's mean place minus
the candidate's mean place on that deal (higher is better for the candidate; in places, the
unit of ``h0`` and ``h1``): both played the same cards in the same seats, so the difference
is paired. After every finished deal the runner applies :func:`hearts_tournaments.results.stats.sprt`
to the deals finished so far, in deal order, and stops starting games once it accepts H0 or
H1 (``tournament.deals`` is the most it plays).

The verdict only depends on the games stored: deals are counted in deal order, up to the
first deal not yet complete, and the test stops at the first deal count that crosses a bound,
so extra deals played by parallel tables do not change it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hearts_core.deal import derive_seed
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats import SprtResult, SprtSettings, sprt
from hearts_tournaments.results.stats.luck import GameLuck
from hearts_tournaments.tournament.luck_correction import corrected_seats
from hearts_tournaments.tournament.schedule import Schedule


@dataclass(frozen=True, slots=True)
class GauntletSpec:
    """The ``[gauntlet]`` section of a config.

    Attributes:
        candidate: The bot under test; every other bot is the field.
        sprt: The sequential test's hypotheses (in places per deal) and error rates.
    """

    candidate: str
    sprt: SprtSettings

    def to_json(self) -> dict[str, Any]:
        """The section as published with the results."""
        s = self.sprt
        return {
            "candidate": self.candidate,
            "h0": s.h0,
            "h1": s.h1,
            "alpha": s.alpha,
            "beta": s.beta,
            "min_deals": s.min_deals,
        }


def gauntlet_schedule(
    candidate: str, field: Sequence[str], table_size: int, deals: int, seed: str, duplicate: bool = True
) -> Schedule:
    """The gauntlet's schedule: the candidate at every deal, the field in the other seats.

    Deal ``d`` takes the ``table_size - 1`` field seats from the field in turn (starting where
    deal ``d - 1`` stopped), and the seating is turned by ``d`` seats so that without
    ``duplicate`` the candidate moves round the table. Deals and bot seeds derive from
    ``seed`` as in a round robin.

    Raises:
        ValueError: on an empty field, a candidate in the field, or no deals.
    """
    if not field or candidate in field or len(set(field)) != len(field):
        raise ValueError("a gauntlet needs a candidate and a field of other, distinct bots")
    if deals < 1:
        raise ValueError("a gauntlet needs at least one deal")
    others = table_size - 1
    seatings = []
    for d in range(deals):
        table = [candidate] + [field[(d * others + j) % len(field)] for j in range(others)]
        turn = d % table_size
        order = table[turn:] + table[:turn]
        seatings.append({"deal": d, "seed": derive_seed(seed, "deal", d), "order": order})
    return Schedule.from_json(
        {
            "bots": [candidate, *field],
            "table_size": table_size,
            "duplicate": duplicate,
            "seed": seed,
            "seatings": seatings,
        }
    )


def deal_advantages(
    schedule: Schedule,
    outcomes: Sequence[GameOutcome],
    candidate: str,
    luck_terms: Mapping[str, GameLuck] | None = None,
) -> list[float]:
    """The candidate's advantage on each complete deal, in deal order, up to the first deal
    that is not complete: the field's mean place minus the candidate's.

    With ``luck_terms`` (every game's luck terms by key) the places are luck-corrected, each
    deal's coefficients fitted on the deals before it only, so that a deal's advantage never
    changes as later deals are played and the test's verdict stays where it fell.
    """
    by_key = {o.key: o for o in outcomes}
    games_of: dict[int, list[str]] = {}
    for game in schedule.games:
        games_of.setdefault(game.deal, []).append(game.key)
    complete = []
    for deal in sorted(games_of):
        if not all(key in by_key for key in games_of[deal]):
            break
        complete.append(deal)
    played = [by_key[key] for deal in complete for key in games_of[deal]]
    fixed = corrected_seats(schedule, played, luck_terms, forward=True) if luck_terms is not None else None
    advantages = []
    for deal in complete:
        mine = [0.0, 0]
        theirs = [0.0, 0]
        for key in games_of[deal]:
            o = by_key[key]
            for seat, bot in enumerate(o.seats):
                side = mine if bot == candidate else theirs
                side[0] += fixed[key][seat].place if fixed is not None else o.places[seat]
                side[1] += 1
        if mine[1] and theirs[1]:
            advantages.append(theirs[0] / theirs[1] - mine[0] / mine[1])
    return advantages


def gauntlet_verdict(
    schedule: Schedule,
    outcomes: Sequence[GameOutcome],
    spec: GauntletSpec,
    luck_terms: Mapping[str, GameLuck] | None = None,
) -> SprtResult:
    """The sequential test over the complete deals stored so far (luck-corrected with
    ``luck_terms``: see :func:`deal_advantages`)."""
    return sprt(deal_advantages(schedule, outcomes, spec.candidate, luck_terms), spec.sprt)
