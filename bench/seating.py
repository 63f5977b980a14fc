"""Position bias of each seating, in real games played in-process.

A table of ``n`` seats holds ``n`` bots: one weak (``random``) and ``n - 1`` copies of the same
strong bot (``heuristic``, each with its own seed). The strong bots are alike, so whatever
separates their mean places is the seating: who sits right after the weak bot (it passes
them poor cards and leads into them) gains. For each seating (``rotate``, ``permute``) and
table size every deal seats the bots in one order, the weak bot at
position 0, and is played in the seating's ``n`` games (its Latin square of positions); with
``--scheduled`` the real scheduler orders each deal's table instead (it also spreads who sits
where across deals). Every game is played by ``hearts_core.local``; the same deals and bot
seeds serve every seating.

Two figures per row:

* **spread**: the strong bots' mean places, most minus least, as measured. It holds the bias
  and the noise of the games; ``noise`` is what noise alone would give (each bot's
  standard errors over deals times the expected range of as many normal draws: the level the
  spread sits at with no bias.
* **bias**: the same spread predicted from what each game shows: the mean place of a strong
  bot at each offset from the weak bot, estimated from all games of all seatings, weighted by
  the share of each bot's games it sits at each offset in the schedule. Far less noisy: every
  game measures every offset.

Usage::

    bench/seating.py [--deals 60] [--sizes 6,7,9,11] [--scheduled] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_tournaments.tournament.schedule import Schedule, SeatingMode, make_schedule

WEAK, STRONG = "random", "heuristic"
#: Draws (times ten) of the expected range of normal means, for the noise level.
RESAMPLES = 200


def names(n: int) -> list[str]:
    return ["weak"] + [f"s{i}" for i in range(1, n)]


def play(
    n: int, deals: int, seating: SeatingMode, seed: str, scheduled: bool
) -> list[tuple[int, tuple[str, ...], tuple[int, ...]]]:
    """Every game of the schedule: (deal, seats, places)."""
    if scheduled:
        schedule = make_schedule(names(n), n, deals, seed, True, seating)
    else:
        # Every deal at the same order, the weak bot at position 0: a position's bias is then
        # the deal's layouts' alone, as a bot that sits there in every deal would feel it.
        order = names(n)
        schedule = Schedule.from_json(
            {
                "bots": order,
                "table_size": n,
                "duplicate": True,
                "seed": seed,
                "seating": seating.value,
                "seatings": [{"deal": d, "seed": f"{seed}/{d}", "order": order} for d in range(deals)],
            }
        )
    rules = Rules(players=n, target_score=100)
    out = []
    for game in schedule.games:
        # The same bot seed for a bot in the same deal and seat, whatever the seating.
        players = [
            make_bot(WEAK if bot == "weak" else STRONG, f"{seed}/{game.deal}/{seat}/{bot}")
            for seat, bot in enumerate(game.seats)
        ]
        state = play_game(rules, f"{seed}/deal/{game.deal}", players)
        totals = state.totals
        places = tuple(1 + sum(1 for o in totals if o < t) for t in totals)
        out.append((game.deal, game.seats, places))
    return out


def spread_of(games: Sequence[tuple[int, tuple[str, ...], tuple[int, ...]]], deals: Sequence[int]) -> float:
    by_deal: dict[int, list[tuple[tuple[str, ...], tuple[int, ...]]]] = defaultdict(list)
    for deal, seats, places in games:
        by_deal[deal].append((seats, places))
    total: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for d in deals:
        for seats, places in by_deal[d]:
            for bot, place in zip(seats, places, strict=True):
                if bot != "weak":
                    total[bot] += place
                    count[bot] += 1
    means = [total[b] / count[b] for b in total]
    return max(means) - min(means)


def noise_of(
    games: Sequence[tuple[int, tuple[str, ...], tuple[int, ...]]], deals: Sequence[int], rng: random.Random
) -> float:
    """The spread that noise alone gives: each strong bot's standard error over deals (its
    deals' mean places vary), times the expected range of that many normal draws."""
    per: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for deal, seats, places in games:
        for bot, place in zip(seats, places, strict=True):
            if bot != "weak":
                per[bot][deal].append(place)
    errors = [
        statistics.stdev([statistics.fmean(by_deal[d]) for d in deals]) / len(deals) ** 0.5
        for by_deal in per.values()
    ]
    k = len(errors)
    draws = [max(x) - min(x) for x in ([rng.gauss(0, 1) for _ in range(k)] for _ in range(RESAMPLES * 10))]
    return statistics.fmean(errors) * statistics.fmean(draws)


def offsets(games: Sequence[tuple[int, tuple[str, ...], tuple[int, ...]]]) -> dict[str, dict[int, float]]:
    """Per strong bot, the share of its games at each offset (seats to the weak bot's left)."""
    share: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for _, seats, _ in games:
        n = len(seats)
        w = seats.index("weak")
        for s, bot in enumerate(seats):
            if bot != "weak":
                share[bot][(s - w) % n] += 1
    return {bot: {k: v / sum(c.values()) for k, v in c.items()} for bot, c in share.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--deals", type=int, default=60, help="deals per schedule")
    parser.add_argument("--sizes", default="6,7,9,11", help="table sizes")
    parser.add_argument("--seed", default="seating")
    parser.add_argument(
        "--scheduled", action="store_true", help="the scheduler's orders per deal (default: one fixed order)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        played = {mode: play(n, args.deals, mode, args.seed, args.scheduled) for mode in SeatingMode}
        # What a game shows: a strong bot's mean place at each offset from the weak bot.
        place_at: dict[int, list[int]] = defaultdict(list)
        for games in played.values():
            for _, seats, places in games:
                w = seats.index("weak")
                for s, place in enumerate(places):
                    if s != w:
                        place_at[(s - w) % n].append(place)
        effect = {k: statistics.fmean(v) for k, v in place_at.items()}
        rng = random.Random(f"{args.seed}/{n}")
        for mode, games in played.items():
            deals = sorted({g[0] for g in games})
            spread = spread_of(games, deals)
            noise = noise_of(games, deals, rng)
            predicted = {
                bot: sum(share * effect[k] for k, share in at.items()) for bot, at in offsets(games).items()
            }
            rows.append(
                {
                    "table_size": n,
                    "seating": mode.value,
                    "deals": args.deals,
                    "games": len(games),
                    "spread": round(spread, 3),
                    "noise": round(noise, 3),
                    "bias": round(max(predicted.values()) - min(predicted.values()), 3),
                    "right_after_weak": round(effect[1] - statistics.fmean(effect.values()), 3),
                    "offset_effects": [
                        round(effect[k] - statistics.fmean(effect.values()), 3) for k in range(1, n)
                    ],
                }
            )
    elapsed = time.perf_counter() - start
    if args.json:
        json.dump(
            {
                "weak": WEAK,
                "strong": STRONG,
                "scheduled": args.scheduled,
                "rows": rows,
                "seconds": round(elapsed, 1),
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return 0
    print(f"one {WEAK} bot and n - 1 {STRONG} bots at a table of n; places 1..n")
    print(f"{'seats':>5}  {'seating':<10}  {'games':>6}  {'spread':>6}  {'noise':>6}  {'bias':>6}")
    for r in rows:
        print(
            f"{r['table_size']:>5}  {r['seating']:<10}  {r['games']:>6}  {r['spread']:>6.2f}  "
            f"{r['noise']:>6.2f}  {r['bias']:>6.2f}"
        )
    print(
        "spread: the strong bots' mean places, most minus least; noise: what noise alone gives; "
        f"bias: predicted from the offset effects. {elapsed:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
