"""The order around each table: the neighbour search that evens out who sits one and two seats
to whose left, copies of one bot kept apart, and every bot's seat positions evened out without
``duplicate``."""

from __future__ import annotations

import math
import random
from collections import Counter

from hearts_tournaments.tournament.schedule.base import (
    ARRANGE_HOT,
    ARRANGE_LEAST,
    ARRANGE_MOST,
    ARRANGE_MOVES,
    COLD,
    LEFT_WEIGHT,
    PARTNER_SCAN,
    SECOND_WEIGHT,
    SELF_WEIGHT,
    SPREAD_MOVES,
    SPREAD_PER_SEAT,
    SeatingMode,
    game_positions,
)
from hearts_tournaments.tournament.schedule.tables import _pair_counts

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
