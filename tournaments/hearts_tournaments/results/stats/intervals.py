"""Means with honest intervals: Student's t, means over clusters (a deal and its rotations),
paired per-deal differences."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


#: Two-sided confidence level used unless a caller asks for another.
CONFIDENCE = 0.95


#: The fewest clusters (deals) an interval can be estimated from.
MIN_CLUSTERS = 2


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval ``[low, high]``."""

    low: float
    high: float

    def to_json(self, digits: int = 6) -> list[float]:
        """``[low, high]``, rounded."""
        return [round(self.low, digits), round(self.high, digits)]

    def overlaps(self, other: Interval) -> bool:
        """Whether the two intervals share a point."""
        return self.low <= other.high and other.low <= self.high

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the interval (ends included)."""
        return self.low <= value <= self.high

    def clipped(self, low: float | None = None, high: float | None = None) -> Interval:
        """The interval cut to the range a quantity can take (which keeps its coverage)."""
        new_low = self.low if low is None else max(self.low, low)
        new_high = self.high if high is None else min(self.high, high)
        return Interval(new_low, max(new_low, new_high))

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over clusters with its interval.

    Attributes:
        mean: The estimate (None without data).
        interval: Its confidence interval, or None with fewer than :data:`MIN_CLUSTERS`
            clusters (it cannot be estimated).
        clusters: Clusters (deals) the estimate rests on.
        standard_error: The cluster-robust standard error, or None with fewer than two
            clusters.
    """

    mean: float | None
    interval: Interval | None
    clusters: int
    standard_error: float | None


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _regularized_beta(a: float, b: float, x: float) -> float:
    """``I_x(a, b)``, the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """The cumulative distribution function of Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_two_sided_p(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student's t with ``df`` degrees of freedom, exact in the far tail
    (where ``1 - t_cdf`` would round to zero)."""
    if math.isinf(t):
        return 0.0
    return _regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection, to 1e-12).

    Raises:
        ValueError: unless ``0 < p < 1`` and ``df > 0``.
    """
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, not p={p}, df={df}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def cluster_mean(clusters: Sequence[tuple[float, float]], confidence: float = CONFIDENCE) -> Estimate:
    """A ratio mean over clusters with a Student-t interval.

    Each cluster is ``(total, count)``: e.g. one deal's places summed over a bot's seats in all
    its rotations, and the number of those seats. The mean is ``sum(total) / sum(count)``; its
    standard error is the cluster-robust (linearised ratio) one,
    ``sqrt(C / (C - 1) * sum((total_c - mean * count_c) ** 2)) / sum(count)``, and the interval
    is ``mean -+ t(C - 1) * se``. With equal counts this is the textbook t interval over the
    cluster means. Clusters with a zero count are ignored.

    Args:
        clusters: ``(total, count)`` per cluster.
        confidence: Two-sided confidence level.

    Returns:
        The estimate; its interval is None with fewer than :data:`MIN_CLUSTERS` clusters.
    """
    used = [(t, n) for t, n in clusters if n > 0]
    if not used:
        return Estimate(None, None, 0, None)
    count = sum(n for _, n in used)
    mean = sum(t for t, _ in used) / count
    c = len(used)
    if c < MIN_CLUSTERS:
        return Estimate(mean, None, c, None)
    squares = sum((t - mean * n) ** 2 for t, n in used)
    se = math.sqrt(c / (c - 1) * squares) / count
    half = t_quantile(1 - (1 - confidence) / 2, c - 1) * se
    return Estimate(mean, Interval(mean - half, mean + half), c, se)


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """The mean of per-cluster differences ``a - b`` over the clusters both sides have.

    Attributes:
        clusters: Shared clusters (deals).
        mean: The mean difference (None when no cluster is shared).
        interval: Its t interval, or None with fewer than :data:`MIN_CLUSTERS` shared clusters.
        below_zero: The likelihood of superiority of ``a`` when lower is better: the
            probability that the true mean difference is below zero, ``F_t(-mean / se; C - 1)``
            (a flat prior on a normal mean). 0.5 when the differences are all zero; None with
            fewer than two shared clusters.
    """

    clusters: int
    mean: float | None
    interval: Interval | None
    below_zero: float | None


def paired_difference(
    a: Mapping[K, float], b: Mapping[K, float], confidence: float = CONFIDENCE
) -> PairedDifference:
    """The paired difference ``a - b`` over the keys (deals) both mappings hold.

    Args:
        a: A value per cluster, e.g. bot A's mean place on each deal it played.
        b: The same for bot B.
        confidence: Two-sided confidence level.
    """
    differences = [a[k] - b[k] for k in a if k in b]
    c = len(differences)
    if not c:
        return PairedDifference(0, None, None, None)
    mean = sum(differences) / c
    if c < MIN_CLUSTERS:
        return PairedDifference(c, mean, None, None)
    variance = sum((d - mean) ** 2 for d in differences) / (c - 1)
    se = math.sqrt(variance / c)
    if se == 0.0:
        below = 1.0 if mean < 0 else 0.0 if mean > 0 else 0.5
        return PairedDifference(c, mean, Interval(mean, mean), below)
    half = t_quantile(1 - (1 - confidence) / 2, c - 1) * se
    return PairedDifference(c, mean, Interval(mean - half, mean + half), t_cdf(-mean / se, c - 1))
