"""A tournament's standings: per-bot statistics, ratings, intervals, paired differences.

Everything is computed from the stored games alone, in schedule order, with seeded randomness,
so the same games always give the same standings (a resumed tournament and an uninterrupted
one publish identical results). The statistics themselves are the plain functions of
:mod:`hearts_tournaments.results.stats`; this module feeds them a tournament's games.

The unit of every interval is the **deal**: a deal and all its seat rotations share their
cards, so their games are not independent, and a deal is one cluster.

Per bot, counted over its *seats* (a bot that fills three seats of a game contributes three
seat-games to the means, but one game to ``games``):

* **strength**: the ranking key. A batch Plackett-Luce fit of every game's finishing order
  (every seat an item, a bot's seats sharing its strength, tied totals as Breslow ties, a weak
  prior of one virtual win and loss against a reference), as a log-strength centred on the
  mean bot: ``exp(a - b)`` is the odds that ``a`` finishes ahead of ``b``. It uses every
  game at once, so it does not depend on the order of the games, and it accounts for the
  opponents each bot actually met. Its 95% interval is ``strength -+ t * se``, the standard
  error from a bootstrap over deals (each resample refitted up to
  :data:`hearts_tournaments.results.stats.FULL_REFIT_CLUSTERS` deals, one Newton step beyond),
  stretched to reach as far past the fit with a tenth of the prior: the prior's pull towards
  the reference is a bias the bootstrap does not see, large at two deals.
* **mean place**: finishing place, 1 = lowest total; tied totals share the better place. The
  tie-breaker. Its 95% interval is a Student-t interval over deals (cluster-robust standard
  error of the ratio of place sums to seats), near nominal coverage already at a few deals.
* **wins**: games won, a shared win split equally between the winning seats.
* **points per hand**: total points over hands played (moon shots included), with a t
  interval over deals like mean place.
* **mean score**: mean final total.
* **field**: the mean strength of the opponents the bot sat with (every seat-game, every
  other seat): the residual imbalance of the schedule. Mean place is not adjusted for it;
  strength is.
* **OpenSkill**: an *online* estimate (OpenSkill Plackett-Luce, games taken in schedule
  order), which depends on that order; published for comparison only.
* **faults** (as the referee counted them), **bot errors** (answers the bot's SDK made for it
  because the bot raised or answered nonsense: legal and in time, but not the bot's choice) and
  **failed games** (a seat retired, a seat that never made a decision of its own, or a crash).

A bot that played fewer than two deals has no interval (``too few deals``) and is ranked after
every bot that has one.

Paired differences: for bots A and B, over the deals both played, the mean of (A's mean place
on the deal - B's), its t interval and the likelihood that A is the better of the two (the
probability that the true difference is below zero). Because both bots played the same cards
against the same opponents, the difference is much more precise than the two marginal
intervals suggest.

Head-to-head: for bots A and B, the share of the games where both played in which A finished
ahead of B (a tie counts half; with several seats each, every seat of A is compared with every
seat of B and the game counts once).
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from statistics import NormalDist
from typing import Any

from openskill.models import PlackettLuce

from hearts_core.deal import derive_seed
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.results.stats import (
    CONFIDENCE,
    FULL_REFIT_CLUSTERS,
    MIN_CLUSTERS,
    PULL_PRIOR_SHARE,
    SEPARATION_FDR,
    Estimate,
    Interval,
    PairedDifference,
    PlacedGame,
    PlackettLuceFit,
    ScoredGame,
    SprtResult,
    SprtSettings,
    SprtVerdict,
    bootstrap_plackett_luce,
    cluster_mean,
    paired_difference,
    separate_neighbours,
    sprt,
    t_quantile,
)
from hearts_tournaments.results.stats.luck import GameLuck, midranks
from hearts_tournaments.tournament.gauntlet import GauntletSpec, deal_advantages
from hearts_tournaments.tournament.luck_correction import LuckCorrection, corrected_seats, outcome_terms
from hearts_tournaments.tournament.quarantine import Quarantine, quarantined
from hearts_tournaments.tournament.schedule import Balance, Schedule

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "CONFIDENCE",
    "FEW_DEALS",
    "SCHEMA_VERSION",
    "BotStanding",
    "GauntletStanding",
    "Interval",
    "Meeting",
    "Pairing",
    "Separation",
    "Standings",
    "compute_standings",
    "deal_warnings",
]

#: Version of the JSON report (2: strength ranking, t intervals, paired differences).
SCHEMA_VERSION = 2
#: Bootstrap resamples of the strength intervals.
BOOTSTRAP_SAMPLES = 1000
#: Below this many deals per bot, the intervals are wide (the t quantile of 4 degrees of
#: freedom is 2.78 against 1.96 for many deals) and close bots cannot be told apart.
FEW_DEALS = 6
#: Paired differences over fewer shared deals are not shown as a second view of a
#: neighbouring pair's separation (their t quantile alone is 2.57 or more).
PAIRED_MIN_DEALS = FEW_DEALS
#: Decimal places kept in the published figures.
DIGITS = 6
#: The rating model's name when the standings are luck-corrected.
LUCK_RATING_MODEL = (
    "plackett-luce (batch fit by Newton's method, Breslow ties, prior: 1 virtual win and loss against "
    "a reference), moved by one Newton step of the pairwise likelihood to the luck-corrected places"
)
#: The standings give two verdicts on a pair of bots, and they answer different questions (so
#: they may differ without contradicting each other). Every form says so from here: the text
#: and Markdown notes, the JSON's ``verdicts`` and the web page.
TIER_QUESTION = "is their order established over the whole field?"
PAIRED_QUESTION = "did the two differ on the deals both played?"
#: The paired verdict's words (the tier's is the tier column and its rules: "separated").
DIFFERED = "differed"
NO_CLEAR_DIFFERENCE = "no clear difference"


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's line of the standings (see the module's docstring for each figure)."""

    rank: int
    bot: str
    games: int
    seats: int
    deals: int
    strength: float | None
    strength_ci: Interval | None
    mean_place: float | None
    mean_place_ci: Interval | None
    wins: float
    points_per_hand: float | None
    points_per_hand_ci: Interval | None
    mean_score: float | None
    field_strength: float | None
    openskill_mu: float
    openskill_sigma: float
    faults: int
    failed_games: int
    quarantined: bool
    bot_errors: int = 0
    tier: int | None = None
    #: It played games but never made a decision of its own in any of them (it never started,
    #: never answered, or its SDK answered for it): ranked after every bot that did.
    never_played: bool = False

    @property
    def too_few_deals(self) -> bool:
        """Whether the bot played too few deals for an interval (it is ranked last)."""
        return self.deals < MIN_CLUSTERS

    @property
    def openskill_ordinal(self) -> float:
        """``mu - 3 sigma`` of the online OpenSkill estimate."""
        return self.openskill_mu - 3 * self.openskill_sigma

    def to_json(self) -> dict[str, Any]:
        """The line as published."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "games": self.games,
            "seats": self.seats,
            "deals": self.deals,
            "too_few_deals": self.too_few_deals,
            "strength": _num(self.strength),
            "strength_ci95": _interval(self.strength_ci),
            "mean_place": _num(self.mean_place),
            "mean_place_ci95": _interval(self.mean_place_ci),
            "wins": _num(self.wins),
            "points_per_hand": _num(self.points_per_hand),
            "points_per_hand_ci95": _interval(self.points_per_hand_ci),
            "mean_score": _num(self.mean_score),
            "field_strength": _num(self.field_strength),
            "openskill": {
                "mu": _num(self.openskill_mu),
                "sigma": _num(self.openskill_sigma),
                "ordinal": _num(self.openskill_ordinal),
            },
            "faults": self.faults,
            "bot_errors": self.bot_errors,
            "failed_games": self.failed_games,
            "quarantined": self.quarantined,
            "tier": self.tier,
            "never_played": self.never_played,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BotStanding:
        """The line of a published report (see :meth:`Standings.from_json`)."""
        skill = data["openskill"]
        return cls(
            rank=data["rank"],
            bot=data["bot"],
            games=data["games"],
            seats=data["seats"],
            deals=data["deals"],
            strength=data["strength"],
            strength_ci=_interval_of(data["strength_ci95"]),
            mean_place=data["mean_place"],
            mean_place_ci=_interval_of(data["mean_place_ci95"]),
            wins=data["wins"],
            points_per_hand=data["points_per_hand"],
            points_per_hand_ci=_interval_of(data["points_per_hand_ci95"]),
            mean_score=data["mean_score"],
            field_strength=data["field_strength"],
            openskill_mu=skill["mu"],
            openskill_sigma=skill["sigma"],
            faults=data["faults"],
            failed_games=data["failed_games"],
            quarantined=data["quarantined"],
            bot_errors=data.get("bot_errors", 0),
            tier=data.get("tier"),
            never_played=bool(data.get("never_played", False)),
        )


@dataclass(frozen=True, slots=True)
class Meeting:
    """How bot A fared against bot B: games together, and in how many A finished ahead."""

    games: int
    ahead: float

    @property
    def share(self) -> float | None:
        """The share of their games in which A finished ahead (a tie counts half)."""
        return self.ahead / self.games if self.games else None


@dataclass(frozen=True, slots=True)
class Pairing:
    """The paired difference of mean place between two bots over the deals both played.

    Attributes:
        a: The better ranked bot.
        b: The other.
        difference: ``a``'s mean place minus ``b``'s, deal by deal (negative: ``a`` better).
    """

    a: str
    b: str
    difference: PairedDifference

    @property
    def separated(self) -> bool:
        """Whether the interval of the difference excludes zero."""
        ci = self.difference.interval
        return ci is not None and not ci.contains(0.0)

    def to_json(self) -> dict[str, Any]:
        """The pair as published."""
        d = self.difference
        return {
            "a": self.a,
            "b": self.b,
            "deals": d.clusters,
            "mean_place_difference": _num(d.mean),
            "ci95": _interval(d.interval),
            "likelihood_of_superiority": _num(d.below_zero),
            "separated": self.separated,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pairing:
        """The pair of a published report."""
        difference = PairedDifference(
            data["deals"],
            data["mean_place_difference"],
            _interval_of(data["ci95"]),
            data["likelihood_of_superiority"],
        )
        return cls(data["a"], data["b"], difference)


@dataclass(frozen=True, slots=True)
class Separation:
    """Whether two bots ranked next to each other are told apart by the strength model.

    Attributes:
        a: The better ranked bot.
        b: The bot ranked just below it.
        difference: ``a``'s strength minus ``b``'s (zero or more: the ranking's order).
        interval: The pair's own 95% interval of the difference, from the bootstrap over deals
            that gives the strength intervals, taken resample by resample (the covariance of the
            two strengths is kept); None when either bot has no interval.
        separated: Whether their order is established: Benjamini-Hochberg at
            :data:`~hearts_tournaments.results.stats.SEPARATION_FDR` across the ranking's
            neighbour tests rejects a zero difference
            (:func:`~hearts_tournaments.results.stats.separate_neighbours`). Then the
            interval lies above zero too, but not every pair whose interval does is separated.
        shared_deals: Deals both played.
        paired: The paired difference of mean place over the shared deals (the model-free
            view), where they share at least :data:`PAIRED_MIN_DEALS` deals; else None.
        p_value: The two-sided p-value of a zero strength difference, from the same bootstrap
            (None without an interval, and in a report published before it was kept).
    """

    a: str
    b: str
    difference: float | None
    interval: Interval | None
    separated: bool
    shared_deals: int
    paired: Pairing | None
    p_value: float | None = None

    def more_deals_factor(self, level: float = 1 - CONFIDENCE) -> float | None:
        """How many times the deals played would bring the pair's p-value down to ``level``
        (two-sided; by default the pair's own 95% interval above zero) if the measured
        difference held, with the interval narrowing as one over the square root of the deals
        and its half-width scaled from 95% to ``level`` by normal quantiles (None: separated, or
        no interval; infinity when the difference is zero)."""
        if self.separated or self.interval is None or self.difference is None:
            return None
        half = self.difference - self.interval.low
        if self.difference <= 0 or half <= 0:
            return math.inf
        normal = NormalDist()
        scale = normal.inv_cdf(1 - level / 2) / normal.inv_cdf(1 - (1 - CONFIDENCE) / 2)
        return (half * scale / self.difference) ** 2

    def to_json(self) -> dict[str, Any]:
        """The pair as published."""
        paired = self.paired
        return {
            "a": self.a,
            "b": self.b,
            "strength_difference": _num(self.difference),
            "ci95": _interval(self.interval),
            "p_value": _num(self.p_value),
            "separated": self.separated,
            "shared_deals": self.shared_deals,
            "paired_mean_place_difference": _num(paired.difference.mean) if paired else None,
            "paired_ci95": _interval(paired.difference.interval) if paired else None,
            "paired_separated": paired.separated if paired else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], pairings: Mapping[tuple[str, str], Pairing]) -> Separation:
        """The pair of a published report (its paired view taken from ``pairings``)."""
        return cls(
            a=data["a"],
            b=data["b"],
            difference=data["strength_difference"],
            interval=_interval_of(data["ci95"]),
            separated=data["separated"],
            shared_deals=data["shared_deals"],
            paired=pairings[(data["a"], data["b"])] if data["paired_separated"] is not None else None,
            p_value=data.get("p_value"),
        )


@dataclass(frozen=True, slots=True)
class GauntletStanding:
    """Where a gauntlet's sequential test stands.

    Attributes:
        spec: The candidate and the test's settings.
        result: The test over the complete deals, in deal order.
        advantage: The candidate's mean advantage per deal (the field's mean place minus its
            own) over every complete deal, with a t interval.
    """

    spec: GauntletSpec
    result: SprtResult
    advantage: Estimate

    @property
    def decided(self) -> bool:
        """Whether the test accepted H0 or H1."""
        return self.result.verdict is not SprtVerdict.CONTINUE

    def line(self) -> str:
        """The verdict in words."""
        s, r = self.spec.sprt, self.result
        if r.verdict is SprtVerdict.H1:
            verdict = (
                f"H1 accepted after {r.stopped_at} deals: {self.spec.candidate} is better than the field "
                f"(by {s.h1:g} places a deal or more, rather than {s.h0:g} or less)"
            )
        elif r.verdict is SprtVerdict.H0:
            verdict = (
                f"H0 accepted after {r.stopped_at} deals: {self.spec.candidate} is not better than the "
                f"field by {s.h1:g} places a deal (its advantage is {s.h0:g} or less)"
            )
        else:
            verdict = f"no verdict after {r.deals} deals (min_deals {s.min_deals})"
        a = self.advantage
        shown = "" if a.mean is None else f"; mean advantage {a.mean:+.2f} places a deal"
        if a.interval is not None:
            shown += f" ({a.interval.low:+.2f} to {a.interval.high:+.2f})"
        return (
            f"Gauntlet (SPRT, alpha {s.alpha:g}, beta {s.beta:g}): {verdict}; LLR {r.llr:.2f}, "
            f"bounds {r.lower:.2f} and {r.upper:.2f}{shown}"
        )

    def to_json(self) -> dict[str, Any]:
        """The gauntlet's section of the report."""
        r, a = self.result, self.advantage
        return {
            **self.spec.to_json(),
            "verdict": str(r.verdict),
            "llr": _num(r.llr),
            "lower": _num(r.lower),
            "upper": _num(r.upper),
            "stopped_at": r.stopped_at,
            "deals": a.clusters,
            "mean_advantage": _num(a.mean),
            "advantage_ci95": _interval(a.interval),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GauntletStanding:
        """The gauntlet's section of a published report."""
        settings = SprtSettings(data["h0"], data["h1"], data["alpha"], data["beta"], data["min_deals"])
        stopped = data["stopped_at"]
        result = SprtResult(
            SprtVerdict(data["verdict"]),
            data["llr"],
            data["lower"],
            data["upper"],
            stopped if stopped is not None else data["deals"],
            data["mean_advantage"],
            stopped,
        )
        advantage = Estimate(
            data["mean_advantage"], _interval_of(data["advantage_ci95"]), data["deals"], None
        )
        return cls(GauntletSpec(data["candidate"], settings), result, advantage)


@dataclass(frozen=True, slots=True)
class Standings:
    """The published results of a tournament (complete or not)."""

    name: str
    table_size: int
    deals: int
    duplicate: bool
    seed: str
    target_score: int
    games_total: int
    games_played: int
    deals_played: int
    standings: tuple[BotStanding, ...]
    pairings: tuple[Pairing, ...]
    head_to_head: dict[str, dict[str, Meeting]]
    quarantine: tuple[Quarantine, ...]
    balance: dict[str, Any]
    bootstrap_samples: int
    gauntlet: GauntletStanding | None = None
    separations: tuple[Separation, ...] = ()
    #: The luck correction the figures are corrected by (its report form), or None.
    luck: Mapping[str, Any] | None = None
    #: The report these standings were read from (:meth:`from_json`): :meth:`to_json` gives it
    #: back as it was, figure for figure (a figure derived from rounded ones may differ in the
    #: last digit).
    published: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def complete(self) -> bool:
        """Whether every scheduled game was played."""
        return self.games_played == self.games_total

    def by_bot(self, bot: str) -> BotStanding:
        """The line of ``bot``."""
        return next(s for s in self.standings if s.bot == bot)

    def pairing(self, a: str, b: str) -> Pairing:
        """The paired difference of ``a`` and ``b`` (in either order, as published)."""
        return next(p for p in self.pairings if {p.a, p.b} == {a, b})

    def warnings(self) -> list[str]:
        """Where the deals played are too few: bots without an interval, and (in one line, see
        :meth:`separation_line`) the bots ranked next to each other whose order the strength
        model does not establish."""
        out = [
            f"{line.bot} played {line.deals} deal(s): too few deals for an interval, ranked last"
            for line in self.standings
            if line.too_few_deals and line.games
        ]
        if any(not s.separated for s in self.separations):
            out.append(self.separation_line())
        return out

    def more_deals(self) -> int | None:
        """About how many more deals would separate half of the neighbouring pairs not
        separated yet, at the differences measured so far (intervals narrowing as one over the
        square root of the deals), each pair's p-value brought to the level at which
        Benjamini-Hochberg would separate one more of the ``m`` pairs (``q * (R + 1) / m``, with
        ``R`` separated now). None when every pair is separated or no deal was played; -1 when
        half of them are ties that no number of deals separates at these estimates."""
        pairs = self.separations
        level = SEPARATION_FDR * (sum(s.separated for s in pairs) + 1) / max(1, len(pairs))
        factors = sorted(f for s in pairs if (f := s.more_deals_factor(level)) is not None)
        if not factors or not self.deals_played:
            return None
        middle = factors[(len(factors) - 1) // 2]
        if not math.isfinite(middle):
            return -1
        return max(1, math.ceil(self.deals_played * (middle - 1)))

    def separation_line(self) -> str:
        """One line on how many neighbours in the ranking the strength model separates."""
        pairs = self.separations
        separated = sum(s.separated for s in pairs)
        if not pairs:
            return "no two ranked bots to separate yet"
        line = (
            f"{separated} of {len(pairs)} neighbouring pairs in the ranking separated, at most "
            f"{SEPARATION_FDR:.0%} of such verdicts wrong on average (strength difference from the "
            "bootstrap over deals, Benjamini-Hochberg across the neighbours; the tier column groups "
            "the rest)"
        )
        rest = len(pairs) - separated
        more = self.more_deals()
        if more is not None and more >= 0:
            line += f"; play about {_round_up(more)} more deals to separate half of the other {rest}"
        elif more is not None:
            line += f"; most of the other {rest} are too close to separate at any practical number of deals"
        paired = [s.paired for s in pairs if s.paired is not None]
        if paired:
            differed = sum(p.separated for p in paired)
            line += (
                f"; on the deals they shared (at least {PAIRED_MIN_DEALS}), {differed} of {len(paired)} "
                f"{DIFFERED} (paired differences: {PAIRED_QUESTION}), each pair at {CONFIDENCE:.0%} on its "
                "own: about 1 in 20 pairs of equal bots differs by chance"
            )
        return line

    def tiers(self) -> list[list[str]]:
        """The ranked bots in tiers: a new tier starts below each separated neighbour."""
        out: list[list[str]] = []
        for line in self.standings:
            if line.tier is None:
                continue
            if len(out) < line.tier:
                out.append([])
            out[line.tier - 1].append(line.bot)
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON report (``schema_version`` 2), standings in rank order."""
        if self.published is not None:
            return copy.deepcopy(dict(self.published))
        return {
            "schema_version": SCHEMA_VERSION,
            "tournament": {
                "name": self.name,
                "table_size": self.table_size,
                "deals": self.deals,
                "duplicate": self.duplicate,
                "seed": self.seed,
                "target_score": self.target_score,
                "games_total": self.games_total,
                "games_played": self.games_played,
                "deals_played": self.deals_played,
                "complete": self.complete,
            },
            "ranking": {
                "key": "strength",
                "tie_breaker": "mean_place",
                "rating_model": LUCK_RATING_MODEL
                if self.luck is not None
                else "plackett-luce (batch fit by Newton's method, Breslow ties, "
                "prior: 1 virtual win and loss against a reference)",
                "luck_correction": copy.deepcopy(dict(self.luck)) if self.luck is not None else None,
                "confidence": CONFIDENCE,
                "interval_unit": "deal",
                "mean_interval": "student-t, cluster-robust",
                "strength_interval": (
                    f"student-t, bootstrap standard error (refitted up to {FULL_REFIT_CLUSTERS} deals, "
                    f"one step beyond), reaching as far past the fit with {PULL_PRIOR_SHARE:g} of the prior"
                ),
                "bootstrap_samples": self.bootstrap_samples,
                "min_deals": MIN_CLUSTERS,
                "online_rating_model": "openskill.PlackettLuce (schedule order)",
            },
            "verdicts": {
                "tier": {
                    "question": TIER_QUESTION,
                    "from": "the strength model (every game of both bots, against every opponent)",
                    "keys": ["standings[].tier", "separation.neighbours[].separated"],
                },
                "paired": {
                    "question": PAIRED_QUESTION,
                    "from": "their places deal by deal over the deals both played (model-free)",
                    "keys": ["paired[].separated", "separation.neighbours[].paired_separated"],
                },
            },
            "standings": [s.to_json() for s in self.standings],
            "paired": [p.to_json() for p in self.pairings],
            "separation": {
                "model": "strength",
                "rule": "benjamini-hochberg across the neighbouring pairs' two-sided tests",
                "false_discovery_rate": SEPARATION_FDR,
                "confidence": CONFIDENCE,
                "paired_min_deals": PAIRED_MIN_DEALS,
                "separated": sum(s.separated for s in self.separations),
                "pairs": len(self.separations),
                "more_deals_for_half": self.more_deals(),
                "summary": self.separation_line(),
                "neighbours": [s.to_json() for s in self.separations],
            },
            "head_to_head": {
                a: {
                    b: {"games": m.games, "ahead": _num(m.ahead), "share": _num(m.share)}
                    for b, m in row.items()
                }
                for a, row in self.head_to_head.items()
            },
            "quarantined": [
                {"bot": q.bot, "after_game": q.after_game, "failed_games": q.failed_games}
                for q in self.quarantine
            ],
            "balance": self.balance,
            "gauntlet": self.gauntlet.to_json() if self.gauntlet is not None else None,
            "warnings": self.warnings(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Standings:
        """The standings of a published JSON report (:meth:`to_json`), as a snapshot is read:
        ``Standings.from_json(s.to_json()).to_json() == s.to_json()``.

        Raises:
            KeyError, TypeError, ValueError: if ``data`` is not such a report.
        """
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"schema_version {data.get('schema_version')!r}, not {SCHEMA_VERSION}")
        t = data["tournament"]
        pairings = tuple(Pairing.from_json(p) for p in data["paired"])
        by_pair = {(p.a, p.b): p for p in pairings}
        return cls(
            name=t["name"],
            table_size=t["table_size"],
            deals=t["deals"],
            duplicate=t["duplicate"],
            seed=t["seed"],
            target_score=t["target_score"],
            games_total=t["games_total"],
            games_played=t["games_played"],
            deals_played=t["deals_played"],
            standings=tuple(BotStanding.from_json(line) for line in data["standings"]),
            pairings=pairings,
            head_to_head={
                a: {b: Meeting(m["games"], m["ahead"]) for b, m in row.items()}
                for a, row in data["head_to_head"].items()
            },
            quarantine=tuple(
                Quarantine(q["bot"], q["after_game"], q["failed_games"]) for q in data["quarantined"]
            ),
            balance=data["balance"],
            bootstrap_samples=data["ranking"]["bootstrap_samples"],
            gauntlet=GauntletStanding.from_json(data["gauntlet"]) if data["gauntlet"] is not None else None,
            separations=tuple(Separation.from_json(n, by_pair) for n in data["separation"]["neighbours"]),
            luck=data["ranking"].get("luck_correction"),
            published=copy.deepcopy(dict(data)),
        )


@dataclass(slots=True)
class _Sums:
    """Running sums of one bot over some seat-games."""

    places: float = 0.0
    seats: int = 0
    points: float = 0.0
    hands: int = 0


def compute_standings(
    *,
    name: str,
    schedule: Schedule,
    outcomes: Sequence[GameOutcome],
    target_score: int,
    quarantine_after: int,
    balance: dict[str, Any],
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
    gauntlet: GauntletSpec | None = None,
    luck: LuckCorrection | None = None,
    luck_terms: Mapping[str, GameLuck] | None = None,
) -> Standings:
    """The standings of the games played so far.

    Args:
        name: The tournament's name.
        schedule: Its schedule.
        outcomes: The finished games, in the order they finished (which decides quarantine).
        target_score: The games' target score (published with the results).
        quarantine_after: Failed games before quarantine.
        balance: The schedule's balance report.
        bootstrap_samples: Resamples of the strength intervals.
        gauntlet: The gauntlet's candidate and test, for a gauntlet.
        luck: Correct the figures for luck (docs/TOURNAMENTS.md, *Luck correction*).
        luck_terms: With ``luck``: every game's luck terms by key (default: computed from
            the outcomes' records).

    Raises:
        LuckError: with ``luck``, naming a game whose record cannot be replayed.
    """
    bots = schedule.bots
    position = {g.key: g.index for g in schedule.games}
    deal_of = {g.key: g.deal for g in schedule.games}
    games_in_order = sorted(outcomes, key=lambda o: position[o.key])
    if luck is not None and luck_terms is None:
        luck_terms = outcome_terms(games_in_order, luck)
    fixed = corrected_seats(schedule, games_in_order, luck_terms) if luck_terms is not None else None
    # Per deal and bot: the sums the intervals and paired differences are made of.
    per_deal: dict[int, dict[str, _Sums]] = defaultdict(lambda: defaultdict(_Sums))
    placed: dict[int, list[PlacedGame]] = defaultdict(list)
    scored: dict[int, list[ScoredGame]] = defaultdict(list)
    games = dict.fromkeys(bots, 0)
    wins = dict.fromkeys(bots, 0.0)
    faults = dict.fromkeys(bots, 0)
    bot_errors = dict.fromkeys(bots, 0)
    failed = dict.fromkeys(bots, 0)
    own = dict.fromkeys(bots, 0)  # games with a decision of its own
    scores: dict[str, list[int]] = {bot: [] for bot in bots}
    together: dict[tuple[str, str], int] = defaultdict(int)
    ahead_of: dict[tuple[str, str], float] = defaultdict(float)
    for outcome in games_in_order:
        sums = per_deal[deal_of[outcome.key]]
        placed[deal_of[outcome.key]].append(tuple(zip(outcome.seats, outcome.places, strict=True)))
        corrected = fixed[outcome.key] if fixed is not None else None
        if corrected is not None:
            mid = midranks(outcome.places)
            scored[deal_of[outcome.key]].append(
                tuple((bot, m, c.midrank) for bot, m, c in zip(outcome.seats, mid, corrected, strict=True))
            )
        seats_of: dict[str, list[int]] = defaultdict(list)
        for seat, bot in enumerate(outcome.seats):
            seats_of[bot].append(seat)
            entry = sums[bot]
            entry.places += corrected[seat].place if corrected is not None else outcome.places[seat]
            entry.seats += 1
            entry.points += corrected[seat].points if corrected is not None else outcome.totals[seat]
            entry.hands += outcome.hands
            faults[bot] += outcome.faults[seat]
            bot_errors[bot] += outcome.bot_errors_at(seat)
            scores[bot].append(outcome.totals[seat])
        for seat in outcome.winners:
            wins[outcome.seats[seat]] += 1 / len(outcome.winners)
        for bot in seats_of:
            games[bot] += 1
            failed[bot] += outcome.failed(bot)
            own[bot] += any(not outcome.absent[s] and not outcome.never_answered[s] for s in seats_of[bot])
        for a, mine in seats_of.items():
            for b, theirs in seats_of.items():
                if a == b:
                    continue
                ahead = sum(_ahead(outcome.places[x], outcome.places[y]) for x in mine for y in theirs)
                together[(a, b)] += 1
                ahead_of[(a, b)] += ahead / (len(mine) * len(theirs))
    deals = sorted(per_deal)
    fit = bootstrap_plackett_luce(
        [placed[d] for d in deals],
        bootstrap_samples,
        derive_seed(schedule.seed, "bootstrap"),
        corrections=[scored[d] for d in deals] if fixed is not None else None,
    )
    field = _field_strength(bots, games_in_order, fit.strength)
    ratings = _ratings(bots, games_in_order)
    deal_places: dict[str, dict[int, float]] = {bot: {} for bot in bots}
    for d in deals:
        for bot, entry in per_deal[d].items():
            deal_places[bot][d] = entry.places / entry.seats
    held = quarantined(games_in_order, quarantine_after)  # schedule order, as the runner decides
    lines = []
    for bot in bots:
        units = [per_deal[d][bot] for d in deals if bot in per_deal[d]]
        place = cluster_mean([(e.places, e.seats) for e in units])
        points = cluster_mean([(e.points, e.hands) for e in units])
        mu, sigma = ratings[bot]
        lines.append(
            BotStanding(
                rank=0,
                bot=bot,
                games=games[bot],
                seats=sum(e.seats for e in units),
                deals=len(units),
                strength=fit.strength.get(bot),
                strength_ci=fit.interval.get(bot),
                mean_place=place.mean,
                # Cut to the places that exist, which keeps the coverage.
                mean_place_ci=place.interval and place.interval.clipped(1, schedule.table_size),
                wins=wins[bot],
                points_per_hand=points.mean,
                points_per_hand_ci=points.interval and points.interval.clipped(0, None),
                mean_score=sum(scores[bot]) / len(scores[bot]) if scores[bot] else None,
                field_strength=field.get(bot),
                openskill_mu=mu,
                openskill_sigma=sigma,
                faults=faults[bot],
                failed_games=failed[bot],
                quarantined=bot in held,
                bot_errors=bot_errors[bot],
                never_played=games[bot] > 0 and own[bot] == 0,
            )
        )
    lines.sort(
        key=lambda s: (
            s.never_played,
            s.too_few_deals,
            s.strength is None,
            -(s.strength or 0.0),
            s.mean_place or 0.0,
            s.bot,
        )
    )
    order = [line.bot for line in lines]
    pairings = tuple(
        Pairing(a, b, paired_difference(deal_places[a], deal_places[b])) for a, b in combinations(order, 2)
    )
    separations = _separations(lines, fit, {(p.a, p.b): p for p in pairings})
    tiers: dict[str, int] = {}
    for s in separations:
        tiers.setdefault(s.a, 1)
        tiers[s.b] = tiers[s.a] + s.separated
    if len(lines) and lines[0].strength_ci is not None:
        tiers.setdefault(lines[0].bot, 1)
    ranked = tuple(
        replace(line, rank=index + 1, tier=tiers.get(line.bot)) for index, line in enumerate(lines)
    )
    return Standings(
        name=name,
        table_size=schedule.table_size,
        deals=len(schedule.seatings),
        duplicate=schedule.duplicate,
        seed=schedule.seed,
        target_score=target_score,
        games_total=len(schedule.games),
        games_played=len(outcomes),
        deals_played=len(per_deal),
        standings=ranked,
        pairings=pairings,
        head_to_head={
            a: {b: Meeting(together[(a, b)], ahead_of[(a, b)]) for b in bots if b != a} for a in bots
        },
        quarantine=tuple(held.values()),
        balance=balance,
        bootstrap_samples=fit.samples,
        gauntlet=_gauntlet(schedule, games_in_order, gauntlet, luck_terms) if gauntlet is not None else None,
        separations=separations,
        luck={**luck.to_json(), "method": luck.describe()} if luck is not None else None,
    )


def _separations(
    lines: Sequence[BotStanding], fit: PlackettLuceFit, pairings: Mapping[tuple[str, str], Pairing]
) -> tuple[Separation, ...]:
    """Each pair of bots ranked next to each other (among those with a strength interval):
    their strength difference and whether it is separated from zero, by the one rule of
    :func:`~hearts_tournaments.results.stats.separate_neighbours`."""
    ranked = [line.bot for line in lines if line.strength_ci is not None]
    out = []
    for test in separate_neighbours(fit, ranked):
        pair = pairings[(test.a, test.b)]
        out.append(
            Separation(
                a=test.a,
                b=test.b,
                difference=test.difference,
                interval=test.interval,
                separated=test.separated,
                shared_deals=pair.difference.clusters,
                paired=pair if pair.difference.clusters >= PAIRED_MIN_DEALS else None,
                p_value=test.p_value,
            )
        )
    return tuple(out)


def _round_up(n: int) -> str:
    """A count of deals rounded up to two significant digits, with thousands separators."""
    digits = len(str(n))
    step = 10 ** max(0, digits - 2)
    return f"{-(-n // step) * step:,}"


def _gauntlet(
    schedule: Schedule,
    outcomes: Sequence[GameOutcome],
    spec: GauntletSpec,
    luck_terms: Mapping[str, GameLuck] | None = None,
) -> GauntletStanding:
    advantages = deal_advantages(schedule, outcomes, spec.candidate, luck_terms)
    return GauntletStanding(spec, sprt(advantages, spec.sprt), cluster_mean([(a, 1) for a in advantages]))


def deal_warnings(balance: Balance) -> list[str]:
    """Warnings for a schedule, before it is played, when its deals are too few.

    A bot at fewer than two deals gets no interval at all; below :data:`FEW_DEALS` deals the
    intervals are wide and close bots will not be separated.
    """
    if not balance.deals_per_bot:
        return []
    fewest = min(balance.deals_per_bot.values())
    if fewest < MIN_CLUSTERS:
        short = sorted(bot for bot, n in balance.deals_per_bot.items() if n < MIN_CLUSTERS)
        return [
            f"{', '.join(short)} would play only {fewest} deal(s): no interval can be estimated from "
            f"fewer than {MIN_CLUSTERS}; give every bot at least {FEW_DEALS} deals (raise deals)"
        ]
    if fewest < FEW_DEALS:
        factor = t_quantile(1 - (1 - CONFIDENCE) / 2, fewest - 1)
        return [
            f"a bot plays as few as {fewest} deals: the 95% intervals will be wide (t quantile "
            f"{factor:.2f} against 1.96) and close bots cannot be separated; "
            f"give every bot at least {FEW_DEALS} deals (raise deals)"
        ]
    return []


def _ahead(mine: int, theirs: int) -> float:
    """1 if a place beats another, half on a tie, else 0."""
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def _ratings(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> dict[str, tuple[float, float]]:
    """Online OpenSkill Plackett-Luce ratings after every game, taken in schedule order."""
    model = PlackettLuce()
    start = model.rating()
    ratings = {bot: (float(start.mu), float(start.sigma)) for bot in bots}
    for outcome in outcomes:
        # A fresh rating per seat: a bot in several seats is several teams of this game.
        teams = [[model.rating(mu=ratings[bot][0], sigma=ratings[bot][1])] for bot in outcome.seats]
        updated = model.rate(teams, ranks=list(outcome.places))
        seats_of: dict[str, list[int]] = defaultdict(list)
        for seat, bot in enumerate(outcome.seats):
            seats_of[bot].append(seat)
        for bot, seats in seats_of.items():
            mu = sum(float(updated[s][0].mu) for s in seats) / len(seats)
            sigma = sum(float(updated[s][0].sigma) for s in seats) / len(seats)
            ratings[bot] = (mu, sigma)
    return ratings


def _field_strength(
    bots: Sequence[str], outcomes: Sequence[GameOutcome], strength: Mapping[str, float]
) -> dict[str, float]:
    """Per bot, the mean strength of the other seats over all its seat-games."""
    total = dict.fromkeys(bots, 0.0)
    count = dict.fromkeys(bots, 0)
    for outcome in outcomes:
        for seat, bot in enumerate(outcome.seats):
            for other, rival in enumerate(outcome.seats):
                if other != seat:
                    total[bot] += strength[rival]
                    count[bot] += 1
    return {bot: total[bot] / count[bot] for bot in bots if count[bot]}


def _interval_of(data: Sequence[float] | None) -> Interval | None:
    return None if data is None else Interval(data[0], data[1])


def _interval(ci: Interval | None) -> list[float] | None:
    return ci.to_json(DIGITS) if ci is not None else None


def _num(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)
