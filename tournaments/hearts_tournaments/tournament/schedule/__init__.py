"""The round-robin schedule: who sits where, on which deal, in which rotation.

A tournament plays ``deals`` distinct deals. Each deal gets one *seating*: the bots at its table
and their order around it. With ``duplicate`` the deal is then played once per rotation of that
seating, so that every bot at the table holds every seat's cards of every hand and most card
luck cancels out; without it the deal is played once, as seated.

How a deal's games seat its bots (:class:`SeatingMode`, with ``duplicate``; each mode is a
:class:`SeatingDesign` registered in :data:`SEATING_DESIGNS`, see docs/DEVELOPING.md):

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
  table left out when ``deals`` is one short of a multiple; the blocks from an annealing and,
  by design 3, a tabu search when it finds none), else from a greedy fill, and a
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
  Without ``duplicate`` its swaps keep every bot's seat positions within one. With duplicate
  deals whose games are not rotations, a band search then aims at the balance report's band
  (design 2; a stored schedule keeps the :data:`SCHEDULE_DESIGN` it was made with, and is
  rebuilt by it).

Every random choice comes from ``derive_seed(seed, "schedule")``, and every search has a fixed
budget of moves (never a clock): the same bots, table size, deal count, seed and switches give
the same schedule, the same deals (deal ``d`` is seeded with ``derive_seed(seed, "deal", d)``)
and the same bot seeds.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

import numpy as np

from hearts_core.deal import derive_seed
from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.tournament.schedule.base import (
    DEFAULT_SEATING,
    LABELS,
    LAYOUT_PROOFS,
    SCHEDULE_DESIGN,
    SEATING_DESIGNS,
    SUGGEST_SEARCH_BOTS,
    SUGGEST_TRIES,
    Progress,
    SeatingDesign,
    SeatingMode,
    game_key,
    game_positions,
    seating_design,
)
from hearts_tournaments.tournament.schedule.seating import _arrange
from hearts_tournaments.tournament.schedule.tables import (
    PairFeasibility,
    _compositions,
    _few_types,
    _necessary,
    _pair_spread,
    _shares,
    _spread_two_impossible,
    pair_feasibility,
)
from hearts_tournaments.tournament.schedule.teams import team_numbers, team_problem, team_tables

#: The schedule's public names (its parts are :mod:`.base`, :mod:`.cond`, :mod:`.tables` and
#: :mod:`.seating`).
__all__ = [
    "DEFAULT_SEATING",
    "LABELS",
    "LAYOUT_PROOFS",
    "SCHEDULE_DESIGN",
    "SEATING_DESIGNS",
    "Balance",
    "PairFeasibility",
    "Progress",
    "Schedule",
    "Seating",
    "SeatingDesign",
    "SeatingMode",
    "balance_of",
    "game_key",
    "game_positions",
    "make_schedule",
    "neighbour_feasibility",
    "pair_feasibility",
    "per_deal_neighbours",
    "real_teams",
    "seating_design",
    "suggest_deals",
    "team_problem",
]


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
        teams: Each bot of a team of two or more and its team (empty without teams). With
            teams, the pair and neighbour counts are those of bots of different teams.
        teammates_met: The most deals two bots of one team share (0: kept apart).
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
    teams: dict[str, str] = field(default_factory=dict)
    teammates_met: int = 0

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
        out = {
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
        if self.teams:  # only then: a report without teams stays as it was
            out["teams"] = dict(self.teams)
            out["teammates_met"] = self.teammates_met
        return out

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
            teams=dict(data.get("teams", {})),
            teammates_met=data.get("teammates_met", 0),
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
        every = "every pair of bots"
        if self.teams:
            every = "every pair of bots of different teams"
            if self.pair_spread > 1:
                pairs = "within one was not found"
            count = len(set(self.teams.values()))
            apart = "never share a table" if self.teammates_met == 0 else f"share up to {self.teammates_met}"
            per_deal.insert(0, f"teams: {count} team(s) of {len(self.teams)} bots; teammates {apart}")
        return [
            f"{self.games} games on {self.deals} deals; each bot sits at {min(deals)}..{max(deals)} "
            f"deals' tables, holding {min(seats)}..{max(seats)} seats in all",
            f"{every} shares a table on {self.pair_min}..{self.pair_max} deals ({pairs})",
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
        design: The :data:`SCHEDULE_DESIGN` it was made with (1 when stored before designs
            were recorded).
        teams: ``(bot, team)`` for each bot of a team of two or more: no two bots of a team
            share a table (empty: no teams).
    """

    bots: tuple[str, ...]
    table_size: int
    duplicate: bool
    seed: str
    seatings: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...]
    seating: SeatingMode = SeatingMode.ROTATE
    design: int = 1
    teams: tuple[tuple[str, str], ...] = ()

    def balance(self) -> Balance:
        """Counts how evenly the schedule spreads bots, pairs, seats and neighbours."""
        return balance_of(
            self.bots, self.table_size, self.games, self.seatings, self.seating, dict(self.teams)
        )

    def to_json(self) -> dict[str, Any]:
        """The schedule as stored with the tournament."""
        out: dict[str, Any] = {
            "bots": list(self.bots),
            "table_size": self.table_size,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "seating": self.seating.value,
            "seatings": [{"deal": s.deal, "seed": s.seed, "order": list(s.order)} for s in self.seatings],
        }
        if self.design != 1:  # a schedule of design 1 is stored as it was before designs
            out["design"] = self.design
        if self.teams:  # only then: a schedule without teams is stored as it was
            out["teams"] = dict(self.teams)
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> Schedule:
        """The schedule stored by :meth:`to_json`."""
        seatings = tuple(Seating(s["deal"], s["seed"], tuple(s["order"])) for s in data["seatings"])
        mode = SeatingMode(data.get("seating", SeatingMode.ROTATE.value))
        return _with_games(
            tuple(data["bots"]),
            data["table_size"],
            data["duplicate"],
            data["seed"],
            seatings,
            mode,
            int(data.get("design", 1)),
            tuple(sorted(data.get("teams", {}).items())),
        )


def make_schedule(
    bots: Sequence[str],
    table_size: int,
    deals: int,
    seed: str,
    duplicate: bool = True,
    seating: SeatingMode = DEFAULT_SEATING,
    progress: Progress | None = None,
    design: int = SCHEDULE_DESIGN,
    teams: Mapping[str, str] | None = None,
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
        design: Which :data:`SCHEDULE_DESIGN` to follow (an older one rebuilds a stored
            tournament's schedule).
        teams: Each bot's team, for bots that declared one: two bots of one team never share
            a table (:mod:`.teams`; teams of one bot change nothing). Without teams of two or
            more the schedule is exactly the one made without this argument.

    Returns:
        The schedule; check :meth:`Schedule.balance` for how balanced it came out.

    Raises:
        ValueError: on fewer than two bots, repeated names or no deals, or teams that cannot
            be kept apart (:func:`.teams.team_problem`, one line).
    """
    if len(bots) < 2 or len(set(bots)) != len(bots):
        raise ValueError("a schedule needs at least two distinct bots")
    if deals < 1:
        raise ValueError("a schedule needs at least one deal")
    if not 1 <= design <= SCHEDULE_DESIGN:
        raise ValueError(f"schedule design {design} is not one of 1..{SCHEDULE_DESIGN}")
    rng = random.Random(derive_seed(seed, "schedule"))
    b, n = len(bots), table_size
    say = progress or (lambda _line: None)
    kept = real_teams(bots, teams or {})
    if kept:
        problem = team_problem(bots, kept, n)
        if problem is not None:
            raise ValueError(problem)
        say(f"{b} bots at tables of {n} over {deals} deals, teams kept apart")
        side = team_numbers(bots, kept)
        tables = team_tables(b, n, deals, side, rng, say)
        tables = _arrange(tables, b, n, duplicate, seating, rng, design)
        say("neighbours: tables ordered")
        seatings = tuple(
            Seating(deal=d, seed=derive_seed(seed, "deal", d), order=tuple(bots[x] for x in table))
            for d, table in enumerate(tables)
        )
        return _with_games(
            tuple(bots), table_size, duplicate, seed, seatings, seating, design, tuple(sorted(kept.items()))
        )
    # What is possible comes first, before any search: exact where a proof exists.
    if b > n:
        say(pair_feasibility(b, n, deals).line())
        say(f"designing the tables of {deals} deals (each search is bounded: about a minute at the largest)")
    else:
        say(f"{b} bots at tables of {n}: every bot at every table, pairs even by construction")
    if b < n:
        # Copies of a bot would sit side by side in some permuted game: keep them apart instead.
        seating = SeatingMode.ROTATE
    tables = _compositions(b, n, deals, rng, say, design=design) if b > n else _shares(b, n, deals)
    tables = _arrange(tables, b, n, duplicate, seating, rng, design)
    say("neighbours: tables ordered")
    seatings = tuple(
        Seating(deal=d, seed=derive_seed(seed, "deal", d), order=tuple(bots[x] for x in table))
        for d, table in enumerate(tables)
    )
    return _with_games(tuple(bots), table_size, duplicate, seed, seatings, seating, design)


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
    quiet: Progress = lambda _line: None  # noqa: E731
    design = SCHEDULE_DESIGN  # as make_schedule designs it today
    for count in range(deals + 1, deals + 3 * bots + 1):
        if _necessary(bots, table_size, count).impossible is not None:
            continue
        search = bots <= SUGGEST_SEARCH_BOTS
        if not search and count % bots and not _few_types(bots, table_size, count):
            continue
        if search:
            searched += 1
        rng = random.Random(derive_seed(seed, "schedule"))
        tables = _compositions(bots, table_size, count, rng, quiet, widen=False, search=search, design=design)
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
    teams: Mapping[str, str] | None = None,
) -> Balance:
    """Counts deals, seats, pairs, seat positions and neighbours of a schedule.

    With ``teams`` (bot to team, bots of teams of two or more), pairs and neighbours are
    counted over bots of different teams, and :attr:`Balance.teammates_met` says how often two
    of one team shared a table.
    """
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
    kept = real_teams(bots, teams or {})
    side = team_numbers(bots, kept)
    apart = side[:, None] != side[None, :]
    iu = np.triu_indices(b, 1)
    upper = met[iu][apart[iu]]
    teammates_met = int(met[iu][~apart[iu]].max()) if kept else 0
    seat_counts = {bot: [0] * n for bot in bots}
    near = [np.zeros((b, b), dtype=np.int64) for _ in range(2)]
    for game in games:
        row = [index[bot] for bot in game.seats]
        for position, bot in enumerate(game.seats):
            seat_counts[bot][position] += 1
        for k in (1, 2):
            for p in range(n):
                near[k - 1][row[p], row[(p + k) % n]] += 1
    off = ~np.eye(b, dtype=np.bool_) & apart
    b_over_n = b > n
    impossible = pair_feasibility(b, n, len(seatings)).impossible if b_over_n and not kept else None
    spread = int(upper.max() - upper.min())
    duplicate = len(games) == len(seatings) * n and n > 1
    ordered = int(off.sum())
    mean = len(games) * n / ordered if b >= n and ordered else 0.0
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
        neighbours_impossible=neighbour_feasibility(b, n, len(seatings), duplicate)
        if b >= n and not kept
        else None,
        per_deal=per_deal_neighbours(n, seating) if duplicate and b >= n else None,
        teams=kept,
        teammates_met=teammates_met,
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


def per_deal_neighbours(table_size: int, seating: SeatingMode) -> str:
    """A deal's neighbour counts over its own games (one and two seats left, ordered pairs of
    its positions), and why no layouts do better where that is known (:meth:`SeatingDesign.proof`)."""
    n = table_size
    layouts = game_positions(n, True, seating)
    parts = []
    for k, name in ((1, "left"), (2, "two seats left")):
        counts = Counter((g[s], g[(s + k) % n]) for g in layouts for s in range(n))
        values = [counts[(p, q)] for p in range(n) for q in range(n) if p != q]
        never = sum(1 for v in values if v == 0)
        missing = f", {never} of the {len(values)} ordered pairs never" if never else ""
        parts.append(f"{name} {min(values)}..{max(values)} games{missing}")
    proof = seating_design(seating).proof(n)
    why = "" if proof is None else f"; {proof}"
    return f"seating {seating.value} at {n} seats, {', '.join(parts)}{why}"


def real_teams(bots: Sequence[str], teams: Mapping[str, str]) -> dict[str, str]:
    """``teams`` cut to the bots of ``bots`` in teams of two or more of them (a team of one
    keeps nobody apart)."""
    members = Counter(teams[bot] for bot in bots if bot in teams)
    return {bot: teams[bot] for bot in bots if bot in teams and members[teams[bot]] > 1}


def _with_games(
    bots: tuple[str, ...],
    table_size: int,
    duplicate: bool,
    seed: str,
    seatings: tuple[Seating, ...],
    seating: SeatingMode,
    design: int = 1,
    teams: tuple[tuple[str, str], ...] = (),
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
    return Schedule(bots, table_size, duplicate, seed, seatings, tuple(games), seating, design, teams)


def _spread(values: Any) -> int:
    values = list(values)
    return max(values) - min(values) if values else 0
