"""Statistics for tournaments and leagues: intervals, paired differences, ratings, the SPRT.

Plain functions on plain values (numbers keyed by deal, finishing places per game), with no
knowledge of the tournament store, so that tournaments, leagues and benchmarks share them.

* :func:`cluster_mean`: a mean over *clusters* (a deal and all its rotations is one cluster),
  with a Student-t interval on the cluster-robust standard error. With equally sized clusters
  this is exactly the t interval over the cluster means; it needs at least two clusters.
* :func:`paired_difference`: the mean of per-deal differences between two bots over the deals
  both played, its t interval and the likelihood of superiority (the probability, under a flat
  prior and a normal model of the deal differences, that the true difference is below zero).
* :func:`fit_plackett_luce` and :func:`bootstrap_plackett_luce`: a batch Plackett-Luce fit of
  every game's finishing order (Newton's method on the log-posterior, ties handled as Breslow does in
  survival models), with a weak prior so that it always converges, and intervals from a
  bootstrap over clusters. The fit depends on the set of games only, never on their order.
  :func:`strength_difference` is the interval of two bots' difference from the same
  resamples (the covariance kept), and :func:`strength_difference_p` its two-sided p-value.
* :func:`separate_neighbours`: which bots ranked next to each other are separated, the one rule
  of every such verdict: a test per neighbouring pair, read together by
  :func:`benjamini_hochberg` at :data:`SEPARATION_FDR` (the expected share of wrong "separated"
  verdicts among those made is at most 5%).
  Given luck-corrected places (which order nothing) as ``corrections``, every fit is moved by
  one Newton step of the pairwise likelihood to them.
* :func:`score_test` and :func:`holm`: whether an outcome depends on a marker beyond its
  situation (a stratified score test with cluster-robust variance), and Holm's correction for
  many such tests; the fair-play audit's statistics.
* :func:`sprt`: a sequential probability ratio test on paired per-deal results (the normal
  approximation with an estimated variance that fishtest and fastchess use for two players),
  for gauntlets that stop as soon as the candidate is known to be stronger by ``h1`` or not
  better than ``h0``.

The luck correction's parts are the modules :mod:`.luck` (terms with expectation zero,
computed from a game record with the simulator) and :mod:`.adjust` (the cross-fitted
adjustment by them); they are not re-exported here, so that importing the statistics does not
load the simulator.

Every function is deterministic: bootstraps take a seed, and sums run in the order given.
"""

from __future__ import annotations

from hearts_tournaments.results.stats.association import ScoreTest, holm, score_test
from hearts_tournaments.results.stats.intervals import (
    CONFIDENCE,
    MIN_CLUSTERS,
    Estimate,
    Interval,
    PairedDifference,
    cluster_mean,
    paired_difference,
    t_cdf,
    t_quantile,
    t_two_sided_p,
)
from hearts_tournaments.results.stats.plackett_luce import (
    FULL_REFIT_CLUSTERS,
    MAX_ITERATIONS,
    PRIOR_GAMES,
    PULL_PRIOR_SHARE,
    TOLERANCE,
    PlacedGame,
    PlackettLuceFit,
    ScoredGame,
    bootstrap_plackett_luce,
    fit_plackett_luce,
    percentile_interval,
    strength_difference,
    strength_difference_p,
)
from hearts_tournaments.results.stats.separation import (
    SEPARATION_FDR,
    NeighbourTest,
    benjamini_hochberg,
    separate_neighbours,
)
from hearts_tournaments.results.stats.sprt import (
    VARIANCE_FLOOR,
    SprtResult,
    SprtSettings,
    SprtVerdict,
    sprt,
    sprt_llr,
)

#: The statistics' public names; their parts are :mod:`.intervals`, :mod:`.plackett_luce`,
#: :mod:`.association`, :mod:`.separation` and :mod:`.sprt`.
__all__ = [
    "CONFIDENCE",
    "FULL_REFIT_CLUSTERS",
    "MAX_ITERATIONS",
    "MIN_CLUSTERS",
    "PRIOR_GAMES",
    "PULL_PRIOR_SHARE",
    "SEPARATION_FDR",
    "TOLERANCE",
    "VARIANCE_FLOOR",
    "Estimate",
    "Interval",
    "NeighbourTest",
    "PairedDifference",
    "PlacedGame",
    "PlackettLuceFit",
    "ScoreTest",
    "ScoredGame",
    "SprtResult",
    "SprtSettings",
    "SprtVerdict",
    "benjamini_hochberg",
    "bootstrap_plackett_luce",
    "cluster_mean",
    "fit_plackett_luce",
    "holm",
    "paired_difference",
    "percentile_interval",
    "score_test",
    "separate_neighbours",
    "sprt",
    "sprt_llr",
    "strength_difference",
    "strength_difference_p",
    "t_cdf",
    "t_quantile",
    "t_two_sided_p",
]
