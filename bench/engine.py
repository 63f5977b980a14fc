#!/usr/bin/env python3
"""Engine speed: full hands per second, in-process on one core.

Times are CPU time of this process (time.process_time), so other work on the machine does not
skew them. Random play drives the State directly (deal, three random passes, a uniformly random legal card
at every turn); heuristic play goes through Views and the built-in heuristic bot, as a bot sees
the game. Prints readable figures; ``--json`` prints one JSON object with
``random_hands_per_s`` and ``heuristic_hands_per_s``, each mapping the player count to the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from hearts_client.bots import make_bot
from hearts_core.deal import deal_hand
from hearts_core.local import play_hand
from hearts_core.rules import Rules
from hearts_core.state import Phase, State

SIZES = (6, 8, 11)


def random_hands(players: int, hands: int, seed: int = 1) -> float:
    """Hands per second of random play at ``players`` seats."""
    rules = Rules(players=players, max_hands=10**9, target_score=10**9)
    rng = random.Random(seed)
    deals = [deal_hand(rules, str(seed), i) for i in range(64)]
    start = time.process_time()
    state = State(rules)
    for i in range(hands):
        deal, kitty = deals[i % len(deals)]
        state.start_hand(deal, kitty)
        for seat in range(players):
            state.pass_cards(seat, rng.sample(list(state.hands[seat]), 3))
        while state.phase is Phase.PLAYING:
            legal = state.legal_plays()
            state.play(legal[rng.randrange(len(legal))])
        if state.phase is Phase.MOON_CHOICE:
            state.choose_moon("self_minus_26")
    return hands / (time.process_time() - start)


def heuristic_hands(players: int, hands: int, seed: int = 1) -> float:
    """Hands per second of heuristic bots deciding from their Views."""
    rules = Rules(players=players, max_hands=10**9, target_score=10**9)
    bots = [make_bot("heuristic", s) for s in range(players)]
    state = State(rules)
    start = time.process_time()
    for _ in range(hands):
        play_hand(state, bots, str(seed))
    return hands / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=2.0, help="rough time per figure")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    out: dict[str, dict[str, float]] = {"random_hands_per_s": {}, "heuristic_hands_per_s": {}}
    for players in SIZES:
        probe = random_hands(players, 200)
        out["random_hands_per_s"][str(players)] = round(
            random_hands(players, max(200, int(probe * args.seconds)))
        )
        probe = heuristic_hands(players, 20)
        out["heuristic_hands_per_s"][str(players)] = round(
            heuristic_hands(players, max(20, int(probe * args.seconds)))
        )
    if args.json:
        print(json.dumps(out))
        return
    print("Engine speed, full hands per second on one core (in-process)")
    print(f"{'players':>8} {'random play':>12} {'heuristic play':>15}")
    for players in SIZES:
        key = str(players)
        print(f"{players:>8} {out['random_hands_per_s'][key]:>12,} {out['heuristic_hands_per_s'][key]:>15,}")


if __name__ == "__main__":
    main()
