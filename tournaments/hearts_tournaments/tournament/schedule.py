"""The round-robin schedule: who sits where, on which deal, in which rotation.

A tournament plays ``deals`` distinct deals. Each deal gets one *seating*: the bots at its table
and their order around it. With ``duplicate`` the deal is then played once per rotation of that
seating, so that every bot at the table holds every seat's cards of every hand and most card
luck cancels out; without it the deal is played once, as seated.

How a deal's games seat its bots (:class:`SeatingMode`, with ``duplicate``):

* ``rotate``: game ``r`` moves the bot of position ``p`` to seat ``p + r``. Every bot keeps the
  same neighbours in all the deal's games.
* ``balanced`` (the default): the layouts of :data:`hearts_tournaments.tournament.layouts.SQUARES`
  where a solver found better ones (9 seats: every table-mate a left neighbour once or twice),
  else those of ``permute``.
* ``permute``: game ``r`` seats position ``p`` where the label
  ``LABELS[n][p] - r`` sits, a Latin square (every bot still holds every seat once) whose rows
  change the order around the table: over a deal's games a bot has every other bot of its table
  as its left neighbour once or twice at even sizes (at odd sizes all but one label difference:
  see :data:`LABELS`) instead of one of them ``n`` times.

Choosing the seatings (pure functions of the bots, the sizes and the seed):

* **More bots than seats.** Which bots sit at each deal's table is a block design: every bot at
  equally many deals (within one) and every pair of bots together on equally many deals
  (within one) where that is possible. :func:`pair_feasibility` decides what it can from
  necessary conditions (the pair-count sum of each bot, a graph of the pairs that meet once
  more than the rest, a Fisher-type count of the tables' intersections, Fisher's inequality,
  Bruck-Ryser-Chowla, the missing planes) and, for
  few deals, an exhaustive search over which deals each bot sits at, which either builds the
  design or proves there is none. Otherwise the design starts from a construction where one
  is found (base blocks whose differences are balanced, developed modulo the bot count, or
  modulo one less with a fixed bot; quadratic residues where they form a difference set; one
  table left out when ``deals`` is one short of a multiple), else from a greedy fill, and a
  local search swaps bots between tables (keeping every bot's deal count) with incremental
  scoring of the pair counts that leave the target band. When within one is not reached, a
  second search widens the band by one: the spread is then 2, the least possible when within
  one is impossible.
* **Fewer bots than seats (or as many).** Every bot sits at every table; the ``N mod B`` extra
  seats go to the bots in turn, deal after deal, so seats per bot stay within one.
* **Seat positions.** With ``duplicate`` every bot sits in every position equally often by
  construction. Without it, an equitable edge colouring of the tables-bots multigraph
  (:func:`_balance_positions`) gives every bot every position equally often (within one).
* **Neighbours.** A last local search orders each table so that who sits one and two seats to
  whose left is as even as the tables allow, counted over the games the deals are played in,
  and copies of one bot (fewer bots than seats) do not sit side by side when they need not.
  Without ``duplicate`` its swaps keep every bot's seat positions within one.

Every random choice comes from ``derive_seed(seed, "schedule")``, and every search has a fixed
budget of moves (never a clock): the same bots, table size, deal count, seed and switches give
the same schedule, the same deals (deal ``d`` is seeded with ``derive_seed(seed, "deal", d)``)
and the same bot seeds.
"""

from __future__ import annotations

import enum
import functools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb, isqrt
from typing import Any

import numpy as np
import numpy.typing as npt

from hearts_core.deal import derive_seed
from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.tournament.layouts import NOTES, SQUARES

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: A callback for progress lines (``progress("pairs: ...")``); the schedule itself never prints.
Progress = Callable[[str], None]

#: Candidate tables scored per local-search step (all at once, with numpy).
CANDIDATE_TABLES = 16
#: Pair search: most steps, and most steps without a better cost (per table, within bounds).
PAIR_STEPS, PAIR_PATIENCE = 60_000, (6_000, 100, 8_000)
#: Further within-one searches (from a greedy fill, then other base blocks, in turn) with at
#: most SUGGEST_SEARCH_BOTS bots (not in suggest_deals).
PAIR_RESTARTS = 4
#: The last within-one search for few bots (not in suggest_deals): a tabu search scoring every
#: swap; most steps, most steps times tables^2 times bots^2, least steps worth running, and
#: how long a bot may not return to a table it left.
TABU_STEPS, TABU_WORK, TABU_LEAST, TABU_TENURE = 8_000, 2_500_000_000, 500, 8
#: The within-one search's most steps with more than SUGGEST_SEARCH_BOTS bots.
PAIR_STEPS_MANY_BOTS = 15_000
#: The widened (spread 2) search, run when within one is impossible or not found.
WIDE_STEPS, WIDE_PATIENCE = 120_000, (2_000, 100, 20_000)
#: A search step costs about as much as there are tables and bots: each search takes at most
#: this many steps times (tables + bots), so that the largest schedule the config allows
#: (config.MAX_BOTS bots, 10,000 deals, 11 seats) is designed well within a minute.
SEARCH_WORK = 160_000_000
#: Annealing temperatures at the start and the end of a search (costs move by whole units):
#: the within-one search starts hotter than the widened one, whose band has room to spare.
HOT, WIDE_HOT, COLD = 0.6, 0.3, 0.05
#: Steps of the cyclic base-block search, per base block and at most; its temperatures at the
#: start and the end, and how many steps a residue removed from a block stays out of it.
BASE_BLOCK_MOVES, BASE_BLOCK_MOST, BASE_BLOCK_TABU = 2_000, 12_000, 3
BASE_BLOCK_HOT, BASE_BLOCK_COLD = 4.0, 0.5
#: Attempts of the base-block search when residues times block sizes are at most BASE_BLOCK_SMALL.
BASE_BLOCK_RESTARTS, BASE_BLOCK_SMALL = 8, 1_000
#: Moves of the search that evens seat positions of bots filling several seats: at least,
#: and per seat of every table.
SPREAD_MOVES, SPREAD_PER_SEAT = 20_000, 4
#: Neighbour search: swaps tried per seat of every table, at least and at most.
ARRANGE_MOVES, ARRANGE_LEAST, ARRANGE_MOST = 12, 20_000, 300_000
#: Tables a paired swap intersects or probes when looking for its partner table.
PARTNER_SCAN = 64
#: Starting temperature of the neighbour search (it cools to COLD).
ARRANGE_HOT = 1.0
#: Weights of the neighbour search: squared counts of distinct bots one and two seats apart,
#: and, per game, a bot's copy right next to it, which costs more than any evening out gains.
LEFT_WEIGHT, SECOND_WEIGHT, SELF_WEIGHT = 3, 1, 10**9
#: The exhaustive search for few deals: most sets of deals a bot may sit at, bots, and nodes.
SMALL_TYPES, SMALL_BOTS, SMALL_NODES = 300, 300, 50_000
#: Bots up to which :func:`suggest_deals` tries the local search (beyond, constructions only).
SUGGEST_SEARCH_BOTS = 30
#: Deal counts :func:`suggest_deals` searches at most before giving up.
SUGGEST_TRIES = 4

#: Seat labels of the ``permute`` seating per table size: game ``r`` puts at seat ``s`` the
#: position whose label is ``LABELS[n][s] - r`` (mod n). Chosen (by exhaustive search up to 9
#: seats, sampling above) so that the label differences one and two seats apart cover every
#: non-zero difference as evenly as possible. At 6, 8 and 10 seats every bot then has every other
#: bot of its table as its left neighbour once or twice over a deal's games (the mean is
#: n / (n - 1), so that is within one of it); two seats left misses n or 2n ordered pairs. At 7, 9
#: and 11 no labels can (the n differences would sum to 0 mod n, as the non-zero residues
#: already do, so the extra one would be 0): one difference, n ordered pairs of the table, is
#: never left neighbours in the deal, and every other pair once or twice. No Latin square at all
#: does better at 3, 5 or 7 seats under that bound: a SAT solver proves that some pair is never
#: left neighbours at all three, and that at 7 with every pair at most twice one and two seats
#: left at least 7 pairs are missing (tests/test_seating_layouts.py; 4 missing needs a pair
#: thrice two seats left). At 9 it found a square that does (with a symmetry of order 3: the
#: ``balanced`` seating's, :data:`hearts_tournaments.tournament.layouts.SQUARES`); at 11 it found no answer
#: either way. Across deals the
#: neighbour search (:func:`_arrange`) spreads those pairs over different bots.
LABELS: dict[int, tuple[int, ...]] = {
    6: (0, 1, 4, 3, 5, 2),
    7: (0, 1, 2, 4, 6, 5, 3),
    8: (0, 1, 3, 7, 4, 2, 6, 5),
    9: (0, 1, 2, 5, 7, 6, 4, 8, 3),
    10: (0, 1, 4, 6, 2, 9, 3, 8, 7, 5),
    11: (0, 8, 1, 7, 10, 9, 5, 3, 2, 4, 6),
}


class SeatingMode(enum.StrEnum):
    """How the games of one deal seat its bots (with duplicate deals)."""

    ROTATE = "rotate"
    PERMUTE = "permute"
    BALANCED = "balanced"


#: The seating of a config that does not name one (``rotate``, then ``permute`` before: a
#: tournament stored then keeps its own, see :func:`hearts_tournaments.tournament.folder.open_tournament`).
DEFAULT_SEATING = SeatingMode.BALANCED


@dataclass(frozen=True, slots=True)
class Seating:
    """The table of one deal.

    Attributes:
        deal: The deal's number, from 0.
        seed: The deal seed: the referee deals hand ``k`` from ``(seed, k)``.
        order: The bot at each seat in the deal's first game.
    """

    deal: int
    seed: str
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PairFeasibility:
    """What necessary conditions say about balancing pairs within one.

    The target: every bot at ``a`` or ``a + 1`` deals and every pair of bots together on
    :attr:`low` or :attr:`high` deals (``high == low`` when the pair total divides evenly).

    Attributes:
        bots: Bots in the tournament.
        table_size: Seats per table.
        deals: Deals.
        low: The fewest deals a pair shares in a balanced schedule.
        high: The most.
        impossible: Why within one is provably impossible, or None when every necessary
            condition checked holds (which proves nothing: only a schedule found does).
    """

    bots: int
    table_size: int
    deals: int
    low: int
    high: int
    impossible: str | None

    def line(self) -> str:
        """One sentence for people."""
        where = f"{self.bots} bots at tables of {self.table_size} over {self.deals} deals"
        if self.impossible is not None:
            return f"{where}: pairs within one is provably impossible ({self.impossible})"
        span = f"{self.low}" if self.low == self.high else f"{self.low}..{self.high}"
        return f"{where}: pairs within one means every pair together on {span} deals"


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly a schedule spreads bots, pairs, seats and neighbours.

    Tables and pairs are counted in deals (with ``duplicate`` a deal is played in every
    rotation, so every count in games would be a multiple of the table size); seat positions
    and neighbours are counted in games, the way they are played.

    Attributes:
        games: Games in the schedule.
        deals: Deals in the schedule.
        deals_per_bot: Deals each bot sits at.
        table_seats_per_bot: Seats each bot holds, summed over deals (more than its deals
            when it fills several seats of a table).
        pair_min: The fewest deals any two bots share a table.
        pair_max: The most deals any two bots share a table.
        seat_counts: Per bot, its games at each seat position.
        left_min: The fewest games in which a bot has a given other bot as its left
            neighbour (the seat after it, the one it passes to in the first hand).
        left_max: The most.
        second_min: The same for the bot two seats to the left.
        second_max: The most.
        copies_adjacent: Games times seats where a bot sits right of its own copy.
        seating: How a deal's games seat its bots.
        pairs_impossible: Why pairs within one is provably impossible (see
            :func:`pair_feasibility`), or None.
        spread_two_impossible: Whether an exhaustive search proved that pairs cannot be
            within two either (few deals only).
        neighbour_mean: The mean of the neighbour counts over ordered pairs of bots (the same
            one and two seats left), or 0 with fewer bots than seats (copies count too).
        neighbours_impossible: Why neighbour counts within one of the mean are provably
            impossible (see :func:`neighbour_feasibility`), or None.
        per_deal: What a deal's games give on their own, and why no layouts do better (see
            :func:`per_deal_neighbours`), or None without duplicate.
    """

    games: int
    deals: int
    deals_per_bot: dict[str, int]
    table_seats_per_bot: dict[str, int]
    pair_min: int
    pair_max: int
    seat_counts: dict[str, tuple[int, ...]]
    left_min: int
    left_max: int
    second_min: int = 0
    second_max: int = 0
    copies_adjacent: int = 0
    seating: SeatingMode = SeatingMode.ROTATE
    pairs_impossible: str | None = None
    spread_two_impossible: bool = False
    neighbour_mean: float = 0.0
    neighbours_impossible: str | None = None
    per_deal: str | None = None

    @property
    def neighbour_band(self) -> tuple[int, int]:
        """Neighbour counts within one of the mean: the mean rounded down and up."""
        return math.floor(self.neighbour_mean), math.ceil(self.neighbour_mean)

    @property
    def neighbours_within_one(self) -> bool:
        """Whether both neighbour counts (one and two seats left) are within one of the mean."""
        low, high = self.neighbour_band
        return self.neighbour_mean > 0 and all(
            low <= lo and hi <= high
            for lo, hi in ((self.left_min, self.left_max), (self.second_min, self.second_max))
        )

    @property
    def seat_spread(self) -> int:
        """The largest difference between a bot's most and least used seat positions."""
        return max((max(c) - min(c) for c in self.seat_counts.values()), default=0)

    @property
    def pair_spread(self) -> int:
        """How many more deals the closest pair of bots shares than the most distant."""
        return self.pair_max - self.pair_min

    @property
    def within_one(self) -> bool:
        """Whether deals, seats, pairs and seat positions per bot are all balanced within one."""
        return (
            _spread(self.deals_per_bot.values()) <= 1
            and _spread(self.table_seats_per_bot.values()) <= 1
            and self.pair_spread <= 1
            and self.seat_spread <= 1
        )

    def to_json(self) -> dict[str, Any]:
        """The balance report as stored and published."""
        return {
            "games": self.games,
            "deals": self.deals,
            "deals_per_bot": self.deals_per_bot,
            "table_seats_per_bot": self.table_seats_per_bot,
            "pair_deals": {"min": self.pair_min, "max": self.pair_max},
            "pairs_impossible": self.pairs_impossible,
            "spread_two_impossible": self.spread_two_impossible,
            "seat_counts": {bot: list(c) for bot, c in self.seat_counts.items()},
            "seat_spread": self.seat_spread,
            "seating": self.seating.value,
            "left_neighbour": {"min": self.left_min, "max": self.left_max},
            "second_left_neighbour": {"min": self.second_min, "max": self.second_max},
            "copies_adjacent": self.copies_adjacent,
            "within_one": self.within_one,
            "neighbours": {
                "mean": self.neighbour_mean,
                "within_one": self.neighbours_within_one,
                "impossible": self.neighbours_impossible,
                "per_deal": self.per_deal,
            },
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Balance:
        """The balance report stored by :meth:`to_json` (older reports lack the newer keys)."""
        second = data.get("second_left_neighbour", {"min": 0, "max": 0})
        return Balance(
            games=data["games"],
            deals=data["deals"],
            deals_per_bot=dict(data["deals_per_bot"]),
            table_seats_per_bot=dict(data["table_seats_per_bot"]),
            pair_min=data["pair_deals"]["min"],
            pair_max=data["pair_deals"]["max"],
            seat_counts={bot: tuple(c) for bot, c in data["seat_counts"].items()},
            left_min=data["left_neighbour"]["min"],
            left_max=data["left_neighbour"]["max"],
            second_min=second["min"],
            second_max=second["max"],
            copies_adjacent=data.get("copies_adjacent", 0),
            seating=SeatingMode(data.get("seating", SeatingMode.ROTATE.value)),
            pairs_impossible=data.get("pairs_impossible"),
            spread_two_impossible=data.get("spread_two_impossible", False),
            neighbour_mean=data.get("neighbours", {}).get("mean", 0.0),
            neighbours_impossible=data.get("neighbours", {}).get("impossible"),
            per_deal=data.get("neighbours", {}).get("per_deal"),
        )

    def lines(self) -> list[str]:
        """The balance report as a few readable lines."""
        deals = self.deals_per_bot.values()
        seats = self.table_seats_per_bot.values()
        verdict = "balanced within one" if self.within_one else "NOT balanced within one"
        if self.pair_spread <= 1:
            pairs = "within one"
        elif self.pairs_impossible is not None:
            if self.pair_spread == 2:
                least = "the least possible"
            elif self.spread_two_impossible:
                least = "the least possible (spread 2 is impossible too: exhaustive search)"
            else:
                least = "spread 2 not found"
            spread = f"spread {self.pair_spread}, {least}"
            pairs = f"within one is provably impossible: {self.pairs_impossible}; {spread}"
        else:
            pairs = "within one was not found, nor proven impossible"
        copies = f"; a bot's copies side by side {self.copies_adjacent} times" if self.copies_adjacent else ""
        counts = (
            f"seating {self.seating.value}: a given bot is its left neighbour in "
            f"{self.left_min}..{self.left_max} games, two seats left in "
            f"{self.second_min}..{self.second_max}{copies}"
        )
        if self.neighbour_mean <= 0:
            judged = "(fewer bots than seats: these count a bot's copies, and no balance is claimed)"
        else:
            low, high = self.neighbour_band
            band = f"{low}" if low == high else f"{low}..{high}"
            within = f"within one of the mean {self.neighbour_mean:.2f} means {band}"
            if self.neighbours_within_one:
                judged = f"({within}): neighbours within one"
            elif self.neighbours_impossible is not None:
                judged = (
                    f"({within}): neighbours within one is provably impossible: {self.neighbours_impossible}"
                )
            else:
                judged = f"({within}): neighbours within one was not found, nor proven impossible"
        per_deal = [f"within a deal: {self.per_deal}"] if self.per_deal else []
        return [
            f"{self.games} games on {self.deals} deals; each bot sits at {min(deals)}..{max(deals)} "
            f"deals' tables, holding {min(seats)}..{max(seats)} seats in all",
            f"every pair of bots shares a table on {self.pair_min}..{self.pair_max} deals ({pairs})",
            f"a bot's games per seat position differ by at most {self.seat_spread}: deals, seats, pairs "
            f"and seat positions {verdict}",
            *per_deal,
            f"{counts} {judged}",
        ]


@dataclass(frozen=True, slots=True)
class Schedule:
    """Every game of a tournament, in the order they are started.

    Attributes:
        bots: The bots, in config order.
        table_size: Seats per table.
        duplicate: Whether each deal is played in every rotation.
        seed: The tournament seed.
        seatings: One per deal.
        games: Every game.
        seating: How a deal's games seat its bots (with duplicate).
    """

    bots: tuple[str, ...]
    table_size: int
    duplicate: bool
    seed: str
    seatings: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...]
    seating: SeatingMode = SeatingMode.ROTATE

    def balance(self) -> Balance:
        """Counts how evenly the schedule spreads bots, pairs, seats and neighbours."""
        return balance_of(self.bots, self.table_size, self.games, self.seatings, self.seating)

    def to_json(self) -> dict[str, Any]:
        """The schedule as stored with the tournament."""
        return {
            "bots": list(self.bots),
            "table_size": self.table_size,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "seating": self.seating.value,
            "seatings": [{"deal": s.deal, "seed": s.seed, "order": list(s.order)} for s in self.seatings],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Schedule:
        """The schedule stored by :meth:`to_json`."""
        seatings = tuple(Seating(s["deal"], s["seed"], tuple(s["order"])) for s in data["seatings"])
        mode = SeatingMode(data.get("seating", SeatingMode.ROTATE.value))
        return _with_games(
            tuple(data["bots"]), data["table_size"], data["duplicate"], data["seed"], seatings, mode
        )


def make_schedule(
    bots: Sequence[str],
    table_size: int,
    deals: int,
    seed: str,
    duplicate: bool = True,
    seating: SeatingMode = DEFAULT_SEATING,
    progress: Progress | None = None,
) -> Schedule:
    """Schedules a round-robin tournament.

    Args:
        bots: Distinct bot names (at least two).
        table_size: Seats per table.
        deals: Distinct deals.
        seed: The tournament seed.
        duplicate: Play each deal in every rotation of its seating.
        seating: How a deal's games seat its bots (only with duplicate).
        progress: Called with a line as each search phase ends.

    Returns:
        The schedule; check :meth:`Schedule.balance` for how balanced it came out.

    Raises:
        ValueError: on fewer than two bots, repeated names or no deals.
    """
    if len(bots) < 2 or len(set(bots)) != len(bots):
        raise ValueError("a schedule needs at least two distinct bots")
    if deals < 1:
        raise ValueError("a schedule needs at least one deal")
    rng = random.Random(derive_seed(seed, "schedule"))
    b, n = len(bots), table_size
    say = progress or (lambda _line: None)
    # What is possible comes first, before any search: exact where a proof exists.
    if b > n:
        say(pair_feasibility(b, n, deals).line())
        say(f"designing the tables of {deals} deals (every search is bounded: seconds, not minutes)")
    else:
        say(f"{b} bots at tables of {n}: every bot at every table, pairs even by construction")
    if b < n:
        # Copies of a bot would sit side by side in some permuted game: keep them apart instead.
        seating = SeatingMode.ROTATE
    tables = _compositions(b, n, deals, rng, say) if b > n else _shares(b, n, deals)
    tables = _arrange(tables, b, n, duplicate, seating, rng)
    say("neighbours: tables ordered")
    seatings = tuple(
        Seating(deal=d, seed=derive_seed(seed, "deal", d), order=tuple(bots[x] for x in table))
        for d, table in enumerate(tables)
    )
    return _with_games(tuple(bots), table_size, duplicate, seed, seatings, seating)


def pair_feasibility(bots: int, table_size: int, deals: int) -> PairFeasibility:
    """Whether every pair of bots can share a table equally often (within one), as far as proven.

    The necessary conditions of :func:`_necessary`, then, for few deals (at most
    :data:`SMALL_TYPES` possible sets of deals per bot), an exhaustive search over which deals
    each bot sits at (:func:`_small_design`, at most :data:`SMALL_NODES` nodes): when it ends
    without a schedule, within one is proven impossible. Cached: it is a pure function.

    Args:
        bots: Bots (more than ``table_size`` for anything to decide).
        table_size: Seats per table.
        deals: Deals.
    """
    return _feasibility(bots, table_size, deals)


@functools.cache
def _feasibility(bots: int, table_size: int, deals: int) -> PairFeasibility:
    found = _necessary(bots, table_size, deals)
    if found.impossible is not None or bots <= table_size:
        return found
    verdict, _ = _small_design(bots, table_size, deals, found.low, found.high)
    if verdict == "impossible":
        why = (
            "no way to choose which deals each bot sits at works: an exhaustive search over "
            "them ends without one"
        )
        return PairFeasibility(bots, table_size, deals, found.low, found.high, why)
    return found


def _necessary(bots: int, table_size: int, deals: int) -> PairFeasibility:
    """What necessary conditions say about pairs within one.

    Every bot sits at ``a`` or ``a + 1`` deals (``deals * table_size`` seats shared out) and
    every pair is together ``q`` or ``q + 1`` times, where ``q`` is the mean rounded down. Then:

    * a bot at ``r`` deals meets ``r * (table_size - 1)`` partners in all, so it has exactly
      ``x = r * (table_size - 1) - q * (bots - 1)`` partners it meets ``q + 1`` times, which must
      lie in ``0 .. bots - 1``;
    * those pairs form a simple graph with these degrees: the degree sequence must be graphical
      (Erdos-Gallai);
    * the tables' intersections with each other (:func:`_intersections_impossible`);
    * when every pair meets exactly ``q >= 1`` times the tables form a 2-design: Fisher's
      inequality (at least as many deals as bots), and when deals equal bots the
      Bruck-Ryser-Chowla condition and the known projective and affine planes (none of order
      6 or 10).
    """
    b, n, t = bots, table_size, deals
    if b <= n:
        return PairFeasibility(b, n, t, t, t, None)
    a, extra = divmod(t * n, b)
    q, rest = divmod(t * comb(n, 2), comb(b, 2))
    high = q + 1 if rest else q

    def verdict(why: str | None) -> PairFeasibility:
        return PairFeasibility(b, n, t, q, high, why)

    degrees = [a * (n - 1) - q * (b - 1)] * (b - extra) + [(a + 1) * (n - 1) - q * (b - 1)] * extra
    for r, x in ((a, degrees[0]), (a + 1, degrees[-1])):
        if x < 0:
            return verdict(
                f"a bot at {r} deals meets {r * (n - 1)} partners in all, fewer than the "
                f"{q * (b - 1)} that meeting each of the {b - 1} others {q} times takes"
            )
        if x > b - 1:
            return verdict(
                f"a bot at {r} deals meets {r * (n - 1)} partners in all, more than the "
                f"{high * (b - 1)} that meeting each of the {b - 1} others {high} times allows"
            )
    if rest == 0 and any(degrees):
        return verdict(f"every pair must meet exactly {q} times, which a bot at {a + 1} deals exceeds")
    if not _graphical(degrees):
        many, few = degrees[-1], degrees[0]
        return verdict(
            f"{extra} bots would each need {many} partners met {q + 1} times and the other "
            f"{b - extra} bots {few}: no graph has these degrees"
        )
    why = _intersections_impossible(b, n, t, a, extra, q, degrees)
    if why is not None:
        return verdict(why)
    if rest == 0 and q >= 1:
        if t < b:
            return verdict(f"every pair meeting exactly {q} times needs at least {b} deals (Fisher)")
        if t == b:
            why = _symmetric_design_missing(b, n, q)
            if why is not None:
                return verdict(why)
        if q == 1 and b == n * n and t == n * (n + 1) and _no_plane(n):
            return verdict(f"no affine plane of order {n} exists")
    return verdict(None)


def _intersections_impossible(
    b: int, n: int, t: int, a: int, extra: int, q: int, degrees: Sequence[int]
) -> str | None:
    """Fisher-type counting: why the tables cannot intersect as pairs within one needs, or None.

    Table ``i`` meets the other ``t - 1`` tables in ``s_ij`` bots, with ``sum_j s_ij =`` the
    sum over its bots of ``deals - 1``, and ``sum_j s_ij (s_ij - 1) =`` the sum over its
    ordered pairs of ``met - 1``, which is ``n (n - 1) (q - 1) + 2 e_i`` with ``e_i`` the
    table's pairs that meet ``q + 1`` times. Whole numbers with a given sum have the least
    ``sum s (s - 1)`` when they are as equal as possible, which bounds every ``e_i`` from
    below (least when the bots at ``a + 1`` deals are spread evenly over the tables: the bound
    is convex in their number); the bounds must fit in ``sum_i e_i = (q + 1) E``, ``E`` the
    pairs that meet ``q + 1`` times. (With every pair meeting equally often this is the
    variance argument behind Fisher's inequality; it also subsumes the rank bound on
    ``N N^T``.)
    """
    if t < 2:
        return None
    heavy_seats = extra * (a + 1)
    others = t - 1

    def least(total: int) -> int:
        u, w = divmod(total, others)
        return (others - w) * u * (u - 1) + w * (u + 1) * u

    share, more = divmod(heavy_seats, t)
    # 2 e_i >= max(0, least(...) - n (n - 1) (q - 1)), convex in the table's heavy bots.
    twice = sum(
        max(0, least(n * (a - 1) + share + (1 if i < more else 0)) - n * (n - 1) * (q - 1)) for i in range(t)
    )
    needed = -(-twice // 2)
    excess_pairs = sum(degrees) // 2
    if needed > (q + 1) * excess_pairs:
        return (
            f"the tables' intersections: each table shares bots with the other {others} deals' "
            f"tables so often that together they need at least {needed} (table, pair) places for "
            f"pairs meeting {q + 1} times, but only {(q + 1) * excess_pairs} exist (a Fisher-type "
            "count)"
        )
    return None


def suggest_deals(
    bots: int, table_size: int, deals: int, seed: str = "1", tries: int = SUGGEST_TRIES
) -> int | None:
    """The smallest deal count above ``deals`` whose schedule has pairs balanced within one.

    Only meaningful with more bots than seats (otherwise every count is balanced). Looks
    within ``3 * bots`` of ``deals``: counts that :func:`pair_feasibility`'s necessary
    conditions rule out are skipped at once; multiples of ``bots`` (where the cyclic
    construction may apply) and counts with few enough deals for the exhaustive search are
    built without a local search; other counts get the local search only with at most
    :data:`SUGGEST_SEARCH_BOTS` bots (above that it does not reach within one in time), at
    most ``tries`` of them. Returns None if none of them balances.
    """
    if bots <= table_size:
        return deals + 1
    searched = 0
    for count in range(deals + 1, deals + 3 * bots + 1):
        if _necessary(bots, table_size, count).impossible is not None:
            continue
        search = bots <= SUGGEST_SEARCH_BOTS
        if not search and count % bots and not _few_types(bots, table_size, count):
            continue
        if search:
            searched += 1
        rng = random.Random(derive_seed(seed, "schedule"))
        tables = _compositions(bots, table_size, count, rng, lambda _line: None, widen=False, search=search)
        if _pair_spread(tables, bots) <= 1:
            return count
        if searched >= tries:
            return None
    return None


def balance_of(
    bots: Sequence[str],
    table_size: int,
    games: Sequence[ScheduledGame],
    seatings: Sequence[Seating],
    seating: SeatingMode = SeatingMode.ROTATE,
) -> Balance:
    """Counts deals, seats, pairs, seat positions and neighbours of a schedule."""
    index = {bot: i for i, bot in enumerate(bots)}
    b, n = len(bots), table_size
    deals_per_bot = dict.fromkeys(bots, 0)
    table_seats = dict.fromkeys(bots, 0)
    met = np.zeros((b, b), dtype=np.int64)
    for s in seatings:
        present = sorted({index[bot] for bot in s.order})
        for bot in set(s.order):
            deals_per_bot[bot] += 1
        for bot in s.order:
            table_seats[bot] += 1
        met[np.ix_(present, present)] += 1
    upper = met[np.triu_indices(b, 1)]
    seat_counts = {bot: [0] * n for bot in bots}
    near = [np.zeros((b, b), dtype=np.int64) for _ in range(2)]
    for game in games:
        row = [index[bot] for bot in game.seats]
        for position, bot in enumerate(game.seats):
            seat_counts[bot][position] += 1
        for k in (1, 2):
            for p in range(n):
                near[k - 1][row[p], row[(p + k) % n]] += 1
    off = ~np.eye(b, dtype=np.bool_)
    b_over_n = b > n
    impossible = pair_feasibility(b, n, len(seatings)).impossible if b_over_n else None
    spread = int(upper.max() - upper.min())
    duplicate = len(games) == len(seatings) * n and n > 1
    mean = len(games) * n / (b * (b - 1)) if b >= n else 0.0
    return Balance(
        games=len(games),
        deals=len(seatings),
        deals_per_bot=deals_per_bot,
        table_seats_per_bot=table_seats,
        pair_min=int(upper.min()),
        pair_max=int(upper.max()),
        seat_counts={bot: tuple(c) for bot, c in seat_counts.items()},
        left_min=int(near[0][off].min()),
        left_max=int(near[0][off].max()),
        second_min=int(near[1][off].min()),
        second_max=int(near[1][off].max()),
        copies_adjacent=int(np.trace(near[0])),
        seating=seating,
        pairs_impossible=impossible,
        spread_two_impossible=spread > 2
        and impossible is not None
        and _spread_two_impossible(b, n, len(seatings)),
        neighbour_mean=mean,
        neighbours_impossible=neighbour_feasibility(b, n, len(seatings), duplicate) if b >= n else None,
        per_deal=per_deal_neighbours(n, seating) if duplicate and b >= n else None,
    )


def neighbour_feasibility(bots: int, table_size: int, deals: int, duplicate: bool = True) -> str | None:
    """Why no schedule has every neighbour count within one of the mean, or None if no reason
    below applies (which proves nothing).

    With ``n`` seats a duplicate deal's ``n`` games hold ``n * n`` places one seat (and two
    seats) to a bot's left for the ``n (n - 1)`` ordered pairs of its table: some pair sits
    side by side in two of them, so the most is at least 2. Every ordered pair of bots must
    also be neighbours at least as often as the mean rounded down, which a pair that never
    shares a table is not.
    """
    b, n, t = bots, table_size, deals
    games = t * n if duplicate else t
    mean = games * n / (b * (b - 1))
    low, high = math.floor(mean), math.ceil(mean)
    if duplicate and high < 2:
        return (
            f"a deal's {n} games have {n * n} left-neighbour places for its {n * (n - 1)} ordered "
            f"pairs, so some table-mates are neighbours twice, more than {high}"
        )
    if low >= 1 and t * comb(n, 2) < comb(b, 2):
        return (
            f"{t} deals seat at most {t * comb(n, 2)} of the {comb(b, 2)} pairs together, so some "
            f"pairs are never neighbours, fewer than {low}"
        )
    return None


#: What a SAT solver proved about every Latin square of positions, per table size (see
#: tests/test_seating_layouts.py, which fails if a better square exists).
LAYOUT_PROOFS: dict[int, str] = {
    6: "no Latin square of positions has both one and two seats left within one (a SAT proof)",
    8: "no Latin square of positions has both one and two seats left within one (a SAT proof)",
    7: (
        "no Latin square of positions has every table-mate as left neighbour, nor fewer than 7 "
        "ordered pairs never with no pair thrice one or two seats apart (a SAT proof)"
    ),
    9: (
        "no labelling has every table-mate as left neighbour (its differences would sum to 0 "
        "mod 9); the square of seating balanced does"
    ),
    11: (
        "no labelling has every table-mate as left neighbour (its differences would sum to 0 "
        "mod 11); other Latin squares neither found nor ruled out"
    ),
}


def per_deal_neighbours(table_size: int, seating: SeatingMode) -> str:
    """A deal's neighbour counts over its own games (one and two seats left, ordered pairs of
    its positions), and why no layouts do better where that is known (:data:`LAYOUT_PROOFS`)."""
    n = table_size
    layouts = game_positions(n, True, seating)
    parts = []
    for k, name in ((1, "left"), (2, "two seats left")):
        counts = Counter((g[s], g[(s + k) % n]) for g in layouts for s in range(n))
        values = [counts[(p, q)] for p in range(n) for q in range(n) if p != q]
        never = sum(1 for v in values if v == 0)
        missing = f", {never} of the {len(values)} ordered pairs never" if never else ""
        parts.append(f"{name} {min(values)}..{max(values)} games{missing}")
    labelled = seating is SeatingMode.PERMUTE or (seating is SeatingMode.BALANCED and n not in SQUARES)
    why = f"; {LAYOUT_PROOFS[n]}" if labelled and n in LAYOUT_PROOFS else ""
    if seating is SeatingMode.BALANCED and n in NOTES:
        why = f"; {NOTES[n]}"
    return f"seating {seating.value} at {n} seats, {', '.join(parts)}{why}"


def game_key(deal: int, rotation: int | None) -> str:
    """The stable name of a game: ``d003-r02``, or ``d003`` when deals are not rotated."""
    return f"d{deal:03d}" if rotation is None else f"d{deal:03d}-r{rotation:02d}"


def game_positions(table_size: int, duplicate: bool, seating: SeatingMode) -> list[tuple[int, ...]]:
    """For each game of a deal, the position of the deal's seating that sits at each seat.

    A Latin square with duplicate (every position holds every seat once over the deal's games),
    the identity without.
    """
    n = table_size
    if not duplicate:
        return [tuple(range(n))]
    if seating is SeatingMode.BALANCED and n in SQUARES:
        return [tuple(layout) for layout in SQUARES[n]]
    if seating is SeatingMode.ROTATE or n not in LABELS:
        return [tuple((s - r) % n for s in range(n)) for r in range(n)]
    label = LABELS[n]
    position_of = {value: p for p, value in enumerate(label)}
    return [tuple(position_of[(label[s] - r) % n] for s in range(n)) for r in range(n)]


def _with_games(
    bots: tuple[str, ...],
    table_size: int,
    duplicate: bool,
    seed: str,
    seatings: tuple[Seating, ...],
    seating: SeatingMode,
) -> Schedule:
    games: list[ScheduledGame] = []
    layouts = game_positions(table_size, duplicate, seating)
    for s in seatings:
        for rotation, layout in enumerate(layouts):
            key = game_key(s.deal, rotation if duplicate else None)
            games.append(
                ScheduledGame(
                    index=len(games),
                    key=key,
                    deal=s.deal,
                    rotation=rotation,
                    seed=s.seed,
                    seats=tuple(s.order[p] for p in layout),
                    bot_seeds=tuple(derive_seed(seed, "bot", key, seat) for seat in range(table_size)),
                )
            )
    return Schedule(bots, table_size, duplicate, seed, seatings, tuple(games), seating)


def _spread(values: Any) -> int:
    values = list(values)
    return max(values) - min(values) if values else 0


# --- Necessary conditions -------------------------------------------------------------------


def _graphical(degrees: Sequence[int]) -> bool:
    """Erdos-Gallai: whether some simple graph has these vertex degrees."""
    d = sorted(degrees, reverse=True)
    if sum(d) % 2:
        return False
    total = 0
    for k in range(1, len(d) + 1):
        total += d[k - 1]
        if total > k * (k - 1) + sum(min(x, k) for x in d[k:]):
            return False
    return True


def _symmetric_design_missing(v: int, k: int, lam: int) -> str | None:
    """Why no symmetric 2-(v, k, lam) design exists, or None if none of the known reasons applies."""
    order = k - lam
    if v % 2 == 0:
        if isqrt(order) ** 2 != order:
            return (
                f"a symmetric design on an even number of bots needs k - lambda = {order} to be "
                "a square (Bruck-Ryser-Chowla)"
            )
        return None
    sign = -1 if (v - 1) // 2 % 2 else 1
    if not _conic_solvable(order, sign * lam):
        return (
            f"x^2 = {order} y^2 {'-' if sign < 0 else '+'} {lam} z^2 has no solution besides 0, "
            f"which a symmetric design of {v} bots needs (Bruck-Ryser-Chowla)"
        )
    if lam == 1 and _no_plane(order):
        return f"no projective plane of order {order} exists"
    return None


def _no_plane(order: int) -> bool:
    """Projective planes that are proven not to exist, for the orders a table can give."""
    return order in (6, 10, 14)  # 6: Tarry / Bruck-Ryser; 10: Lam, Thiel and Swiercz 1989; 14: BRC


def _conic_solvable(a: int, b: int) -> bool:
    """Whether ``x^2 = a y^2 + b z^2`` has an integer solution other than zero (Hasse-Minkowski).

    True exactly when the Hilbert symbol ``(a, b)_p`` is 1 at every prime and at infinity.
    """
    if a == 0 or b == 0:
        return True
    if a < 0 and b < 0:
        return False
    primes = {2} | _prime_factors(abs(a)) | _prime_factors(abs(b))
    return all(_hilbert(a, b, p) == 1 for p in primes)


def _prime_factors(m: int) -> set[int]:
    out: set[int] = set()
    d = 2
    while d * d <= m:
        while m % d == 0:
            out.add(d)
            m //= d
        d += 1
    if m > 1:
        out.add(m)
    return out


def _hilbert(a: int, b: int, p: int) -> int:
    """The Hilbert symbol ``(a, b)_p`` of two non-zero integers at the prime ``p``."""

    def split(x: int) -> tuple[int, int]:
        e = 0
        while x % p == 0:
            x //= p
            e += 1
        return e, x

    alpha, u = split(a)
    beta, v = split(b)
    if p == 2:

        def eps(x: int) -> int:
            return ((x - 1) // 2) % 2

        def omega(x: int) -> int:
            return ((x * x - 1) // 8) % 2

        exponent = eps(u) * eps(v) + alpha * omega(v) + beta * omega(u)
        return -1 if exponent % 2 else 1

    def legendre(x: int) -> int:
        return 1 if pow(x % p, (p - 1) // 2, p) == 1 else -1

    sign = -1 if (alpha * beta * ((p - 1) // 2)) % 2 else 1
    return int(sign * legendre(u) ** beta * legendre(v) ** alpha)


# --- Which bots sit at each table -------------------------------------------------------------


def _shares(b: int, n: int, deals: int) -> list[list[int]]:
    """Every bot at every table; the ``n mod b`` extra seats go round the bots deal by deal."""
    base, extra = divmod(n, b)
    tables: list[list[int]] = []
    for d in range(deals):
        lucky = {(d * extra + j) % b for j in range(extra)}
        copies = [x for x in range(b) for _ in range(base + (1 if x in lucky else 0))]
        # Copies one after the other go to every second seat (the even seats, then the odd
        # ones): a bot with at most n // 2 copies then never sits next to itself, round the
        # table included.
        table = [0] * n
        for seat, bot in zip([*range(0, n, 2), *range(1, n, 2)], copies, strict=True):
            table[seat] = bot
        tables.append(table)
    return tables


def _pair_counts(tables: Sequence[Sequence[int]], b: int) -> IntArray:
    met = np.zeros((b, b), dtype=np.int64)
    for table in tables:
        met[np.ix_(table, table)] += 1
    np.fill_diagonal(met, 0)
    return met


def _pair_spread(tables: Sequence[Sequence[int]], b: int) -> int:
    upper = _pair_counts(tables, b)[np.triu_indices(b, 1)]
    return int(upper.max() - upper.min())


def _compositions(
    b: int, n: int, t: int, rng: random.Random, say: Progress, widen: bool = True, search: bool = True
) -> list[list[int]]:
    """Chooses ``n`` of ``b`` bots for each of ``t`` tables: deals per bot, then pairs, even.

    With ``widen``, a search for spread 2 follows when within one is impossible or not found;
    without ``search``, only the constructions (exhaustive, cyclic) are tried.
    """
    feasible = pair_feasibility(b, n, t)
    if feasible.impossible is None:
        _, exact = _small_design(b, n, t, feasible.low, feasible.high)
        if exact is not None:
            say(f"pairs: within one ({feasible.low}..{feasible.high}) by an exhaustive search")
            label = list(range(b))
            rng.shuffle(label)
            return [[label[x] for x in table] for table in exact]
    start = _cyclic_tables(b, n, t, rng)
    how = "cyclic construction" if start is not None else "greedy fill"
    tables = start if start is not None else _greedy_tables(b, n, t, rng, [])
    if not search:
        return tables
    local = _PairSearch(tables, b, n, rng)
    if feasible.impossible is None:
        # Beyond a few dozen bots the search rarely reaches within one: do not dwell on it.
        most = PAIR_STEPS if b <= SUGGEST_SEARCH_BOTS else PAIR_STEPS_MANY_BOTS
        most = min(most, SEARCH_WORK // (t + b))
        steps = local.run(feasible.low, feasible.high, most, _patience(PAIR_PATIENCE, t))
        if local.cost == 0:
            say(f"pairs: within one ({feasible.low}..{feasible.high}) from a {how}, {steps} search steps")
            return local.best_tables()
        say(f"pairs: within one not found in {steps} search steps from a {how}")
        if b <= SUGGEST_SEARCH_BOTS and widen:
            # Few bots: searches are cheap, and a construction that leaves tables over can be a
            # poor start. Try again from a greedy fill and from other base blocks (not in
            # suggest_deals, widen=False, which tries several counts), then the slowest search.
            for attempt in range(PAIR_RESTARTS):
                again_start = _cyclic_tables(b, n, t, rng) if attempt % 2 else None
                again_how = "cyclic construction" if again_start is not None else "greedy fill"
                if again_start is None:
                    again_start = _greedy_tables(b, n, t, rng, [])
                again = _PairSearch(again_start, b, n, rng)
                steps = again.run(feasible.low, feasible.high, most, _patience(PAIR_PATIENCE, t))
                if again.cost == 0:
                    band = f"{feasible.low}..{feasible.high}"
                    say(f"pairs: within one ({band}) from a {again_how}, {steps} search steps")
                    return again.best_tables()
                say(f"pairs: within one not found in {steps} search steps from a {again_how} either")
            steps = min(TABU_STEPS, TABU_WORK // (t * t * b * b))
            if steps >= TABU_LEAST:
                found = _tabu_tables(local.best_tables(), b, feasible.low, feasible.high, rng, steps)
                if found is not None:
                    say(f"pairs: within one ({feasible.low}..{feasible.high}) by a tabu search of every swap")
                    return found
                say(f"pairs: within one not found by a tabu search of every swap in {steps} steps")
        if not widen:
            return local.best_tables()
    else:
        say("pairs: within one is provably impossible, so aiming at spread 2")
    # Within one failed: aim at spread 2, the next best, below the mean first, then above.
    best: tuple[int, list[list[int]]] | None = None
    bands = sorted({max(feasible.low - 1, 0), feasible.low})
    for low in bands:
        # Few deals: the exhaustive search finds spread 2 where there is one.
        _, exact = _small_design(b, n, t, low, low + 2)
        if exact is not None:
            say(f"pairs: widened to {low}..{low + 2}, reached by an exhaustive search")
            label = list(range(b))
            rng.shuffle(label)
            return [[label[x] for x in table] for table in exact]
    for low in bands:
        local.reset_to_best()
        wide = min(WIDE_STEPS, SEARCH_WORK // (t + b))
        steps = local.run(low, low + 2, wide, _patience(WIDE_PATIENCE, t), WIDE_HOT)
        reached = local.cost == 0
        say(f"pairs: widened to {low}..{low + 2}, {'reached' if reached else 'not reached'} in {steps} steps")
        tables = local.best_tables()
        spread = _pair_spread(tables, b)
        if best is None or spread < best[0]:
            best = (spread, tables)
        if reached:
            break
    assert best is not None
    return best[1]


def _spread_two_impossible(b: int, n: int, t: int) -> bool:
    """Whether the exhaustive search proves that no schedule has pairs within two."""
    low = _necessary(b, n, t).low
    bands = sorted({max(low - 1, 0), low})
    return all(_small_design(b, n, t, lo, lo + 2)[0] == "impossible" for lo in bands)


def _few_types(b: int, n: int, t: int) -> bool:
    """Whether the exhaustive search of :func:`_small_design` applies: few sets of deals."""
    a, extra = divmod(t * n, b)
    sizes = [size for size, count in ((a, b - extra), (a + 1, extra)) if count]
    return b <= SMALL_BOTS and sum(comb(t, size) for size in sizes) <= SMALL_TYPES


@functools.cache
def _small_design(
    b: int, n: int, t: int, low: int, high: int
) -> tuple[str, tuple[tuple[int, ...], ...] | None]:
    """Decides pairs within ``low..high`` exactly for few deals, by exhaustive search.

    A bot is described by its *type*, the set of deals it sits at (``a`` or ``a + 1`` of them);
    two bots share as many deals as their types share. The search picks the bots' types as a
    multiset (types in a fixed order, so each multiset is met once), keeping every deal's table
    at most full, every pair of types within the band, and every deal still fillable; the
    first bot's type is fixed (deals are interchangeable).

    Returns:
        ``("found", tables)``, ``("impossible", None)`` when the search ended without a
        schedule, or ``("unknown", None)`` when there are too many types or nodes.
    """
    if not _few_types(b, n, t):
        return "unknown", None
    a, extra = divmod(t * n, b)
    want = {a: b - extra, a + 1: extra}
    sizes = [size for size in (a, a + 1) if want[size]]
    types = [sum(1 << j for j in c) for size in sizes for c in combinations(range(t), size)]
    k = len(types)
    ones = [m.bit_count() for m in types]
    fits = [
        sum(
            1 << j
            for j, other in enumerate(types)
            if low <= (ones[i] if i == j else (m & other).bit_count()) <= high
        )
        for i, m in enumerate(types)
    ]
    holding = [sum(1 << i for i, m in enumerate(types) if m >> j & 1) for j in range(t)]
    sized = {size: sum(1 << i for i in range(k) if ones[i] == size) for size in sizes}
    room = [n] * t
    left = dict(want)
    chosen: list[int] = []
    nodes = 0

    def place(i: int, step: int) -> None:
        for j in range(t):
            if types[i] >> j & 1:
                room[j] -= step
        left[ones[i]] -= step

    def extend(start: int, allowed: int) -> bool | None:
        nonlocal nodes
        nodes += 1
        if nodes > SMALL_NODES:
            return None
        remaining = sum(left.values())
        if remaining == 0:
            return all(r == 0 for r in room)
        candidates = allowed & ~((1 << start) - 1)
        for size in sizes:
            if left[size] == 0:
                candidates &= ~sized[size]
        for j in range(t):
            if room[j] == 0:
                candidates &= ~holding[j]
            elif room[j] > remaining:
                return False
        if any(room[j] and not candidates & holding[j] for j in range(t)):
            return False
        while candidates:
            bit = candidates & -candidates
            candidates ^= bit
            i = bit.bit_length() - 1
            place(i, 1)
            chosen.append(i)
            done = extend(i, allowed & fits[i])
            if done is not False:
                return done
            chosen.pop()
            place(i, -1)
        return False

    first = types.index((1 << sizes[0]) - 1)
    place(first, 1)
    chosen.append(first)
    done = extend(0, fits[first])
    if done is None:
        return "unknown", None
    if not done:
        return "impossible", None
    tables: list[list[int]] = [[] for _ in range(t)]
    for bot, i in enumerate(chosen):
        for j in range(t):
            if types[i] >> j & 1:
                tables[j].append(bot)
    return "found", tuple(tuple(table) for table in tables)


def _patience(bounds: tuple[int, int, int], tables: int) -> int:
    least, per_table, most = bounds
    return max(least, min(most, per_table * tables))


def _cyclic_tables(b: int, n: int, t: int, rng: random.Random) -> list[list[int]] | None:
    """Tables from base blocks developed modulo ``b`` (or ``b - 1``), when such blocks are found.

    *Cyclic*: ``k = t // b`` base blocks of ``n`` residues mod ``b`` whose ordered differences
    cover every non-zero residue equally often (within one) give, developed (every block
    shifted by every residue), every pair ``{i, i + d}`` together as often as ``d`` is a
    difference: pairs within one of each other and every bot at exactly ``k * n`` tables.
    Quadratic-residue difference sets such as (19, 9, 4) and (23, 11, 5) are found this way.

    *1-rotational*, when ``b`` divides ``k * n`` for ``k = t // (b - 1)``: the residues mod
    ``b - 1`` and one fixed bot ``oo``; ``m = k n / b`` of the base blocks hold ``oo`` and
    ``n - 1`` residues, the others ``n`` residues. ``oo`` then sits at ``m (b - 1)`` tables
    and every residue at ``k n - m``, the same number, and meets every residue ``m (n - 1)``
    times. With 2 bots per seat (``b = 2 n``) this gives ``2 b - 2`` deals in which every pair
    meets exactly ``n - 1`` times, and ``2 b - 1`` deals within one.

    The other tables (``t mod b``, or ``t mod (b - 1)``) are filled greedily. When ``t`` is
    one short of a multiple, the blocks of that multiple are developed and one table is left
    out whose pairs all meet the most (any table of an exact design): ``2 b - 1`` deals from a
    (b, n, lambda) design of two base blocks, for example.
    """
    # (modulus, base block sizes, tables left to fill), fewest left first; -1: one too many.
    options: list[tuple[int, list[int], int]] = []
    for v in (b, b - 1):
        for k, left in ((t // v, t % v), (t // v + 1, -1)):
            if left == -1 and t % v != v - 1:
                continue
            if k and v == b:
                options.append((b, [n] * k, left))
            elif k and (k * n) % b == 0:
                m = k * n // b
                options.append((b - 1, [n - 1] * m + [n] * (k - m), left))
    for v, sizes, left in sorted(options, key=lambda option: abs(option[2])):
        # Small searches are cheap: restart them a few times from other random blocks.
        attempts = BASE_BLOCK_RESTARTS if v * sum(sizes) <= BASE_BLOCK_SMALL else 1
        blocks = None
        for _ in range(attempts):
            blocks = _base_blocks(v, sizes, rng)
            if blocks is not None:
                break
        if blocks is None:
            continue
        label = list(range(b))
        rng.shuffle(label)
        # Residue v (only when v = b - 1) is the fixed bot oo.
        tables = [
            [label[(x + shift) % v] for x in block] + ([label[v]] if len(block) < n else [])
            for block in blocks
            for shift in range(v)
        ]
        if left >= 0:
            return tables + _greedy_tables(b, n, left, rng, tables)
        # One table too many: drop one whose pairs all meet the most (any, in an exact design).
        met = _pair_counts(tables, b)
        most = int(met[np.triu_indices(b, 1)].max())
        for i, table in enumerate(tables):
            inside = met[np.ix_(table, table)][np.triu_indices(n, 1)]
            if int(inside.min()) == most:
                return tables[:i] + tables[i + 1 :]
    return None


def _base_blocks(v: int, sizes: Sequence[int], rng: random.Random) -> list[list[int]] | None:
    """Blocks of these sizes of residues mod ``v`` whose differences are even within one, or None.

    A seeded annealing on the ordered difference counts (squared distance outside the band):
    a step takes a difference outside the band, a residue of a block that has it (too many)
    or any residue (too few), scores with numpy every residue it could be replaced by, and
    takes the best one not recently removed from that block (a short tabu list) when it does
    not raise the cost, else with a probability that falls as the search cools. Its budget
    is a fixed number of steps.
    """
    paley = _paley_blocks(v, sizes)
    if paley is not None:
        return paley
    k = len(sizes)
    total = sum(size * (size - 1) for size in sizes)
    q, rest = divmod(total, v - 1)
    low, high = q, q + (1 if rest else 0)
    values = np.arange(total + 2)
    off = np.where(values < low, (low - values) ** 2, np.where(values > high, (values - high) ** 2, 0))
    blocks = [rng.sample(range(v), size) for size in sizes]
    count = np.zeros(v, dtype=np.int64)
    for block in blocks:
        a = np.array(block, dtype=np.int64)
        np.add.at(count, ((a[None, :] - a[:, None]) % v)[~np.eye(len(a), dtype=np.bool_)], 1)

    def cost_of(c: IntArray) -> int:
        return int(off[c[1:]].sum())

    cost = cost_of(count)
    residues = np.arange(v, dtype=np.int64)
    tabu: dict[tuple[int, int], int] = {}
    steps = min(BASE_BLOCK_MOVES * max(k, 1), BASE_BLOCK_MOST)
    for step in range(steps):
        if cost == 0:
            return blocks
        bad = np.flatnonzero((count < low) | (count > high))
        bad = bad[bad > 0]
        d = int(bad[rng.randrange(len(bad))])
        if count[d] > high:
            having = [
                (i, p)
                for i, block in enumerate(blocks)
                for p, x in enumerate(block)
                if (x + d) % v in block or (x - d) % v in block
            ]
            i, p = having[rng.randrange(len(having))]
        else:
            i = rng.randrange(k)
            p = rng.randrange(len(blocks[i]))
        block = blocks[i]
        old = block[p]
        others = np.array([x for x in block if x != old], dtype=np.int64)
        without = count.copy()
        np.add.at(without, np.concatenate(((others - old) % v, (old - others) % v)), -1)
        gain = off[without + 1] - off[without]
        gain[0] = 0
        # Each new residue w adds the differences others - w and w - others (exact unless two
        # coincide, when 2 w = x + y: the chosen move is rescored exactly below).
        adds = np.concatenate(
            ((others[None, :] - residues[:, None]) % v, (residues[:, None] - others[None, :]) % v), axis=1
        )
        delta = gain[adds].sum(axis=1)
        banned = np.zeros(v, dtype=np.bool_)
        banned[others] = True
        banned[old] = True
        for (where, w), until in tabu.items():
            if where == i and until > step:
                banned[w] = True
        delta = np.where(banned, np.iinfo(np.int64).max, delta)
        ties = np.flatnonzero(delta == delta.min())
        new = int(ties[rng.randrange(len(ties))])
        if banned[new]:
            continue
        after = without.copy()
        np.add.at(after, np.concatenate(((others - new) % v, (new - others) % v)), 1)
        change = cost_of(after) - cost
        if change > 0:
            heat = BASE_BLOCK_HOT * (BASE_BLOCK_COLD / BASE_BLOCK_HOT) ** (step / steps)
            if rng.random() >= math.exp(-change / heat):
                continue
        count = after
        block[p] = new
        cost += change
        tabu[(i, old)] = step + BASE_BLOCK_TABU
        if len(tabu) > 4 * BASE_BLOCK_TABU:
            tabu = {key: until for key, until in tabu.items() if until > step}
    return blocks if cost == 0 else None


def _paley_blocks(v: int, sizes: Sequence[int]) -> list[list[int]] | None:
    """Quadratic-residue difference sets, for a prime ``v = 3 (mod 4)`` and blocks of ``(v -+ 1) / 2``.

    The non-zero squares mod such a prime, and the non-squares, are (v, (v - 1) / 2,
    (v - 3) / 4) difference sets (Paley); with 0 added they are (v, (v + 1) / 2, (v + 1) / 4)
    ones. Blocks alternate between the two, so the developed tables are not all repeated.
    """
    if v % 4 != 3 or len(set(sizes)) != 1 or sizes[0] not in ((v - 1) // 2, (v + 1) // 2):
        return None
    if any(v % d == 0 for d in range(2, isqrt(v) + 1)):
        return None
    squares = sorted({x * x % v for x in range(1, v)})
    others = sorted(set(range(1, v)) - set(squares))
    zero = [0] if sizes[0] == (v + 1) // 2 else []
    return [list((squares, others)[i % 2]) + zero for i in range(len(sizes))]


def _greedy_tables(
    b: int, n: int, t: int, rng: random.Random, before: Sequence[Sequence[int]]
) -> list[list[int]]:
    """Fills ``t`` tables, after ``before``, with the bots that have played least so far.

    Deals per bot stay within one at every table; among the bots that may sit, each seat takes
    the one that has met the table's bots least.
    """
    played = np.zeros(b, dtype=np.int64)
    for done in before:
        played[list(done)] += 1
    met = _pair_counts(before, b)
    tables: list[list[int]] = []
    for _ in range(t):
        least = int(played.min())
        tier = np.flatnonzero(played == least)
        if len(tier) >= n:
            table: list[int] = []
            pool = [int(x) for x in tier]
        else:
            table = [int(x) for x in tier]
            pool = [int(x) for x in np.flatnonzero(played == least + 1)]
        rng.shuffle(pool)
        candidates = np.array(pool, dtype=np.int64)
        free = np.ones(len(pool), dtype=np.bool_)
        score = met[table].sum(axis=0) if table else np.zeros(b, dtype=np.int64)
        for _ in range(n - len(table)):
            chosen = int(np.argmin(np.where(free, score[candidates], np.iinfo(np.int64).max)))
            free[chosen] = False
            bot = int(candidates[chosen])
            table.append(bot)
            score = score + met[bot]
        met[np.ix_(table, table)] += 1
        np.fill_diagonal(met, 0)
        played[table] += 1
        tables.append(table)
    return tables


def _tabu_tables(
    tables: Sequence[Sequence[int]], b: int, low: int, high: int, rng: random.Random, steps: int
) -> list[list[int]] | None:
    """A tabu search that scores every swap of two bots between two tables at each step.

    For few bots and tables only (its step costs ``tables^2 * bots^2``). Swapping ``x`` of
    table 1 with ``z`` of table 2 (neither in both) changes the pairs of ``x`` and ``z`` with
    the bots of one table but not the other; with ``D+`` and ``D-`` the change of the
    penalty when a pair count goes up or down by one, its score is
    ``sum_{w in 1 \\ 2} (D-[x, w] + D+[z, w]) + sum_{u in 2 \\ 1} (D-[z, u] + D+[x, u]) - 2 D+[x, z]``,
    computed for all table pairs at once with numpy. The best swap is taken even when it
    raises the cost, except swaps that bring a bot back into a table it left within the last
    :data:`TABU_TENURE` steps. Returns the tables when every pair is within ``low..high``.
    """
    member = np.zeros((len(tables), b), dtype=np.int64)
    for i, table in enumerate(tables):
        member[i, list(table)] = 1
    t = len(tables)
    met = member.T @ member
    np.fill_diagonal(met, 0)

    def penalty(c: IntArray) -> IntArray:
        return np.where(c < low, (low - c) ** 2, np.where(c > high, (c - high) ** 2, 0))

    upper = np.triu_indices(b, 1)
    cost = int(penalty(met[upper]).sum())
    later = np.triu(np.ones((t, t), dtype=np.bool_), 1)[:, :, None, None]
    banned: dict[tuple[int, int], int] = {}
    never = np.iinfo(np.int64).max // 4
    for step in range(steps):
        if cost == 0:
            return [[int(x) for x in np.flatnonzero(row)] for row in member]
        plus, minus = penalty(met + 1) - penalty(met), penalty(met - 1) - penalty(met)
        np.fill_diagonal(plus, 0)
        np.fill_diagonal(minus, 0)
        both = member[:, None, :] * member[None, :, :]
        only = (member[:, None, :] * (1 - member[None, :, :])).astype(np.bool_)
        part_x = (member @ minus)[:, None, :] - both @ minus + (member @ plus)[None, :, :] - both @ plus
        part_z = (member @ plus)[:, None, :] - both @ plus + (member @ minus)[None, :, :] - both @ minus
        delta = part_x[:, :, :, None] + part_z[:, :, None, :] - 2 * plus[None, None, :, :]
        allowed = only[:, :, :, None] & only.transpose(1, 0, 2)[:, :, None, :] & later
        for (bot, left), until in list(banned.items()):
            if until <= step:
                del banned[(bot, left)]
                continue
            allowed[:, left, bot, :] = False
            allowed[left, :, :, bot] = False
        scores = np.where(allowed, delta, never)
        lowest = int(scores.min())
        if lowest >= never:
            break
        ties = np.flatnonzero(scores.ravel() == lowest)
        t1, t2, x, z = (int(v) for v in np.unravel_index(int(ties[rng.randrange(len(ties))]), scores.shape))
        first, second = np.flatnonzero(member[t1]), np.flatnonzero(member[t2])
        first, second = first[first != x], second[second != z]
        np.subtract.at(met, (x, first), 1)
        np.subtract.at(met, (first, x), 1)
        np.add.at(met, (z, first), 1)
        np.add.at(met, (first, z), 1)
        np.subtract.at(met, (z, second), 1)
        np.subtract.at(met, (second, z), 1)
        np.add.at(met, (x, second), 1)
        np.add.at(met, (second, x), 1)
        member[t1, x] = member[t2, z] = 0
        member[t1, z] = member[t2, x] = 1
        banned[(x, t1)] = banned[(z, t2)] = step + TABU_TENURE
        cost += lowest
    return [[int(x) for x in np.flatnonzero(row)] for row in member] if cost == 0 else None


class _PairSearch:
    """Local search on the tables' pair counts: swaps keep every bot's number of tables.

    A step takes a pair of bots outside the target band ``low..high`` (together too often or
    too rarely), one table where moving one of them would help, and scores at once, with
    numpy, every swap of that bot with a bot of a few other tables (only the ``4 (n - 1)``
    pair counts a swap changes enter its score). The best swap is taken when it does not
    raise the cost, or with a probability that falls as the search cools (annealing).
    """

    def __init__(self, tables: Sequence[Sequence[int]], b: int, n: int, rng: random.Random) -> None:
        self.b, self.n, self.rng = b, n, rng
        self.table = np.array(tables, dtype=np.int64).reshape(len(tables), n)
        self.best = self.table.copy()
        self.cost = 0

    def best_tables(self) -> list[list[int]]:
        return [[int(x) for x in row] for row in self.best]

    def reset_to_best(self) -> None:
        self.table = self.best.copy()

    def run(self, low: int, high: int, steps: int, patience: int, hot: float = HOT) -> int:
        """Searches until every pair is within ``low..high`` or the budget ends; returns steps."""
        b, n, rng = self.b, self.n, self.rng
        table = self.table
        t = len(table)
        member = np.zeros((t, b), dtype=np.bool_)
        member[np.arange(t)[:, None], table] = True
        met = _pair_counts(table.tolist(), b)
        values = np.arange(t + 3)
        above = np.where(values > high, (values - high) ** 2, 0)
        penalty = np.where(values < low, (low - values) ** 2, above)
        up = np.zeros_like(penalty)
        up[:-1] = penalty[1:] - penalty[:-1]
        down = np.zeros_like(penalty)
        down[1:] = penalty[:-1] - penalty[1:]
        bad = (met < low) | (met > high)
        np.fill_diagonal(bad, False)
        bad_count = bad.sum(axis=1)
        cost = int(penalty[met[np.triu_indices(b, 1)]].sum())
        best_cost, since_best = cost, 0
        self.best = table.copy()
        never = np.iinfo(np.int64).max // 4
        step = 0
        while cost > 0 and step < steps and since_best < patience and t > 1:
            step += 1
            since_best += 1
            xs = np.flatnonzero(bad_count)
            x = int(xs[rng.randrange(len(xs))])
            ys = np.flatnonzero(bad[x])
            y = int(ys[rng.randrange(len(ys))])
            at_x, at_y = member[:, x], member[:, y]
            if met[x, y] > high:
                # Together too often: move x out of one of their common tables.
                firsts = np.flatnonzero(at_x & at_y)
                others = [r for r in (rng.randrange(t) for _ in range(CANDIDATE_TABLES)) if not at_x[r]]
                exclude = -1
            else:
                # Too rarely: move x into one of y's tables.
                firsts = np.flatnonzero(at_x & ~at_y)
                pool = np.flatnonzero(at_y & ~at_x)
                picks = min(CANDIDATE_TABLES, len(pool))
                others = [int(pool[rng.randrange(len(pool))]) for _ in range(picks)]
                exclude = y
            if len(firsts) == 0 or not others:
                continue
            t1 = int(firsts[rng.randrange(len(firsts))])
            row1 = table[t1]
            stay = row1[row1 != x]
            seconds = np.array(others, dtype=np.int64)
            rows = table[seconds]
            met_x = met[x]
            met_zs = met[rows[:, :, None], stay[None, None, :]]
            met_zw = met[rows[:, :, None], rows[:, None, :]]
            met_xw = met_x[rows]
            up_xw = up[met_xw]
            shared = member[t1][rows]
            delta = (
                down[met_x[stay]].sum()
                + up[met_zs].sum(axis=2)
                + down[met_zw].sum(axis=2)
                + up_xw.sum(axis=1, keepdims=True)
                - up_xw
                # A bot in both tables keeps its pair counts with x and with z.
                - ((down[met_xw] + up_xw) * shared).sum(axis=1, keepdims=True)
                + (down[met_xw] + up_xw) * shared
                - ((up[met_zw] + down[met_zw]) * shared[:, None, :]).sum(axis=2)
            )
            delta = np.where(shared | (rows == exclude), never, delta)
            flat = delta.ravel()
            lowest = int(flat.min())
            if lowest >= never:
                continue
            if lowest > 0:
                heat = hot * (COLD / hot) ** (step / steps)
                if rng.random() >= math.exp(-lowest / heat):
                    continue
            ties = np.flatnonzero(flat == lowest)
            k, j = divmod(int(ties[rng.randrange(len(ties))]), n)
            t2 = int(seconds[k])
            z = int(table[t2, j])
            row2 = table[t2]
            gone = row2[row2 != z]
            i = int(np.flatnonzero(row1 == x)[0])
            met[x, stay] -= 1
            met[stay, x] -= 1
            met[z, stay] += 1
            met[stay, z] += 1
            met[z, gone] -= 1
            met[gone, z] -= 1
            met[x, gone] += 1
            met[gone, x] += 1
            table[t1, i] = z
            table[t2, j] = x
            member[t1, x] = member[t2, z] = False
            member[t1, z] = member[t2, x] = True
            touched = np.union1d(stay, gone)
            for u in (x, z):
                counts = met[u, touched]
                now = (counts < low) | (counts > high)
                change = now.astype(np.int64) - bad[u, touched]
                bad[u, touched] = now
                bad[touched, u] = now
                bad_count[touched] += change
                bad_count[u] += int(change.sum())
            cost += lowest
            if cost < best_cost:
                best_cost, since_best = cost, 0
                self.best = table.copy()
        self.cost = best_cost
        return step


# --- The order around each table ------------------------------------------------------------


def _arrange(
    tables: list[list[int]], b: int, n: int, duplicate: bool, seating: SeatingMode, rng: random.Random
) -> list[list[int]]:
    """Orders each table: seat positions even (without rotations), then neighbours even.

    The neighbour counts are those of the games the deal is played in
    (:func:`game_positions`): with ``rotate`` a deal's neighbours count once per rotation, with
    ``permute`` they are spread over the table already and only the uneven rest is balanced.
    A swap of two bots within a table is kept when it does not raise the weighted sum of
    squared neighbour counts. Without rotations it must also keep both bots' seat positions
    within one; when it would not, the same two bots swap back in another table where they
    sit the other way round, which keeps every bot's seat counts as they were.
    """
    tables = [list(table) for table in tables]
    if b > n:
        for table in tables:
            rng.shuffle(table)
    if not duplicate:
        tables = _balance_positions(tables, n, rng) if b > n else _spread_copies(tables, b, n, rng)
    entries = _neighbour_entries(n, duplicate, seating)
    touching: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]
    for entry in entries:
        touching[entry[1]].append(entry)
        if entry[2] != entry[1]:
            touching[entry[2]].append(entry)
    pair_of = [
        [list({id(e): e for e in touching[i] + touching[j]}.values()) for j in range(n)] for i in range(n)
    ]
    counts: list[Counter[tuple[int, int]]] = [Counter(), Counter()]
    for table in tables:
        for k, p, p2, w in entries:
            counts[k - 1][(table[p], table[p2])] += w
    weight = {1: LEFT_WEIGHT, 2: SECOND_WEIGHT}
    seats: list[list[int]] = [[0] * n for _ in range(b)]
    low: list[int] = [0] * b
    high: list[int] = [0] * b
    sitting: dict[tuple[int, int], set[int]] = {}
    if not duplicate:
        for t, table in enumerate(tables):
            for p, bot in enumerate(table):
                seats[bot][p] += 1
                sitting.setdefault((bot, p), set()).add(t)
        for bot in range(b):
            total = sum(seats[bot])
            low[bot], high[bot] = total // n, -(-total // n)

    def swap_change(t: int, i: int, j: int, change: Counter[tuple[int, int, int]]) -> None:
        table = tables[t]
        for k, p, p2, w in pair_of[i][j]:
            change[(k, table[p], table[p2])] -= w
        table[i], table[j] = table[j], table[i]
        for k, p, p2, w in pair_of[i][j]:
            change[(k, table[p], table[p2])] += w

    # Every ordered pair of a table's positions sits side by side in ``base`` of its games
    # whatever the order: a pair's count is that times the deals it shares, plus what the
    # order adds. The squares are of the whole count, so the extra games go to the pairs that
    # share fewest deals.
    bases = _neighbour_bases(n, duplicate, seating)
    # (Plain lists: indexed in the hot loop; not needed when no pair of positions has a base.)
    met = _pair_counts(tables, b).tolist() if b > n and any(bases) else [[0] * b for _ in range(b)]
    count = len(tables)
    # Permuted deals have many more weighted position pairs per swap, and need fewer swaps.
    moves = ARRANGE_MOVES * n * count * min(len(entries), 4 * n) // max(len(entries), 1)
    moves = min(max(moves, ARRANGE_LEAST), ARRANGE_MOST)
    for step in range(moves):
        first = rng.randrange(count)
        i, j = rng.sample(range(n), 2)
        x, y = tables[first][i], tables[first][j]
        if x == y:
            continue
        swapped = [first]
        if not duplicate and (
            seats[x][i] - 1 < low[x]
            or seats[x][j] + 1 > high[x]
            or seats[y][j] - 1 < low[y]
            or seats[y][i] + 1 > high[y]
        ):
            partner = _partner(tables, sitting, first, i, j, rng)
            if partner is None:
                continue
            swapped.append(partner)
        change: Counter[tuple[int, int, int]] = Counter()
        for t in swapped:
            swap_change(t, i, j, change)
        delta = 0
        for (k, u, v), d in change.items():
            if d and u != v:
                whole = counts[k - 1][(u, v)] + bases[k - 1] * met[u][v]
                delta += weight[k] * (2 * whole * d + d * d)
            elif d and k == 1:
                delta += SELF_WEIGHT * d
        if delta > 0 and (
            delta >= SELF_WEIGHT
            or rng.random() >= math.exp(-delta / (ARRANGE_HOT * (COLD / ARRANGE_HOT) ** (step / moves)))
        ):
            for t in swapped:
                tables[t][i], tables[t][j] = tables[t][j], tables[t][i]
            continue
        for (k, u, v), d in change.items():
            counts[k - 1][(u, v)] += d
        if not duplicate:
            for t in swapped:
                # The table now has y at i and x at j (or, the partner, x at i and y at j).
                here, there = tables[t][i], tables[t][j]
                seats[there][i] -= 1
                seats[there][j] += 1
                seats[here][j] -= 1
                seats[here][i] += 1
                sitting[(there, i)].discard(t)
                sitting[(here, j)].discard(t)
                sitting.setdefault((here, i), set()).add(t)
                sitting.setdefault((there, j), set()).add(t)
    return tables


def _partner(
    tables: list[list[int]],
    sitting: dict[tuple[int, int], set[int]],
    first: int,
    i: int,
    j: int,
    rng: random.Random,
) -> int | None:
    """Another table with the bots of ``first``'s seats ``i`` and ``j`` the other way round."""
    x, y = tables[first][i], tables[first][j]
    ys, xs = sitting.get((y, i), set()), sitting.get((x, j), set())
    if min(len(ys), len(xs)) <= PARTNER_SCAN:
        partners = sorted((ys & xs) - {first})
        return partners[rng.randrange(len(partners))] if partners else None
    for _ in range(PARTNER_SCAN):
        # Many tables qualify: probing a few at random is cheaper than intersecting.
        t = rng.randrange(len(tables))
        if t != first and tables[t][i] == y and tables[t][j] == x:
            return t
    return None


def _spread_copies(tables: list[list[int]], b: int, n: int, rng: random.Random) -> list[list[int]]:
    """Seat positions within one for bots that fill several seats, copies kept apart.

    The tables come with copies apart (see :func:`_shares`). Moves that
    keep them apart (turning a whole table, swapping two seats when no copy ends up next to
    itself) are kept when they do not add to how far seat counts are outside each bot's
    ``total // n .. ceil(total / n)``.
    """
    # Turning deal d by d seats already spreads every bot over the positions.
    tables = [table[d % n :] + table[: d % n] for d, table in enumerate(tables)]
    seats = [[0] * n for _ in range(b)]
    for table in tables:
        for p, bot in enumerate(table):
            seats[bot][p] += 1
    low = [sum(c) // n for c in seats]
    high = [-(-sum(c) // n) for c in seats]

    def off(bot: int, p: int, step: int) -> int:
        before, after = seats[bot][p], seats[bot][p] + step
        return (max(0, after - high[bot]) + max(0, low[bot] - after)) - (
            max(0, before - high[bot]) + max(0, low[bot] - before)
        )

    def move(table: list[int], new: list[int]) -> int:
        """Cost change of replacing ``table`` by ``new`` (applied to the counts)."""
        delta = 0
        for p in range(n):
            if table[p] != new[p]:
                delta += off(table[p], p, -1)
                seats[table[p]][p] -= 1
                delta += off(new[p], p, 1)
                seats[new[p]][p] += 1
        return delta

    def apart(table: list[int]) -> int:
        return sum(1 for p in range(n) if table[p] == table[(p + 1) % n])

    cost = sum(max(0, c - high[bot]) + max(0, low[bot] - c) for bot in range(b) for c in seats[bot])
    for _ in range(max(SPREAD_MOVES, SPREAD_PER_SEAT * n * len(tables))):
        if cost == 0:
            break
        t = rng.randrange(len(tables))
        table = tables[t]
        if rng.random() < 0.5:
            shift = rng.randrange(1, n)
            new = table[shift:] + table[:shift]
        else:
            i, j = rng.sample(range(n), 2)
            new = list(table)
            new[i], new[j] = new[j], new[i]
            if apart(new) > apart(table):
                continue
        delta = move(table, new)
        if delta > 0:
            move(new, table)
            continue
        tables[t] = new
        cost += delta
    return tables


def _neighbour_bases(n: int, duplicate: bool, seating: SeatingMode) -> tuple[int, int]:
    """Games of a deal in which every ordered pair of positions sits one (two) seats apart."""
    layouts = game_positions(n, duplicate, seating)
    out = []
    for k in (1, 2):
        w = Counter((layout[s], layout[(s + k) % n]) for layout in layouts for s in range(n))
        out.append(min(w[(p, p2)] for p in range(n) for p2 in range(n) if p != p2))
    return out[0], out[1]


def _neighbour_entries(n: int, duplicate: bool, seating: SeatingMode) -> list[tuple[int, int, int, int]]:
    """The neighbour weights of a deal's positions: ``(offset, p, p2, games)``.

    ``games`` counts the deal's games in which position ``p2`` sits ``offset`` seats left of
    position ``p``, less the part every pair of positions shares (which no order changes).
    """
    layouts = game_positions(n, duplicate, seating)
    out: list[tuple[int, int, int, int]] = []
    for k in (1, 2):
        w = [[0] * n for _ in range(n)]
        for layout in layouts:
            for s in range(n):
                w[layout[s]][layout[(s + k) % n]] += 1
        base = min(w[p][p2] for p in range(n) for p2 in range(n) if p != p2)
        out += [(k, p, p2, w[p][p2] - base) for p in range(n) for p2 in range(n) if w[p][p2] > base]
    return out


def _balance_positions(tables: list[list[int]], n: int, rng: random.Random) -> list[list[int]]:
    """Seats each table so that every bot uses every seat position equally often (within one).

    An equitable edge colouring of the bipartite multigraph tables-bots, the colours being seat
    positions: a bot at ``d`` tables is split into ``d // n`` nodes of degree ``n`` and one of
    degree ``d % n``; a proper ``n``-colouring (Konig: bipartite graphs need only as many colours
    as their largest degree) then gives every table each position once and every bot each
    position ``d // n`` or ``d // n + 1`` times. Colours are fixed edge by edge, flipping an
    alternating path when the free colours of the two ends differ.
    """
    # One edge per seat; a bot's edges are dealt out to its virtual nodes n at a time.
    edges: list[tuple[int, tuple[int, int]]] = []
    seen: Counter[int] = Counter()
    order = list(range(len(tables)))
    rng.shuffle(order)
    for t in order:
        for bot in tables[t]:
            edges.append((t, (bot, seen[bot] // n)))
            seen[bot] += 1
    at_table: list[dict[int, tuple[int, int]]] = [{} for _ in tables]
    at_bot: dict[tuple[int, int], dict[int, int]] = {}
    for t, node in edges:
        node_colours = at_bot.setdefault(node, {})
        a = next(c for c in range(n) if c not in at_table[t])
        if a in node_colours:
            b = next(c for c in range(n) if c not in node_colours)
            # The path from the bot's node along colours a, b, a, ... never reaches table t, so
            # swapping a and b on it frees a at the node and keeps it free at t.
            path: list[tuple[int, tuple[int, int], int]] = []
            here = node
            while a in at_bot[here]:
                table = at_bot[here][a]
                path.append((table, here, a))
                if b not in at_table[table]:
                    break
                here = at_table[table][b]
                path.append((table, here, b))
            for table, vnode, c in path:
                del at_table[table][c]
                del at_bot[vnode][c]
            for table, vnode, c in path:
                swapped = b if c == a else a
                at_table[table][swapped] = vnode
                at_bot[vnode][swapped] = table
        at_table[t][a] = node
        node_colours[a] = t
    return [[at_table[t][c][0] for c in range(n)] for t in range(len(tables))]
