"""What the luck correction buys: interval widths, coverage and deals to separate, with real games.

For each field (bots of known relative strength at one table size) a **pool** of deals is
played with the referee's engine (:mod:`hearts_core.local`, real SDK bots): every deal in all
its seat rotations (each deal gets a seeded random seating, then every rotation of it, as a
duplicate tournament plays it), each game to ``--target`` points, its record kept and its luck
terms computed (:func:`hearts_tournaments.results.stats.luck.game_luck`, timed: the CPU the
correction costs per game). Seats of the built-in ``random`` bot are known policies (as in a
tournament that enters it as ``builtin = "random"``); every other bot is treated as an entrant
whose policy is unknown.

Then many tournaments are drawn from the pool (deals drawn with replacement, so that the pool
is the population and its means are the truth; each bot's luck terms are centred on the
pool and the correction's coefficients fitted leaving out every copy of a deal, so that the
drawn tournaments meet the terms as real ones do: mean zero, deals that never repeat):

* ``single``: one game per deal (one rotation drawn at random), as ``duplicate = false`` plays;
* ``duplicate``: every rotation of each deal.

For each, every bot's mean place and points per hand get their 95% t interval over deals,
raw and luck-corrected (:func:`~hearts_tournaments.results.stats.luck.correct`), and the
strength (the ranking key: the standings' Plackett-Luce fit, and with ``corrections``, as the
corrected standings fit it) its bootstrap interval and the separation rule's verdicts on
neighbouring bots. Reported per field, mode and deal count: the coverage (aim: 93-97%), the
mean width and its ratio to the raw width (aim: half, a quarter of the games), the deals
needed for the same width (the square of that ratio: intervals narrow as one over the square
root of the deals), the share of true neighbours separated, and how many pairs of equal bots
were (wrongly) separated. ``duplicate`` at ``D`` deals costs as many games as ``single`` at
``n * D``: both are printed, so corrected single games can be compared with duplicate rotations
per game played. The CPU the correction costs per game is the mean over the pool's games.

Usage::

    bench/luck.py [--fields builtins6 levels8 heuristic10] [--pool-deals 16] [--trials 100]
                  [--strength-trials 10] [--samples 100] [--deals 12 24] [--pool-dir DIR] [--json]

The defaults take a few minutes on two cores; the figures in docs/design/STATISTICS.md (*Luck
correction*) are from larger pools and more trials, with the command printed beside them.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.separation import Mixed
from hearts_client.bots import make_bot
from hearts_client.bots.montecarlo import MonteCarloBot
from hearts_core.deal import derive_seed
from hearts_core.local import play_game
from hearts_core.record import GameRecord, state_to_record
from hearts_core.rules import Rules
from hearts_tournaments.results.stats import Interval, cluster_mean, strength_difference
from hearts_tournaments.results.stats.luck import GameLuck, LuckGame, correct, game_luck, midranks
from hearts_tournaments.results.stats.plackett_luce import bootstrap_plackett_luce

#: The fields: table size and the kind of bot in each seat (``pP``: level P, each decision as
#: ``heuristic`` with probability P else as ``random``; ``mc``: montecarlo with 20 worlds).
FIELDS: dict[str, tuple[str, ...]] = {
    # The demo's field: built-ins, two seats each (random known, montecarlo not).
    "demo": ("heuristic", "heuristic", "random", "random", "mc", "mc"),
    # Built-ins (random known) and unknown entrants, at the smallest table.
    "builtins6": ("heuristic",) * 2 + ("p0.8",) * 2 + ("random",) * 2,
    # Entrants of unknown policy that play partly at random: nothing known, nothing to predict.
    "levels8": ("p0", "p0", "p0.5", "p0.5", "p0.8", "p0.8", "heuristic", "heuristic"),
    # A field of built-ins around unknown entrants, as a gauntlet against built-ins has.
    "builtins8": ("heuristic",) * 3 + ("p0.8",) * 2 + ("random",) * 3,
    # Entrants that play much like the reference policy.
    "heuristic10": ("heuristic",) * 5 + ("p0.9",) * 5,
}
#: Bootstrap resamples of the strength intervals (the standings use 1000).
SAMPLES = 100
#: The fields of the default run: three table sizes.
DEFAULT_FIELDS = ["builtins6", "levels8", "heuristic10"]


def player(kind: str, seed: str) -> Any:
    if kind == "mc":
        return MonteCarloBot(seed, worlds=20)
    if kind.startswith("p"):
        return Mixed(float(kind[1:]), seed)
    return make_bot(kind, seed)


@dataclass(frozen=True, slots=True)
class PoolGame:
    """One game of the pool: its deal, the bots (``kind-i``) per seat, places, totals, luck."""

    deal: int
    seats: tuple[str, ...]
    places: tuple[int, ...]
    totals: tuple[int, ...]
    record: str
    luck: GameLuck
    luck_cpu: float

    def to_json(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "seats": list(self.seats),
            "places": list(self.places),
            "totals": list(self.totals),
            "record": self.record,
            "luck": self.luck.to_json(),
            "luck_cpu": self.luck_cpu,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PoolGame:
        return cls(
            data["deal"],
            tuple(data["seats"]),
            tuple(data["places"]),
            tuple(data["totals"]),
            data["record"],
            GameLuck.from_json(data["luck"]),
            data["luck_cpu"],
        )

    def with_luck(self) -> PoolGame:
        """The game with its luck terms computed now (and their CPU time)."""
        known = {s: "random" for s, b in enumerate(self.seats) if kind_of(b) == "random"}
        started = time.process_time()
        luck = game_luck(GameRecord.read(self.record), known=known)
        return dataclasses.replace(self, luck=luck, luck_cpu=time.process_time() - started)


def places_of(totals: Sequence[int]) -> tuple[int, ...]:
    return tuple(1 + sum(1 for o in totals if o < t) for t in totals)


def play_pool(field: str, deals: int, target: int, seed: str) -> tuple[list[PoolGame], float]:
    """Every deal in all its rotations; returns the games and the CPU seconds the bots took."""
    kinds = FIELDS[field]
    n = len(kinds)
    bots = [f"{kind}-{i}" for i, kind in enumerate(kinds)]
    rules = Rules(players=n, target_score=target)
    games = []
    play_cpu = 0.0
    for d in range(deals):
        deal_seed = derive_seed(seed, field, "deal", d)
        order = bots[:]
        random.Random(deal_seed).shuffle(order)
        for r in range(n):
            seats = tuple(order[(s - r) % n] for s in range(n))
            started = time.process_time()
            players = [player(b.rsplit("-", 1)[0], f"{deal_seed}/{r}/{s}") for s, b in enumerate(seats)]
            state = play_game(rules, deal_seed, players)
            play_cpu += time.process_time() - started
            record = GameRecord.from_json(state_to_record(state, seed=deal_seed, bots=list(seats))).to_text()
            totals = tuple(state.totals)
            game = PoolGame(d, seats, places_of(totals), totals, record, GameLuck(n, ()), 0.0)
            games.append(game.with_luck())
        print(f"  {field}: deal {d + 1}/{deals}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return games, play_cpu


@dataclass(frozen=True, slots=True)
class Truth:
    """Per bot, the pool's own figures: what every tournament drawn from it estimates."""

    mean_place: dict[str, float]
    points_per_hand: dict[str, float]
    strength: dict[str, float]  # Plackett-Luce, every pool game


def truth_of(pool: Sequence[PoolGame]) -> Truth:
    places: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    points: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    clusters: dict[int, list[list[tuple[str, int]]]] = defaultdict(list)
    for g in pool:
        hands = len(g.luck.hands)
        for s, bot in enumerate(g.seats):
            places[bot][0] += g.places[s]
            places[bot][1] += 1
            points[bot][0] += g.luck.points(s)
            points[bot][1] += hands
        clusters[g.deal].append(list(zip(g.seats, g.places, strict=True)))
    grouped = [clusters[d] for d in sorted(clusters)]
    return Truth(
        {b: t / c for b, (t, c) in places.items()},
        {b: t / c for b, (t, c) in points.items()},
        bootstrap_plackett_luce(grouped, 0).strength,
    )


@dataclass
class Tally:
    """Coverage and widths of one kind of interval over the trials."""

    covered: int = 0
    total: int = 0
    width: float = 0.0

    def add(self, interval: Interval | None, truth: float) -> None:
        if interval is None:
            return
        self.total += 1
        self.covered += interval.low <= truth <= interval.high
        self.width += interval.high - interval.low

    def to_json(self) -> dict[str, Any]:
        return {
            "coverage": round(self.covered / self.total, 4) if self.total else None,
            "mean_width": round(self.width / self.total, 4) if self.total else None,
            "intervals": self.total,
        }


@dataclass
class Verdicts:
    """The separation rule's verdicts on pairs of bots of kinds next to each other in strength
    (the stronger first) and on pairs of bots of one kind."""

    separated: int = 0
    wrong: int = 0
    pairs: int = 0
    equal_separated: int = 0
    equal_pairs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "neighbours": self.pairs,
            "separated": self.separated,
            "separated_share": round(self.separated / self.pairs, 4) if self.pairs else None,
            "wrong_way": self.wrong,
            "equal_pairs": self.equal_pairs,
            "equal_separated": self.equal_separated,
        }


def draw(
    pool_by_deal: dict[int, list[PoolGame]], deals: int, mode: str, rng: random.Random
) -> list[LuckGame]:
    """A tournament of ``deals`` deals drawn with replacement; one random rotation of each
    (``single``) or all (``duplicate``). A game's cluster is ``(draw, pool deal)``: the draw
    is the tournament's deal, the pool deal says which draws are copies of one deal."""
    keys = sorted(pool_by_deal)
    games = []
    for index in range(deals):
        deal = rng.choice(keys)
        rotations = pool_by_deal[deal]
        chosen = rotations if mode == "duplicate" else [rng.choice(rotations)]
        games += [LuckGame((index, deal), g.seats, g.places, g.luck) for g in chosen]
    return games


@dataclass
class _Sums:
    places: float = 0.0
    fixed_places: float = 0.0
    points: float = 0.0
    fixed_points: float = 0.0
    seats: int = 0
    hands: int = 0


def trial(
    games: Sequence[LuckGame],
    truth: Truth,
    tallies: dict[str, Tally],
    verdicts: dict[str, Verdicts],
    pairs: Sequence[tuple[str, str, bool]],
    seed: str,
    samples: int,
) -> None:
    """One tournament: every bot's intervals raw and corrected against the truth, and (with
    ``samples``) the strength's and the separation rule's verdicts.

    The coefficients are cross-fitted leaving out every copy of a game's pool deal, not only
    its draw: a copy elsewhere in the tournament would fit the coefficient to the very terms it
    corrects (real deals are independent and never repeat).
    """
    by_pool_deal = [dataclasses.replace(g, cluster=g.cluster[1]) for g in games]  # type: ignore[index]
    corrected = correct(by_pool_deal)
    sums: dict[str, dict[Any, _Sums]] = defaultdict(lambda: defaultdict(_Sums))
    placed: dict[Any, list[list[tuple[str, int]]]] = defaultdict(list)
    scored: dict[Any, list[list[tuple[str, float, float]]]] = defaultdict(list)
    for game, seats in zip(games, corrected, strict=True):
        for s, bot in enumerate(game.seats):
            entry = sums[bot][game.cluster]
            entry.places += game.places[s]
            entry.fixed_places += seats[s].place
            entry.points += game.luck.points(s)
            entry.fixed_points += seats[s].points
            entry.seats += 1
            entry.hands += len(game.luck.hands)
        placed[game.cluster].append(list(zip(game.seats, game.places, strict=True)))
        mid = midranks(game.places)
        scored[game.cluster].append(
            [(b, m, c.midrank) for b, m, c in zip(game.seats, mid, seats, strict=True)]
        )
    for bot, by_deal in sums.items():
        units = list(by_deal.values())
        place, points = truth.mean_place[bot], truth.points_per_hand[bot]
        tallies["place_raw"].add(cluster_mean([(u.places, u.seats) for u in units]).interval, place)
        tallies["place_corrected"].add(
            cluster_mean([(u.fixed_places, u.seats) for u in units]).interval, place
        )
        tallies["points_raw"].add(cluster_mean([(u.points, u.hands) for u in units]).interval, points)
        tallies["points_corrected"].add(
            cluster_mean([(u.fixed_points, u.hands) for u in units]).interval, points
        )
    if not samples:
        return
    order = sorted(placed)
    fits = {
        "raw": bootstrap_plackett_luce([placed[c] for c in order], samples, seed),
        "corrected": bootstrap_plackett_luce(
            [placed[c] for c in order], samples, seed, corrections=[scored[c] for c in order]
        ),
    }
    for name, fit in fits.items():
        for bot, ci in fit.interval.items():
            tallies[f"strength_{name}"].add(ci, truth.strength[bot])
        tally = verdicts[name]
        for a, b, equal in pairs:
            ci = strength_difference(fit, a, b)
            if ci is None:
                continue
            apart = ci.low > 0 or ci.high < 0
            if equal:
                tally.equal_pairs += 1
                tally.equal_separated += apart
            else:
                tally.pairs += 1
                tally.separated += apart
                tally.wrong += ci.high < 0


def kind_of(bot: str) -> str:
    return bot.rsplit("-", 1)[0]


def neighbour_pairs(truth: Truth) -> list[tuple[str, str, bool]]:
    """Pairs of bots of one kind (equal) and of kinds next to each other in strength, the
    stronger first."""
    by_kind: dict[str, list[str]] = defaultdict(list)
    for bot in sorted(truth.strength):
        by_kind[kind_of(bot)].append(bot)
    level = {k: statistics.fmean(truth.strength[b] for b in bots) for k, bots in by_kind.items()}
    kinds = sorted(by_kind, key=lambda k: -level[k])
    pairs = [(a, b, True) for k in kinds for i, a in enumerate(by_kind[k]) for b in by_kind[k][i + 1 :]]
    for upper, lower in pairwise(kinds):
        pairs += [(a, b, False) for a in by_kind[upper] for b in by_kind[lower]]
    return pairs


def bias_check(pool: Sequence[PoolGame]) -> dict[str, float]:
    """The whole pool as one duplicate tournament: each bot's corrected mean place and points
    per hand minus the raw ones, in standard errors of that difference (over deals): an
    unbiased correction leaves them within a few."""
    games = [LuckGame(g.deal, g.seats, g.places, g.luck) for g in pool]
    diffs: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0.0, 0.0]))
    for game, seats in zip(games, correct(games), strict=True):
        for s, bot in enumerate(game.seats):
            row = diffs[bot][int(game.cluster)]  # type: ignore[call-overload]
            row[0] += seats[s].place - game.places[s]
            row[1] += 1
            row[2] += seats[s].points - game.luck.points(s)
            row[3] += len(game.luck.hands)
    worst = {"place": 0.0, "points": 0.0}
    for by_deal in diffs.values():
        for name, (total, count) in (("place", (0, 1)), ("points", (2, 3))):
            estimate = cluster_mean([(r[total], r[count]) for r in by_deal.values()])
            if estimate.mean is not None and estimate.standard_error:
                worst[name] = max(worst[name], abs(estimate.mean) / estimate.standard_error)
    return {f"max_abs_z_{name}": round(z, 2) for name, z in worst.items()}


def load_pool(field: str, args: argparse.Namespace) -> tuple[list[PoolGame], float]:
    """The field's pool: played now, or read from ``--pool-dir`` (its luck terms computed again
    with ``--recompute-luck``)."""
    name = f"{field}-{args.pool_deals}-{args.target}-{args.seed}.json.gz"
    cache = Path(args.pool_dir) / name if args.pool_dir else None
    if cache is not None and cache.exists():
        data = json.loads(gzip.decompress(cache.read_bytes()))
        pool = [PoolGame.from_json(g) for g in data["games"]]
        if args.recompute_luck:
            pool = [g.with_luck() for g in pool]
        return pool, data["play_cpu"]
    pool, play_cpu = play_pool(field, args.pool_deals, args.target, args.seed)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        data = {"games": [g.to_json() for g in pool], "play_cpu": play_cpu}
        cache.write_bytes(gzip.compress(json.dumps(data).encode()))
    return pool, play_cpu


def _ratio(row: dict[str, Any], what: str) -> None:
    raw, fixed = row[f"{what}_raw"]["mean_width"], row[f"{what}_corrected"]["mean_width"]
    if raw and fixed:
        row[f"{what}_width_ratio"] = round(fixed / raw, 4)
        row[f"{what}_deals_factor"] = round((fixed / raw) ** 2, 4)


def centred(pool: Sequence[PoolGame]) -> list[PoolGame]:
    """The pool with every bot's deal and action terms shifted to mean zero over its games.

    The terms have expectation zero over real deals, but their mean over a finite pool is not
    zero; tournaments drawn from the pool would then meet a correction that is biased in the
    pool's world (by the coefficient times that mean) though never in the real one. Centring
    gives the drawn tournaments what real ones have: terms of mean zero for every bot.
    """
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for g in pool:
        for s, bot in enumerate(g.seats):
            sums[bot][0] += g.luck.deal_sum(s)
            sums[bot][1] += g.luck.action_sum(s)
            sums[bot][2] += 1
    mean = {bot: (d / n, a / n) for bot, (d, a, n) in sums.items()}
    out = []
    for g in pool:
        if not g.luck.hands:
            out.append(g)
            continue
        first = g.luck.hands[0]
        shifted = dataclasses.replace(
            first,
            deal=tuple(x - mean[b][0] for x, b in zip(first.deal, g.seats, strict=True)),
            action=tuple(x - mean[b][1] for x, b in zip(first.action, g.seats, strict=True)),
        )
        luck = dataclasses.replace(g.luck, hands=(shifted, *g.luck.hands[1:]))
        out.append(dataclasses.replace(g, luck=luck))
    return out


def measure_field(field: str, args: argparse.Namespace) -> dict[str, Any]:
    pool, play_cpu = load_pool(field, args)
    truth = truth_of(pool)
    by_deal: dict[int, list[PoolGame]] = defaultdict(list)
    for g in centred(pool):
        by_deal[g.deal].append(g)
    pairs = neighbour_pairs(truth)
    n = len(FIELDS[field])
    cpu = sorted(g.luck_cpu for g in pool)
    rows = []
    for mode in args.modes:
        for deals in args.deals:
            rng = random.Random(f"{args.seed}/{field}/{mode}/{deals}")
            tallies: dict[str, Tally] = defaultdict(Tally)
            verdicts: dict[str, Verdicts] = defaultdict(Verdicts)
            started = time.process_time()
            for t in range(args.trials):
                games = draw(by_deal, deals, mode, rng)
                samples = args.samples if t < args.strength_trials else 0
                trial(games, truth, tallies, verdicts, pairs, f"{field}/{mode}/{deals}/{t}", samples)
            row: dict[str, Any] = {
                "mode": mode,
                "deals": deals,
                "games": deals * (n if mode == "duplicate" else 1),
                **{name: tally.to_json() for name, tally in sorted(tallies.items())},
                "separation": {name: v.to_json() for name, v in sorted(verdicts.items())},
                "cpu_s": round(time.process_time() - started, 1),
            }
            for what in ("place", "points", "strength"):
                if f"{what}_raw" in row:
                    _ratio(row, what)
            rows.append(row)
            print(f"  {field} {mode} {deals} deals done", file=sys.stderr)
    return {
        "field": field,
        "table_size": n,
        "bots": list(FIELDS[field]),
        "known": sorted({kind_of(b) for g in pool[:1] for b in g.seats if kind_of(b) == "random"}),
        "pool_deals": args.pool_deals,
        "pool_games": len(pool),
        "target_score": args.target,
        "hands_per_game": round(statistics.fmean(len(g.luck.hands) for g in pool), 2),
        "bot_cpu_s_per_game": round(play_cpu / len(pool), 4),
        "luck_cpu_s_per_game": {
            "mean": round(statistics.fmean(cpu), 4),
            "p95": round(cpu[int(0.95 * (len(cpu) - 1))], 4),
            "max": round(cpu[-1], 4),
        },
        "bias_check": bias_check(pool),
        "truth": {
            "mean_place": {b: round(v, 4) for b, v in sorted(truth.mean_place.items())},
            "points_per_hand": {b: round(v, 4) for b, v in sorted(truth.points_per_hand.items())},
            "strength": {b: round(v, 4) for b, v in sorted(truth.strength.items())},
        },
        "rows": rows,
    }


def print_figures(figures: dict[str, Any]) -> None:
    for f in figures["fields"]:
        cost = f["luck_cpu_s_per_game"]
        bias = f["bias_check"]
        print(
            f"{f['field']} ({f['table_size']} seats: {', '.join(f['bots'])}): pool of {f['pool_deals']} "
            f"deals in every rotation ({f['pool_games']} games, {f['hands_per_game']} hands a game)"
        )
        print(
            f"  the correction costs {cost['mean'] * 1000:.0f} ms of CPU a game "
            f"(p95 {cost['p95'] * 1000:.0f} ms; "
            f"the bots took {f['bot_cpu_s_per_game'] * 1000:.0f} ms in-process); "
            f"bias check, corrected minus raw over the pool: |z| up to {bias['max_abs_z_place']} (place), "
            f"{bias['max_abs_z_points']} (points)"
        )
        print(
            "  mode       deals games | mean place: cover raw/corr, width ratio | points/hand: cover "
            "raw/corr, width ratio | strength: cover raw/corr, width ratio | neighbours separated raw/corr"
            " (equal pairs)"
        )
        for r in f["rows"]:
            line = (
                f"  {r['mode']:10s} {r['deals']:5d} {r['games']:5d} | "
                f"{r['place_raw']['coverage']:.3f}/{r['place_corrected']['coverage']:.3f} "
                f"x{r.get('place_width_ratio', float('nan')):.2f} | "
                f"{r['points_raw']['coverage']:.3f}/{r['points_corrected']['coverage']:.3f} "
                f"x{r.get('points_width_ratio', float('nan')):.2f}"
            )
            if "strength_raw" in r:
                s = r["separation"]
                line += (
                    f" | {r['strength_raw']['coverage']:.3f}/{r['strength_corrected']['coverage']:.3f} "
                    f"x{r.get('strength_width_ratio', float('nan')):.2f} | "
                    f"{s['raw']['separated_share']:.0%}/{s['corrected']['separated_share']:.0%} "
                    f"({s['raw']['equal_separated']}/{s['corrected']['equal_separated']} of "
                    f"{s['raw']['equal_pairs']})"
                )
            print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", nargs="+", default=DEFAULT_FIELDS, choices=list(FIELDS))
    parser.add_argument("--pool-deals", type=int, default=16, help="deals in each field's pool")
    parser.add_argument("--target", type=int, default=100, help="target score of every game")
    parser.add_argument("--trials", type=int, default=100, help="tournaments drawn per mode and deal count")
    parser.add_argument(
        "--strength-trials", type=int, default=10, help="of which the strength is bootstrapped"
    )
    parser.add_argument("--samples", type=int, default=SAMPLES, help="bootstrap resamples of the strength")
    parser.add_argument("--deals", type=int, nargs="+", default=[12, 24])
    parser.add_argument(
        "--modes", nargs="+", default=["single", "duplicate"], choices=["single", "duplicate"]
    )
    parser.add_argument("--seed", default="luck-bench")
    parser.add_argument("--pool-dir", default="", help="keep each field's pool here and reuse it")
    parser.add_argument(
        "--recompute-luck", action="store_true", help="compute a kept pool's luck terms again (not its games)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = {
        "fields": [measure_field(f, args) for f in args.fields],
        "trials": args.trials,
        "strength_trials": args.strength_trials,
        "bootstrap_samples": args.samples,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print_figures(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
