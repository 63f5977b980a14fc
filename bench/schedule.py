"""Schedule quality and speed: pair spread, neighbour spread, time taken.

For 12, 50 and 200 bots at tables of 6, 8 and 11 it takes the deal count of the issue that
reported them (15, 132 and 1,091), asks :func:`pair_feasibility` what is possible there, builds
the schedule with every seating (duplicate deals; the default seating also by design 1, without
the band search) and, when pairs
are not within one, asks :func:`suggest_deals` for the smallest larger count that is and builds
that too. For
every schedule it prints the pair-count spread (deals each pair of bots shares, min..max), the
neighbour spread (games in which a given bot sits one, and two, seats to another's left,
min..max), the ordered pairs whose counts are outside the band (the mean rounded down and up,
recounted from the games) and the seconds the design took (wall clock, and CPU, which load does not change).

Usage::

    bench/schedule.py [--json] [--quick] [--largest]

``--quick`` skips the 200-bot case; ``--largest`` also builds the largest schedule the config
allows (``MAX_BOTS`` bots, ``MAX_DEALS`` deals, 11 seats, both seatings) and prints its time.
Prints readable lines, or with ``--json`` one object. The
time taken depends on the machine's load (the load average is printed with it); the spreads do
not: the schedule is a pure function of its inputs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Any

import numpy as np

from hearts_tournaments.tournament.config import MAX_BOTS, MAX_DEALS
from hearts_tournaments.tournament.schedule import (
    DEFAULT_SEATING,
    SCHEDULE_DESIGN,
    Schedule,
    SeatingMode,
    make_schedule,
    pair_feasibility,
    suggest_deals,
)

#: (bots, table size, deals of the issue's report).
CASES = [(12, 6, 15), (50, 8, 132), (200, 11, 1091)]


def outside_band(schedule: Schedule) -> list[int]:
    """Ordered pairs whose one- and two-seats-left counts, recounted from the games, are not
    the balance report's band (the mean rounded down or up)."""
    index = {bot: i for i, bot in enumerate(schedule.bots)}
    b, n = len(schedule.bots), schedule.table_size
    near = np.zeros((2, b, b), dtype=np.int64)
    for game in schedule.games:
        row = [index[bot] for bot in game.seats]
        for k in (1, 2):
            for s in range(n):
                near[k - 1, row[s], row[(s + k) % n]] += 1
    mean = len(schedule.games) * n / (b * (b - 1))
    off = ~np.eye(b, dtype=np.bool_)
    low, high = math.floor(mean), math.ceil(mean)
    return [int(((near[k][off] < low) | (near[k][off] > high)).sum()) for k in range(2)]


def measure(
    bots: int, size: int, deals: int, seating: SeatingMode, design: int = SCHEDULE_DESIGN, band: bool = True
) -> dict[str, Any]:
    """Builds one schedule and returns its figures (``band``: also count pairs outside the band)."""
    started, cpu = time.perf_counter(), time.process_time()
    schedule = make_schedule([f"bot{i}" for i in range(bots)], size, deals, "1", True, seating, design=design)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    balance = schedule.balance()
    return {
        "seating": seating.value,
        "design": design,
        "outside_band": outside_band(schedule) if band else None,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "pairs": [balance.pair_min, balance.pair_max],
        "left_neighbour_games": [balance.left_min, balance.left_max],
        "second_left_games": [balance.second_min, balance.second_max],
        "within_one": balance.within_one,
    }


def bench(quick: bool, largest: bool = False) -> dict[str, Any]:
    """Every case: the verdict, the suggestion, and the figures at each deal count."""
    out: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    if largest:
        extra["largest"] = [
            {
                "bots": MAX_BOTS,
                "table_size": 11,
                "deals": MAX_DEALS,
                **measure(MAX_BOTS, 11, MAX_DEALS, mode, band=False),
            }
            for mode in SeatingMode
        ]
    for bots, size, deals in CASES:
        if quick and bots >= 200:
            continue
        feasibility = pair_feasibility(bots, size, deals)
        # Every seating by today's design, and the default seating by design 1 (no band search).
        first = [measure(bots, size, deals, seating) for seating in SeatingMode]
        first.append(measure(bots, size, deals, DEFAULT_SEATING, design=1))
        started, cpu = time.perf_counter(), time.process_time()
        suggested = None
        if first[0]["pairs"][1] - first[0]["pairs"][0] > 1:
            suggested = suggest_deals(bots, size, deals, "1")
        suggest_seconds, suggest_cpu = time.perf_counter() - started, time.process_time() - cpu
        more = [measure(bots, size, suggested, mode) for mode in SeatingMode] if suggested else []
        if suggested:
            more.append(measure(bots, size, suggested, DEFAULT_SEATING, design=1))
        out.append(
            {
                "bots": bots,
                "table_size": size,
                "deals": deals,
                "impossible": feasibility.impossible,
                "suggested": suggested,
                "suggest_seconds": round(suggest_seconds, 2),
                "suggest_cpu_seconds": round(suggest_cpu, 2),
                "schedules": [{"deals": deals, **f} for f in first]
                + [{"deals": suggested, **f} for f in more],
            }
        )
    return {"load_average": list(os.getloadavg()), "cases": out, **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--quick", action="store_true", help="Skip the 200-bot case.")
    parser.add_argument("--largest", action="store_true", help="Also build the largest allowed schedule.")
    args = parser.parse_args()
    result = bench(args.quick, args.largest)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    print(f"load average {result['load_average'][0]:.1f}")
    for case in result["cases"]:
        head = f"{case['bots']} bots at {case['table_size']} seats, {case['deals']} deals"
        if case["impossible"]:
            head += f": within one provably impossible ({case['impossible']})"
        elif case["schedules"][0]["pairs"][1] - case["schedules"][0]["pairs"][0] > 1:
            head += ": within one neither found nor proven impossible"
        if case["suggested"]:
            head += f"; suggested deals = {case['suggested']} ({case['suggest_cpu_seconds']} s CPU)"
        elif case["suggest_seconds"]:
            head += f"; no larger count found within one ({case['suggest_cpu_seconds']} s CPU)"
        print(head)
        for s in case["schedules"]:
            lo, hi = s["pairs"]
            left, second = s["left_neighbour_games"], s["second_left_games"]
            out = s["outside_band"]
            print(
                f"  {s['deals']:>5} deals {s['seating']:<8} design {s['design']} pairs {lo}..{hi}  left "
                f"neighbour {left[0]}..{left[1]} games, two left {second[0]}..{second[1]}, outside the "
                f"band {out[0]} / {out[1]} ordered pairs  {s['seconds']:5.1f} s "
                f"({s['cpu_seconds']:.1f} s CPU)"
            )
    for big in result.get("largest", []):
        lo, hi = big["pairs"]
        print(
            f"largest allowed: {big['bots']} bots at {big['table_size']} seats, {big['deals']} deals, "
            f"{big['seating']}: pairs {lo}..{hi}, {big['seconds']:.1f} s ({big['cpu_seconds']:.1f} s CPU)"
        )


if __name__ == "__main__":
    main()
