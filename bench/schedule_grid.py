"""Pair balance over a grid of sizes: how often within one is reached, proven impossible, or neither.

The grid: table sizes 6 to 11, bots from ``table_size + 1`` to ``2 * table_size + 2`` (more bots
than seats), and deals 2, 3, 5, 8, ``bots // 2``, ``bots``, ``bots + 3`` and ``2 * bots - 1``
(each distinct count once): 483 cases. For each it designs the tables as
:func:`~hearts_tournaments.tournament.schedule.make_schedule` does (seed 1; the seat order, which does not
change who meets whom, is left out) and sorts the case into

* ``within_one``: every pair of bots shares a table equally often, within one;
* ``impossible``: :func:`~hearts_tournaments.tournament.schedule.pair_feasibility` proves within one
  impossible (the schedule then aims at spread 2);
* ``undecided``: neither.

Usage::

    bench/schedule_grid.py [--json] [--list]

Prints the counts (and the spreads reached), ``--list`` every undecided case too, or with
``--json`` one object with every case. Counts do not depend on the machine: the design is a pure
function of its inputs; the CPU seconds do a little.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from typing import Any

from hearts_core.deal import derive_seed
from hearts_tournaments.tournament.schedule import SCHEDULE_DESIGN, pair_feasibility
from hearts_tournaments.tournament.schedule.tables import _compositions, _pair_spread

#: Table sizes of the grid.
SIZES = range(6, 12)


def grid() -> list[tuple[int, int, int]]:
    """Every (bots, table size, deals) of the grid."""
    cases = []
    for n in SIZES:
        for b in range(n + 1, 2 * n + 3):
            for t in sorted({2, 3, 5, 8, b // 2, b, b + 3, 2 * b - 1}):
                cases.append((b, n, t))
    return cases


def classify(bots: int, size: int, deals: int) -> dict[str, Any]:
    """Designs one case's tables and says which of the three it is."""
    cpu = time.process_time()
    feasibility = pair_feasibility(bots, size, deals)
    rng = random.Random(derive_seed("1", "schedule"))
    tables = _compositions(bots, size, deals, rng, lambda _line: None, design=SCHEDULE_DESIGN)
    spread = _pair_spread(tables, bots)
    if spread <= 1:
        status = "within_one"
    elif feasibility.impossible is not None:
        status = "impossible"
    else:
        status = "undecided"
    return {
        "bots": bots,
        "table_size": size,
        "deals": deals,
        "status": status,
        "spread": spread,
        "cpu_seconds": round(time.process_time() - cpu, 3),
    }


def bench() -> dict[str, Any]:
    """Every case of the grid, and the counts."""
    started = time.process_time()
    cases = [classify(*case) for case in grid()]
    counts = Counter(c["status"] for c in cases)
    spreads = {
        status: dict(sorted(Counter(c["spread"] for c in cases if c["status"] == status).items()))
        for status in ("within_one", "impossible", "undecided")
    }
    return {
        "cases": len(cases),
        "counts": {s: counts.get(s, 0) for s in ("within_one", "impossible", "undecided")},
        "spreads": spreads,
        "cpu_seconds": round(time.process_time() - started, 1),
        "grid": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--list", action="store_true", help="Also print every undecided case.")
    args = parser.parse_args()
    result = bench()
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    counts = result["counts"]
    print(
        f"{result['cases']} cases with more bots than seats: within one {counts['within_one']}, "
        f"proven impossible {counts['impossible']}, undecided {counts['undecided']} "
        f"({result['cpu_seconds']} s CPU)"
    )
    for status, spreads in result["spreads"].items():
        shown = ", ".join(f"spread {k}: {v}" for k, v in spreads.items())
        print(f"  {status}: {shown or 'none'}")
    if args.list:
        for case in result["grid"]:
            if case["status"] == "undecided":
                print(
                    f"  undecided: {case['bots']} bots, {case['table_size']} seats, {case['deals']} deals "
                    f"(spread {case['spread']})"
                )


if __name__ == "__main__":
    main()
