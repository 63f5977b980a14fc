#!/usr/bin/env python3
"""A simulated league: does matchmaking plus the official fit find the true order, and how fast?

In-process and synthetic for speed: ``--entrants`` entrants with known log-strengths (evenly
spaced over ``--range``) play blocks chosen by the league's own matchmaking
(:func:`hearts_tournaments.league.matchmaking.choose_table`), updated by the league's online
rating (:func:`~hearts_tournaments.league.ratings.online_update`); each game of a block is a
finishing order drawn from the Plackett-Luce model of the true strengths (so no card play: the
figure is about scheduling and rating, not about bots). Every ``--every`` blocks the official
table (:func:`~hearts_tournaments.league.ratings.official_table`, batch Plackett-Luce, with
``--samples`` bootstrap resamples as the league runs it) is
refitted and its Spearman rank correlation with the true order printed, with the spread of
blocks per entrant (max - min); it prints the blocks needed to reach ``--target`` correlation.

With ``--real`` the games are real games instead, played in-process
(:func:`hearts_core.local.play_game`) by ``heuristic`` bots with handicaps: entrant ``i`` plays
a uniformly random legal card (and passes at random) with probability ``i / (entrants - 1)``,
so the true order is known; places come from the final totals.

Usage::

    bench/league.py --entrants 50 --table-size 8 --blocks 200 --every 10 [--range 1.0] [--json]
    bench/league.py --real --entrants 50 --blocks 150 --every 10 --max-hands 3
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time

from hearts_client.bots.heuristic import HeuristicBot
from hearts_client.bots.random_bot import RandomBot
from hearts_core.cards import Card
from hearts_core.deal import derive_seed
from hearts_core.local import play_game
from hearts_core.record import GameRecord, state_to_record
from hearts_core.rules import MoonChoice, Rules
from hearts_core.view import View
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.matchmaking import Candidate, choose_table, meeting_counts
from hearts_tournaments.league.ratings import TableRow, official_table, online_update


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation (no ties expected)."""

    def ranks(xs: list[float]) -> list[int]:
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        out = [0] * len(xs)
        for r, i in enumerate(order):
            out[i] = r
        return out

    ra, rb = ranks(a), ranks(b)
    n = len(a)
    d2 = sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True))
    return 1 - 6 * d2 / (n * (n * n - 1))


def _by_name(row: TableRow) -> str:
    return row.version


def sample_places(strengths: list[float], rng: random.Random) -> tuple[int, ...]:
    """Places (1 = best) drawn from Plackett-Luce: Gumbel-max gives the same distribution."""
    keys = [s - math.log(-math.log(rng.random())) for s in strengths]
    order = sorted(range(len(keys)), key=lambda i: -keys[i])
    places = [0] * len(keys)
    for p, i in enumerate(order):
        places[i] = p + 1
    return tuple(places)


class Handicapped:
    """A heuristic bot that decides at random with probability ``handicap``."""

    def __init__(self, handicap: float, seed: str) -> None:
        self.handicap = handicap
        self.rng = random.Random(seed)
        self.good = HeuristicBot(seed)
        self.bad = RandomBot(seed)

    def _pick(self) -> HeuristicBot | RandomBot:
        return self.bad if self.rng.random() < self.handicap else self.good

    def choose_pass(self, view: View) -> list[Card]:
        return list(self._pick().choose_pass(view))

    def choose_play(self, view: View) -> Card:
        return self._pick().choose_play(view)

    def choose_moon(self, view: View) -> MoonChoice:
        return self.good.choose_moon(view)


def real_game(handicaps: list[float], seed: str, max_hands: int) -> tuple[tuple[int, ...], str]:
    """Places (1 = lowest total; ties share) and record of one real game between handicapped bots."""
    n = len(handicaps)
    players = [Handicapped(h, derive_seed(seed, "bot", s)) for s, h in enumerate(handicaps)]
    state = play_game(Rules(players=n, max_hands=max_hands), seed, players)
    record = GameRecord.from_json(state_to_record(state, seed=seed, bots=[f"s{s}" for s in range(n)]))
    return tuple(1 + sum(1 for t in state.totals if t < mine) for mine in state.totals), record.to_text()


def real_places(handicaps: list[float], seed: str, max_hands: int) -> tuple[int, ...]:
    """Places of one real game between handicapped bots (1 = lowest total; ties share)."""
    return real_game(handicaps, seed, max_hands)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, default=50)
    parser.add_argument("--table-size", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=600)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--range", type=float, default=1.0, help="True log-strengths span 0..RANGE.")
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--real", action="store_true", help="Real in-process games of handicapped bots.")
    parser.add_argument("--max-hands", type=int, default=3, help="Hands per real game.")
    parser.add_argument(
        "--samples",
        type=int,
        default=200,
        help="Bootstrap resamples of the official table (the league's default).",
    )
    args = parser.parse_args()
    n, size = args.entrants, args.table_size
    names = [f"e{i:02d}@v1" for i in range(n)]
    truth = {v: args.range * i / (n - 1) for i, v in enumerate(names)}
    rng = random.Random(args.seed)
    online: dict[str, tuple[float, float]] = {}
    played = dict.fromkeys(names, 0)
    tables: list[tuple[str, ...]] = []
    blocks: dict[int, list[GameOutcome]] = {}
    reached: int | None = None
    published_reached: int | None = None
    points = []
    started = time.perf_counter()
    for number in range(args.blocks):
        candidates = [Candidate(v, v.split("@")[0], played[v], *online.get(v, (25.0, 25 / 3))) for v in names]
        seats = choose_table(
            candidates, size, meeting_counts(tables), random.Random(derive_seed(args.seed, number))
        )
        tables.append(seats)
        games = []
        for r in range(size):
            rotated = tuple(seats[(s - r) % size] for s in range(size))
            if args.real:
                handicaps = [1 - truth[v] / args.range for v in rotated]
                places = real_places(handicaps, derive_seed(args.seed, "deal", number), args.max_hands)
            else:
                places = sample_places([truth[v] for v in rotated], rng)
            games.append(GameOutcome.clean(f"b{number}-r{r}", rotated, (0,) * size, places=places))
        online.update(online_update(games, online))
        for v in set(seats):
            played[v] += 1
        blocks[number] = games
        if (number + 1) % args.every == 0:
            states = {v: {"mu": mu, "sigma": sigma} for v, (mu, sigma) in online.items()}
            rows = official_table(
                blocks, [(v, "active", None) for v in names], states, args.samples, "b", 8, 1.0
            )
            fitted = {r.version: r.strength for r in rows}
            if any(fitted[v] is None for v in names):
                continue
            rho = spearman([truth[v] for v in names], [fitted[v] or 0.0 for v in names])
            # What is published: the table's own order (rank 1 the best).
            published = spearman(
                [truth[v] for v in names], [-float(r.rank) for r in sorted(rows, key=_by_name)]
            )
            provisional = sum(r.provisional for r in rows)
            spread = max(played.values()) - min(played.values())
            points.append(
                {
                    "blocks": number + 1,
                    "spearman": round(rho, 4),
                    "published": round(published, 4),
                    "provisional": provisional,
                    "spread": spread,
                }
            )
            if not args.json:
                print(
                    f"blocks {number + 1:5d}  spearman {rho:.3f}  published {published:.3f}  "
                    f"provisional {provisional:3d}  blocks per entrant {min(played.values())}.."
                    f"{max(played.values())} (spread {spread})"
                )
            if reached is None and rho >= args.target:
                reached = number + 1
            if published_reached is None and published >= args.target:
                published_reached = number + 1
    elapsed = time.perf_counter() - started
    result = {
        "entrants": n,
        "table_size": size,
        "blocks": args.blocks,
        "target": args.target,
        "blocks_to_target": reached,
        "published_blocks_to_target": published_reached,
        "final": points[-1] if points else None,
        "max_spread": max((p["spread"] for p in points), default=None),
        "seconds": round(elapsed, 1),
    }
    if args.json:
        print(json.dumps({**result, "points": points}))
    else:
        print(
            f"blocks to reach spearman {args.target}: strength {reached}, published order "
            f"{published_reached}  ({elapsed:.1f} s)"
        )


if __name__ == "__main__":
    main()
