"""Tournament throughput: games per minute over gRPC, in-process, and from 1 to 2 tables at once.

Plays one small tournament of ``heuristic`` bots five ways and times each:

* over gRPC with the real runner, one table at a time (``concurrency = 1``), ``reuse =
  "never"``: the in-process referee, a process per seat per game, a database commit per game
  (keys ``grpc_concurrency_1``, ``grpc_concurrency_2``);
* the same, two tables at a time (``concurrency = 2``);
* both again with warm bots, ``reuse = "between_deals"`` (the default): each bot process plays
  game after game on one stream (keys ``grpc_between_deals_concurrency_1`` and ``_2``);
* the same games in-process with :func:`hearts_core.local.play_game` (same deals, same bot
  seeds, no processes, no network): the ceiling the protocol and process overhead is measured
  against.

It also measures what starting one bot process costs (the runner starts one per seat per
game without reuse), the CPU per gRPC game over the in-process one for each policy
(``cpu_ratio_never``, ``cpu_ratio_between_deals``), and checks that all five give identical
totals in every game (the games are the same: the same deal secret for every run).
The bots run with ``sandbox = "none"``: a bwrap sandbox hides its processes' CPU time from
``RUSAGE_CHILDREN`` (what the sandbox costs is bench/sandbox.py's figure).
Wall-clock figures depend on what else the machine runs (the load average is printed with
them); CPU seconds per game, the runner's and its bots' together, do not.

Usage::

    bench/tournament.py [--deals 8] [--players 6] [--target-score 100] [--json]

Prints readable figures, or with ``--json`` one object. Takes a minute or two on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.rules import Rules
from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.arena.job import bot_seed, deal_seed
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import create_tournament
from hearts_tournaments.tournament.runner import run_tournament
from hearts_tournaments.tournament.schedule import Schedule

#: Every run plays the same deals (and the in-process games too).
DEAL_SECRET = bytes(range(32))


@dataclass(frozen=True, slots=True)
class Timing:
    """One way of playing the tournament: wall time, and CPU time of this process and its bots.

    CPU time does not depend on what else the machine is running; wall time does.
    """

    games: int
    seconds: float
    cpu_seconds: float
    totals: dict[str, tuple[int, ...]]

    def figures(self) -> dict[str, float]:
        return {
            "seconds": round(self.seconds, 2),
            "games_per_minute": round(self.games_per_minute, 1),
            "cpu_seconds_per_game": round(self.cpu_seconds / self.games, 3),
        }

    @property
    def games_per_minute(self) -> float:
        return 60 * self.games / self.seconds


def config_text(deals: int, players: int, target: int, concurrency: int, reuse: str = "never") -> str:
    bots = "".join(f'\n[[bots]]\nname = "h{i}"\nbuiltin = "heuristic"\n' for i in range(3))
    return (
        f'[tournament]\nname = "bench"\ntable_size = {players}\ndeals = {deals}\nduplicate = false\n'
        f'seed = "bench"\ntarget_score = {target}\nconcurrency = {concurrency}\nreuse = "{reuse}"\n'
        f'sandbox = "none"\ndecision_ms = 30000\ntime_bank_ms = 600000\n{bots}'
    )


def cpu_now() -> float:
    """CPU seconds used so far by this process and its finished children (the bots)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def over_grpc(folder: Path, text: str) -> Timing:
    folder.mkdir()
    config = parse_config(text, folder)
    tournament = create_tournament(config, text, folder / "out", deal_secret=DEAL_SECRET)
    with tournament.store:
        started, cpu = time.perf_counter(), cpu_now()
        run_tournament(tournament)
        seconds, cpu = time.perf_counter() - started, cpu_now() - cpu
        outcomes = tournament.store.outcomes(records=False)
    return Timing(len(outcomes), seconds, cpu, {o.key: o.totals for o in outcomes})


def in_process(schedule: Schedule, target: int) -> Timing:
    rules = Rules(players=schedule.table_size, target_score=target)
    started, cpu = time.perf_counter(), cpu_now()
    totals = {}
    for game in schedule.games:
        bots = [make_bot("heuristic", bot_seed(DEAL_SECRET, game, seat)) for seat in range(len(game.seats))]
        totals[game.key] = tuple(play_game(rules, deal_seed(DEAL_SECRET, game), bots).totals)
    return Timing(len(schedule.games), time.perf_counter() - started, cpu_now() - cpu, totals)


def bot_start_cpu(samples: int = 5) -> float:
    """CPU seconds to start one built-in bot process (interpreter and imports, no game)."""
    before = cpu_now()
    for _ in range(samples):
        subprocess.run(
            [sys.executable, "-m", "hearts_tournaments.arena.builtin_bot", "--help"],
            stdout=subprocess.DEVNULL,
            check=True,
        )
    return (cpu_now() - before) / samples


def measure(deals: int, players: int, target: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hearts-bench-") as tmp:
        root = Path(tmp)
        one = over_grpc(root / "c1", config_text(deals, players, target, 1))
        two = over_grpc(root / "c2", config_text(deals, players, target, 2))
        warm_one = over_grpc(root / "w1", config_text(deals, players, target, 1, "between_deals"))
        warm_two = over_grpc(root / "w2", config_text(deals, players, target, 2, "between_deals"))
        config = parse_config(config_text(deals, players, target, 1), root)
        tournament = create_tournament(config, "", root / "schedule", deal_secret=DEAL_SECRET)
        with tournament.store:
            schedule = tournament.store.schedule()
        local = in_process(schedule, target)
    start = bot_start_cpu()
    return {
        "games": one.games,
        "players": players,
        "target_score": target,
        "bots": "heuristic x3 (each in two seats)",
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "grpc_concurrency_1": one.figures(),
        "grpc_concurrency_2": two.figures(),
        "grpc_between_deals_concurrency_1": warm_one.figures(),
        "grpc_between_deals_concurrency_2": warm_two.figures(),
        "in_process": local.figures(),
        "cpu_ratio_never": round(min(one.cpu_seconds, two.cpu_seconds) / local.cpu_seconds, 1),
        "cpu_ratio_between_deals": round(
            min(warm_one.cpu_seconds, warm_two.cpu_seconds) / local.cpu_seconds, 1
        ),
        "bot_start_cpu_seconds": round(start, 3),
        "bot_start_share_of_grpc_cpu": round(start * players / (two.cpu_seconds / two.games), 3),
        "speedup_concurrency_2_over_1": round(two.games_per_minute / one.games_per_minute, 2),
        "grpc_share_of_in_process": round(two.games_per_minute / local.games_per_minute, 3),
        "grpc_between_deals_share_of_in_process": round(
            warm_two.games_per_minute / local.games_per_minute, 3
        ),
        "identical_results": one.totals == two.totals == warm_one.totals == warm_two.totals == local.totals,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, default=8, help="games in the tournament (one per deal)")
    parser.add_argument("--players", type=int, default=6, help="table size")
    parser.add_argument("--target-score", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    configure_logging(LogFormat.JSON, "WARNING")
    result = measure(args.deals, args.players, args.target_score)
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"{result['games']} games of heuristic bots, table of {args.players}, to {args.target_score} points"
    )
    print(f"(load average {result['load_average_1min']} on {result['cores']} cores when done)")
    for label, key in (
        ("gRPC, 1 table at a time ", "grpc_concurrency_1"),
        ("gRPC, 2 tables at a time", "grpc_concurrency_2"),
        ("warm, 1 table at a time ", "grpc_between_deals_concurrency_1"),
        ("warm, 2 tables at a time", "grpc_between_deals_concurrency_2"),
        ("in-process, no gRPC     ", "in_process"),
    ):
        figures = result[key]
        print(
            f"  {label}: {figures['games_per_minute']:8.1f} games/min ({figures['seconds']:.1f} s; "
            f"{figures['cpu_seconds_per_game']:.3f} CPU s per game, bots included)"
        )
    print(
        f"  starting one bot process costs {result['bot_start_cpu_seconds']:.3f} CPU s: "
        f"{result['bot_start_share_of_grpc_cpu']:.0%} of a gRPC game's CPU with {args.players} seats"
    )
    print(f"  concurrency 2 over 1: x{result['speedup_concurrency_2_over_1']}")
    print(
        f"  CPU per gRPC game over in-process: x{result['cpu_ratio_never']} with reuse = never, "
        f"x{result['cpu_ratio_between_deals']} with reuse = between_deals (aim: at most x15)"
    )
    print(f"  gRPC (2 tables) reaches {result['grpc_share_of_in_process']:.1%} of in-process throughput")
    print(f"  same totals in every game all five ways: {result['identical_results']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
