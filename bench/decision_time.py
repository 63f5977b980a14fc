"""Time per play decision of the ``montecarlo`` bot, per table size and world budget.

One process, no parallel work of its own, so that the figures are one core's: for each table
size and budget it plays ``--hands`` hands (seeded deals, hand ``i`` as in a game) with one
``montecarlo`` bot, in seat ``i mod players``, among ``heuristic`` bots, and times every call
to ``choose_play`` (forced plays included: the referee's clock runs for them too).

Usage::

    bench/decision_time.py --players 6 8 11 --worlds 20 50 100 --hands 20 [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence

from hearts_client.bot import Bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.montecarlo import MonteCarloBot
from hearts_core.deal import deal_hand, derive_seed
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view


def decision_times(players: int, worlds: int, hands: int, seed: str) -> list[float]:
    """Seconds per ``montecarlo`` play decision over ``hands`` hands at one table size."""
    rules = Rules(players=players)
    seconds: list[float] = []
    for index in range(hands):
        state = State(rules)
        state.hand_index = index - 1  # dealer and pass direction as in hand ``index`` of a game
        state.start_hand(*deal_hand(rules, derive_seed(seed, "deals"), index))
        measured = index % players
        bots: list[Bot] = [HeuristicBot(s) for s in range(players)]
        bots[measured] = MonteCarloBot(derive_seed(seed, index), worlds=worlds)
        for seat, bot in enumerate(bots):
            state.pass_cards(seat, list(bot.choose_pass(build_view(state, seat))))
        while state.phase is Phase.PLAYING:
            seat = state.to_play
            view = build_view(state, seat)
            start = time.perf_counter()
            card = bots[seat].choose_play(view)
            if seat == measured:
                seconds.append(time.perf_counter() - start)
            state.play(card)
    return seconds


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """Mean, 95th percentile and maximum of ``seconds``."""
    ordered = sorted(seconds)
    return {
        "decisions": len(ordered),
        "mean": statistics.fmean(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": ordered[-1],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Parses the options, times the decisions and prints one line (or JSON object) each."""
    parser = argparse.ArgumentParser(description="Time per montecarlo play decision.")
    parser.add_argument("--players", type=int, nargs="+", default=[6, 8, 11])
    parser.add_argument("--worlds", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--hands", type=int, default=20, help="hands per table size and budget")
    parser.add_argument("--seed", default="decision-time")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args(argv)
    for players in args.players:
        for worlds in args.worlds:
            figures = {"players": players, "worlds": worlds, "hands": args.hands}
            figures.update(summary(decision_times(players, worlds, args.hands, args.seed)))
            if args.json:
                print(json.dumps(figures), flush=True)
            else:
                print(
                    f"{players:2d} players, {worlds:4d} worlds: mean {figures['mean'] * 1000:6.1f} ms, "
                    f"p95 {figures['p95'] * 1000:6.1f} ms, max {figures['max'] * 1000:6.1f} ms "
                    f"({figures['decisions']} decisions)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
