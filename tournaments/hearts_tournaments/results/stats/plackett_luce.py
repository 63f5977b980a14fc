"""The Plackett-Luce ranking key: a batch fit of every game's finishing order, bootstrapped over
clusters for its intervals, and the difference of two bots from the same resamples."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hearts_tournaments.results.stats.intervals import (
    CONFIDENCE,
    MIN_CLUSTERS,
    Interval,
    t_quantile,
    t_two_sided_p,
)

#: Clusters up to which a bootstrap resample is refitted in full rather than by one Newton
#: step: there the one-step standard errors are too small (coverage 91.9% / 92.6% at 2 / 4 deals
#: of real games against 94.1% / 95.2% at 6 / 12; bench/intervals.py --model engine --measure
#: strength).
FULL_REFIT_CLUSTERS = 8


#: The prior's pull: a strength interval also reaches ``t * se`` beyond the fit with this
#: share of the prior (see :func:`bootstrap_plackett_luce`). The prior shrinks every strength
#: towards the reference, most with few games, a bias no bootstrap of the same fit sees: at 2
#: deals of real games the intervals covered 92.4% without the stretch, 94.7% with it
#: (bench/intervals.py --model engine --measure strength --trials 300).
PULL_PRIOR_SHARE = 0.1


#: One game's result: ``(bot, place)`` per seat, 1 = best; equal places are ties. A bot may
#: hold several seats.
PlacedGame = Sequence[tuple[str, int]]
#: One game's seats as ``(bot, place, corrected place)``: the place with tied seats sharing the
#: mean of their places (the mid-rank), and a stand-in for it with the same expectation that
#: need not be a place at all (see :func:`bootstrap_plackett_luce`'s ``corrections``).
ScoredGame = Sequence[tuple[str, float, float]]


#: Virtual games each bot wins and loses against a reference of strength 1 (the prior).
PRIOR_GAMES = 1.0


#: Newton's method stops when no log-strength moves by more than this.
TOLERANCE = 1e-10


#: ... or after this many iterations.
MAX_ITERATIONS = 200


@dataclass(frozen=True, slots=True)
class _Stage:
    """One choice of a Plackett-Luce game: the best of the remaining seats are picked.

    ``remaining`` counts each bot's seats still in play (bot index, seats); ``picked`` is the
    number of seats chosen at this stage (the size of a tied group).
    """

    remaining: tuple[tuple[int, int], ...]
    picked: int


@dataclass(frozen=True, slots=True)
class _Cluster:
    """A cluster's stages with multiplicities, and each bot's picks (seats placed)."""

    stages: tuple[tuple[_Stage, int], ...]
    picks: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class _Shift:
    """A cluster's pairs of seats (as stages of one pick, with multiplicities) and, per bot,
    its corrected places' pairs won minus its places' (see :func:`_corrected`)."""

    pairs: _Cluster
    shift: tuple[tuple[int, float], ...]


def _cluster_of(games: Sequence[PlacedGame], index: Mapping[str, int]) -> _Cluster:
    stages: dict[_Stage, int] = {}
    picks: dict[int, int] = {}
    for game in games:
        for place in sorted({p for _, p in game}):
            remaining: dict[int, int] = {}
            chosen: dict[int, int] = {}
            for bot, p in game:
                if p >= place:
                    remaining[index[bot]] = remaining.get(index[bot], 0) + 1
                if p == place:
                    chosen[index[bot]] = chosen.get(index[bot], 0) + 1
            picked = sum(chosen.values())
            if picked == sum(remaining.values()) == 1:
                continue  # the last seat standing: a factor of one
            stage = _Stage(tuple(sorted(remaining.items())), picked)
            stages[stage] = stages.get(stage, 0) + 1
            for i, n in chosen.items():
                picks[i] = picks.get(i, 0) + n
    return _Cluster(tuple(stages.items()), tuple(sorted(picks.items())))


def _shift_of(games: Sequence[ScoredGame], index: Mapping[str, int]) -> _Shift:
    stages: dict[_Stage, int] = {}
    shift: dict[int, float] = {}
    for game in games:
        for s, (bot, place, corrected) in enumerate(game):
            shift[index[bot]] = shift.get(index[bot], 0.0) + (place - corrected)
            for other, _, _ in game[s + 1 :]:
                a, b = index[bot], index[other]
                stage = _Stage(((a, 2),) if a == b else tuple(sorted(((a, 1), (b, 1)))), 1)
                stages[stage] = stages.get(stage, 0) + 1
    return _Shift(_Cluster(tuple(stages.items()), ()), tuple(sorted(shift.items())))


def _log_posterior(
    clusters: Sequence[_Cluster],
    weights: Sequence[int],
    picks: Sequence[float],
    prior: float,
    theta: Sequence[float],
) -> float:
    gamma = [math.exp(t) for t in theta]
    value = sum(p * t for p, t in zip(picks, theta, strict=True))
    value -= sum(2.0 * prior * math.log1p(g) for g in gamma)
    for cluster, w in zip(clusters, weights, strict=True):
        if w:
            for stage, m in cluster.stages:
                value -= w * m * stage.picked * math.log(sum(n * gamma[b] for b, n in stage.remaining))
    return value


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solves ``matrix @ x = vector`` for a symmetric positive definite matrix (Cholesky)."""
    size = len(vector)
    lower = [[0.0] * size for _ in range(size)]
    for i in range(size):
        for j in range(i + 1):
            total = matrix[i][j] - sum(lower[i][k] * lower[j][k] for k in range(j))
            lower[i][j] = math.sqrt(max(total, 1e-300)) if i == j else total / lower[j][j]
    y = [0.0] * size
    for i in range(size):
        y[i] = (vector[i] - sum(lower[i][k] * y[k] for k in range(i))) / lower[i][i]
    x = [0.0] * size
    for i in reversed(range(size)):
        x[i] = (y[i] - sum(lower[k][i] * x[k] for k in range(i + 1, size))) / lower[i][i]
    return x


@dataclass(frozen=True, slots=True)
class _Terms:
    """A cluster's gradient and negative Hessian of the log-likelihood at some strengths."""

    gradient: tuple[tuple[int, float], ...]
    curvature: tuple[tuple[int, int, float], ...]


def _terms(cluster: _Cluster, gamma: Sequence[float]) -> _Terms:
    gradient: dict[int, float] = {bot: float(n) for bot, n in cluster.picks}
    curvature: dict[tuple[int, int], float] = {}
    for stage, m in cluster.stages:
        total = sum(n * gamma[b] for b, n in stage.remaining)
        scale = m * stage.picked
        shares = [(b, n * gamma[b] / total) for b, n in stage.remaining]
        for b, share in shares:
            gradient[b] = gradient.get(b, 0.0) - scale * share
            curvature[(b, b)] = curvature.get((b, b), 0.0) + scale * share
            for c, other in shares:
                curvature[(b, c)] = curvature.get((b, c), 0.0) - scale * share * other
    return _Terms(
        tuple(sorted(gradient.items())), tuple((b, c, v) for (b, c), v in sorted(curvature.items()))
    )


def _newton_step(
    terms: Sequence[_Terms | None], weights: Sequence[int], theta: Sequence[float], prior: float
) -> list[float]:
    """The Newton step of the log-posterior of the clusters weighted by ``weights``, from the
    clusters' terms (taken at ``theta``) and the prior's."""
    size = len(theta)
    gamma = [math.exp(t) for t in theta]
    gradient = [prior - 2.0 * prior * g / (1.0 + g) for g in gamma]
    curvature = [[0.0] * size for _ in range(size)]
    for i, g in enumerate(gamma):
        curvature[i][i] = 2.0 * prior * g / (1.0 + g) ** 2
    for cluster, w in zip(terms, weights, strict=True):
        if not w or cluster is None:
            continue
        for bot, value in cluster.gradient:
            gradient[bot] += w * value
        for b, c, value in cluster.curvature:
            curvature[b][c] += w * value
    return _solve(curvature, gradient)


def _fit(
    clusters: Sequence[_Cluster],
    weights: Sequence[int],
    bots: int,
    prior: float,
    start: Sequence[float] | None = None,
) -> list[float]:
    """Log-strengths maximising the posterior: Newton's method with step halving, from ``start``
    (zeros by default).

    The log-posterior is strictly concave in the log-strengths (the prior makes it so), so the
    maximum is unique and Newton's method converges to it from anywhere.
    """
    picks = [prior] * bots
    for cluster, w in zip(clusters, weights, strict=True):
        if w:
            for bot, n in cluster.picks:
                picks[bot] += w * n
    theta = list(start) if start is not None else [0.0] * bots
    current = _log_posterior(clusters, weights, picks, prior, theta)
    for _ in range(MAX_ITERATIONS):
        gamma = [math.exp(t) for t in theta]
        terms = [_terms(c, gamma) if w else None for c, w in zip(clusters, weights, strict=True)]
        step = _newton_step(terms, weights, theta, prior)
        size = 1.0
        while True:
            trial = [t + size * d for t, d in zip(theta, step, strict=True)]
            value = _log_posterior(clusters, weights, picks, prior, trial)
            if value >= current or size < 1e-6:
                break
            size /= 2.0
        moved = max((abs(size * d) for d in step), default=0.0)
        theta, current = trial, value
        if moved < TOLERANCE:
            break
    return theta


def _one_step(
    terms: Sequence[_Terms], weights: Sequence[int], theta: Sequence[float], prior: float
) -> list[float]:
    """One Newton step from ``theta`` for the clusters weighted by ``weights``.

    With ``theta`` the fit of all clusters and ``terms`` taken there, this is the one-step
    bootstrap estimate of a resample: first-order equivalent to refitting it, at the cost of
    one linear solve.
    """
    step = _newton_step(terms, weights, theta, prior)
    return [t + d for t, d in zip(theta, step, strict=True)]


def _corrected(
    shifts: Sequence[_Shift] | None, weights: Sequence[int], theta: Sequence[float], prior: float
) -> list[float]:
    """``theta`` moved by one Newton step of the pairwise likelihood (each pair of seats of a
    game a Bradley-Terry comparison, the data entering only as each seat's pairs won) from the
    places to the corrected places; ``theta`` itself without corrections."""
    if shifts is None:
        return list(theta)
    size = len(theta)
    gamma = [math.exp(t) for t in theta]
    gradient = [0.0] * size
    curvature = [[0.0] * size for _ in range(size)]
    for i, g in enumerate(gamma):
        curvature[i][i] = 2.0 * prior * g / (1.0 + g) ** 2
    for cluster, w in zip(shifts, weights, strict=True):
        if not w:
            continue
        for bot, delta in cluster.shift:
            gradient[bot] += w * delta
        for b, c, value in _terms(cluster.pairs, gamma).curvature:
            curvature[b][c] += w * value
    step = _solve(curvature, gradient)
    return [t + d for t, d in zip(theta, step, strict=True)]


def _centred(theta: Sequence[float], present: Sequence[bool]) -> list[float | None]:
    used = [t for t, p in zip(theta, present, strict=True) if p]
    mean = sum(used) / len(used) if used else 0.0
    return [t - mean if p else None for t, p in zip(theta, present, strict=True)]


@dataclass(frozen=True, slots=True)
class PlackettLuceFit:
    """A batch Plackett-Luce fit.

    Attributes:
        strength: Per bot, its log-strength, centred on the mean of the bots that played:
            ``exp(strength[a] - strength[b])`` is the odds that ``a`` finishes ahead of ``b``.
            Bots that played no game are missing.
        interval: Per bot, ``strength -+ t(C - 1) * se`` (stretched to reach as far beyond
            :attr:`pulled`) with the standard error of a bootstrap over clusters (``C`` the
            bot's clusters), or None when the bot played fewer than :data:`MIN_CLUSTERS`
            clusters (or no bootstrap was asked for).
        samples: Bootstrap resamples drawn.
        replicates: Per resample, the centred log-strength of every bot that played in it (in
            the order drawn; empty without a bootstrap). A quantity of several bots (the
            difference of two strengths) is bootstrapped from these, which keeps the
            covariance of its parts: see :func:`strength_difference`.
        clusters: Per bot, the clusters (deals) it played.
        pulled: Per bot, the strength fitted with :data:`PULL_PRIOR_SHARE` of the prior (empty
            without a bootstrap): the interval reaches as far beyond it as beyond the fit.
    """

    strength: dict[str, float]
    interval: dict[str, Interval | None]
    samples: int
    replicates: tuple[dict[str, float], ...] = ()
    clusters: dict[str, int] = field(default_factory=dict)
    pulled: dict[str, float] = field(default_factory=dict)


def fit_plackett_luce(games: Sequence[PlacedGame], prior_games: float = PRIOR_GAMES) -> dict[str, float]:
    """The Plackett-Luce log-strengths of the bots in ``games`` (centred on their mean).

    Each game's finishing order is one Plackett-Luce observation: the best seat is chosen from
    all seats with probability proportional to its bot's strength, then the best of the rest,
    and so on. A tied group is chosen together (Breslow's approximation: each of its seats as if
    chosen first from the same remaining seats). A bot holding several seats has them all at
    its strength. Every bot also wins and loses ``prior_games`` virtual pairwise games against
    a reference of strength 1, which keeps the estimate finite (a bot that always wins) and
    the algorithm convergent; the fit depends on the multiset of games only, not on their
    order.
    """
    return bootstrap_plackett_luce([games], samples=0, prior_games=prior_games).strength


def bootstrap_plackett_luce(
    clusters: Sequence[Sequence[PlacedGame]],
    samples: int,
    seed: str = "bootstrap",
    confidence: float = CONFIDENCE,
    prior_games: float = PRIOR_GAMES,
    corrections: Sequence[Sequence[ScoredGame]] | None = None,
) -> PlackettLuceFit:
    """The Plackett-Luce fit of all games, with bootstrap intervals over clusters.

    A resample draws as many clusters as there are, with replacement (every game of a drawn
    cluster comes along: a deal's rotations together), is refitted (Newton's method from the
    full fit) when there are at most :data:`FULL_REFIT_CLUSTERS` clusters, and otherwise fitted
    by one Newton step from the full fit (the one-step bootstrap: first-order equivalent to
    refitting, and a linear solve instead of a fit, which keeps a thousand resamples of a league
    quick; with few clusters its standard errors come out too small), and the strengths of the
    bots present are centred. A bot's standard error comes from the resamples in which
    it played; its interval is the fit -+ a t quantile times it, stretched on the side the
    prior pulled the fit from: to ``t * se`` beyond the fit with :data:`PULL_PRIOR_SHARE` of
    the prior as well. The prior shrinks strengths towards the reference by an amount that
    falls with the games (a bias, which the resamples share, so their spread misses it): the
    stretch keeps the coverage near nominal at two deals and costs little width beyond a few.

    Args:
        clusters: The games, grouped by cluster (deal), in a fixed order.
        samples: Bootstrap resamples (0 for none).
        seed: Seeds the resampling: the same inputs and seed give the same intervals.
        confidence: Two-sided confidence level.
        prior_games: Strength of the prior (see :func:`fit_plackett_luce`).
        corrections: Per cluster, the same games with every seat's corrected place (a
            luck-corrected place: the same expectation, not a whole number, so no order).
            Every fit (the fit of all clusters, each resample's) is then moved by one Newton
            step of the pairwise likelihood from the places to the corrected places. Under
            Plackett-Luce seat ``a`` finishes ahead of seat ``b`` with probability
            ``g_a / (g_a + g_b)``, so that likelihood's estimating equations ("each bot's pairs
            won sum to their expectation") hold for any stand-in with the places' expectation:
            the step adds a term of expectation zero to the fit, on its own scale, and takes out
            what the corrections took out of the places.
    """
    names = list(dict.fromkeys(bot for games in clusters for game in games for bot, _ in game))
    index = {bot: i for i, bot in enumerate(names)}
    prepared = [_cluster_of(games, index) for games in clusters]
    membership = [{index[bot] for game in games for bot, _ in game} for games in clusters]
    shifts = None if corrections is None else [_shift_of(games, index) for games in corrections]
    if shifts is not None and len(shifts) != len(prepared):
        raise ValueError("corrections must hold the same clusters as the games")
    ones = [1] * len(prepared)
    theta = _corrected(shifts, ones, _fit(prepared, ones, len(names), prior_games), prior_games)
    strength = {
        bot: value
        for bot, value in zip(names, _centred(theta, [True] * len(names)), strict=True)
        if value is not None
    }
    appearances = [sum(1 for m in membership if i in m) for i in range(len(names))]
    draws: list[list[float]] = [[] for _ in names]
    replicates: list[dict[str, float]] = []
    gamma = [math.exp(t) for t in theta]
    terms = [_terms(cluster, gamma) for cluster in prepared]
    rng = random.Random(seed)
    for _ in range(samples if len(prepared) >= MIN_CLUSTERS else 0):
        weights = [0] * len(prepared)
        for _ in prepared:
            weights[rng.randrange(len(prepared))] += 1
        present = [False] * len(names)
        for c, w in enumerate(weights):
            if w:
                for i in membership[c]:
                    present[i] = True
        if len(prepared) <= FULL_REFIT_CLUSTERS:
            refit = _fit(prepared, weights, len(names), prior_games, start=theta)
        else:
            refit = _one_step(terms, weights, theta, prior_games)
        fitted = _centred(_corrected(shifts, weights, refit, prior_games), present)
        replicate: dict[str, float] = {}
        for i, value in enumerate(fitted):
            if value is not None:
                draws[i].append(value)
                replicate[names[i]] = value
        replicates.append(replicate)
    pulled: dict[str, float] = {}
    if replicates:
        weak = _fit(prepared, ones, len(names), prior_games * PULL_PRIOR_SHARE, start=theta)
        weak = _corrected(shifts, ones, weak, prior_games * PULL_PRIOR_SHARE)
        pulled = {
            bot: value
            for bot, value in zip(names, _centred(weak, [True] * len(names)), strict=True)
            if value is not None
        }
    interval = {
        bot: _bootstrap_t_interval(strength[bot], draws[i], appearances[i], confidence, pulled.get(bot))
        for i, bot in enumerate(names)
    }
    return PlackettLuceFit(
        strength,
        interval,
        samples if len(prepared) >= MIN_CLUSTERS else 0,
        tuple(replicates),
        {bot: appearances[i] for i, bot in enumerate(names)},
        pulled,
    )


def strength_difference(
    fit: PlackettLuceFit, a: str, b: str, confidence: float = CONFIDENCE
) -> Interval | None:
    """The interval of ``strength[a] - strength[b]``, from the same bootstrap as the strengths.

    The difference is taken in every resample in which both bots played, so the covariance
    of the two strengths (they are fitted together, often from the same games) is kept: two
    bots that met at every deal have a much narrower difference than their two intervals
    suggest. The interval is built as each bot's own (:func:`_bootstrap_t_interval`), with
    the fewer of the two bots' clusters: the t quantile of the bot with less evidence.

    Returns:
        None when either bot played fewer than :data:`MIN_CLUSTERS` clusters, or the fit has
        no resamples.
    """
    if a not in fit.strength or b not in fit.strength:
        return None
    estimate, draws, clusters, pulled = _difference_draws(fit, a, b)
    return _bootstrap_t_interval(estimate, draws, clusters, confidence, pulled)


def strength_difference_p(fit: PlackettLuceFit, a: str, b: str) -> float | None:
    """The two-sided p-value of ``strength[a] - strength[b] == 0``, from the same bootstrap and
    the same t model as :func:`strength_difference`.

    It is the least ``1 - confidence`` at which that interval would contain zero: zero lies
    outside the interval at level ``1 - alpha`` exactly when the p-value is below ``alpha``.
    The distance from zero to the nearer of the fit and the fit with less of the prior (both
    when zero lies between them: p-value 1) is taken in standard errors and read on Student's t
    with ``C - 1`` degrees of freedom, ``C`` the fewer of the two bots' clusters.

    Returns:
        None where :func:`strength_difference` gives no interval.
    """
    if a not in fit.strength or b not in fit.strength:
        return None
    estimate, draws, clusters, pulled = _difference_draws(fit, a, b)
    se = _bootstrap_se(draws, clusters)
    if se is None:
        return None
    low = estimate if pulled is None else min(estimate, pulled)
    high = estimate if pulled is None else max(estimate, pulled)
    gap = low if low > 0 else -high if high < 0 else 0.0
    if gap == 0.0:
        return 1.0
    if se == 0.0:
        return 0.0
    return t_two_sided_p(gap / se, clusters - 1)


def _difference_draws(fit: PlackettLuceFit, a: str, b: str) -> tuple[float, list[float], int, float | None]:
    """The difference's estimate, its resampled values, the fewer clusters of the two bots and
    the difference with less of the prior (None without it)."""
    draws = [r[a] - r[b] for r in fit.replicates if a in r and b in r]
    clusters = min(fit.clusters.get(a, 0), fit.clusters.get(b, 0))
    pulled = None
    if a in fit.pulled and b in fit.pulled:
        pulled = fit.pulled[a] - fit.pulled[b]
    return fit.strength[a] - fit.strength[b], draws, clusters, pulled


def _bootstrap_se(draws: Sequence[float], clusters: int) -> float | None:
    """The standard error of a mean over ``clusters`` clusters from its bootstrap draws (None
    with fewer than :data:`MIN_CLUSTERS` clusters or two draws).

    The bootstrap variance of a mean over ``C`` clusters is ``(C - 1) / C`` times the usual
    estimate, so it is scaled back.
    """
    if clusters < MIN_CLUSTERS or len(draws) < 2:
        return None
    mean = sum(draws) / len(draws)
    variance = sum((x - mean) ** 2 for x in draws) / (len(draws) - 1)
    return math.sqrt(variance * clusters / (clusters - 1))


def _bootstrap_t_interval(
    estimate: float, draws: Sequence[float], clusters: int, confidence: float, pulled: float | None = None
) -> Interval | None:
    """``estimate -+ t(C - 1) * se``, the standard error taken from the bootstrap draws
    (:func:`_bootstrap_se`), and reaching ``t(C - 1) * se`` beyond ``pulled`` too (the estimate
    with less of the prior).

    The t quantile (rather than the draws' percentiles, which at two clusters span little more
    than the two clusters' values) keeps the coverage near nominal when clusters are few.
    """
    se = _bootstrap_se(draws, clusters)
    if se is None:
        return None
    half = t_quantile(1 - (1 - confidence) / 2, clusters - 1) * se
    low = estimate if pulled is None else min(estimate, pulled)
    high = estimate if pulled is None else max(estimate, pulled)
    return Interval(low - half, high + half)


def percentile_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval | None:
    """The percentile interval of bootstrap values (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    tail = (1 - confidence) / 2
    low = ordered[max(0, math.ceil(tail * len(ordered)) - 1)]
    high = ordered[min(len(ordered) - 1, math.ceil((1 - tail) * len(ordered)) - 1)]
    return Interval(low, high)
