"""Regression adjustment by control variates with expectation zero, cross-fitted over clusters.

Given per observation (a seat of a game) an outcome ``y`` and covariates ``w`` whose
expectation is exactly zero whatever happens (the luck terms of
:mod:`hearts_tournaments.results.stats.luck`), the adjusted outcome is::

    y - beta . w

For any ``beta`` fixed in advance its expectation is that of ``y``: no bias. The ``beta`` that
narrows the interval most is the regression coefficient of ``y`` on ``w``; it depends on the
field (a term that predicts a heuristic bot's points well says little about a random bot's),
so it is estimated from the games themselves, **cross-fitted**: the observations of cluster
``c`` (a deal and all its games) are adjusted with the ``beta`` fitted on every *other*
cluster. Deals are dealt independently, so that ``beta`` is independent of cluster ``c``'s
terms, and ``E[beta . w] = E[beta] . E[w] = 0``: the adjusted outcome stays unbiased, exactly,
with a coefficient that adapts to the field (a useless term gets a coefficient near zero and
costs almost nothing; a term that would add variance at a coefficient of one is never forced
to). The regression is within groups (bots): each bot's own mean is taken out before the
coefficient is fitted, so that strong and weak bots' different levels do not blur it.

This is the cross-fitting of double machine learning (Chernozhukov et al., 2018) applied to a
control variate, the CUPED adjustment of online experiments with the coefficient fitted out
of fold. It needs :data:`MIN_OTHER_CLUSTERS` other clusters; with fewer the outcome is left
as it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from hearts_tournaments.results.stats.plackett_luce import _solve

#: The fewest other clusters a coefficient is fitted from; below, no adjustment.
MIN_OTHER_CLUSTERS = 2
#: A ridge of this share of the covariates' mean variance keeps the fit defined when a
#: covariate is constant (all zero: no known random seat) or two are collinear.
RIDGE = 1e-9


@dataclass(frozen=True, slots=True)
class Observation:
    """One outcome and its luck covariates.

    Attributes:
        cluster: The cluster (deal) it belongs to: the unit left out when fitting.
        group: The group (bot) whose mean is taken out before the fit.
        value: The outcome.
        covariates: Terms with expectation zero, as many for every observation.
    """

    cluster: Hashable
    group: Hashable
    value: float
    covariates: tuple[float, ...]


class _Moments:
    """Sums of one set of observations: count, sums, cross-products."""

    __slots__ = ("n", "sw", "sww", "swy", "sy")

    def __init__(self, p: int) -> None:
        self.n = 0
        self.sy = 0.0
        self.sw = [0.0] * p
        self.sww = [[0.0] * p for _ in range(p)]
        self.swy = [0.0] * p

    def add(self, value: float, w: Sequence[float]) -> None:
        p = len(w)
        self.n += 1
        self.sy += value
        for i in range(p):
            self.sw[i] += w[i]
            self.swy[i] += w[i] * value
            row = self.sww[i]
            for j in range(p):
                row[j] += w[i] * w[j]

    def plus(self, other: _Moments, sign: int = 1) -> _Moments:
        """The moments of both sets (``sign`` -1: of this set without ``other``, a part of it)."""
        out = _Moments(len(self.sw))
        out.n = self.n + sign * other.n
        out.sy = self.sy + sign * other.sy
        out.sw = [a + sign * b for a, b in zip(self.sw, other.sw, strict=True)]
        out.swy = [a + sign * b for a, b in zip(self.swy, other.swy, strict=True)]
        out.sww = [
            [a + sign * b for a, b in zip(r, s, strict=True)]
            for r, s in zip(self.sww, other.sww, strict=True)
        ]
        return out

    def centred(self) -> tuple[list[list[float]], list[float]]:
        """The within-group cross-products ``sum (w - mean w)(w - mean w)'`` and
        ``sum (w - mean w)(y - mean y)``."""
        p = len(self.sw)
        if self.n <= 0:
            return [[0.0] * p for _ in range(p)], [0.0] * p
        mw = [x / self.n for x in self.sw]
        my = self.sy / self.n
        cww = [[self.sww[i][j] - self.n * mw[i] * mw[j] for j in range(p)] for i in range(p)]
        cwy = [self.swy[i] - self.n * mw[i] * my for i in range(p)]
        return cww, cwy


def coefficients(observations: Sequence[Observation]) -> tuple[float, ...]:
    """The within-group regression coefficients of the values on the covariates, over all
    the observations (not cross-fitted: for reports of what the adjustment found)."""
    if not observations:
        return ()
    p = len(observations[0].covariates)
    groups: dict[Hashable, _Moments] = defaultdict(lambda: _Moments(p))
    for o in observations:
        groups[o.group].add(o.value, o.covariates)
    cww = [[0.0] * p for _ in range(p)]
    cwy = [0.0] * p
    for m in groups.values():
        _accumulate(cww, cwy, *m.centred(), 1)
    return tuple(_beta(cww, cwy))


def adjust(observations: Sequence[Observation], forward: bool = False) -> list[float]:
    """Each observation's value minus its cross-fitted adjustment ``beta_(-c) . w``.

    ``beta_(-c)`` is the within-group least-squares coefficient fitted on every cluster but
    the observation's own (see the module's docstring); with ``forward``, on the clusters
    before it only (in the order they first appear), so that a cluster's adjusted values never
    change when later clusters come: what a sequential test needs. An observation is left as
    it is when fewer than :data:`MIN_OTHER_CLUSTERS` clusters are there to fit it.

    Raises:
        ValueError: if the observations do not all have the same number of covariates.
    """
    if not observations:
        return []
    p = len(observations[0].covariates)
    if any(len(o.covariates) != p for o in observations):
        raise ValueError("every observation needs the same number of covariates")
    if p == 0:
        return [o.value for o in observations]
    parts: dict[Hashable, dict[Hashable, _Moments]] = defaultdict(lambda: defaultdict(lambda: _Moments(p)))
    for o in observations:
        parts[o.cluster][o.group].add(o.value, o.covariates)
    betas = _forward_betas(parts, p) if forward else _left_out_betas(parts, p)
    out = []
    for o in observations:
        beta = betas[o.cluster]
        out.append(
            o.value if beta is None else o.value - sum(b * w for b, w in zip(beta, o.covariates, strict=True))
        )
    return out


def _left_out_betas(
    parts: Mapping[Hashable, Mapping[Hashable, _Moments]], p: int
) -> dict[Hashable, list[float] | None]:
    """Per cluster, the coefficient fitted on every other cluster."""
    groups: dict[Hashable, _Moments] = defaultdict(lambda: _Moments(p))
    for by_group in parts.values():
        for group, moments in by_group.items():
            groups[group] = groups[group].plus(moments)
    centred = {g: m.centred() for g, m in groups.items()}
    total_ww = [[0.0] * p for _ in range(p)]
    total_wy = [0.0] * p
    for cww, cwy in centred.values():
        _accumulate(total_ww, total_wy, cww, cwy, 1)
    betas: dict[Hashable, list[float] | None] = {}
    for cluster, by_group in parts.items():
        if len(parts) - 1 < MIN_OTHER_CLUSTERS:
            betas[cluster] = None
            continue
        cww = [row[:] for row in total_ww]
        cwy = total_wy[:]
        for group, moments in by_group.items():
            _accumulate(cww, cwy, *centred[group], -1)
            _accumulate(cww, cwy, *groups[group].plus(moments, -1).centred(), 1)
        betas[cluster] = _beta(cww, cwy)
    return betas


def _forward_betas(
    parts: Mapping[Hashable, Mapping[Hashable, _Moments]], p: int
) -> dict[Hashable, list[float] | None]:
    """Per cluster, the coefficient fitted on the clusters before it."""
    groups: dict[Hashable, _Moments] = defaultdict(lambda: _Moments(p))
    betas: dict[Hashable, list[float] | None] = {}
    for seen, (cluster, by_group) in enumerate(parts.items()):
        if seen < MIN_OTHER_CLUSTERS:
            betas[cluster] = None
        else:
            cww = [[0.0] * p for _ in range(p)]
            cwy = [0.0] * p
            for moments in groups.values():
                _accumulate(cww, cwy, *moments.centred(), 1)
            betas[cluster] = _beta(cww, cwy)
        for group, moments in by_group.items():
            groups[group] = groups[group].plus(moments)
    return betas


def _accumulate(
    ww: list[list[float]], wy: list[float], cww: list[list[float]], cwy: list[float], sign: int
) -> None:
    p = len(wy)
    for i in range(p):
        wy[i] += sign * cwy[i]
        for j in range(p):
            ww[i][j] += sign * cww[i][j]


def _beta(cww: list[list[float]], cwy: list[float]) -> list[float]:
    p = len(cwy)
    scale = sum(cww[i][i] for i in range(p)) / p
    ridge = RIDGE * scale if scale > 0 else 1.0
    matrix = [[cww[i][j] + (ridge if i == j else 0.0) for j in range(p)] for i in range(p)]
    return _solve(matrix, cwy)
