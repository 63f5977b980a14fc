"""The round-robin schedule: who sits where, on which deal, in which rotation.

A tournament plays ``deals`` distinct deals. Each deal gets one *seating*: the bots at its table
and their order around it. With ``duplicate`` the deal is then played once per rotation of that
seating (rotation ``r`` moves the bot of position ``p`` to seat ``p + r``), so every bot at the
table holds every seat's cards of every hand and most card luck cancels out; without it the
deal is played once, in rotation 0.

Choosing the seatings:

* **More bots than seats.** A seeded simulated annealing picks which bots sit at each deal's
  table: start from tables that give every bot the same number of deals (within one), then
  swap bots between tables (which keeps those numbers) to bring the sum of squared pair counts
  down to its floor, where every pair of bots meets equally often (within one); a few restarts
  if the budget runs out first. Within one is not always possible (7 bots at 6 seats over 2
  deals cannot do it): :func:`suggest_deals` then names the nearest deal count that can.
* **Fewer bots than seats (or as many).** Every bot sits at every table; the ``N mod B`` extra
  seats go to the bots in turn, deal after deal, so seats per bot stay within one.
* **Seat positions.** With ``duplicate`` every bot sits in every position equally often by
  construction. Without it, an equitable edge colouring of the tables-bots multigraph
  (:func:`_balance_positions`) gives every bot every position equally often (within one).
* **Neighbours.** A last local search swaps bots within tables (in pairs of tables without
  ``duplicate``, so that seat positions stay balanced) to even out who sits to whose left (the
  bot one passes to in the first hand).

Every random choice comes from ``derive_seed(seed, "schedule")``: the same bots, table size,
deal count, seed and switch give the same schedule, and the same deals (deal ``d`` is seeded
with ``derive_seed(seed, "deal", d)``) and bot seeds.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from hearts_core.deal import derive_seed

#: Local-search restarts when a balanced composition is not found at once.
RESTARTS = 3
#: Deal counts :func:`suggest_deals` searches before giving up.
SUGGEST_TRIES = 6
#: Weight of a bot sitting next to its own copy (fewer bots than seats): copies sit apart.
SELF_NEIGHBOUR_WEIGHT = 100
#: Position swaps tried per table when ordering the tables.
ARRANGE_MOVES = 400
#: Annealing temperatures at the start and the end of a search. Moves change the pair cost by
#: a few units, so 1.0 lets early searches climb out of shallow minima and 0.02 is greedy.
HOT, COLD = 1.0, 0.02


@dataclass(frozen=True, slots=True)
class Seating:
    """The table of one deal.

    Attributes:
        deal: The deal's number, from 0.
        seed: The deal seed: the referee deals hand ``k`` from ``(seed, k)``.
        order: The bot at each seat in rotation 0.
    """

    deal: int
    seed: str
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the tournament.

    Attributes:
        index: Its position in the schedule (the order games are started in).
        key: Its stable name, ``d003-r02`` (deal 3, rotation 2) or ``d003`` without duplicate.
        deal: The deal's number.
        rotation: How far the deal's seating is rotated.
        seed: The deal seed.
        seats: The bot at each seat.
        bot_seeds: The seed given to the bot at each seat.
    """

    index: int
    key: str
    deal: int
    rotation: int
    seed: str
    seats: tuple[str, ...]
    bot_seeds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly a schedule spreads bots, pairs and seats.

    Tables and pairs are counted in deals (with ``duplicate`` a deal is played in every
    rotation, so every count in games would be a multiple of the table size); seat positions
    are counted in games.

    Attributes:
        games: Games in the schedule.
        deals: Deals in the schedule.
        deals_per_bot: Deals each bot sits at.
        table_seats_per_bot: Seats each bot holds, summed over deals (more than its deals
            when it fills several seats of a table).
        pair_min: The fewest deals any two bots share a table.
        pair_max: The most deals any two bots share a table.
        seat_counts: Per bot, its games at each seat position.
        left_min: The fewest times (summed over deals) a bot has a given other bot as its left
            neighbour, the one it passes to in the first hand.
        left_max: The most.
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

    @property
    def seat_spread(self) -> int:
        """The largest difference between a bot's most and least used seat positions."""
        return max((max(c) - min(c) for c in self.seat_counts.values()), default=0)

    @property
    def within_one(self) -> bool:
        """Whether deals, seats, pairs and seat positions per bot are all balanced within one."""
        return (
            _spread(self.deals_per_bot.values()) <= 1
            and _spread(self.table_seats_per_bot.values()) <= 1
            and self.pair_max - self.pair_min <= 1
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
            "seat_counts": {bot: list(c) for bot, c in self.seat_counts.items()},
            "seat_spread": self.seat_spread,
            "left_neighbour": {"min": self.left_min, "max": self.left_max},
            "within_one": self.within_one,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Balance:
        """The balance report stored by :meth:`to_json`."""
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
        )

    def lines(self) -> list[str]:
        """The balance report as a few readable lines."""
        deals = self.deals_per_bot.values()
        seats = self.table_seats_per_bot.values()
        verdict = "balanced within one" if self.within_one else "NOT balanced within one"
        return [
            f"{self.games} games on {self.deals} deals; each bot sits at {min(deals)}..{max(deals)} "
            f"deals' tables, holding {min(seats)}..{max(seats)} seats in all",
            f"every pair of bots shares a table on {self.pair_min}..{self.pair_max} deals; "
            f"a bot's games per seat position differ by at most {self.seat_spread}; "
            f"left neighbours {self.left_min}..{self.left_max} times: {verdict}",
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
    """

    bots: tuple[str, ...]
    table_size: int
    duplicate: bool
    seed: str
    seatings: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...]

    def balance(self) -> Balance:
        """Counts how evenly the schedule spreads bots, pairs and seats."""
        return balance_of(self.bots, self.table_size, self.games, self.seatings)

    def to_json(self) -> dict[str, Any]:
        """The schedule as stored with the tournament."""
        return {
            "bots": list(self.bots),
            "table_size": self.table_size,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "seatings": [{"deal": s.deal, "seed": s.seed, "order": list(s.order)} for s in self.seatings],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Schedule:
        """The schedule stored by :meth:`to_json`."""
        seatings = tuple(Seating(s["deal"], s["seed"], tuple(s["order"])) for s in data["seatings"])
        return _with_games(tuple(data["bots"]), data["table_size"], data["duplicate"], data["seed"], seatings)


def make_schedule(
    bots: Sequence[str], table_size: int, deals: int, seed: str, duplicate: bool = True
) -> Schedule:
    """Schedules a round-robin tournament.

    Args:
        bots: Distinct bot names (at least two).
        table_size: Seats per table.
        deals: Distinct deals.
        seed: The tournament seed.
        duplicate: Play each deal in every rotation of its seating.

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
    tables = _compositions(b, n, deals, rng) if b > n else _shares(b, n, deals)
    tables = _arrange(tables, b, n, duplicate, rng)
    seatings = tuple(
        Seating(deal=d, seed=derive_seed(seed, "deal", d), order=tuple(bots[x] for x in table))
        for d, table in enumerate(tables)
    )
    return _with_games(tuple(bots), table_size, duplicate, seed, seatings)


def suggest_deals(bots: int, table_size: int, deals: int, seed: str = "1") -> int | None:
    """The smallest deal count above ``deals`` whose schedule is balanced within one.

    Only meaningful with more bots than seats (otherwise every count is balanced). Searches
    at most :data:`SUGGEST_TRIES` counts that pass a quick necessary test, within
    ``3 * bots`` of ``deals``, and returns None if none of them works.
    """
    rng = random.Random(derive_seed(seed, "suggest"))
    tries = 0
    for count in range(deals + 1, deals + 3 * bots + 1):
        if not _pairs_can_balance(bots, table_size, count):
            continue
        tries += 1
        if tries > SUGGEST_TRIES:
            break
        tables = _compositions(bots, table_size, count, rng)
        if _pair_cost(tables) == _pair_cost_floor(bots, table_size, count):
            return count
    return None


def balance_of(
    bots: Sequence[str], table_size: int, games: Sequence[ScheduledGame], seatings: Sequence[Seating]
) -> Balance:
    """Counts deals, seats, pairs, seat positions and left neighbours of a schedule."""
    deals_per_bot = dict.fromkeys(bots, 0)
    table_seats = dict.fromkeys(bots, 0)
    pairs = dict.fromkeys(combinations(bots, 2), 0)
    for seating in seatings:
        present = set(seating.order)
        for bot in present:
            deals_per_bot[bot] += 1
        for bot in seating.order:
            table_seats[bot] += 1
        for pair in pairs:
            if pair[0] in present and pair[1] in present:
                pairs[pair] += 1
    seat_counts = {bot: [0] * table_size for bot in bots}
    for game in games:
        for position, bot in enumerate(game.seats):
            seat_counts[bot][position] += 1
    left = Counter((s.order[p], s.order[(p + 1) % table_size]) for s in seatings for p in range(table_size))
    distinct = [left[(x, y)] for x in bots for y in bots if x != y]
    return Balance(
        games=len(games),
        deals=len(seatings),
        deals_per_bot=deals_per_bot,
        table_seats_per_bot=table_seats,
        pair_min=min(pairs.values()),
        pair_max=max(pairs.values()),
        seat_counts={bot: tuple(c) for bot, c in seat_counts.items()},
        left_min=min(distinct),
        left_max=max(distinct),
    )


def game_key(deal: int, rotation: int | None) -> str:
    """The stable name of a game: ``d003-r02``, or ``d003`` when deals are not rotated."""
    return f"d{deal:03d}" if rotation is None else f"d{deal:03d}-r{rotation:02d}"


def _with_games(
    bots: tuple[str, ...], table_size: int, duplicate: bool, seed: str, seatings: tuple[Seating, ...]
) -> Schedule:
    games: list[ScheduledGame] = []
    for seating in seatings:
        for rotation in range(table_size if duplicate else 1):
            key = game_key(seating.deal, rotation if duplicate else None)
            # Rotation r moves the bot of position p to seat p + r.
            seats = tuple(seating.order[(s - rotation) % table_size] for s in range(table_size))
            games.append(
                ScheduledGame(
                    index=len(games),
                    key=key,
                    deal=seating.deal,
                    rotation=rotation,
                    seed=seating.seed,
                    seats=seats,
                    bot_seeds=tuple(derive_seed(seed, "bot", key, s) for s in range(table_size)),
                )
            )
    return Schedule(bots, table_size, duplicate, seed, seatings, tuple(games))


def _spread(values: Any) -> int:
    values = list(values)
    return max(values) - min(values) if values else 0


def _shares(b: int, n: int, deals: int) -> list[list[int]]:
    """Every bot at every table; the ``n mod b`` extra seats go round the bots deal by deal."""
    base, extra = divmod(n, b)
    tables: list[list[int]] = []
    for d in range(deals):
        lucky = {(d * extra + j) % b for j in range(extra)}
        counts = [base + (1 if x in lucky else 0) for x in range(b)]
        # Interleaved (A B C A B C ...) so that copies of a bot start apart.
        table = [x for layer in range(base + 1) for x in range(b) if counts[x] > layer]
        tables.append(table)
    return tables


def _pair_cost(tables: Sequence[Sequence[int]]) -> int:
    pairs = Counter(p for t in tables for p in combinations(sorted(t), 2))
    return sum(c * c for c in pairs.values())


def _pair_cost_floor(b: int, n: int, t: int) -> int:
    """The least possible sum of squared pair counts: every pair within one of the mean."""
    total = t * n * (n - 1) // 2
    pairs = b * (b - 1) // 2
    q, r = divmod(total, pairs)
    return (pairs - r) * q * q + r * (q + 1) * (q + 1)


def _pairs_can_balance(b: int, n: int, t: int) -> bool:
    """A necessary condition for pairs within one when games per bot are within one.

    A bot at ``a`` tables meets ``a * (n - 1)`` partners in all; with every pair count ``q`` or
    ``q + 1`` that sum must lie between ``q * (b - 1)`` and ``(q + 1) * (b - 1)``.
    """
    a, extra = divmod(t * n, b)
    q, r = divmod(t * n * (n - 1) // 2, b * (b - 1) // 2)
    high = q + (1 if r else 0)
    counts = [a] if extra == 0 else [a, a + 1] if extra < b else [a + 1]
    return all(q * (b - 1) <= c * (n - 1) <= high * (b - 1) for c in counts)


def _compositions(b: int, n: int, t: int, rng: random.Random) -> list[list[int]]:
    """Chooses ``n`` of ``b`` bots for each of ``t`` tables, pairs as even as possible."""
    floor = _pair_cost_floor(b, n, t)
    best: list[list[int]] | None = None
    best_cost = 0
    moves = 10_000 + 1_000 * t
    # Restarts only help when balance within one is possible at all.
    for _ in range(RESTARTS if _pairs_can_balance(b, n, t) else 1):
        tables, cost = _anneal_pairs(_greedy_tables(b, n, t, rng), b, floor, moves, rng)
        if best is None or cost < best_cost:
            best, best_cost = tables, cost
        if cost == floor:
            break
    assert best is not None
    return best


def _greedy_tables(b: int, n: int, t: int, rng: random.Random) -> list[list[int]]:
    """Tables filled with the bots that have played least so far: deals per bot within one."""
    played = [0] * b
    tables: list[list[int]] = []
    for _ in range(t):
        order = sorted(range(b), key=lambda x: (played[x], rng.random()))
        table = order[:n]
        for x in table:
            played[x] += 1
        tables.append(table)
    return tables


def _anneal_pairs(
    tables: list[list[int]], b: int, floor: int, moves: int, rng: random.Random
) -> tuple[list[list[int]], int]:
    """Swaps bots between tables (deals per bot unchanged) to even out the pair counts.

    Simulated annealing on the sum of squared pair counts, which is least exactly when every
    pair count is within one of the mean: a swap that makes it worse is still taken with a
    probability that falls as the search cools, so that it does not stop in a local minimum.

    Returns:
        The best tables found and their sum of squared pair counts.
    """
    t = len(tables)
    members = [set(table) for table in tables]
    pairs = [[0] * b for _ in range(b)]
    for table in tables:
        for x, y in combinations(table, 2):
            pairs[x][y] += 1
            pairs[y][x] += 1
    cost = sum(pairs[x][y] ** 2 for x in range(b) for y in range(x + 1, b))
    best, best_cost = [list(table) for table in tables], cost
    if t < 2:
        return best, cost
    hot, cold = HOT, COLD
    for step in range(moves):
        if cost == floor:
            break
        t1, t2 = rng.sample(range(t), 2)
        i = rng.randrange(len(tables[t1]))
        j = rng.randrange(len(tables[t2]))
        x, y = tables[t1][i], tables[t2][j]
        if y in members[t1] or x in members[t2]:
            continue
        # Keys always start with x or y and never end with either, so no pair appears twice.
        change: Counter[tuple[int, int]] = Counter()
        for z in tables[t1]:
            if z != x:
                change[(x, z)] -= 1
                change[(y, z)] += 1
        for w in tables[t2]:
            if w != y:
                change[(y, w)] -= 1
                change[(x, w)] += 1
        delta = sum(2 * pairs[u][v] * d + d * d for (u, v), d in change.items())
        if delta > 0:
            heat = hot * (cold / hot) ** (step / moves)
            if rng.random() >= math.exp(-delta / heat):
                continue
        for (u, v), d in change.items():
            pairs[u][v] += d
            pairs[v][u] += d
        tables[t1][i], tables[t2][j] = y, x
        members[t1].remove(x)
        members[t1].add(y)
        members[t2].remove(y)
        members[t2].add(x)
        cost += delta
        if cost < best_cost:
            best, best_cost = [list(table) for table in tables], cost
    return best, best_cost


def _arrange(tables: list[list[int]], b: int, n: int, duplicate: bool, rng: random.Random) -> list[list[int]]:
    """Orders each table: seat positions even (without rotations), then left neighbours even.

    Without rotations the seat positions come from :func:`_balance_positions`; the neighbour
    search then only swaps two bots in two tables at once (x and y at positions i and j in one
    table, y and x in the other), which keeps every bot's seat counts.
    """
    tables = [list(table) for table in tables]
    if b > n:
        for table in tables:
            rng.shuffle(table)
    if not duplicate:
        tables = _balance_positions(tables, n, rng)
    left = [[0] * b for _ in range(b)]
    for table in tables:
        for p in range(n):
            left[table[p]][table[(p + 1) % n]] += 1
    count = len(tables)
    for _ in range(ARRANGE_MOVES * count):
        first = rng.randrange(count)
        i, j = rng.sample(range(n), 2)
        x, y = tables[first][i], tables[first][j]
        if x == y:
            continue
        swapped = [first]
        if not duplicate:
            partners = [t for t in range(count) if tables[t][i] == y and tables[t][j] == x and t != first]
            if not partners:
                continue
            swapped.append(rng.choice(partners))
        touched = {(i - 1) % n, i, (j - 1) % n, j}
        change: Counter[tuple[int, int]] = Counter()
        for t in swapped:
            for p in touched:
                change[(tables[t][p], tables[t][(p + 1) % n])] -= 1
            tables[t][i], tables[t][j] = tables[t][j], tables[t][i]
            for p in touched:
                change[(tables[t][p], tables[t][(p + 1) % n])] += 1
        delta = sum(
            (SELF_NEIGHBOUR_WEIGHT if u == v else 1) * (2 * left[u][v] * d + d * d)
            for (u, v), d in change.items()
        )
        if delta > 0:
            for t in swapped:
                tables[t][i], tables[t][j] = tables[t][j], tables[t][i]
            continue
        for (u, v), d in change.items():
            left[u][v] += d
    return tables


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
