"""The sequential probability ratio test on paired per-deal results, for gauntlets."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

# --- The sequential probability ratio test -------------------------------------------------


class SprtVerdict(StrEnum):
    """Where a sequential test stands."""

    H0 = "H0"  # accepted: the candidate is not better by ``h1`` (its advantage is ``h0`` or less)
    H1 = "H1"  # accepted: the candidate is better by ``h1`` or more
    CONTINUE = "continue"  # not decided yet: play more deals


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """A sequential test of the candidate's advantage per deal.

    The advantage of a deal is a paired result in which higher is better for the candidate,
    e.g. the field's mean place minus the candidate's mean place on that deal (the unit of
    ``h0`` and ``h1``: places). The bounds play the role of cutechess-cli's elo0 and elo1.

    Attributes:
        h0: The advantage under the null hypothesis (e.g. 0: no better than the field).
        h1: The advantage under the alternative (e.g. 0.25 places a deal); above ``h0``.
        alpha: The chance of accepting H1 when H0 holds.
        beta: The chance of accepting H0 when H1 holds.
        min_deals: No verdict before this many deals (the variance is estimated from them).
    """

    h0: float = 0.0
    h1: float = 0.25
    alpha: float = 0.05
    beta: float = 0.05
    min_deals: int = 16

    def __post_init__(self) -> None:
        if not self.h1 > self.h0:
            raise ValueError(f"h1 must be above h0, not h0={self.h0}, h1={self.h1}")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError(f"alpha and beta must be between 0 and 0.5, not {self.alpha}, {self.beta}")
        if self.min_deals < 2:
            raise ValueError(f"min_deals must be at least 2, not {self.min_deals}")

    @property
    def lower(self) -> float:
        """The log-likelihood ratio at or below which H0 is accepted, ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The log-likelihood ratio at or above which H1 is accepted, ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)


@dataclass(frozen=True, slots=True)
class SprtResult:
    """The state of a sequential test after some deals.

    Attributes:
        verdict: H0, H1 or continue.
        llr: The log-likelihood ratio of H1 against H0.
        lower: The H0 bound.
        upper: The H1 bound.
        deals: Deals counted.
        mean: Their mean advantage (None without deals).
        stopped_at: The deal count at which the verdict was first reached (None while
            continuing).
    """

    verdict: SprtVerdict
    llr: float
    lower: float
    upper: float
    deals: int
    mean: float | None
    stopped_at: int | None


#: The variance floor of :func:`sprt_llr`, so identical deal results give a finite ratio.
VARIANCE_FLOOR = 1e-9


def sprt_llr(advantages: Sequence[float], h0: float, h1: float) -> float:
    """The log-likelihood ratio of H1 against H0 for normal deal results (variance estimated).

    ``n * (h1 - h0) * (2 * mean - h0 - h1) / (2 * var)`` with the sample variance of the
    results (the normal approximation fishtest and fastchess use for two players). Estimating
    the variance from few deals makes the test a little bolder than ``alpha`` and ``beta`` say
    (simulated at alpha = beta = 0.05: 7% and 10% wrong verdicts from 8 deals on, 6% and 7.5%
    from 16, see ``tests/test_stats.py``), hence ``min_deals``. The generalised ratio with the
    variance estimated under each hypothesis keeps its error rates better, but the misfit of
    both hypotheses inflates both variances for a candidate far stronger than ``h1``, which
    then takes many more deals to accept: the wrong trade for a gauntlet.
    """
    n = len(advantages)
    if n < 2:
        return 0.0
    mean = sum(advantages) / n
    variance = max(sum((x - mean) ** 2 for x in advantages) / (n - 1), VARIANCE_FLOOR)
    return n * (h1 - h0) * (2 * mean - h0 - h1) / (2 * variance)


def sprt(advantages: Sequence[float], settings: SprtSettings) -> SprtResult:
    """Runs the sequential test over deal results in the order they were played.

    The test stops at the first deal count (from ``min_deals`` on) whose log-likelihood ratio
    crosses a bound; later deals, if any were played, do not change the verdict.

    Args:
        advantages: The candidate's advantage on each deal, in deal order (higher is better).
        settings: Hypotheses and error rates.
    """
    for n in range(settings.min_deals, len(advantages) + 1):
        llr = sprt_llr(advantages[:n], settings.h0, settings.h1)
        if llr >= settings.upper or llr <= settings.lower:
            verdict = SprtVerdict.H1 if llr >= settings.upper else SprtVerdict.H0
            return SprtResult(verdict, llr, settings.lower, settings.upper, n, sum(advantages[:n]) / n, n)
    n = len(advantages)
    return SprtResult(
        SprtVerdict.CONTINUE,
        sprt_llr(advantages, settings.h0, settings.h1),
        settings.lower,
        settings.upper,
        n,
        sum(advantages) / n if n else None,
        None,
    )
