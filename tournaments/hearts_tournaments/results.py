"""A tournament's standings: per-bot statistics, ratings, confidence intervals, head-to-head.

Everything is computed from the stored games alone, in schedule order, with seeded randomness,
so the same games always give the same standings (a resumed tournament and an uninterrupted
one publish identical results).

Per bot, counted over its *seats* (a bot that fills three seats of a game contributes three
seat-games to the means, but one game to ``games``):

* **mean place**: finishing place, 1 = lowest total; tied totals share the better place.
  This is the ranking key: it is what a game is played for, it needs no model, and its
  confidence interval speaks to the ranking directly.
* **wins**: games won, a shared win split equally between the winning seats.
* **points per hand**: total points over hands played (moon shots included).
* **mean score**: mean final total.
* **rating**: OpenSkill Plackett-Luce, rating each game's finishing order (every seat a
  one-player team, ties kept). A bot's rating after a game is the mean of its seats' updated
  ratings, so a game counts once per bot. ``ordinal`` (mu - 3 sigma) is a tie-breaker only.
* **95% confidence intervals** for mean place and points per hand: a percentile bootstrap
  that resamples whole *deals* (every rotation and every seat of a deal together), which keeps
  the duplicate structure: the luck of a deal is shared by every bot that played it.
* **faults** (as the referee counted them) and **failed games** (a seat retired, a seat that
  never made a decision of its own, or a crash).

Head-to-head: for bots A and B, the share of the games where both played in which A finished
ahead of B (a tie counts half; with several seats each, every seat of A is compared with every
seat of B and the game counts once).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from openskill.models import PlackettLuce

from hearts_core.deal import derive_seed
from hearts_tournaments.outcome import GameOutcome, Quarantine, quarantined
from hearts_tournaments.schedule import Schedule

#: Version of the JSON report.
SCHEMA_VERSION = 1
#: Bootstrap resamples per interval.
BOOTSTRAP_SAMPLES = 1000
#: Two-sided confidence level of the intervals.
CONFIDENCE = 0.95
#: Decimal places kept in the published figures.
DIGITS = 6


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval."""

    low: float
    high: float

    def to_json(self) -> list[float]:
        """``[low, high]``."""
        return [round(self.low, DIGITS), round(self.high, DIGITS)]

    def overlaps(self, other: Interval) -> bool:
        """Whether the two intervals share a point."""
        return self.low <= other.high and other.low <= self.high


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's line of the standings (see the module's docstring for each figure)."""

    rank: int
    bot: str
    games: int
    seats: int
    mean_place: float | None
    mean_place_ci: Interval | None
    wins: float
    points_per_hand: float | None
    points_per_hand_ci: Interval | None
    mean_score: float | None
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float
    faults: int
    failed_games: int
    quarantined: bool

    def to_json(self) -> dict[str, Any]:
        """The line as published."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "games": self.games,
            "seats": self.seats,
            "mean_place": _num(self.mean_place),
            "mean_place_ci95": self.mean_place_ci.to_json() if self.mean_place_ci else None,
            "wins": _num(self.wins),
            "points_per_hand": _num(self.points_per_hand),
            "points_per_hand_ci95": self.points_per_hand_ci.to_json() if self.points_per_hand_ci else None,
            "mean_score": _num(self.mean_score),
            "rating": {
                "mu": _num(self.rating_mu),
                "sigma": _num(self.rating_sigma),
                "ordinal": _num(self.rating_ordinal),
            },
            "faults": self.faults,
            "failed_games": self.failed_games,
            "quarantined": self.quarantined,
        }


@dataclass(frozen=True, slots=True)
class Meeting:
    """How bot A fared against bot B: games together, and in how many A finished ahead."""

    games: int
    ahead: float

    @property
    def share(self) -> float | None:
        """The share of their games in which A finished ahead (a tie counts half)."""
        return self.ahead / self.games if self.games else None


@dataclass(frozen=True, slots=True)
class Standings:
    """The published results of a tournament (complete or not)."""

    name: str
    table_size: int
    deals: int
    duplicate: bool
    seed: str
    target_score: int
    games_total: int
    games_played: int
    deals_played: int
    standings: tuple[BotStanding, ...]
    head_to_head: dict[str, dict[str, Meeting]]
    quarantine: tuple[Quarantine, ...]
    balance: dict[str, Any]

    @property
    def complete(self) -> bool:
        """Whether every scheduled game was played."""
        return self.games_played == self.games_total

    def by_bot(self, bot: str) -> BotStanding:
        """The line of ``bot``."""
        return next(s for s in self.standings if s.bot == bot)

    def to_json(self) -> dict[str, Any]:
        """The JSON report (``schema_version`` 1), standings in rank order."""
        return {
            "schema_version": SCHEMA_VERSION,
            "tournament": {
                "name": self.name,
                "table_size": self.table_size,
                "deals": self.deals,
                "duplicate": self.duplicate,
                "seed": self.seed,
                "target_score": self.target_score,
                "games_total": self.games_total,
                "games_played": self.games_played,
                "deals_played": self.deals_played,
                "complete": self.complete,
            },
            "ranking": {
                "key": "mean_place",
                "tie_breaker": "rating.ordinal",
                "rating_model": "openskill.PlackettLuce",
                "confidence": CONFIDENCE,
                "bootstrap_unit": "deal",
                "bootstrap_samples": BOOTSTRAP_SAMPLES,
            },
            "standings": [s.to_json() for s in self.standings],
            "head_to_head": {
                a: {
                    b: {"games": m.games, "ahead": _num(m.ahead), "share": _num(m.share)}
                    for b, m in row.items()
                }
                for a, row in self.head_to_head.items()
            },
            "quarantined": [
                {"bot": q.bot, "after_game": q.after_game, "failed_games": q.failed_games}
                for q in self.quarantine
            ],
            "balance": self.balance,
        }


@dataclass(slots=True)
class _Sums:
    """Running sums of one bot over some seat-games."""

    places: float = 0.0
    seats: int = 0
    points: float = 0.0
    hands: int = 0

    def add(self, other: _Sums) -> None:
        self.places += other.places
        self.seats += other.seats
        self.points += other.points
        self.hands += other.hands


def compute_standings(
    *,
    name: str,
    schedule: Schedule,
    outcomes: Sequence[GameOutcome],
    target_score: int,
    quarantine_after: int,
    balance: dict[str, Any],
) -> Standings:
    """The standings of the games played so far.

    Args:
        name: The tournament's name.
        schedule: Its schedule.
        outcomes: The finished games, in the order they finished (which decides quarantine).
        target_score: The games' target score (published with the results).
        quarantine_after: Failed games before quarantine.
        balance: The schedule's balance report.
    """
    bots = schedule.bots
    position = {g.key: g.index for g in schedule.games}
    deal_of = {g.key: g.deal for g in schedule.games}
    games_in_order = sorted(outcomes, key=lambda o: position[o.key])
    # Per deal and bot, for the bootstrap; and the totals over everything.
    per_deal: dict[int, dict[str, _Sums]] = defaultdict(lambda: defaultdict(_Sums))
    games = dict.fromkeys(bots, 0)
    wins = dict.fromkeys(bots, 0.0)
    faults = dict.fromkeys(bots, 0)
    failed = dict.fromkeys(bots, 0)
    scores: dict[str, list[int]] = {bot: [] for bot in bots}
    together: dict[tuple[str, str], int] = defaultdict(int)
    ahead_of: dict[tuple[str, str], float] = defaultdict(float)
    for outcome in games_in_order:
        sums = per_deal[deal_of[outcome.key]]
        seats_of: dict[str, list[int]] = defaultdict(list)
        for seat, bot in enumerate(outcome.seats):
            seats_of[bot].append(seat)
            entry = sums[bot]
            entry.places += outcome.places[seat]
            entry.seats += 1
            entry.points += outcome.totals[seat]
            entry.hands += outcome.hands
            faults[bot] += outcome.faults[seat]
            scores[bot].append(outcome.totals[seat])
        for seat in outcome.winners:
            wins[outcome.seats[seat]] += 1 / len(outcome.winners)
        for bot in seats_of:
            games[bot] += 1
            failed[bot] += outcome.failed(bot)
        for a, mine in seats_of.items():
            for b, theirs in seats_of.items():
                if a == b:
                    continue
                ahead = sum(_ahead(outcome.places[x], outcome.places[y]) for x in mine for y in theirs)
                together[(a, b)] += 1
                ahead_of[(a, b)] += ahead / (len(mine) * len(theirs))
    totals: dict[str, _Sums] = defaultdict(_Sums)
    for sums in per_deal.values():
        for bot, entry in sums.items():
            totals[bot].add(entry)
    ratings = _ratings(bots, games_in_order)
    intervals = _bootstrap(bots, per_deal, derive_seed(schedule.seed, "bootstrap"))
    held = quarantined(outcomes, quarantine_after)
    lines = []
    for bot in bots:
        t = totals[bot]
        mu, sigma = ratings[bot]
        place_ci, points_ci = intervals.get(bot, (None, None))
        lines.append(
            BotStanding(
                rank=0,
                bot=bot,
                games=games[bot],
                seats=t.seats,
                mean_place=t.places / t.seats if t.seats else None,
                mean_place_ci=place_ci,
                wins=wins[bot],
                points_per_hand=t.points / t.hands if t.hands else None,
                points_per_hand_ci=points_ci,
                mean_score=sum(scores[bot]) / len(scores[bot]) if scores[bot] else None,
                rating_mu=mu,
                rating_sigma=sigma,
                rating_ordinal=mu - 3 * sigma,
                faults=faults[bot],
                failed_games=failed[bot],
                quarantined=bot in held,
            )
        )
    lines.sort(key=lambda s: (s.mean_place is None, s.mean_place or 0.0, -s.rating_ordinal, s.bot))
    ranked = tuple(replace(line, rank=index + 1) for index, line in enumerate(lines))
    return Standings(
        name=name,
        table_size=schedule.table_size,
        deals=len(schedule.seatings),
        duplicate=schedule.duplicate,
        seed=schedule.seed,
        target_score=target_score,
        games_total=len(schedule.games),
        games_played=len(outcomes),
        deals_played=len(per_deal),
        standings=ranked,
        head_to_head={
            a: {b: Meeting(together[(a, b)], ahead_of[(a, b)]) for b in bots if b != a} for a in bots
        },
        quarantine=tuple(held.values()),
        balance=balance,
    )


def _ahead(mine: int, theirs: int) -> float:
    """1 if a place beats another, half on a tie, else 0."""
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def _ratings(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett-Luce ratings after every game, taken in schedule order."""
    model = PlackettLuce()
    start = model.rating()
    ratings = {bot: (float(start.mu), float(start.sigma)) for bot in bots}
    for outcome in outcomes:
        # A fresh rating per seat: a bot in several seats is several teams of this game.
        teams = [[model.rating(mu=ratings[bot][0], sigma=ratings[bot][1])] for bot in outcome.seats]
        updated = model.rate(teams, ranks=list(outcome.places))
        seats_of: dict[str, list[int]] = defaultdict(list)
        for seat, bot in enumerate(outcome.seats):
            seats_of[bot].append(seat)
        for bot, seats in seats_of.items():
            mu = sum(float(updated[s][0].mu) for s in seats) / len(seats)
            sigma = sum(float(updated[s][0].sigma) for s in seats) / len(seats)
            ratings[bot] = (mu, sigma)
    return ratings


def _bootstrap(
    bots: Sequence[str], per_deal: dict[int, dict[str, _Sums]], seed: str
) -> dict[str, tuple[Interval | None, Interval | None]]:
    """Percentile intervals for mean place and points per hand, resampling whole deals.

    Needs at least two deals; a bot missing from a resample (it can happen with more bots
    than seats) skips that resample.
    """
    deals = sorted(per_deal)
    if len(deals) < 2:
        return {}
    rng = random.Random(seed)
    places: dict[str, list[float]] = {bot: [] for bot in bots}
    points: dict[str, list[float]] = {bot: [] for bot in bots}
    for _ in range(BOOTSTRAP_SAMPLES):
        totals: dict[str, _Sums] = defaultdict(_Sums)
        for _ in deals:
            for bot, entry in per_deal[rng.choice(deals)].items():
                totals[bot].add(entry)
        for bot, t in totals.items():
            if t.seats:
                places[bot].append(t.places / t.seats)
            if t.hands:
                points[bot].append(t.points / t.hands)
    return {bot: (_percentile_interval(places[bot]), _percentile_interval(points[bot])) for bot in bots}


def _percentile_interval(values: list[float]) -> Interval | None:
    if not values:
        return None
    values.sort()
    tail = (1 - CONFIDENCE) / 2
    low = values[max(0, math.ceil(tail * len(values)) - 1)]
    high = values[min(len(values) - 1, math.ceil((1 - tail) * len(values)) - 1)]
    return Interval(low, high)


def _num(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)
