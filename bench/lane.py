#!/usr/bin/env python3
"""The priority lane: time from upload to a new version's first block and to a provisional rating.

Matchmaking is simulated with the league's own
:func:`~hearts_tournaments.league.matchmaking.choose_table` and online rating
(:func:`~hearts_tournaments.league.ratings.online_update`) on synthetic games (places drawn from
the Plackett-Luce model of known strengths, as ``bench/league.py``): a league of ``--entrants``
entrants at ``--table-size`` seats plays until each entrant has about ``--warm`` blocks, then

* ``one``: one new version is uploaded,
* ``burst``: a fifth of the league uploads a new version at once (a deadline rush),

and the blocks are counted from the upload until each new version played its first block and
``--provisional-blocks`` blocks (a rating stops being provisional no sooner), with the lane
(``--lane-blocks``, default 2) and without it (0). Each scenario runs with ``--seeds`` seeds;
the figures are means over seeds (and, for the burst, over its versions) with the worst case,
and the blocks to the first block of the burst's oldest upload (the lane takes them in upload
order; without it, ties among new versions go to a seeded draw).

Blocks become minutes with a block time measured in the same run: a real league on this machine
(:func:`~hearts_tournaments.league.play.run_league`, sandbox ``none``) with ``--table-size``
built-in entrants validates them (one validation game each, as an upload gets) and plays ONE
block (one deal in every rotation: ``table_size`` games); both are timed. An upload waits for
the block being played (half a block on average), its validation game, then the blocks counted:
minutes = (validation + (0.5 + blocks) x block time) / 60.

Usage::

    bench/lane.py [--entrants 20 100] [--table-size 8] [--seeds 5] [--concurrency 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.final import outcome
from bench.league import sample_places
from hearts_core.deal import derive_seed
from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.league import commands
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.matchmaking import Candidate, choose_table, meeting_counts
from hearts_tournaments.league.play import StopAfter, run_league
from hearts_tournaments.league.ratings import online_update

BUILTINS = ("heuristic", "random")


class League:
    """A synthetic league: versions in upload order, their blocks, online ratings, tables."""

    def __init__(self, size: int, lane_blocks: int, seed: str) -> None:
        self.size, self.lane_blocks, self.seed = size, lane_blocks, seed
        self.rng = random.Random(seed)
        self.truth: dict[str, float] = {}
        self.played: dict[str, int] = {}
        self.online: dict[str, tuple[float, float]] = {}
        self.tables: list[tuple[str, ...]] = []
        self.meetings: dict[tuple[str, str], int] = {}

    def upload(self, name: str) -> str:
        vid = f"{name}@v1"
        self.truth[vid] = self.rng.uniform(0.0, 1.0)
        self.played[vid] = 0
        return vid

    def block(self) -> tuple[str, ...]:
        number = len(self.tables)
        candidates = [
            Candidate(v, v.split("@")[0], n, *self.online.get(v, (25.0, 25 / 3)))
            for v, n in self.played.items()
        ]
        rng = random.Random(derive_seed(self.seed, "match", number))
        seats = choose_table(candidates, self.size, self.meetings, rng, lane_blocks=self.lane_blocks)
        games = []
        for r in range(self.size):
            rotated = tuple(seats[(s - r) % self.size] for s in range(self.size))
            places = sample_places([self.truth[v] for v in rotated], self.rng)
            games.append(outcome(f"b{number}-r{r}", rotated, places))
        self.online.update(online_update(games, self.online))
        self.tables.append(seats)
        self.meetings = meeting_counts(self.tables)
        for v in set(seats):
            self.played[v] += 1
        return seats


def scenario(
    entrants: int, size: int, lane_blocks: int, provisional: int, warm: int, burst: int, seed: str
) -> dict[str, list[int]]:
    """Blocks from upload to the first block and to ``provisional`` blocks of each new version."""
    league = League(size, lane_blocks, seed)
    for i in range(entrants):
        league.upload(f"e{i:03d}")
    while min(league.played.values()) < warm:
        league.block()
    news = [league.upload(f"new{k:02d}") for k in range(burst)]
    first: dict[str, int] = {}
    done: dict[str, int] = {}
    count = 0
    while len(done) < len(news):
        count += 1
        league.block()
        for v in news:
            if league.played[v] >= 1:
                first.setdefault(v, count)
            if league.played[v] >= provisional:
                done.setdefault(v, count)
    return {"first": [first[v] for v in news], "provisional": [done[v] for v in news]}


def measure_block(size: int, max_hands: int | None, concurrency: int) -> dict[str, float]:
    """Seconds of one validation game and of ONE real block of ``size`` built-in entrants."""
    settings: dict[str, Any] = {"table_size": size, "seed": "lane", "sandbox": "none", "bootstrap": 0}
    if max_hands is not None:
        settings["max_hands"] = max_hands
    stamps: list[tuple[float, str]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        commands.init_league(Path(tmp) / "l", LeagueConfig.from_json(settings), bytes(32)) as store,
    ):
        for i in range(size):
            commands.add_version(store, commands.make_spec(f"b{i}", None, BUILTINS[i % len(BUILTINS)]))
        started = time.perf_counter()
        run_league(
            store,
            StopAfter(blocks=1),
            concurrency=concurrency,
            emit=lambda line: stamps.append((time.perf_counter(), line)),
        )
    validated = [t for t, line in stamps if ": active:" in line]
    stored = [t for t, line in stamps if line.startswith("block ")]
    if len(validated) != size or len(stored) != 1:
        raise SystemExit(f"bench/lane.py: the real league did not validate and play as expected: {stamps}")
    return {
        "validation_s": round((validated[-1] - started) / size, 2),
        "block_s": round(stored[0] - validated[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--table-size", type=int, default=8)
    parser.add_argument("--lane-blocks", type=int, default=2)
    parser.add_argument("--provisional-blocks", type=int, default=LeagueConfig().provisional_blocks)
    parser.add_argument("--warm", type=int, default=12, help="Blocks per entrant before the uploads.")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--max-hands", type=int, default=None, help="Hands per real game (default: the league's)."
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="Tables at once in the real block (run's --concurrency)."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    configure_logging(LogFormat.JSON, "WARNING")
    timing = measure_block(args.table_size, args.max_hands, args.concurrency)
    rows = []
    for n in args.entrants:
        for kind, burst in (("one", 1), ("burst", max(2, n // 5))):
            for lane in (args.lane_blocks, 0):
                first: list[int] = []
                prov: list[int] = []
                oldest: list[int] = []
                worst_first = worst_prov = 0
                for s in range(args.seeds):
                    got = scenario(
                        n, args.table_size, lane, args.provisional_blocks, args.warm, burst, f"lane-{s}"
                    )
                    first += got["first"]
                    oldest.append(got["first"][0])
                    prov += got["provisional"]
                    worst_first = max(worst_first, max(got["first"]))
                    worst_prov = max(worst_prov, max(got["provisional"]))

                def minutes(blocks: float) -> float:
                    return round((timing["validation_s"] + (0.5 + blocks) * timing["block_s"]) / 60, 1)

                rows.append(
                    {
                        "entrants": n,
                        "uploads": kind,
                        "new_versions": burst,
                        "lane_blocks": lane,
                        "first_blocks": round(statistics.mean(first), 2),
                        "first_blocks_max": worst_first,
                        "oldest_upload_first_blocks": round(statistics.mean(oldest), 2),
                        "provisional_blocks": round(statistics.mean(prov), 2),
                        "provisional_blocks_max": worst_prov,
                        "first_min": minutes(statistics.mean(first)),
                        "first_min_max": minutes(worst_first),
                        "provisional_min": minutes(statistics.mean(prov)),
                        "provisional_min_max": minutes(worst_prov),
                    }
                )
    result = {
        "table_size": args.table_size,
        "seeds": args.seeds,
        "concurrency": args.concurrency,
        **timing,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"one real block of {args.table_size} built-in bots: {timing['block_s']} s; "
        f"a validation game: {timing['validation_s']} s"
    )
    print(
        "entrants uploads  new lane | blocks to 1st (max) | to provisional (max) | minutes: 1st | provisional"
    )
    for r in rows:
        print(
            f"{r['entrants']:8d} {r['uploads']:6s} {r['new_versions']:4d} {r['lane_blocks']:4d} | "
            f"{r['first_blocks']:8.2f} ({r['first_blocks_max']:3d}) {r['oldest_upload_first_blocks']:6.2f} | "
            f"{r['provisional_blocks']:9.2f} ({r['provisional_blocks_max']:3d})    | "
            f"{r['first_min']:5.1f} ({r['first_min_max']:.1f}) | "
            f"{r['provisional_min']:5.1f} ({r['provisional_min_max']:.1f})"
        )


if __name__ == "__main__":
    main()
