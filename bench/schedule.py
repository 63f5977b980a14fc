"""Schedule quality and speed: pair spread, neighbour spread, time taken.

For 12, 50 and 200 bots at tables of 6, 8 and 11 it takes the deal count of the issue that
reported them (15, 132 and 1,091), asks :func:`pair_feasibility` what is possible there, builds
the schedule with both seatings (``rotate`` and ``permute``, duplicate deals) and, when pairs
are not within one, asks :func:`suggest_deals` for the smallest larger count that is and builds
that too. For
every schedule it prints the pair-count spread (deals each pair of bots shares, min..max), the
neighbour spread (games in which a given bot sits one, and two, seats to another's left,
min..max) and the seconds the design took (wall clock, and CPU, which load does not change).

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
import os
import sys
import time
from typing import Any

from hearts_tournaments.tournament.config import MAX_BOTS, MAX_DEALS
from hearts_tournaments.tournament.schedule import SeatingMode, make_schedule, pair_feasibility, suggest_deals

#: (bots, table size, deals of the issue's report).
CASES = [(12, 6, 15), (50, 8, 132), (200, 11, 1091)]


def measure(bots: int, size: int, deals: int, seating: SeatingMode) -> dict[str, Any]:
    """Builds one schedule and returns its figures."""
    started, cpu = time.perf_counter(), time.process_time()
    schedule = make_schedule([f"bot{i}" for i in range(bots)], size, deals, "1", True, seating)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    balance = schedule.balance()
    return {
        "seating": seating.value,
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
            {"bots": MAX_BOTS, "table_size": 11, "deals": MAX_DEALS, **measure(MAX_BOTS, 11, MAX_DEALS, mode)}
            for mode in SeatingMode
        ]
    for bots, size, deals in CASES:
        if quick and bots >= 200:
            continue
        feasibility = pair_feasibility(bots, size, deals)
        first = [measure(bots, size, deals, seating) for seating in SeatingMode]
        started, cpu = time.perf_counter(), time.process_time()
        suggested = None
        if first[0]["pairs"][1] - first[0]["pairs"][0] > 1:
            suggested = suggest_deals(bots, size, deals, "1")
        suggest_seconds, suggest_cpu = time.perf_counter() - started, time.process_time() - cpu
        more = [measure(bots, size, suggested, mode) for mode in SeatingMode] if suggested else []
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
            print(
                f"  {s['deals']:>5} deals {s['seating']:<8} pairs {lo}..{hi}  left neighbour "
                f"{left[0]}..{left[1]} games, two left {second[0]}..{second[1]}  {s['seconds']:5.1f} s "
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
