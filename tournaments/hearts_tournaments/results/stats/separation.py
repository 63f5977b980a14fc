"""Which neighbours in a ranking are separated: one test per neighbouring pair, with the false
discovery rate across them controlled by Benjamini and Hochberg's procedure.

A table of ``n`` ranked bots makes ``n - 1`` verdicts on neighbours. Each pair's own 95%
interval keeps the chance of a wrong verdict on *that* pair at 5%, but a field of close bots
gives many pairs near the line, and then a large share of the verdicts made can be wrong
(bench/separation.py measured 4 wrong of 6 on a field of 16 bots at close levels). Benjamini-
Hochberg across the table's neighbour tests bounds the **expected share of wrong "separated"
verdicts among those made** by ``q`` (5%).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from hearts_tournaments.results.stats.intervals import Interval
from hearts_tournaments.results.stats.plackett_luce import (
    PlackettLuceFit,
    strength_difference,
    strength_difference_p,
)

#: The false discovery rate of the separation verdicts: the expected share of wrong
#: "separated" verdicts among the neighbours separated is at most this.
SEPARATION_FDR = 0.05


def benjamini_hochberg(p_values: Sequence[float | None], q: float = SEPARATION_FDR) -> list[bool]:
    """Benjamini and Hochberg's step-up procedure: which of ``m`` tests to reject so that the
    expected share of false rejections among the rejections (the false discovery rate) is at
    most ``q``, for independent or positively dependent tests.

    With the p-values sorted, ``p(1) <= ... <= p(m)``, let ``k`` be the largest rank with
    ``p(k) <= k * q / m``; the tests of the ``k`` smallest p-values are rejected (every test with
    ``p <= k * q / m``), none when there is no such ``k``. A test without a p-value (None) is
    never rejected and does not count in ``m``. A rejected test always has ``p <= q``: the
    procedure never rejects what a test of the same level alone would keep.

    Raises:
        ValueError: unless ``0 < q < 1``.
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"the false discovery rate q must lie between 0 and 1, not {q}")
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    cut = 0.0
    for rank, (p, _) in enumerate(tested, start=1):
        if p <= rank * q / m:
            cut = rank * q / m
    found = cut > 0.0
    return [found and p is not None and p <= cut for p in p_values]


@dataclass(frozen=True, slots=True)
class NeighbourTest:
    """One neighbouring pair of a ranking, as :func:`separate_neighbours` judged it.

    Attributes:
        a: The better ranked bot.
        b: The bot ranked just below it.
        difference: ``a``'s strength minus ``b``'s.
        interval: The pair's own 95% interval of the difference
            (:func:`~.plackett_luce.strength_difference`); None when either bot has none.
        p_value: The two-sided p-value of a zero difference from the same bootstrap
            (:func:`~.plackett_luce.strength_difference_p`); None with the interval.
        separated: Whether Benjamini-Hochberg at :data:`SEPARATION_FDR` rejects a zero
            difference across the ranking's neighbour tests, ``a`` the stronger: their order
            is established.
    """

    a: str
    b: str
    difference: float
    interval: Interval | None
    p_value: float | None
    separated: bool


def separate_neighbours(
    fit: PlackettLuceFit, ranked: Sequence[str], q: float = SEPARATION_FDR
) -> tuple[NeighbourTest, ...]:
    """Which bots ranked next to each other the strength model separates, with the false
    discovery rate controlled across the ranking.

    Every neighbouring pair of ``ranked`` (best first, each bot fitted) is tested for a zero
    strength difference, two-sided, from the bootstrap that gives the strength intervals; the
    ``len(ranked) - 1`` tests are then read together by :func:`benjamini_hochberg` at ``q``, and
    only the pairs it rejects are separated. What is controlled is the **expected share of
    wrong verdicts among the separated neighbours** (a pair separated whose true order is not
    the ranking's, or which is equally strong): at most ``q``. A pair separated this way always
    has a per-pair 95% interval (at ``q`` = 5%) that excludes zero; not every such pair is
    separated.

    This is the one rule of every verdict "separated" on neighbours: a tournament's and a
    league's standings (their tiers) and a league final's boundaries.
    """
    pairs = list(pairwise(ranked))
    p_values = [strength_difference_p(fit, a, b) for a, b in pairs]
    rejected = benjamini_hochberg(p_values, q)
    return tuple(
        NeighbourTest(
            a=a,
            b=b,
            difference=fit.strength[a] - fit.strength[b],
            interval=strength_difference(fit, a, b),
            p_value=p,
            separated=r and fit.strength[a] > fit.strength[b],
        )
        for (a, b), p, r in zip(pairs, p_values, rejected, strict=True)
    )
