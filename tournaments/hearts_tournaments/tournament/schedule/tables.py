"""Which bots sit at each deal's table: what the pair counts can be (necessary conditions and
an exhaustive search for few deals), the constructions (base blocks, residues) and the local
searches that even the pair counts out."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb, isqrt

import numpy as np

from hearts_tournaments.tournament.schedule.base import (
    BASE_BLOCK_COLD,
    BASE_BLOCK_HOT,
    BASE_BLOCK_MOST,
    BASE_BLOCK_MOVES,
    BASE_BLOCK_RESTARTS,
    BASE_BLOCK_SMALL,
    BASE_BLOCK_TABU,
    BASE_TABU_STEPS,
    BASE_TABU_TENURE,
    BASE_TABU_WORK,
    CANDIDATE_TABLES,
    COLD,
    HOT,
    PAIR_PATIENCE,
    PAIR_RESTARTS,
    PAIR_STEPS,
    PAIR_STEPS_MANY_BOTS,
    SEARCH_WORK,
    SMALL_BOTS,
    SMALL_NODES,
    SMALL_TYPES,
    SUGGEST_SEARCH_BOTS,
    TABU_LEAST,
    TABU_STEPS,
    TABU_TENURE,
    TABU_WORK,
    WIDE_HOT,
    WIDE_PATIENCE,
    WIDE_STEPS,
    IntArray,
    Progress,
)
from hearts_tournaments.tournament.schedule.cond import _graphical, _no_plane, _symmetric_design_missing


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
    b: int,
    n: int,
    t: int,
    rng: random.Random,
    say: Progress,
    widen: bool = True,
    search: bool = True,
    design: int = 1,
) -> list[list[int]]:
    """Chooses ``n`` of ``b`` bots for each of ``t`` tables: deals per bot, then pairs, even.

    With ``widen``, a search for spread 2 follows when within one is impossible or not found;
    without ``search``, only the constructions (exhaustive, cyclic) are tried. ``design`` is
    the schedule's (:data:`SCHEDULE_DESIGN`): from 3 on, :func:`_cyclic_tables` tries harder.
    """
    feasible = pair_feasibility(b, n, t)
    if feasible.impossible is None:
        _, exact = _small_design(b, n, t, feasible.low, feasible.high)
        if exact is not None:
            say(f"pairs: within one ({feasible.low}..{feasible.high}) by an exhaustive search")
            label = list(range(b))
            rng.shuffle(label)
            return [[label[x] for x in table] for table in exact]
    start = _cyclic_tables(b, n, t, rng, design)
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
                again_start = _cyclic_tables(b, n, t, rng, design) if attempt % 2 else None
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


def _cyclic_tables(b: int, n: int, t: int, rng: random.Random, design: int = 1) -> list[list[int]] | None:
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

    The blocks come from the annealing of :func:`_base_blocks`; from design 3 on, when it
    finds none, from the tabu search of :func:`_tabu_base_blocks`.
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
        if blocks is None and design >= 3:
            steps = min(BASE_TABU_STEPS, BASE_TABU_WORK // (v * sum(sizes)))
            blocks = _tabu_base_blocks(v, sizes, rng, steps)
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


def _difference_band(v: int, sizes: Sequence[int]) -> tuple[int, int, IntArray]:
    """The band of a difference's count over blocks of these sizes mod ``v`` (the mean rounded
    down and up), and the cost of each count from 0 to one past the most: its squared distance
    outside the band."""
    total = sum(size * (size - 1) for size in sizes)
    q, rest = divmod(total, v - 1)
    low, high = q, q + (1 if rest else 0)
    values = np.arange(total + 2)
    above: IntArray = np.where(values > high, (values - high) ** 2, 0)
    off: IntArray = np.where(values < low, (low - values) ** 2, above)
    return low, high, off


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
    low, high, off = _difference_band(v, sizes)
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


def _tabu_base_blocks(v: int, sizes: Sequence[int], rng: random.Random, steps: int) -> list[list[int]] | None:
    """Blocks of these sizes of residues mod ``v`` whose differences are even within one, or None.

    A tabu search on the cost of :func:`_base_blocks` (squared distance of each difference's
    count outside the band): each step scores at once, with numpy, every replacement of every
    residue of every block by every residue not in it, and makes the best one (ties drawn)
    even when it raises the cost, except bringing a residue back into a block it left within
    the last :data:`BASE_TABU_TENURE` steps. The score of a replacement of ``x`` by ``w`` is
    what removing ``x``'s differences gains plus what adding ``w``'s gains, each against the
    counts before the step (exact unless a difference is both removed and added, or added
    twice); the cost after the step is recounted exactly. Where the annealing stalls, this
    finds blocks: 8 blocks of 11 residues mod 200 in a few hundred to a few thousand steps,
    where the annealing succeeds about once in ten.
    """
    _, _, off = _difference_band(v, sizes)
    gain_up = np.zeros_like(off)  # the cost's change when a count goes up by one
    gain_up[:-1] = off[1:] - off[:-1]
    gain_down = np.zeros_like(off)  # ... and down by one
    gain_down[1:] = off[:-1] - off[1:]
    blocks = [np.array(rng.sample(range(v), size), dtype=np.int64) for size in sizes]
    count = np.zeros(v, dtype=np.int64)

    def differences(block: IntArray) -> IntArray:
        d = (block[None, :] - block[:, None]) % v
        return d[~np.eye(len(block), dtype=np.bool_)]

    for block in blocks:
        np.add.at(count, differences(block), 1)
    cost = int(off[count[1:]].sum())
    residues = np.arange(v, dtype=np.int64)
    never = np.iinfo(np.int64).max // 4
    back: dict[tuple[int, int], int] = {}  # (block, residue) -> the step it may return from
    for step in range(steps):
        if cost == 0:
            return [[int(x) for x in block] for block in blocks]
        scores = []
        for i, block in enumerate(blocks):
            apart = (block[None, :] - block[:, None]) % v  # [x, o]: o - x
            other = ~np.eye(len(block), dtype=np.bool_)
            removed = ((gain_down[count[apart]] + gain_down[count[-apart % v]]) * other).sum(axis=1)
            towards = (block[None, :] - residues[:, None]) % v  # [w, o]: o - w
            added = gain_up[count[towards]] + gain_up[count[-towards % v]]
            score = removed[:, None] + added.sum(axis=1)[None, :] - added.T  # [x, w]
            score[:, block] = never
            for (where, w), until in back.items():
                if where == i and until > step:
                    score[:, w] = never
            scores.append(score)
        lowest = min(int(score.min()) for score in scores)
        if lowest >= never:
            return None
        ties = [np.flatnonzero(score.ravel() == lowest) for score in scores]
        pick = rng.randrange(sum(len(tied) for tied in ties))
        i = 0
        while pick >= len(ties[i]):
            pick -= len(ties[i])
            i += 1
        p, w = divmod(int(ties[i][pick]), v)
        block = blocks[i]
        np.add.at(count, differences(block), -1)
        old = int(block[p])
        block[p] = w
        np.add.at(count, differences(block), 1)
        cost = int(off[count[1:]].sum())
        back[(i, old)] = step + 1 + BASE_TABU_TENURE
        if len(back) > 4 * BASE_TABU_TENURE:
            back = {key: until for key, until in back.items() if until > step}
    return [[int(x) for x in block] for block in blocks] if cost == 0 else None


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

    With ``team`` (a team number per bot), bots of one team never sit at one table: no swap
    that would seat two of them together is taken (the tables given must keep them apart
    already), and their pairs, always at 0, count for nothing.
    """

    def __init__(
        self,
        tables: Sequence[Sequence[int]],
        b: int,
        n: int,
        rng: random.Random,
        team: IntArray | None = None,
    ) -> None:
        self.b, self.n, self.rng = b, n, rng
        self.table = np.array(tables, dtype=np.int64).reshape(len(tables), n)
        self.best = self.table.copy()
        self.cost = 0
        self.team = team

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
        team = self.team
        apart = None if team is None else team[:, None] != team[None, :]
        if apart is not None:
            bad &= apart
        bad_count = bad.sum(axis=1)
        upper = np.triu_indices(b, 1)
        counted = penalty[met[upper]] if apart is None else penalty[met[upper]][apart[upper]]
        cost = int(counted.sum())
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
            forbidden = shared | (rows == exclude)
            if team is not None:
                # z would join a teammate among those staying, or x a teammate other than z.
                mates_x = team[rows] == team[x]
                forbidden = (
                    forbidden
                    | (team[rows][:, :, None] == team[stay][None, None, :]).any(axis=2)
                    | (mates_x.sum(axis=1, keepdims=True) - mates_x > 0)
                )
            delta = np.where(forbidden, never, delta)
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
                if apart is not None:
                    now &= apart[u, touched]
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
