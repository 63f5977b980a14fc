"""Whether an outcome depends on a marker beyond what its situation explains, and Holm's
correction for testing many such questions at once.

:func:`score_test` asks, of observations ``(y, x, stratum, cluster)``, whether ``y`` (an outcome:
0/1, or a share) depends on ``x`` (a 0/1 marker) once the stratum (the situation) is accounted
for. Under the null hypothesis ``E[y | x, stratum] = mean of its stratum``, the sum

    U = sum_i (x_i - xbar_s)(y_i - ybar_s) = O - E,    O = sum_i x_i y_i,  E = sum_i x_i ybar_s

(the observed outcome on the marked observations minus the outcome their strata predict) has
mean zero. It is the score statistic of the stratified linear model ``y = a_s + beta x``. Its
terms are summed per cluster (observations of one cluster, a deal, may depend on one another in
any way; clusters are independent), ``g_c = sum_{i in c} (x_i - xbar_s)(y_i - ybar_s)``, and its
variance is estimated from them under the null, as the score test does:

    V = G / (G - 1) * sum_c g_c^2,    t = U / sqrt(V)

with Student's t on ``G - 1`` degrees of freedom (``G`` clusters) for the p-value, two-sided.
The spread is taken about zero, the null's value: simulated honest tournaments
(``bench/collusion.py``) give p-values at their nominal rates this way, where the spread about
the clusters' own mean (the one-sample t test of the ``g_c``) gave three times too many below
0.001. The price: ``|t|`` cannot exceed ``sqrt(G - 1)`` (every cluster pulling the same way), so
a pair must share enough deals for a small p-value to be possible at all (``|t| = 4.36`` takes
20 clusters).

With a ``margin`` the null hypothesis is ``|beta| <= margin``: the same score at the boundary on
the estimate's side, ``U - margin * S`` with ``S = sum (x_i - xbar_s)^2`` (its cluster terms
shifted alike), so that only a difference beyond the margin can come out significant. The
p-value is twice the one-sided tail (as for ``margin = 0``, where it is the two-sided test),
which keeps it valid at either boundary.

:func:`holm` adjusts many p-values so that the chance of rejecting any true null hypothesis
stays at most ``alpha`` whatever the dependence between the tests (Holm, 1979).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hearts_tournaments.results.stats.intervals import t_two_sided_p

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ScoreTest:
    """The result of :func:`score_test`.

    Attributes:
        observed: ``O``, the outcome summed over the marked observations.
        expected: ``E``, what their strata's means predict for them.
        marked: Marked observations (``x = 1``).
        unmarked: The others.
        marked_mean: The marked observations' mean outcome (raw, not stratified).
        unmarked_mean: The unmarked ones'.
        difference: ``beta``, the stratified difference of the means (marked minus unmarked).
        statistic: ``t`` of ``beta`` beyond the margin, on its side; 0 when the variance is 0.
        clusters: Clusters with observations (``G``).
        p: The p-value (Student's t, ``G - 1`` degrees of freedom; 1 for a difference within
            the margin).
        margin: The difference the null hypothesis allows (0: none).
    """

    observed: float
    expected: float
    marked: int
    unmarked: int
    marked_mean: float
    unmarked_mean: float
    difference: float
    statistic: float
    clusters: int
    p: float
    margin: float = 0.0


def score_test(
    y: Sequence[float] | FloatArray,
    x: Sequence[int] | IntArray,
    strata: Sequence[Hashable] | IntArray,
    clusters: Sequence[Hashable] | IntArray,
    margin: float = 0.0,
) -> ScoreTest:
    """The stratified, cluster-robust score test of ``y`` on the marker ``x`` (module docstring).

    Args:
        y: The outcomes.
        x: The markers, 0 or 1, parallel to ``y``.
        strata: Each observation's situation, parallel (any hashable labels, or integer ids).
        clusters: Each observation's cluster (independent units), parallel.
        margin: The null hypothesis is ``|beta| <= margin`` (0: ``beta = 0``).

    Raises:
        ValueError: the sequences differ in length, a marker is not 0 or 1, or fewer than two
            clusters or no observation of one kind (the test needs both, in two clusters).
    """
    ys = np.asarray(y, dtype=np.float64)
    xs = np.asarray(x)
    n = len(ys)
    if not len(xs) == len(strata) == len(clusters) == n:
        raise ValueError("y, x, strata and clusters must be parallel")
    if n and not np.isin(xs, (0, 1)).all():
        raise ValueError("every marker must be 0 or 1")
    xs = xs.astype(np.float64)
    marked = int(xs.sum())
    if marked == 0 or marked == n:
        raise ValueError("the test needs marked and unmarked observations")
    stratum = _ids(strata)
    cluster = _ids(clusters)
    groups = int(cluster.max()) + 1
    if groups < 2:
        raise ValueError("the test needs observations in at least two clusters")
    count = np.bincount(stratum)
    y_mean = (np.bincount(stratum, weights=ys) / count)[stratum]
    x_mean = (np.bincount(stratum, weights=xs) / count)[stratum]
    terms = (xs - x_mean) * (ys - y_mean)
    observed = float(ys @ xs)
    expected = float(y_mean @ xs)
    score = observed - expected
    spreads = (xs - x_mean) ** 2
    spread = float(spreads.sum())
    # The score at the boundary of the null on the estimate's side: beta = +-margin.
    bound = margin if score >= 0 else -margin
    by_cluster = np.bincount(cluster, weights=terms, minlength=groups)
    by_cluster = by_cluster - bound * np.bincount(cluster, weights=spreads, minlength=groups)
    variance = groups / (groups - 1) * float(by_cluster @ by_cluster)
    statistic = (score - bound * spread) / math.sqrt(variance) if variance > 0 else 0.0
    beyond = variance > 0 and (statistic > 0) == (score >= 0) and statistic != 0
    return ScoreTest(
        observed=observed,
        expected=expected,
        marked=marked,
        unmarked=n - marked,
        marked_mean=observed / marked,
        unmarked_mean=float(ys.sum() - observed) / (n - marked),
        difference=score / spread if spread > 0 else 0.0,
        statistic=statistic,
        clusters=groups,
        p=t_two_sided_p(statistic, groups - 1) if beyond else 1.0,
        margin=margin,
    )


def _ids(labels: Sequence[Hashable] | IntArray) -> IntArray:
    """Labels as dense integer ids ``0 .. k - 1`` (in order of first appearance)."""
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "iub":
        _, inverse = np.unique(labels, return_inverse=True)
        return inverse.astype(np.int64)
    seen: dict[Hashable, int] = {}
    return np.fromiter((seen.setdefault(v, len(seen)) for v in labels), dtype=np.int64, count=len(labels))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: reject test ``i`` at level ``alpha`` when its adjusted value
    is at most ``alpha``; the chance of any false rejection is then at most ``alpha``.

    The ``k``-th smallest p-value (from 1) is multiplied by ``m - k + 1``, capped at 1, and made
    no smaller than the adjusted value before it.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
