"""Time per decision of the ``montecarlo`` (per world budget) or ``ismcts`` bot, per table size.

One process, no parallel work of its own, so that the figures are one core's: for each table
size and budget it plays ``--hands`` hands (seeded deals, hand ``i`` as in a game) with one
``montecarlo`` bot, in seat ``i mod players``, among ``heuristic`` bots, and times every call
to ``choose_play`` (forced plays included: the referee's clock runs for them too).

Usage::

    bench/decision_time.py --players 6 8 11 --worlds 20 50 100 --hands 20 [--json]
    bench/decision_time.py --bot ismcts --players 8 --hands 20 [--no-safety-stop] [--json]

``ismcts`` runs with its default budget (``--worlds`` is ignored); its pass decisions are timed
too and reported apart (``pass_mean``, ``pass_max``, ``pass_cpu_*``), with how many decisions its wall-clock
safety stop cut short (``cut_short``); ``--no-safety-stop`` times its whole budget. Besides the
wall clock, each decision's CPU time (the process's, ``time.process_time``) is reported
(``cpu_*``): on a loaded machine the wall clock counts the waits for a core, the CPU time is
what the decision takes on an idle one. The simulator backend in use is reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from hearts_client.bot import Bot
from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.ismcts import DEFAULT_SAFETY_LIMIT, IsmctsBot
from hearts_client.bots.montecarlo import MonteCarloBot
from hearts_core.deal import deal_hand, derive_seed
from hearts_core.rules import Rules
from hearts_core.state import Phase, State
from hearts_core.view import build_view


@dataclass
class Timings:
    """Seconds (wall clock and CPU) of the measured bot's decisions, and its safety-stop counts.

    Attributes:
        play: Wall seconds per play decision (forced plays included).
        play_cpu: CPU seconds per play decision.
        passes: Wall seconds per pass decision.
        pass_cpu: CPU seconds per pass decision.
        searched: An ``ismcts`` bot's searched decisions.
        cut_short: Of those, the ones its wall-clock safety stop cut short.
    """

    play: list[float] = field(default_factory=list)
    play_cpu: list[float] = field(default_factory=list)
    passes: list[float] = field(default_factory=list)
    pass_cpu: list[float] = field(default_factory=list)
    searched: int = 0
    cut_short: int = 0


def decision_times(
    players: int,
    worlds: int,
    hands: int,
    seed: str,
    bot: str = "montecarlo",
    safety_limit: float | None = DEFAULT_SAFETY_LIMIT,
) -> Timings:
    """The times of ``bot``'s decisions over ``hands`` hands at one table size.

    ``worlds`` is a ``montecarlo`` bot's budget; ``safety_limit`` an ``ismcts`` bot's stop.
    """
    rules = Rules(players=players)
    timings = Timings()
    for index in range(hands):
        state = State(rules)
        state.hand_index = index - 1  # dealer and pass direction as in hand ``index`` of a game
        state.start_hand(*deal_hand(rules, derive_seed(seed, "deals"), index))
        measured = index % players
        bots: list[Bot] = [HeuristicBot(s) for s in range(players)]
        searcher = None
        if bot == "ismcts":
            bots[measured] = searcher = IsmctsBot(derive_seed(seed, index), safety_limit=safety_limit)
        else:
            bots[measured] = MonteCarloBot(derive_seed(seed, index), worlds=worlds)
        for seat, player in enumerate(bots):
            start, start_cpu = time.perf_counter(), time.process_time()
            cards = list(player.choose_pass(build_view(state, seat)))
            if seat == measured:
                timings.passes.append(time.perf_counter() - start)
                timings.pass_cpu.append(time.process_time() - start_cpu)
            state.pass_cards(seat, cards)
        while state.phase is Phase.PLAYING:
            seat = state.to_play
            view = build_view(state, seat)
            start, start_cpu = time.perf_counter(), time.process_time()
            card = bots[seat].choose_play(view)
            if seat == measured:
                timings.play.append(time.perf_counter() - start)
                timings.play_cpu.append(time.process_time() - start_cpu)
            state.play(card)
        if searcher is not None:
            timings.searched += searcher.decisions
            timings.cut_short += searcher.cut_short
    return timings


def summary(seconds: Sequence[float], prefix: str = "") -> dict[str, float]:
    """Mean, 95th and 99th percentiles and maximum of ``seconds`` (keys after ``prefix``)."""
    ordered = sorted(seconds)
    figures = {
        "mean": statistics.fmean(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "p99": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "max": ordered[-1],
    }
    return {"decisions": len(ordered), **{prefix + k: v for k, v in figures.items()}}


def main(argv: Sequence[str] | None = None) -> int:
    """Parses the options, times the decisions and prints one line (or JSON object) each."""
    parser = argparse.ArgumentParser(description="Time per montecarlo or ismcts decision.")
    parser.add_argument("--bot", choices=["montecarlo", "ismcts"], default="montecarlo")
    parser.add_argument("--players", type=int, nargs="+", default=[6, 8, 11])
    parser.add_argument("--worlds", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--hands", type=int, default=20, help="hands per table size and budget")
    parser.add_argument("--seed", default="decision-time")
    parser.add_argument(
        "--no-safety-stop",
        action="store_true",
        help="time ismcts's whole budget: no wall-clock safety stop (on a loaded machine it fires)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args(argv)
    safety = None if args.no_safety_stop else DEFAULT_SAFETY_LIMIT
    from hearts_client.sim import BACKEND

    budgets = args.worlds if args.bot == "montecarlo" else [0]
    for players in args.players:
        for worlds in budgets:
            figures: dict[str, object] = {
                "bot": args.bot,
                "backend": BACKEND,
                "players": players,
                "hands": args.hands,
            }
            if args.bot == "montecarlo":
                figures["worlds"] = worlds
            timings = decision_times(players, worlds, args.hands, args.seed, args.bot, safety)
            figures.update(summary(timings.play))
            figures.update(summary(timings.play_cpu, "cpu_"))
            if args.bot == "ismcts":
                figures["safety_limit"] = safety
                figures["pass_mean"] = statistics.fmean(timings.passes)
                figures["pass_max"] = max(timings.passes)
                figures["pass_cpu_mean"] = statistics.fmean(timings.pass_cpu)
                figures["pass_cpu_max"] = max(timings.pass_cpu)
                figures["searched"], figures["cut_short"] = timings.searched, timings.cut_short
            if args.json:
                print(json.dumps(figures), flush=True)
                continue
            budget = f"{worlds:4d} worlds" if args.bot == "montecarlo" else "ismcts"
            ms = {k: f"{v * 1000:6.1f}" for k, v in figures.items() if isinstance(v, float)}
            line = (
                f"{players:2d} players, {budget}: mean {ms['mean']} ms, p95 {ms['p95']} ms, "
                f"p99 {ms['p99']} ms, max {ms['max']} ms; CPU mean {ms['cpu_mean']} ms, "
                f"p99 {ms['cpu_p99']} ms, max {ms['cpu_max']} ms ({figures['decisions']} decisions)"
            )
            if args.bot == "ismcts":
                line += (
                    f"; pass mean {ms['pass_mean']} ms, max {ms['pass_max']} ms, CPU mean "
                    f"{ms['pass_cpu_mean']} ms, max {ms['pass_cpu_max']} ms; cut short by the "
                    f"safety stop {timings.cut_short} of {timings.searched}"
                )
            print(f"{line} [{BACKEND} backend]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
