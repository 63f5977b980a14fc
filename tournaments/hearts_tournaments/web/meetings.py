"""Confidence intervals for one bot's head-to-head shares, for its page.

The standings give each pair's share (:class:`~hearts_tournaments.tournament.results.Meeting`) without an
interval. Here the same share is bootstrapped the way the standings bootstrap mean place:
resampling whole deals (every rotation of a deal together, so the luck of a deal stays
shared), :data:`~hearts_tournaments.tournament.results.BOOTSTRAP_SAMPLES` resamples, percentile interval
at :data:`~hearts_tournaments.tournament.results.CONFIDENCE`. The point estimate is the standings' own:
each shared game counts once, a tie half, several seats of a bot compared seat by seat.
Needs at least two deals with a shared game; otherwise there is no interval.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.tournament.results import BOOTSTRAP_SAMPLES, CONFIDENCE, Interval


def share_intervals(bot: str, games: Iterable[tuple[int, GameOutcome]], seed: str) -> dict[str, Interval]:
    """Per opponent, the interval of the share of shared games in which ``bot`` finished ahead.

    Args:
        bot: The bot.
        games: ``(deal, outcome)`` of every played game.
        seed: Seeds the resampling (the same games give the same intervals).
    """
    per_deal: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for deal, outcome in games:
        mine = [s for s, b in enumerate(outcome.seats) if b == bot]
        if not mine:
            continue
        theirs: dict[str, list[int]] = defaultdict(list)
        for seat, other in enumerate(outcome.seats):
            if other != bot:
                theirs[other].append(seat)
        for other, seats in theirs.items():
            ahead = sum(_ahead(outcome.places[x], outcome.places[y]) for x in mine for y in seats)
            entry = per_deal[deal][other]
            entry[0] += 1
            entry[1] += ahead / (len(mine) * len(seats))
    deals = sorted(per_deal)
    opponents = sorted({o for d in per_deal.values() for o in d})
    out: dict[str, Interval] = {}
    if len(deals) < 2:
        return out
    rows = [[tuple(per_deal[d].get(o, (0.0, 0.0))) for o in opponents] for d in deals]
    rng = random.Random(f"{seed}/head-to-head/{bot}")
    samples: list[list[float]] = [[] for _ in opponents]
    for _ in range(BOOTSTRAP_SAMPLES):
        together = [0.0] * len(opponents)
        won = [0.0] * len(opponents)
        for row in rng.choices(rows, k=len(rows)):
            for i, (g, a) in enumerate(row):
                together[i] += g
                won[i] += a
        for i in range(len(opponents)):
            if together[i]:
                samples[i].append(won[i] / together[i])
    for i, other in enumerate(opponents):
        if sum(1 for d in deals if per_deal[d].get(other, (0.0,))[0]) < 2:
            continue
        values = sorted(samples[i])
        tail = (1 - CONFIDENCE) / 2
        low = values[max(0, math.ceil(tail * len(values)) - 1)]
        high = values[min(len(values) - 1, math.ceil((1 - tail) * len(values)) - 1)]
        out[other] = Interval(low, high)
    return out


def _ahead(mine: int, theirs: int) -> float:
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
