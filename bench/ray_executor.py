"""The Ray executor against the local one: games per minute, CPU per game, and Ray's start-up cost.

Plays one small tournament of built-in bots twice with the same deal secret:

* ``local``: the runner's in-process referee and bots (``executor = "local"``);
* ``ray``: the same games as Ray tasks on a one-machine Ray started here (``num_cpus`` = the
  tables at once, an 80 MB object store, no dashboard), each task starting its own referee and
  bots on the node, as on a cluster.

Ray's start-up is measured apart: the wall time of ``ray.init`` and a first task (worker
processes started, code imported), and the CPU and resident memory of Ray's own processes
(GCS, raylet, idle workers). CPU per game counts every process of the run: this one, its
children and their children (for Ray: the raylet, its workers and their bots), read from
``/proc`` while they live. The two runs must give identical results in every game.

With ``--league``, a league is played instead (``hearts league run`` with each executor):
``--blocks`` blocks of a heuristic, a random and a command entrant (the heuristic bot through a
script of its own, whose snapshot the driver ships to the nodes through Ray's object store),
after their three validation games.

Usage::

    bench/ray_executor.py [--deals 8] [--players 6] [--target-score 100] [--concurrency 2] [--json]
    bench/ray_executor.py --league [--blocks 2] [--players 6] [--target-score 100] [--concurrency 2]

Prints readable figures, or with ``--json`` one object. Takes a minute or two on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_core.defaults import TablePolicy
from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.arena.sandbox import process_tree, sample_processes
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.play import StopAfter, run_league
from hearts_tournaments.results.executors import RAY_OBJECT_STORE_BYTES
from hearts_tournaments.results.where import ExecutorKind
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import create_tournament
from hearts_tournaments.tournament.runner import run_tournament

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SECRET = bytes.fromhex("be0c" * 16)


@dataclass(frozen=True, slots=True)
class Timing:
    """One run of the tournament: wall time, CPU of every process involved, the results."""

    games: int
    seconds: float
    cpu_seconds: float
    totals: dict[str, tuple[int, ...]]

    def figures(self) -> dict[str, float]:
        return {
            "seconds": round(self.seconds, 2),
            "games_per_minute": round(60 * self.games / self.seconds, 1),
            "cpu_seconds_per_game": round(self.cpu_seconds / self.games, 3),
        }


class CpuMeter:
    """CPU seconds of this process and all its descendants while it runs, sampled from /proc.

    Reaped children's times do not add up reliably here (a bwrap sandbox's processes are not
    all waited for by their parent), so every process of the tree is sampled every
    ``interval_s`` and its last-seen CPU time counted: a process that lives less than one
    interval may be missed, and bots live for their whole game.
    """

    def __init__(self, interval_s: float = 0.05) -> None:
        self.interval_s = interval_s
        self._seen: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for sample in process_tree(os.getpid(), sample_processes()):
            self._seen[sample.pid] = max(self._seen.get(sample.pid, 0), sample.cpu_ticks)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> CpuMeter:
        self._sample()
        self._base = dict(self._seen)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def seconds(self) -> float:
        """CPU used since entry, by every process of the tree."""
        return sum(ticks - self._base.get(pid, 0) for pid, ticks in self._seen.items()) / TICKS


def tree_rss_mb(exclude_self: bool = True) -> float:
    """Resident memory of this process's descendants (Ray's processes), in MB."""
    tree = process_tree(os.getpid(), sample_processes())
    pages = sum(s.rss_pages for s in tree if not (exclude_self and s.pid == os.getpid()))
    return pages * PAGE / (1024 * 1024)


def config_text(deals: int, players: int, target: int, concurrency: int) -> str:
    bots = "".join(f'\n[[bots]]\nname = "b{i}"\nbuiltin = "{kind}"\n' for i, kind in
                   enumerate(("heuristic", "heuristic", "random")))  # fmt: skip
    return (
        f'[tournament]\nname = "raybench"\ntable_size = {players}\ndeals = {deals}\nduplicate = false\n'
        f'seed = "raybench"\ntarget_score = {target}\nconcurrency = {concurrency}\n'
        f"decision_ms = 10000\n{bots}"
    )


def play(folder: Path, text: str, executor: ExecutorKind) -> Timing:
    folder.mkdir()
    config = parse_config(text, folder)
    tournament = create_tournament(config, text, folder / "out", deal_secret=SECRET)
    with tournament.store:
        started = time.perf_counter()
        with CpuMeter() as cpu:
            run_tournament(tournament, executor=executor)
        seconds = time.perf_counter() - started
        outcomes = tournament.store.outcomes(records=False)
    return Timing(len(outcomes), seconds, cpu.seconds, {o.key: o.totals for o in outcomes})


#: The league's command entrant: the heuristic bot through its own script.
SCRIPT = """
import os
import sys

from hearts_tournaments.arena.builtin_bot import main

sys.exit(main(["heuristic", *sys.argv[1:], "--seed", os.environ["HEARTS_SEED"], "--name", "scripted"]))
"""


def play_league(folder: Path, bots: Path, players: int, target: int, blocks: int, concurrency: int,
                executor: ExecutorKind) -> Timing:  # fmt: skip
    """A league of three entrants, its validation games and ``blocks`` blocks, on ``executor``."""
    config = LeagueConfig(name="raybench", table_size=players, seed="raybench", target_score=target,
                          policy=TablePolicy(decision_ms=10000), bootstrap=20)  # fmt: skip
    with commands.init_league(folder, config, SECRET) as store:
        commands.add_version(store, commands.make_spec("heur", None, "heuristic"))
        commands.add_version(store, commands.make_spec("dice", None, "random"))
        spec = commands.make_spec("scripted", f"{sys.executable} bots/scripted.py", None,
                                  files=[Path("bots")], workdir=bots)  # fmt: skip
        commands.add_version(store, commands.snapshot_files(store, spec))
        started = time.perf_counter()
        with CpuMeter() as cpu:
            run_league(store, StopAfter(blocks=blocks), concurrency, executor=executor.value, ray_address="")
        seconds = time.perf_counter() - started
        totals = {key: tuple(summary["totals"]) for key, _b, _v, summary in store.games()}
    return Timing(len(totals), seconds, cpu.seconds, totals)


def start_ray(concurrency: int) -> dict[str, float]:
    """Starts a one-machine Ray as the executor would, and what that costs."""
    import ray

    started = time.perf_counter()
    meter = CpuMeter().__enter__()
    ray.init(
        num_cpus=concurrency,
        object_store_memory=RAY_OBJECT_STORE_BYTES,
        include_dashboard=False,
        logging_level="WARNING",
        log_to_driver=False,
        configure_logging=False,
    )
    init_s = time.perf_counter() - started

    @ray.remote(num_cpus=1)
    def ping() -> int:
        return os.getpid()

    ray.get([ping.remote() for _ in range(concurrency)])
    meter.__exit__()
    return {
        "init_seconds": round(init_s, 2),
        "init_and_first_tasks_seconds": round(time.perf_counter() - started, 2),
        "cpu_seconds": round(meter.seconds, 2),
        "ray_processes_rss_mb": round(tree_rss_mb(), 1),
    }


def measure(
    deals: int, players: int, target: int, concurrency: int, league_blocks: int = 0
) -> dict[str, Any]:
    """Both runs; a league of ``league_blocks`` blocks instead of the tournament, when given."""
    import ray

    text = config_text(deals, players, target, concurrency)
    with tempfile.TemporaryDirectory(prefix="hearts-raybench-") as tmp:
        root = Path(tmp)
        bots = root / "entrant"
        (bots / "bots").mkdir(parents=True)
        (bots / "bots" / "scripted.py").write_text(SCRIPT)

        def run(name: str, executor: ExecutorKind) -> Timing:
            if league_blocks:
                folder = root / name / "league"
                folder.parent.mkdir()
                return play_league(folder, bots, players, target, league_blocks, concurrency, executor)
            return play(root / name, text, executor)

        local = run("local", ExecutorKind.LOCAL)
        startup = start_ray(concurrency)
        try:
            on_ray = run("ray", ExecutorKind.RAY)
            startup["ray_processes_rss_mb_after_games"] = round(tree_rss_mb(), 1)
        finally:
            ray.shutdown()
    return {
        "what": f"league, {league_blocks} blocks and 3 validation games" if league_blocks else "tournament",
        "games": local.games,
        "players": players,
        "target_score": target,
        "concurrency": concurrency,
        "bots": "heuristic, random, heuristic through a script (snapshot)"
        if league_blocks
        else "heuristic x2, random x1",
        "ray_version": ray.__version__,
        "cores": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "local": local.figures(),
        "ray": on_ray.figures(),
        "ray_startup": startup,
        "ray_share_of_local_throughput": round(local.seconds / on_ray.seconds, 3),
        "ray_extra_cpu_seconds_per_game": round((on_ray.cpu_seconds - local.cpu_seconds) / local.games, 3),
        "identical_results": local.totals == on_ray.totals,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, default=8, help="games in the tournament (one per deal)")
    parser.add_argument("--players", type=int, default=6, help="table size")
    parser.add_argument("--target-score", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=2, help="tables at once (and Ray CPUs)")
    parser.add_argument("--league", action="store_true", help="play a league instead of a tournament")
    parser.add_argument("--blocks", type=int, default=2, help="with --league: blocks to play")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        print(
            "bench/ray_executor.py: error: Ray is not installed: pip install 'cancellation-hearts[ray]'",
            file=sys.stderr,
        )
        return 2
    configure_logging(LogFormat.JSON, "WARNING")
    result = measure(
        args.deals, args.players, args.target_score, args.concurrency, args.blocks if args.league else 0
    )
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"{result['what']}: {result['games']} games, table of {args.players}, to {args.target_score} points, "
        f"{args.concurrency} tables at once; Ray {result['ray_version']}"
    )
    print(f"(load average {result['load_average_1min']} on {result['cores']} cores when done)")
    for label, key in (("local executor", "local"), ("ray executor  ", "ray")):
        figures = result[key]
        print(
            f"  {label}: {figures['games_per_minute']:8.1f} games/min ({figures['seconds']:.1f} s; "
            f"{figures['cpu_seconds_per_game']:.3f} CPU s per game, every process included)"
        )
    startup = result["ray_startup"]
    print(
        f"  Ray start-up: ray.init {startup['init_seconds']:.1f} s, with first tasks "
        f"{startup['init_and_first_tasks_seconds']:.1f} s, {startup['cpu_seconds']:.1f} CPU s; "
        f"Ray's processes hold {startup['ray_processes_rss_mb']:.0f} MB "
        f"({startup['ray_processes_rss_mb_after_games']:.0f} MB after the games)"
    )
    print(
        f"  ray reaches {result['ray_share_of_local_throughput']:.0%} of local throughput, "
        f"{result['ray_extra_cpu_seconds_per_game']:+.3f} CPU s per game"
    )
    print(f"  same results in every game: {result['identical_results']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
