"""Tables that keep teams apart: no two bots of one team (or linked entrants) at one table.

A team is a set of bots the organiser keeps from meeting, because they may help one another
(one person behind several entrants, or bots that declared a common side). The tables are then a
block design on *sides* (a team, or a bot of no team): every table seats ``n`` different sides.

* **Seats per bot.** A team sits at most once per deal, so its members share at most the deal
  count: with ``k`` members each sits at about ``deals / k`` deals at most. Every other bot
  sits at as many deals as the tables then need, as evenly as possible (within one of each
  other), so teams whose members would sit at more deals than that play fewer, and the bots
  of no team more (:func:`_seats`). Teams can be kept apart whenever the teams and the bots of
  no team make at least ``n`` sides (:func:`team_problem`).
* **Filling the tables.** Deal after deal, a side whose remaining seats equal the remaining
  deals must sit at this table (there are never more than ``n`` such, and after it every side
  needs at most one seat per remaining deal: the tables can always be finished); the other seats
  go, one by one, to the side whose best member has met the table's bots least, its member with
  the most seats still to sit.
* **Pairs across teams.** The pair search of the schedule (:class:`.tables._PairSearch`) then
  evens out how often bots of different teams meet, never taking a swap that would seat two
  bots of one team together; teammates' pairs, always 0, do not count. The band is the mean
  over pairs of different teams, rounded down and up; when it is not reached, a band one wider.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from hearts_tournaments.tournament.schedule.base import (
    PAIR_PATIENCE,
    PAIR_STEPS,
    SEARCH_WORK,
    WIDE_HOT,
    WIDE_PATIENCE,
    WIDE_STEPS,
    IntArray,
    Progress,
)
from hearts_tournaments.tournament.schedule.tables import _pair_counts, _PairSearch, _patience


def team_numbers(bots: Sequence[str], teams: Mapping[str, str]) -> IntArray:
    """A side number per bot: bots of one team share theirs, every other bot has its own."""
    numbers: dict[str, int] = {}
    out = []
    for i, bot in enumerate(bots):
        team = teams.get(bot)
        out.append(numbers.setdefault(team, len(bots) + len(numbers)) if team is not None else i)
    return np.array(out, dtype=np.int64)


def team_problem(bots: Sequence[str], teams: Mapping[str, str], table_size: int) -> str | None:
    """Why no schedule can keep these teams apart, as one line, or None when one can."""
    side = team_numbers(bots, teams)
    sides = len(set(side.tolist()))
    if sides < table_size:
        return (
            f"{len(bots)} bots in {sides} sides (teams, and bots of no team) cannot fill a table of "
            f"{table_size} without seating two of one team together: add bots, make teams smaller or "
            "use smaller tables"
        )
    return None


def _seats(side: IntArray, n: int, t: int) -> list[int] | None:
    """Deals per bot: as even as the teams allow (None when no way fills the tables).

    A team sits at most once per deal, so its members share at most ``t`` deals: each member's
    cap is ``t // k`` or one more (``k`` members); a bot of no team's cap is ``t``. The
    ``t * n`` seats are then poured in evenly: every bot gets the same level, or its cap when
    that is lower, and the seats left over go one each to bots below their caps, bots of no
    team first.
    """
    b = len(side)
    caps = [t] * b
    members: dict[int, list[int]] = {}
    for i in range(b):
        members.setdefault(int(side[i]), []).append(i)
    for group in members.values():
        if len(group) > 1:
            q, r = divmod(t, len(group))
            for j, i in enumerate(group):
                caps[i] = q + (1 if j < r else 0)
    total = t * n
    if sum(caps) < total:
        return None
    level = 0
    while level < max(caps) and sum(min(c, level + 1) for c in caps) <= total:
        level += 1
    seats = [min(c, level) for c in caps]
    left = total - sum(seats)
    for i in sorted(range(b), key=lambda i: (len(members[int(side[i])]), i)):
        if left == 0:
            break
        if seats[i] < caps[i]:
            seats[i] += 1
            left -= 1
    return seats


def team_tables(b: int, n: int, t: int, side: IntArray, rng: random.Random, say: Progress) -> list[list[int]]:
    """The bots (by index) at each of ``t`` tables of ``n``: no two of one side together, deals
    per bot within one, pairs across sides as even as the search reaches (module docstring).

    Raises:
        ValueError: :func:`team_problem` applies.
    """
    seats = _seats(side, n, t)
    if seats is None:
        raise ValueError(
            f"{len(set(side.tolist()))} sides cannot fill tables of {n} without two of a team together"
        )
    tables = _fill(b, n, t, side, seats, rng)
    apart = side[:, None] != side[None, :]
    across = int(np.triu(apart, 1).sum())
    mean = t * math.comb(n, 2) / across
    low, high = math.floor(mean), math.ceil(mean)
    search = _PairSearch(tables, b, n, rng, team=side)
    steps = search.run(low, high, min(PAIR_STEPS, SEARCH_WORK // (t + b)), _patience(PAIR_PATIENCE, t))
    if search.cost == 0:
        say(f"pairs across teams: within one ({low}..{high}), {steps} search steps; teammates never meet")
        return search.best_tables()
    say(f"pairs across teams: within one ({low}..{high}) not found in {steps} search steps")
    best = search.best_tables()
    spread = _spread_across(best, b, apart)
    for wide_low in sorted({max(low - 1, 0), low}):
        search.reset_to_best()
        wide = min(WIDE_STEPS, SEARCH_WORK // (t + b))
        steps = search.run(wide_low, wide_low + 2, wide, _patience(WIDE_PATIENCE, t), WIDE_HOT)
        found = search.best_tables()
        reached = search.cost == 0
        say(
            f"pairs across teams: widened to {wide_low}..{wide_low + 2}, "
            f"{'reached' if reached else 'not reached'} in {steps} steps"
        )
        if _spread_across(found, b, apart) < spread:
            best, spread = found, _spread_across(found, b, apart)
        if reached:
            break
    return best


def _fill(
    b: int, n: int, t: int, side: IntArray, seats: Sequence[int], rng: random.Random
) -> list[list[int]]:
    """Deal after deal: the sides that must sit, then the side whose best member met the table's
    bots least (ties drawn), its member with the most seats left."""
    left = list(seats)
    members: dict[int, list[int]] = {}
    for i in range(b):
        members.setdefault(int(side[i]), []).append(i)
    need = {s: sum(left[i] for i in group) for s, group in members.items()}
    met = np.zeros((b, b), dtype=np.int64)
    jitter = {i: rng.random() for i in range(b)}
    tables: list[list[int]] = []
    for deal in range(t):
        remaining = t - deal
        table: list[int] = []
        used: set[int] = set()

        def best_member(s: int, table: list[int] = table) -> int:
            return min(
                (i for i in members[s] if left[i] > 0),
                key=lambda i: (-left[i], int(met[i, table].sum()) if table else 0, jitter[i]),
            )

        forced = [s for s, v in need.items() if v == remaining]
        for s in sorted(forced):
            table.append(best_member(s))
            used.add(s)
        while len(table) < n:
            candidates = [s for s, v in need.items() if v > 0 and s not in used]
            chosen = min(
                candidates,
                key=lambda s: (int(met[best_member(s), table].sum()) if table else 0, rng.random()),
            )
            table.append(best_member(chosen))
            used.add(chosen)
        for i in table:
            left[i] -= 1
            need[int(side[i])] -= 1
        for x, y in combinations(table, 2):
            met[x, y] += 1
            met[y, x] += 1
        tables.append(sorted(table))
    return tables


def _spread_across(tables: Sequence[Sequence[int]], b: int, apart: np.ndarray) -> int:
    """How many more deals the closest pair of different sides shares than the most distant."""
    met = _pair_counts(tables, b)
    upper = np.triu(apart, 1)
    counts = met[upper]
    return int(counts.max() - counts.min()) if len(counts) else 0
