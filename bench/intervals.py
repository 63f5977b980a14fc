"""Simulated coverage of the standings' 95% intervals for mean place, old method against new.

A tournament of three bots at a table of six (two seats each, every deal in all six seat
rotations) is simulated many times at 2, 4, 6 and 12 deals; each time the standings are
computed by :func:`hearts_tournaments.tournament.results.compute_standings` (the real code) and we count
how often each bot's interval holds its true mean place.

* **old**: the percentile bootstrap over deals the standings used before (1000 resamples):
  at two deals little more than the range of the two deal means.
* **new**: the Student-t interval over deals (cluster-robust), as published now.

Three models of the games (``--model``):

* ``synthetic`` (default): each seat's total is the deal's luck for that seat (shared by its
  rotations) + the bot's skill + a bot-and-deal effect (a bot's style suits some deals) +
  the game's own noise; places follow from the totals. The true mean places come from
  ``--truth-deals`` simulated deals.
* ``engine``: real games played in-process (``hearts_core.local``) by built-in bots
  (``--bots``, default heuristic, random, heuristic), a pool of ``--pool`` (300) deals in every
  rotation; each tournament draws its deals from the pool without replacement and the truth
  is the pool's mean place (so coverage is slightly above what an endless supply of deals
  would give, by the finite-population correction).
  With ``--measure strength`` it is the **strength** intervals' coverage (the ranking key, as
  for ``pl`` below) in real games, the truth being the strength fitted to the whole pool.
* ``pl``: finishing orders drawn from a Plackett-Luce model with known strengths (``PL_STRENGTH``):
  the coverage of the **strength** intervals (bootstrap over deals, 200 resamples, with a t
  quantile, reaching as far past the fit with a tenth of the prior: see
  :func:`hearts_tournaments.results.stats.bootstrap_plackett_luce`). The old standings had no
  interval for their rating (OpenSkill's mu +- sigma is a posterior spread of an
  order-dependent online estimate), so there is no old column.

Usage::

    bench/intervals.py [--model synthetic|engine|pl] [--measure mean_place|strength] [--trials 400] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hearts_client.bots import make_bot
from hearts_core.deal import derive_seed
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats import Interval, percentile_interval
from hearts_tournaments.tournament.results import compute_standings
from hearts_tournaments.tournament.schedule import Schedule

DEAL_COUNTS = (2, 4, 6, 12)
TABLE = 6
BOTS = ("ace", "bee", "cat")
#: Skill of each synthetic bot, in points of its total (lower is better).
SKILL = {"ace": -8.0, "bee": 0.0, "cat": 8.0}
#: Resamples of the old bootstrap, as the standings used.
OLD_SAMPLES = 1000
#: True log-strengths of the ``pl`` model (centred).
PL_STRENGTH = {"ace": 0.5, "bee": 0.0, "cat": -0.5}
#: Resamples of the strength bootstrap in the ``pl`` model (the standings use 1000).
PL_SAMPLES = 200


@dataclass(frozen=True, slots=True)
class Coverage:
    """Coverage at one deal count."""

    deals: int
    trials: int
    old: float | None
    new: float
    old_width: float | None
    new_width: float

    def to_json(self) -> dict[str, float | int | None]:
        return {
            "deals": self.deals,
            "trials": self.trials,
            "old_coverage": None if self.old is None else round(self.old, 4),
            "new_coverage": round(self.new, 4),
            "old_mean_width": None if self.old_width is None else round(self.old_width, 4),
            "new_mean_width": round(self.new_width, 4),
        }


def places_of(totals: Sequence[float]) -> tuple[int, ...]:
    """1 = lowest total; tied totals share the better place."""
    return tuple(1 + sum(1 for o in totals if o < t) for t in totals)


def outcome_of(schedule: Schedule, index: int, totals: Sequence[int], hands: int) -> GameOutcome:
    game = schedule.games[index]
    return GameOutcome.clean(game.key, game.seats, totals, game_id=f"g{index}", hands=hands)


# --- The synthetic model ------------------------------------------------------------------


def synthetic_deal(rng: random.Random, order: Sequence[str]) -> list[list[int]]:
    """Totals of one deal in every rotation: rotation r puts the bot of position p at seat p + r."""
    luck = [rng.gauss(0, 40) for _ in range(TABLE)]
    style = {bot: rng.gauss(0, 30) for bot in set(order)}
    games = []
    for r in range(TABLE):
        seats = [order[(s - r) % TABLE] for s in range(TABLE)]
        games.append(
            [
                round(10 * (1000 + luck[s] + SKILL[b] + style[b] + rng.gauss(0, 30)))
                for s, b in enumerate(seats)
            ]
        )
    return games


def synthetic_truth(order: Sequence[str], deals: int, seed: str) -> dict[str, float]:
    rng = random.Random(seed)
    total: dict[str, float] = defaultdict(float)
    seats: dict[str, int] = defaultdict(int)
    for _ in range(deals):
        for r, totals in enumerate(synthetic_deal(rng, order)):
            for s, place in enumerate(places_of(totals)):
                bot = order[(s - r) % TABLE]
                total[bot] += place
                seats[bot] += 1
    return {bot: total[bot] / seats[bot] for bot in total}


# --- The engine model ---------------------------------------------------------------------


def engine_pool(bots: Sequence[str], pool: int, seed: str) -> list[list[tuple[list[int], int]]]:
    """``pool`` deals, each in every rotation of the seating ``bots`` twice over (the bots
    standing for ace, bee and cat): each game's totals and hands."""
    order = [bots[p % len(bots)] for p in range(TABLE)]
    rules = Rules(players=TABLE, target_score=100)
    deals = []
    for d in range(pool):
        deal_seed = derive_seed(seed, "deal", d)
        games = []
        for r in range(TABLE):
            seats = [order[(s - r) % TABLE] for s in range(TABLE)]
            players = [make_bot(name, derive_seed(seed, "bot", d, r, s)) for s, name in enumerate(seats)]
            state = play_game(rules, deal_seed, players)
            games.append((list(state.totals), len(state.results)))
        deals.append(games)
    return deals


# --- Coverage -----------------------------------------------------------------------------


def old_interval(
    schedule: Schedule, outcomes: Sequence[GameOutcome], bot: str, rng: random.Random
) -> Interval:
    """The standings' former interval: percentiles of a bootstrap of deals."""
    deal_of = {g.key: g.deal for g in schedule.games}
    sums: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for o in outcomes:
        for seat, name in enumerate(o.seats):
            if name == bot:
                sums[deal_of[o.key]][0] += o.places[seat]
                sums[deal_of[o.key]][1] += 1
    deals = sorted(sums)
    means = []
    for _ in range(OLD_SAMPLES):
        places = seats = 0.0
        for _ in deals:
            p, n = sums[rng.choice(deals)]
            places += p
            seats += n
        means.append(places / seats)
    interval = percentile_interval(means)
    assert interval is not None
    return interval


def fixed_schedule(deals: int, seed: str) -> Schedule:
    """Every deal at the seating ace bee cat ace bee cat, in all six rotations (what the
    round-robin schedule gives three bots at six seats, up to the order around the table)."""
    order = [BOTS[p % len(BOTS)] for p in range(TABLE)]
    return Schedule.from_json(
        {
            "bots": list(BOTS),
            "table_size": TABLE,
            "duplicate": True,
            "seed": seed,
            "seatings": [
                {"deal": d, "seed": derive_seed(seed, "deal", d), "order": order} for d in range(deals)
            ],
        }
    )


def coverage(
    deals: int,
    trials: int,
    tournament: Callable[[Schedule, random.Random], list[GameOutcome]],
    truth: Mapping[str, float],
    seed: str,
    strength: bool = False,
) -> Coverage:
    """Coverage of the mean-place intervals (old and new), or with ``strength`` of the
    strength intervals."""
    schedule = fixed_schedule(deals, seed)
    rng = random.Random(f"{seed}/{deals}")
    old_hits = new_hits = 0
    old_width = new_width = 0.0
    for _ in range(trials):
        outcomes = tournament(schedule, rng)
        standings = compute_standings(
            name="bench",
            schedule=schedule,
            outcomes=outcomes,
            target_score=100,
            quarantine_after=3,
            balance=schedule.balance().to_json(),
            bootstrap_samples=PL_SAMPLES if strength else 0,
        )
        for line in standings.standings:
            new = line.strength_ci if strength else line.mean_place_ci
            assert new is not None
            new_hits += new.contains(truth[line.bot])
            new_width += new.width
            if not strength:
                old = old_interval(schedule, outcomes, line.bot, rng)
                old_hits += old.contains(truth[line.bot])
                old_width += old.width
    n = trials * len(BOTS)
    if strength:
        return Coverage(deals, trials, None, new_hits / n, None, new_width / n)
    return Coverage(deals, trials, old_hits / n, new_hits / n, old_width / n, new_width / n)


def pl_game(rng: random.Random, seats: Sequence[str]) -> list[int]:
    """Totals whose order is a Plackett-Luce draw: the seat picked k-th gets total k."""
    left = list(range(len(seats)))
    totals = [0] * len(seats)
    for k in range(len(seats)):
        pick = rng.choices(left, [math.exp(PL_STRENGTH[seats[s]]) for s in left])[0]
        totals[pick] = k
        left.remove(pick)
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--model", choices=("synthetic", "engine", "pl"), default="synthetic")
    parser.add_argument("--trials", type=int, default=400, help="simulated tournaments per deal count")
    parser.add_argument("--truth-deals", type=int, default=20_000, help="synthetic: deals for the truth")
    parser.add_argument("--pool", type=int, default=300, help="engine: deals in the pool")
    parser.add_argument("--bots", default="heuristic,random,heuristic", help="engine: three built-in bots")
    parser.add_argument(
        "--measure",
        choices=("mean_place", "strength"),
        default="mean_place",
        help="engine: the intervals of mean place (default) or of strength, the ranking key",
    )
    parser.add_argument("--seed", default="intervals")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.model == "synthetic":
        # The seating of a deal with three bots at six seats: every bot in two seats.
        order = [BOTS[p % len(BOTS)] for p in range(TABLE)]
        truth = synthetic_truth(order, args.truth_deals, args.seed)

        def tournament(schedule: Schedule, rng: random.Random) -> list[GameOutcome]:
            outcomes = []
            for seating in schedule.seatings:
                for r, totals in enumerate(synthetic_deal(rng, seating.order)):
                    index = seating.deal * TABLE + r
                    outcomes.append(outcome_of(schedule, index, totals, hands=6))
            return outcomes

    elif args.model == "pl":
        truth = dict(PL_STRENGTH)

        def tournament(schedule: Schedule, rng: random.Random) -> list[GameOutcome]:
            return [outcome_of(schedule, g.index, pl_game(rng, g.seats), hands=6) for g in schedule.games]

    else:
        names = args.bots.split(",")
        if len(names) != len(BOTS):
            parser.error("--bots takes three built-in bots")
        pool = engine_pool(names, args.pool, args.seed)
        order = [BOTS[p % len(BOTS)] for p in range(TABLE)]
        sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for games in pool:
            for r, (totals, _) in enumerate(games):
                for s, place in enumerate(places_of(totals)):
                    bot = order[(s - r) % TABLE]
                    sums[bot][0] += place
                    sums[bot][1] += 1
        truth = {bot: p / n for bot, (p, n) in sums.items()}
        if args.measure == "strength":
            # The strength of the whole pool, fitted by the standings' own code: what a
            # tournament of endless deals would estimate.
            everything = fixed_schedule(len(pool), args.seed)
            every_game = [
                outcome_of(everything, d * TABLE + r, totals, hands)
                for d, games in enumerate(pool)
                for r, (totals, hands) in enumerate(games)
            ]
            fitted = compute_standings(
                name="truth",
                schedule=everything,
                outcomes=every_game,
                target_score=100,
                quarantine_after=3,
                balance=everything.balance().to_json(),
                bootstrap_samples=0,
            )
            truth = {line.bot: line.strength for line in fitted.standings if line.strength is not None}

        def tournament(schedule: Schedule, rng: random.Random) -> list[GameOutcome]:
            chosen = rng.sample(range(len(pool)), len(schedule.seatings))
            outcomes = []
            for seating, d in zip(schedule.seatings, chosen, strict=True):
                for r, (totals, hands) in enumerate(pool[d]):
                    outcomes.append(outcome_of(schedule, seating.deal * TABLE + r, totals, hands))
            return outcomes

    strength = args.model == "pl" or args.measure == "strength"
    figures = [coverage(d, args.trials, tournament, truth, args.seed, strength) for d in DEAL_COUNTS]
    elapsed = time.perf_counter() - start
    if args.json:
        json.dump(
            {
                "model": args.model,
                "bots": args.bots.split(",") if args.model == "engine" else list(BOTS),
                "table_size": TABLE,
                "duplicate": True,
                "measure": "strength" if strength else "mean_place",
                "truth": {bot: round(v, 4) for bot, v in sorted(truth.items())},
                "nominal": 0.95,
                "coverage": [c.to_json() for c in figures],
                "seconds": round(elapsed, 1),
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return 0
    measure = "strengths" if strength else "mean places"
    print(
        f"model {args.model}: 3 bots x 2 seats at a table of {TABLE}, every deal in all rotations; "
        f"true {measure} " + ", ".join(f"{b} {v:.3f}" for b, v in sorted(truth.items()))
    )
    print(f"{'deals':>5}  {'old coverage':>12}  {'new coverage':>12}  {'old width':>9}  {'new width':>9}")
    for c in figures:
        old = "-" if c.old is None else f"{c.old:.1%}"
        old_width = "-" if c.old_width is None else f"{c.old_width:.2f}"
        print(f"{c.deals:>5}  {old:>12}  {c.new:>12.1%}  {old_width:>9}  {c.new_width:>9.2f}")
    print(f"nominal 95%; {args.trials} tournaments per deal count, {elapsed:.0f} s")
    return 0 if math.isfinite(elapsed) else 1


if __name__ == "__main__":
    sys.exit(main())
