"""The order around each table: the neighbour search that evens out who sits one and two seats
to whose left, copies of one bot kept apart, and every bot's seat positions evened out without
``duplicate``."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np

from hearts_tournaments.tournament.schedule.base import (
    ARRANGE_HOT,
    ARRANGE_LEAST,
    ARRANGE_MOST,
    ARRANGE_MOVES,
    BAND_MOST,
    BAND_OUT,
    BAND_PLACE_SWAPS,
    BAND_SWAPS,
    COLD,
    LEFT_WEIGHT,
    PARTNER_SCAN,
    SECOND_WEIGHT,
    SELF_WEIGHT,
    SPREAD_MOVES,
    SPREAD_PER_SEAT,
    IntArray,
    SeatingMode,
    game_positions,
    seating_design,
)
from hearts_tournaments.tournament.schedule.tables import _pair_counts

# --- The order around each table ------------------------------------------------------------


def _arrange(
    tables: list[list[int]],
    b: int,
    n: int,
    duplicate: bool,
    seating: SeatingMode,
    rng: random.Random,
    design: int,
) -> list[list[int]]:
    """Orders each table: seat positions even (without rotations), then neighbours even.

    With ``design`` 2 and duplicate deals of distinct bots in games that are not rotations of
    one order, :func:`_even_bands` follows.

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
    if (
        design >= 2
        and duplicate
        # (Rotated deals keep a bot's neighbours in all their games: counts move by whole
        # deals, and the squares above already even them out.)
        and not seating_design(seating).rotates(n)
        and all(len(set(table)) == n for table in tables)
    ):
        tables = _even_bands(tables, b, n, seating, rng)
    return tables


def _even_bands(
    tables: list[list[int]], b: int, n: int, seating: SeatingMode, rng: random.Random
) -> list[list[int]]:
    """Reorders tables so that fewer neighbour counts leave the band within one of the mean.

    The annealing of :func:`_arrange` evens squared counts with random swaps, and stalls far
    from the band at league sizes (200 bots at 11 seats over 1,600 deals: left neighbour 2..8
    games against 4..5). Here every swap of a table is scored at once, on the cost
    ``BAND_OUT * (games outside the band)^2 + count^2`` per ordered pair (the band of the
    balance report: the mean rounded down and up), one and two seats
    apart weighted as in the annealing, and the best one is taken while it lowers the cost:

    1. The tables are placed again in turn, each starting from its annealed order. A pair's
       count is then scored with the deals it will still share counted at the mean a deal
       gives, ``n / (n - 1)`` games each, so early tables leave room for later ones.
    2. Sweeps over all tables in a drawn order until a sweep changes nothing.

    Both together score at most :data:`BAND_SWAPS` tables' swaps per table (and
    :data:`BAND_MOST` in all).

    The annealed orders stay when the result does not cost less than they did.

    Counts are integers (scaled by ``n - 1``): the same schedule on every machine.
    """
    games = _deal_neighbours(n, True, seating)
    scale = n - 1  # a deal's mean, n / (n - 1) games, times this is a whole number
    total, pairs = len(tables) * n * n, b * (b - 1)
    low, high = scale * (total // pairs), scale * -(-total // pairs)  # the mean rounded down, up
    weights = (LEFT_WEIGHT, SECOND_WEIGHT)

    def cost(x: IntArray, k: int) -> IntArray:
        out = np.maximum(0, np.maximum(low - x, x - high))
        result: IntArray = weights[k] * (BAND_OUT * out * out + x * x)
        return result

    span = np.arange(n)
    others = np.ones((n, n, n), dtype=np.bool_)  # [i, j, m]: m is neither i nor j
    others[span[:, None], span[None, :], span[:, None]] = False
    others[span[:, None], span[None, :], span[None, :]] = False
    # For the swap of positions i and j: what the pairs of the bot at i with the bot at m
    # (m neither) gain, as first [i, j, m] and as second of the pair, and the pair itself.
    as_first = [scale * (games[k][None, :, :] - games[k][:, None, :]) for k in range(2)]
    as_second = [scale * (games[k].T[None, :, :] - games[k].T[:, None, :]) for k in range(2)]
    between = [scale * (games[k].T - games[k]) for k in range(2)]
    upper = np.triu_indices(n, 1)

    def best_swap(values: list[IntArray]) -> tuple[int, int] | None:
        """The swap that lowers the cost most (ties drawn), given the table's scaled counts."""
        change = np.zeros((n, n), dtype=np.int64)
        for k in range(2):
            here = values[k]
            first = here[:, None, :]
            gain = ((cost(first + as_first[k], k) - cost(first, k)) * others).sum(axis=2)
            second = here.T[:, None, :]
            gain += ((cost(second + as_second[k], k) - cost(second, k)) * others).sum(axis=2)
            pair = cost(here + between[k], k) - cost(here, k)
            change += gain + gain.T + pair + pair.T
        flat = change[upper]
        least = int(flat.min())
        if least >= 0:
            return None
        ties = np.flatnonzero(flat == least)
        pick = int(ties[rng.randrange(len(ties))])
        return int(upper[0][pick]), int(upper[1][pick])

    def whole_cost(counts: IntArray) -> int:
        off = ~np.eye(b, dtype=np.bool_)
        return sum(int(cost(scale * counts[k][off], k).sum()) for k in range(2))

    orders = [np.array(table, dtype=np.int64) for table in tables]
    counts = np.zeros((2, b, b), dtype=np.int64)
    ahead = np.zeros((b, b), dtype=np.int64)  # deals each pair still shares
    for order in orders:
        at = np.ix_(order, order)
        ahead[at] += 1
        counts[:, at[0], at[1]] += games
    annealed = whole_cost(counts)
    counts[:] = 0
    budget = min(BAND_SWAPS * len(orders), BAND_MOST)  # tables scored, placing and sweeping
    for order in orders:
        at = np.ix_(order, order)
        ahead[at] -= 1
        for _ in range(min(BAND_PLACE_SWAPS, budget)):
            at = np.ix_(order, order)
            swap = best_swap([scale * (counts[k][at] + games[k]) + n * ahead[at] for k in range(2)])
            budget -= 1
            if swap is None:
                break
            i, j = swap
            order[i], order[j] = order[j], order[i]
        at = np.ix_(order, order)
        counts[:, at[0], at[1]] += games
    while budget > 0:
        moved = False
        for t in rng.sample(range(len(orders)), len(orders)):
            order = orders[t]
            at = np.ix_(order, order)
            swap = best_swap([scale * counts[k][at] for k in range(2)])
            budget -= 1
            if swap is not None:
                counts[:, at[0], at[1]] -= games
                i, j = swap
                order[i], order[j] = order[j], order[i]
                at = np.ix_(order, order)
                counts[:, at[0], at[1]] += games
                moved = True
            if budget <= 0:
                break
        if not moved:
            break
    if whole_cost(counts) >= annealed:
        return tables  # (placing the tables again can end worse than the annealing did)
    return [[int(bot) for bot in order] for order in orders]


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


def _deal_neighbours(n: int, duplicate: bool, seating: SeatingMode) -> IntArray:
    """``[k - 1, p, p2]``: the deal's games in which position ``p2`` sits ``k`` seats left of
    position ``p`` (``k`` 1 and 2)."""
    out = np.zeros((2, n, n), dtype=np.int64)
    for layout in game_positions(n, duplicate, seating):
        for s in range(n):
            for k in (1, 2):
                out[k - 1, layout[s], layout[(s + k) % n]] += 1
    return out


def _pair_floor(games: IntArray) -> int:
    """The fewest games any ordered pair of distinct positions gets in ``games`` (one ``k``)."""
    return int(games[~np.eye(len(games), dtype=np.bool_)].min())


def _neighbour_bases(n: int, duplicate: bool, seating: SeatingMode) -> tuple[int, int]:
    """Games of a deal in which every ordered pair of positions sits one (two) seats apart."""
    games = _deal_neighbours(n, duplicate, seating)
    return _pair_floor(games[0]), _pair_floor(games[1])


def _neighbour_entries(n: int, duplicate: bool, seating: SeatingMode) -> list[tuple[int, int, int, int]]:
    """The neighbour weights of a deal's positions: ``(offset, p, p2, games)``.

    ``games`` counts the deal's games in which position ``p2`` sits ``offset`` seats left of
    position ``p``, less the part every pair of positions shares (which no order changes).
    """
    games = _deal_neighbours(n, duplicate, seating)
    out: list[tuple[int, int, int, int]] = []
    for k in (1, 2):
        w = games[k - 1].tolist()
        base = _pair_floor(games[k - 1])
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
