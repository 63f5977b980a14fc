#!/usr/bin/env python3
"""A season's final: games needed to separate the top K, adaptive against uniform.

A field of ``--finalists`` of known strengths plays the final's deals (a deal: one block, every
rotation of a table of ``--table-size``) in-process. Each trial plays two schedules on fresh deals:

* **adaptive**: the league's final as ``hearts league final`` plays it
  (:func:`hearts_tournaments.league.final.plan_final_block`: every finalist until each has an
  interval, then the contenders of the boundaries not yet separated), stopped when
  :func:`~hearts_tournaments.league.final.final_status` says the top K are separated, or at
  ``--budget`` deals;
* **uniform**: every finalist in turn at every deal (``adaptive=False``), its status read after
  every deal up to the budget.

A uniform schedule is a fixed number of deals D announced beforehand. The one **of the same
confidence** is the smallest D at which at least as many uniform trials are decided as adaptive
trials were decided within the budget; the saving is ``1 - adaptive games / (D x table size)``.
It prints too the uniform schedule stopped by the same rule (the saving of the allocation alone),
and, for each, the share of decided trials whose top K order is wrong.

By default each game's finishing order is drawn from the Plackett-Luce model of the true
strengths (evenly spaced over ``--range``); with ``--real`` it is a real game
(:func:`hearts_core.local.play_game`, ``--max-hands`` hands) of ``heuristic`` bots that play at
random with probability ``i / (finalists - 1)`` for finalist ``i`` (so finalist 0 is the
strongest), as ``bench/league.py --real``.

With ``--real --luck`` the final's status is luck-corrected as ``hearts league final
--luck-correction`` corrects it: each game's record gives its luck terms
(:func:`hearts_tournaments.results.stats.luck.game_luck`) and
:func:`~hearts_tournaments.league.final.final_status` fits the corrected places. The weakest
finalist always plays at random, as the built-in ``random`` bot does: with ``--known-random`` it
is a known policy (action terms at its decisions, as for a league's ``random`` version), else
every finalist's policy is unknown and only deal terms are computed (which cancel over a deal's
rotations). The same seeds with and without the correction play the same games until the two
finals' seatings part.

Usage::

    bench/final.py [--finalists 8] [--top 3] [--trials 20] [--budget 150] [--json]
    bench/final.py --real --trials 6 --max-hands 3 [--luck]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.league import real_game, sample_places
from hearts_core.deal import derive_seed
from hearts_core.record import GameRecord
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.final import FinalStatus, final_status, plan_final_block
from hearts_tournaments.league.play import block_game
from hearts_tournaments.results.stats.luck import GameLuck, game_luck

#: A game's places from its seats and seed, and its record ("" when it has none).
Places = Callable[[tuple[str, ...], str], tuple[tuple[int, ...], str]]


def outcome(key: str, seats: tuple[str, ...], places: tuple[int, ...], record: str = "{}") -> GameOutcome:
    return GameOutcome.clean(key, seats, (0,) * len(seats), places=places, record_json=record)


def play_final(
    finalists: list[str],
    truth: list[str],
    places: Places,
    args: argparse.Namespace,
    seed: str,
    adaptive: bool,
) -> dict[str, Any]:
    """One final: blocks until decided (adaptive) or the budget; what it took and found."""
    config = LeagueConfig(table_size=args.table_size, seed=seed)
    rng = random.Random(derive_seed(seed, "seats"))
    blocks: dict[int, list[GameOutcome]] = {}
    played: dict[str, int] = {}
    status: FinalStatus | None = None
    decided_at: list[bool] = []  # per deal count: decided
    first_decided = None
    luck: dict[str, GameLuck] | None = {} if args.luck else None
    luck_cpu = 0.0
    while len(blocks) < args.budget:
        order = plan_final_block(status, finalists, played, args.table_size, rng, adaptive)
        for v in set(order):
            played[v] = played.get(v, 0) + 1
        number = len(blocks)
        games = [block_game(config, number, order, r) for r in range(len(order))]
        blocks[number] = [outcome(g.key, g.seats, *places(g.seats, g.seed)) for g in games]
        if luck is not None:
            started = time.process_time()
            for game in blocks[number]:
                known = {
                    s: "random" for s, v in enumerate(game.seats) if args.known_random and v == finalists[-1]
                }
                luck[game.key] = game_luck(GameRecord.read(game.record_json), known=known)
            luck_cpu += time.process_time() - started
        status = final_status(
            blocks, finalists, args.top, args.bootstrap, derive_seed(seed, "bootstrap"), luck
        )
        # What a decided final claims: the holders of places 1..K, in order.
        right = list(status.order[: args.top]) == truth[: args.top]
        decided_at.append(status.decided)
        if status.decided and first_decided is None:
            first_decided = (len(blocks), right)
            if adaptive:
                break
    return {"decided_at": decided_at, "first": first_decided, "deals": len(blocks), "luck_cpu": luck_cpu}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--finalists", type=int, default=8)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--table-size", type=int, default=6)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--budget", type=int, default=150, help="Deals a final plays at most.")
    parser.add_argument("--range", type=float, default=2.1, help="True log-strengths span 0..RANGE.")
    parser.add_argument("--bootstrap", type=int, default=200, help="Resamples of each status (the league's).")
    parser.add_argument("--seed", default="final")
    parser.add_argument("--real", action="store_true", help="Real in-process games of handicapped bots.")
    parser.add_argument("--max-hands", type=int, default=3, help="Hands per real game.")
    parser.add_argument("--luck", action="store_true", help="With --real: luck-corrected statuses.")
    parser.add_argument(
        "--known-random",
        action="store_true",
        help="With --luck: the weakest finalist is a known random policy.",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.luck and not args.real:
        parser.error("--luck needs --real: its terms come from the games' records")
    if args.known_random and not args.luck:
        parser.error("--known-random needs --luck")
    n = args.finalists
    finalists = [f"f{i}@v1" for i in range(n)]
    if args.real:
        handicap = {v: i / (n - 1) for i, v in enumerate(finalists)}

        def places(seats: tuple[str, ...], seed: str) -> tuple[tuple[int, ...], str]:
            return real_game([handicap[v] for v in seats], seed, args.max_hands)

        truth = list(finalists)  # finalist 0 has no handicap
    else:
        strength = {v: args.range * (n - 1 - i) / (n - 1) for i, v in enumerate(finalists)}

        def places(seats: tuple[str, ...], seed: str) -> tuple[tuple[int, ...], str]:
            return sample_places([strength[v] for v in seats], random.Random(seed)), "{}"

        truth = list(finalists)
    started = time.monotonic()
    adaptive, uniform = [], []
    for t in range(args.trials):
        seed = f"{args.seed}-{t}"
        adaptive.append(play_final(finalists, truth, places, args, seed, adaptive=True))
        uniform.append(play_final(finalists, truth, places, args, seed + "-uniform", adaptive=False))
    seconds = time.monotonic() - started

    done = [a for a in adaptive if a["first"] is not None]
    share = len(done) / len(adaptive)
    adaptive_games = statistics.mean(a["deals"] * args.table_size for a in adaptive)
    adaptive_wrong = sum(1 for a in done if not a["first"][1]) / max(1, len(done))
    fixed = None
    for d in range(1, args.budget + 1):
        decided = sum(1 for u in uniform if len(u["decided_at"]) >= d and u["decided_at"][d - 1])
        if decided / len(uniform) >= share:
            fixed = d
            break
    useq = [u["first"][0] if u["first"] is not None else args.budget for u in uniform]
    useq_done = [u for u in uniform if u["first"] is not None]
    useq_wrong = sum(1 for u in useq_done if not u["first"][1]) / max(1, len(useq_done))
    uniform_games = None if fixed is None else fixed * args.table_size
    figures = {
        "finalists": n,
        "top": args.top,
        "table_size": args.table_size,
        "trials": args.trials,
        "budget_deals": args.budget,
        "games": "real" if args.real else "plackett-luce",
        "range": None if args.real else args.range,
        "max_hands": args.max_hands if args.real else None,
        "luck_correction": args.luck,
        "known_random": args.known_random,
        "luck_cpu_per_game_ms": round(
            1000
            * sum(a["luck_cpu"] for a in adaptive + uniform)
            / max(1, sum(a["deals"] * args.table_size for a in adaptive + uniform)),
            2,
        )
        if args.luck
        else None,
        "adaptive_decided_share": round(share, 3),
        "adaptive_games_mean": round(adaptive_games, 1),
        "adaptive_wrong_order_share": round(adaptive_wrong, 3),
        "uniform_fixed_deals_same_confidence": fixed,
        "uniform_fixed_games": uniform_games,
        "saving_vs_uniform_fixed": None
        if uniform_games is None
        else round(1 - adaptive_games / uniform_games, 3),
        "uniform_sequential_games_mean": round(statistics.mean(d * args.table_size for d in useq), 1),
        "uniform_sequential_decided_share": round(len(useq_done) / len(uniform), 3),
        "uniform_sequential_wrong_order_share": round(useq_wrong, 3),
        "seconds": round(seconds, 1),
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"{n} finalists, top {args.top}, tables of {args.table_size}, {args.trials} trials, "
        f"budget {args.budget} deals, {'real games' if args.real else f'Plackett-Luce over {args.range}'}"
        + (f", luck-corrected ({figures['luck_cpu_per_game_ms']} ms CPU a game)" if args.luck else "")
        + (", the weakest finalist a known random policy" if args.known_random else "")
    )
    print(
        f"adaptive: {figures['adaptive_games_mean']} games on average; decided in {share:.0%} of trials; "
        f"wrong order in {adaptive_wrong:.0%} of those"
    )
    if uniform_games is None:
        print(f"uniform: no fixed schedule within {args.budget} deals reaches the same confidence")
    else:
        print(
            f"uniform, fixed length of the same confidence: {fixed} deals = {uniform_games} games; "
            f"adaptive saves {figures['saving_vs_uniform_fixed']:.0%}"
        )
    print(
        f"uniform stopped by the same rule: {figures['uniform_sequential_games_mean']} games on average "
        f"(decided in {figures['uniform_sequential_decided_share']:.0%}, wrong order in {useq_wrong:.0%})"
    )
    print(f"{seconds:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
