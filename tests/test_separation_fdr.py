"""Separation with the false discovery rate controlled (issue 38): Benjamini-Hochberg across the
neighbour tests of a ranking, the p-value each test feeds it, and the standings that use it.

A pair's own 95% interval keeps the error of that pair at 5%, not the share of wrong verdicts
among the pairs separated; Benjamini-Hochberg bounds that share by 5%, and never separates a
pair the pair's own interval would keep together.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from statistics import NormalDist

import pytest

from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.final import final_status
from hearts_tournaments.results.stats import (
    CONFIDENCE,
    SEPARATION_FDR,
    Interval,
    benjamini_hochberg,
    bootstrap_plackett_luce,
    holm,
    separate_neighbours,
    strength_difference,
    strength_difference_p,
)
from hearts_tournaments.tournament.results import Separation, Standings, compute_standings
from hearts_tournaments.tournament.schedule import make_schedule
from tests.test_tournament_results import simulated

#: Benjamini and Hochberg (1995), section 4: the 15 p-values of a clinical trial. At q = 0.05
#: the procedure rejects the four smallest, Bonferroni's (and Holm's) only the three smallest.
TEXTBOOK = [
    0.0001,
    0.0004,
    0.0019,
    0.0095,
    0.0201,
    0.0278,
    0.0298,
    0.0344,
    0.0459,
    0.3240,
    0.4262,
    0.5719,
    0.6528,
    0.7590,
    1.0000,
]


def test_the_textbook_example_rejects_the_four_smallest() -> None:
    assert benjamini_hochberg(TEXTBOOK, 0.05) == [True] * 4 + [False] * 11
    assert sum(p <= 0.05 for p in holm(TEXTBOOK)) == 3
    # The order of the tests does not matter.
    shuffled = TEXTBOOK[:]
    random.Random(1).shuffle(shuffled)
    kept = [p for p, r in zip(shuffled, benjamini_hochberg(shuffled, 0.05), strict=True) if r]
    assert sorted(kept) == TEXTBOOK[:4]


def test_the_procedure_steps_up_and_skips_missing_tests() -> None:
    # Step-up: the largest p-value under its line decides, even over smaller ones above theirs.
    assert benjamini_hochberg([0.04, 0.045], 0.05) == [True, True]
    assert benjamini_hochberg([0.01, 0.02, 0.03, 0.04, 0.05], 0.05) == [True] * 5
    assert benjamini_hochberg([0.01, 0.04, 0.9], 0.05) == [True, False, False]
    assert benjamini_hochberg([0.02, 0.04, 0.9], 0.05) == [False, False, False]
    # A test without a p-value is neither rejected nor counted in m.
    assert benjamini_hochberg([0.04, None, 0.045], 0.05) == [True, False, True]
    assert benjamini_hochberg([None, None], 0.05) == [False, False]
    assert benjamini_hochberg([], 0.05) == []
    with pytest.raises(ValueError, match="between 0 and 1"):
        benjamini_hochberg([0.01], 0.0)


def _adjusted(p_values: list[float]) -> list[float]:
    """The Benjamini-Hochberg adjusted p-values, ``min over j >= i of m * p(j) / j``."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, m * p_values[i] / rank)
        out[i] = running
    return out


def test_rejections_are_those_with_an_adjusted_value_under_q_and_never_more_than_per_pair() -> None:
    rng = random.Random(38)
    for _ in range(500):
        m = rng.randint(1, 30)
        # A mixture of nulls (uniform) and effects (near zero), as a ranking's neighbours are.
        p_values = [rng.random() if rng.random() < 0.6 else rng.random() * 0.03 for _ in range(m)]
        q = rng.choice([0.01, 0.05, 0.1])
        rejected = benjamini_hochberg(p_values, q)
        assert rejected == [a <= q for a in _adjusted(p_values)]
        # Monotone: never a rejection a per-pair test at level q would not make.
        assert all(p <= q for p, r in zip(p_values, rejected, strict=True) if r)


def _deals(skill: dict[str, float], n: int, seed: int) -> list[list[tuple[tuple[str, int], ...]]]:
    """Deals of four games each among the bots of ``skill`` (higher is better), with noise."""
    rng = random.Random(seed)
    deals = []
    for _ in range(n):
        games = []
        for _ in range(4):
            order = sorted(skill, key=lambda b: -skill[b] + rng.gauss(0, 1))
            games.append(tuple((bot, place + 1) for place, bot in enumerate(order)))
        deals.append(games)
    return deals


def test_the_p_value_is_where_the_pairs_interval_reaches_zero() -> None:
    fit = bootstrap_plackett_luce(_deals({"x": 0.6, "y": 0.3, "z": 0.0, "w": 0.0}, 10, 3), 300, "p")
    for a, b in (("x", "y"), ("x", "z"), ("y", "z"), ("z", "w"), ("w", "x")):
        p = strength_difference_p(fit, a, b)
        interval = strength_difference(fit, a, b)
        assert p is not None and interval is not None and 0.0 <= p <= 1.0
        assert (p < 1 - CONFIDENCE) == (not interval.contains(0.0)), (a, b, p, interval)
        if 1e-9 < p < 1.0:
            # At confidence 1 - p the interval's nearer end is at zero.
            edge = strength_difference(fit, a, b, confidence=1 - p)
            assert edge is not None
            assert min(abs(edge.low), abs(edge.high)) == pytest.approx(0.0, abs=1e-6)
    assert strength_difference_p(bootstrap_plackett_luce(_deals({"x": 1, "y": 0}, 5, 1), 0), "x", "y") is None


def test_separate_neighbours_is_benjamini_hochberg_over_the_neighbour_tests() -> None:
    skill = {f"b{i}": 0.25 * (i // 2) for i in range(8)}
    fit = bootstrap_plackett_luce(_deals(skill, 12, 7), 300, "n")
    ranked = sorted(fit.strength, key=lambda b: -fit.strength[b])
    tests = separate_neighbours(fit, ranked)
    assert [(t.a, t.b) for t in tests] == list(itertools.pairwise(ranked))
    assert [t.separated for t in tests] == benjamini_hochberg([t.p_value for t in tests], SEPARATION_FDR)
    for t in tests:
        assert t.interval == strength_difference(fit, t.a, t.b)
        assert not t.separated or (t.interval is not None and t.interval.low > 0)


def _standings(skill: dict[str, float], seed: int) -> Standings:
    schedule = make_schedule(list(skill), 6, 24, "1", duplicate=True)
    return compute_standings(
        name="t",
        schedule=schedule,
        outcomes=simulated(schedule, random.Random(seed), skill),
        target_score=50,
        quarantine_after=3,
        balance=schedule.balance().to_json(),
        bootstrap_samples=200,
    )


BOTS = [f"b{i:02d}" for i in range(12)]


@pytest.mark.timeout(120)
def test_a_field_of_equal_bots_separates_no_neighbours() -> None:
    for seed in range(3):
        result = _standings(dict.fromkeys(BOTS, 0.0), seed)
        assert len(result.separations) == len(BOTS) - 1
        assert not any(s.separated for s in result.separations)
        assert [line.tier for line in result.standings] == [1] * len(BOTS)
        assert "0 of 11 neighbouring pairs in the ranking separated" in result.separation_line()


@pytest.mark.timeout(120)
def test_standings_separate_what_benjamini_hochberg_rejects_and_fewer_than_each_pair_alone() -> None:
    # Four levels of three bots (lower skill is better here): the neighbours across levels
    # differ, those within one are equal. The seed gives neighbours whose own 95% interval lies
    # above zero but whose p-value is not small enough for 11 tests.
    result = _standings({bot: -70.0 * (i // 3) for i, bot in enumerate(BOTS)}, 0)
    pairs = result.separations
    p_values = [s.p_value for s in pairs]
    assert [s.separated for s in pairs] == benjamini_hochberg(p_values, SEPARATION_FDR)
    per_pair = [s.interval is not None and s.interval.low > 0 for s in pairs]
    assert all(pp for s, pp in zip(pairs, per_pair, strict=True) if s.separated)
    assert 0 < sum(s.separated for s in pairs) < sum(per_pair)
    tiers = [line.tier for line in result.standings]
    assert tiers[-1] == 1 + sum(s.separated for s in pairs)
    # The report publishes each neighbour's p-value and the rule, and reads them back.
    data = result.to_json()
    assert data["separation"]["false_discovery_rate"] == SEPARATION_FDR
    assert "benjamini-hochberg" in data["separation"]["rule"]
    assert [n["p_value"] for n in data["separation"]["neighbours"]] == [round(p or 0, 6) for p in p_values]
    again = Standings.from_json(data)
    assert [s.p_value for s in again.separations] == [n["p_value"] for n in data["separation"]["neighbours"]]


def _final_game(key: str, seats: list[str], rng: random.Random, strengths: dict[str, float]) -> GameOutcome:
    """One game of the final: places from the strengths and noise (a seat's place, 1 = best)."""
    order = sorted(range(len(seats)), key=lambda s: -(strengths[seats[s]] + rng.gauss(0, 1.3)))
    places = [0] * len(seats)
    for place, seat in enumerate(order):
        places[seat] = place + 1
    return GameOutcome.clean(key, seats, places)


def test_a_finals_boundaries_are_separated_by_the_same_rule() -> None:
    # Eight deals of four finalists, evenly apart; the top 3 asked. With this seed the boundary
    # 2|3 has its own 95% interval above zero, but Benjamini-Hochberg across the three boundaries
    # holds it back: 2 and 3 stay contenders, and no place above it is established.
    strengths = {"a": 1.2, "b": 0.6, "c": 0.0, "d": -0.6}
    rng = random.Random(10)
    seats = ["a", "b", "c", "d", "a", "b"]
    blocks = {
        deal: [_final_game(f"{deal}-{r}", seats[r:] + seats[:r], rng, strengths) for r in range(6)]
        for deal in range(8)
    }
    status = final_status(blocks, list(strengths), 3, 200, "f")
    assert status.order == ("a", "b", "c", "d")
    per_pair = [b.interval is not None and b.interval.low > 0 for b in status.boundaries]
    assert per_pair == [False, True, True]
    assert [b.separated for b in status.boundaries] == [False, False, True]
    assert status.established() == [] and status.contenders() == ["a", "b", "c"]
    assert not status.decided


def test_more_deals_asks_for_the_level_benjamini_hochberg_would_separate_at() -> None:
    # Interval 0.05..0.95 around 0.5: above zero, so the pair's own test would separate it, but
    # Benjamini-Hochberg across four such pairs, none separated, asks p <= 0.05 / 4 of the next.
    held = Separation("a", "b", 0.5, Interval(0.05, 0.95), False, 12, None, 0.03)
    assert held.more_deals_factor() == pytest.approx((0.45 / 0.5) ** 2)
    z = NormalDist().inv_cdf
    level = SEPARATION_FDR / 4
    factor = (0.45 * z(1 - level / 2) / z(1 - (1 - CONFIDENCE) / 2) / 0.5) ** 2
    assert held.more_deals_factor(level) == pytest.approx(factor) and factor > 1
    schedule = make_schedule(BOTS[:5], 4, 10, "1", duplicate=False)
    base = compute_standings(
        name="t",
        schedule=schedule,
        outcomes=[],
        target_score=50,
        quarantine_after=3,
        balance=schedule.balance().to_json(),
    )
    played = dataclasses.replace(base, deals_played=10, separations=(held,) * 4)
    # Four more deals (at the pair's own 95% the standings would have said one, the least).
    assert played.more_deals() == math.ceil(10 * (factor - 1)) == 4
