#!/usr/bin/env python3
"""How honest the fair-play audit is: false flags in fields without collusion, and colluding
pairs caught, over many real tournaments played with the simulator.

Each tournament is a real schedule (:func:`make_schedule`: ``--bots`` bots at tables of
``--table-size``, ``deals`` duplicate deals, seating ``balanced``) whose games are played to the
end by the simulator (``hearts_client.sim``; the referee's deal of every hand) with these bots:

* ``heuristic``: the SDK's heuristic bot (the simulator's ``heuristic`` policy, decision for
  decision the same);
* ``random``: a legal card at random;
* ``noisy``: the heuristic, but a random legal card at a fifth of its plays.

The honest field is 4 heuristic, 2 noisy and 2 random bots (with 8 bots; other counts keep the
proportions), the kinds dealt to the schedule's names at random in every tournament. A colluding
field replaces two heuristic bots by a colluding pair that sees its partner's seat, playing the
heuristic but for one rule (``--strategies``):

* ``spare``: never throw a point card onto a trick the partner is winning when another card
  may be played (a high card of another suit instead);
* ``rival``: ``spare``, and throw the most points it can onto every trick a chosen rival (one
  of the heuristic bots) is winning.

Every game's discard chances are taken as it is played, by the audit's own
:func:`~hearts_tournaments.results.audit.discard_chance` on the simulator's state (the same
chances the audit replays from a record: ``tests/test_fair_play_audit.py`` checks it on records
of these games), and each tournament is audited by
:func:`~hearts_tournaments.results.audit.audit` at its default level (``ALPHA``, 0.05).
Printed per deal count: the share of honest tournaments with any pair flagged, and of colluding
tournaments with the pair caught (a flagged pair holding a colluder; for ``rival`` the
colluder's pair with its partner or with the rival), each with its 95% Wilson interval, and the
share of the honest tournaments' tests whose own p-value (before Holm) is below 0.05, 0.01 and
0.001. ``--json`` prints one JSON object. ``--rows FILE`` keeps each tournament's result as it
comes, and a run given the file of a stopped run plays only what it lacks (tournaments are
played interleaved, the i-th of every kind before the next).

Usage (the defaults take about 6 minutes on 2 idle cores; the docs' figures are the second line's)::

    nice -n 10 python bench/collusion.py --jobs 2
    nice -n 10 python bench/collusion.py --honest 70 --colluding 70 --jobs 2 --rows rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hearts_client import sim
from hearts_core.cards import BLACK_MARIA, CARDS, HEARTS_MASK, POINT_MASK
from hearts_core.deal import deal_hand, derive_seed
from hearts_core.record import places_of
from hearts_core.rules import MoonChoice, PassDirection, Rules
from hearts_core.state import winning_index
from hearts_tournaments.results.audit import ALPHA, AuditGame, DiscardChance, audit, discard_chance
from hearts_tournaments.tournament.schedule import Schedule, make_schedule

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054
#: The share of a noisy bot's plays made at random.
NOISE = 0.2
#: Levels at which the honest fields' raw p-values are counted (their calibration).
P_LEVELS = (0.05, 0.01, 0.001)
#: The colluding strategies.
STRATEGIES = ("spare", "rival")


@dataclass(frozen=True, slots=True)
class Field:
    """Who plays: a kind per bot name, and the colluders' roles.

    Attributes:
        kinds: Per bot name: heuristic, random, noisy, or a strategy's name (a colluder).
        colluders: The colluding pair (empty in an honest field).
        rival: The bot the ``rival`` strategy gangs up on, or "".
    """

    kinds: dict[str, str]
    colluders: tuple[str, ...] = ()
    rival: str = ""


def make_field(names: Sequence[str], strategy: str | None, rng: random.Random) -> Field:
    """The honest field's kinds dealt to ``names`` at random; with ``strategy``, two heuristic
    bots collude (and for ``rival`` a third heuristic bot is their rival)."""
    b = len(names)
    random_count = max(1, round(b / 4))
    noisy_count = max(1, round(b / 4))
    kinds = (
        ["heuristic"] * (b - random_count - noisy_count) + ["noisy"] * noisy_count + ["random"] * random_count
    )
    order = list(names)
    rng.shuffle(order)
    field = dict(zip(order, kinds, strict=True))
    if strategy is None:
        return Field(field)
    heuristic = [name for name in order if field[name] == "heuristic"]
    pair = (heuristic[0], heuristic[1])
    for name in pair:
        field[name] = strategy
    return Field(field, pair, heuristic[2] if strategy == "rival" else "")


def _points(card: int) -> int:
    return 13 if card == BLACK_MARIA else 1 if (1 << card) & HEARTS_MASK else 0


def _choose(
    game: Any,
    kind: str,
    seat: int,
    legal: list[int],
    trick: list[tuple[int, int]],
    partners: frozenset[int],
    rivals: frozenset[int],
    rng: random.Random,
) -> int:
    """The play of a bot of ``kind`` in ``seat``."""
    if kind == "random" or (kind == "noisy" and rng.random() < NOISE):
        return legal[rng.randrange(len(legal))]
    base = game.policy_action("heuristic")
    assert base is not None
    if kind in ("heuristic", "noisy") or not trick or any(c // 13 == trick[0][1] // 13 for c in legal):
        return base
    winner = _winner(trick)
    if winner in rivals:
        return max(legal, key=lambda c: (_points(c), c % 13))  # everything it can onto the rival
    if winner in partners and _points(base):
        spare = [c for c in legal if not (1 << c) & POINT_MASK]
        if spare:
            return max(spare, key=lambda c: c % 13)  # a high card of another suit instead
    return base


def _winner(trick: Sequence[tuple[int, int]]) -> int | None:
    index = winning_index([card for _, card in trick])
    return None if index is None else trick[index][0]


def play_game(
    seats: Sequence[str], field: Field, seed: str, target: int, rng: random.Random, keep_record: bool = False
) -> tuple[tuple[int, ...], list[DiscardChance], dict[str, Any] | None]:
    """Plays one game to the end; returns each seat's place, its discard chances and, with
    ``keep_record``, its game record (the hands are the referee's deal from ``seed``)."""
    n = len(seats)
    game = sim.Game(n, seed, target_score=target)
    kinds = [field.kinds[name] for name in seats]
    partners = [
        frozenset(s for s, other in enumerate(seats) if other in field.colluders and other != seats[seat])
        if seats[seat] in field.colluders
        else frozenset()
        for seat in range(n)
    ]
    rivals = [
        frozenset(s for s, other in enumerate(seats) if other == field.rival)
        if kinds[seat] == "rival"
        else frozenset()
        for seat in range(n)
    ]
    chances: list[DiscardChance] = []
    hands: list[dict[str, Any]] = []
    while not game.is_over():
        seat, phase = game.current_player, game.phase
        if keep_record and len(hands) <= game.hand_index:
            hands.append(_hand_record(n, seed, game.hand_index))
        if phase == sim.PLAY:
            trick = game.trick()
            kind = kinds[seat]
            legal = None if kind == "heuristic" else game.legal_actions()
            if legal is None:
                card = game.policy_action("heuristic")
                assert card is not None
            else:
                card = _choose(game, kind, seat, legal, trick, partners[seat], rivals[seat], rng)
            if trick:
                # Only a seat void in the suit led holding a point card has a chance: skip the rest.
                mask = game.legal_mask()
                if not (mask >> (13 * (trick[0][1] // 13))) & 0x1FFF and mask & POINT_MASK:
                    legal = legal if legal is not None else game.legal_actions()
                    chance = discard_chance(n, seat, legal, trick, card, game.taken(), game.totals())
                    if chance is not None:
                        chances.append(chance)
            if keep_record:
                hands[-1]["plays"].append(str(CARDS[card]))
            game.apply_action(card)
        elif phase == sim.PASS:
            if kinds[seat] == "random":
                legal = game.legal_actions()
                action = legal[rng.randrange(len(legal))]
            else:
                action = game.policy_action("heuristic")
                assert action is not None
            if keep_record:
                hands[-1]["passes"][seat].append(str(CARDS[action]))
            game.apply_action(action)
        else:
            action = game.policy_action("heuristic")
            assert action is not None
            if keep_record:
                choice = (
                    MoonChoice.SELF_MINUS_26
                    if action == sim.MOON_SELF_MINUS_26
                    else MoonChoice.OTHERS_PLUS_26
                )
                hands[-1]["moon_choice"] = choice.value
            game.apply_action(action)
    record = None
    if keep_record:
        record = {
            "players": n,
            "target_score": target,
            "max_hands": game.max_hands,
            "hands": hands,
            "seed": seed,
        }
        record["bots"] = list(seats)
    return places_of(game.totals()), chances, record


def _hand_record(players: int, seed: str, index: int) -> dict[str, Any]:
    """Hand ``index``'s record before its passes and plays: the referee's deal from ``seed``."""
    rules = Rules(players)
    deal, kitty = deal_hand(rules, seed, index)
    return {
        "dealer": rules.dealer(index),
        "pass_direction": PassDirection.for_hand(index).value,
        "deal": [[str(c) for c in hand] for hand in deal],
        "kitty": [str(c) for c in kitty],
        "passes": [[] for _ in range(players)],
        "plays": [],
    }


def tournament(
    schedule: Schedule, strategy: str | None, seed: str, target: int
) -> tuple[dict[str, Any], Field]:
    """Plays and audits one tournament; returns the audit's JSON and the field."""
    rng = random.Random(derive_seed(seed, "field"))
    field = make_field(schedule.bots, strategy, rng)
    games = []
    for game in schedule.games:
        deal_seed = derive_seed(seed, "deal", game.deal)
        places, chances, _ = play_game(game.seats, field, deal_seed, target, rng)
        games.append(AuditGame(game.key, f"deal {game.deal}", game.seats, places, tuple(chances)))
    return audit(games).to_json(), field


def caught(report: dict[str, Any], field: Field) -> bool:
    """Whether a flagged pair holds a colluder and its partner (or, for ``rival``, its rival)."""
    mates = set(field.colluders) | ({field.rival} if field.rival else set())
    for item in report["flagged"]:
        pair = set(item["bots"])
        if pair & set(field.colluders) and pair <= mates:
            return True
    return False


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``hits / n``."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + Z95 * Z95 / (2 * n)) / (1 + Z95 * Z95 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / (1 + Z95 * Z95 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _job(args: tuple[dict[str, Any], str | None, str, int]) -> dict[str, Any]:
    stored, strategy, seed, target = args
    schedule = Schedule.from_json(stored)
    started = time.process_time()
    report, field = tournament(schedule, strategy, seed, target)
    flagged = [sorted(item["bots"]) for item in report["flagged"]]
    others = [pair for pair in flagged if not set(pair) & set(field.colluders)]
    return {
        "strategy": strategy,
        "seed": seed,
        "flagged": flagged,
        "caught": caught(report, field) if strategy else False,
        "flagged_without_colluder": bool(others),
        "tests": report["tests_made"],
        # How often a test's own p-value (before Holm) falls below each level: in an honest
        # field, about that share of the tests if the p-values are right.
        "p_below": {str(level): sum(t["p"] < level for t in report["tests"]) for level in P_LEVELS},
        "cpu_s": time.process_time() - started,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--table-size", type=int, default=6)
    parser.add_argument("--deals", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--honest", type=int, default=40, help="honest tournaments per deal count")
    parser.add_argument(
        "--colluding", type=int, default=20, help="colluding tournaments per strategy and deal count"
    )
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--target", type=int, default=150, help="each game's target score")
    parser.add_argument("--seed", default="collusion")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--rows",
        help="append each tournament's result to this file as a JSON line; a run given the file of a "
        "stopped one plays only the tournaments it lacks",
    )
    args = parser.parse_args(argv)
    names = [f"b{i:02d}" for i in range(args.bots)]
    started = time.monotonic()
    results: dict[str, Any] = {
        "bots": args.bots,
        "table_size": args.table_size,
        "target_score": args.target,
        "alpha": ALPHA,
        "simulator": sim.BACKEND,
        "field": dict(sorted(Counter(make_field(names, None, random.Random(0)).kinds.values()).items())),
        "deals": {},
    }
    stored = {
        deals: make_schedule(names, args.table_size, deals, f"{args.seed}/{deals}").to_json()
        for deals in args.deals
    }
    # Interleaved (the i-th tournament of every kind and deal count, then the next), so that a
    # run stopped early has as many of each as the --rows of a smaller run would reuse.
    work: list[tuple[dict[str, Any], str | None, str, int]] = []
    for i in range(max(args.honest, args.colluding)):
        for deals in args.deals:
            for strategy in (None, *args.strategies):
                if i < (args.honest if strategy is None else args.colluding):
                    seed = f"{args.seed}/{deals}/{strategy or 'honest'}/{i}"
                    work.append((stored[deals], strategy, seed, args.target))
    deal_of = {item[2]: int(item[2].split("/")[1]) for item in work}
    done: list[dict[str, Any]] = []
    if args.rows and Path(args.rows).exists():  # a run stopped before: its tournaments count
        kept = [json.loads(line) for line in Path(args.rows).read_text().splitlines() if line.strip()]
        done = [row for row in kept if row["seed"] in deal_of]
        finished = {row["seed"] for row in done}
        work = [item for item in work if item[2] not in finished]
    rows = open(args.rows, "a", encoding="utf-8") if args.rows else None  # noqa: SIM115
    with multiprocessing.Pool(args.jobs) as pool:
        for row in pool.imap_unordered(_job, work, chunksize=1):
            done.append(row)
            if rows is not None:
                rows.write(json.dumps(row) + "\n")
                rows.flush()
    if rows is not None:
        rows.close()
    for row in done:
        deals = deal_of[row["seed"]]
        kind = row["strategy"] or "honest"
        bucket = (
            results["deals"]
            .setdefault(str(deals), {})
            .setdefault(kind, {"tournaments": 0, "hits": 0, "others": 0, "cpu_s": 0.0})
        )
        bucket["tournaments"] += 1
        bucket["hits"] += int(bool(row["flagged"])) if kind == "honest" else int(row["caught"])
        bucket["others"] += int(row["flagged_without_colluder"])
        bucket["cpu_s"] += row["cpu_s"]
        if kind == "honest" and "p_below" in row:
            calibration = bucket.setdefault("p_below", {"tests": 0, **{str(x): 0 for x in P_LEVELS}})
            calibration["tests"] += row["tests"]
            for level, count in row["p_below"].items():
                calibration[level] += count
    for per_deal in results["deals"].values():
        for bucket in per_deal.values():
            low, high = wilson(bucket["hits"], bucket["tournaments"])
            bucket["share"] = round(bucket["hits"] / bucket["tournaments"], 4)
            bucket["share_ci95"] = [round(low, 4), round(high, 4)]
            bucket["cpu_s"] = round(bucket["cpu_s"], 1)
    results["wall_s"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"fair-play audit, {args.bots} bots at tables of {args.table_size}, games to {args.target}, "
        f"alpha {ALPHA} (Holm), simulator {sim.BACKEND}, {results['wall_s']} s"
    )
    for deals, per_deal in results["deals"].items():
        for kind, bucket in per_deal.items():
            what = "any pair flagged" if kind == "honest" else f"colluders caught ({kind})"
            low, high = bucket["share_ci95"]
            extra = "" if kind == "honest" else f"; a pair without a colluder flagged in {bucket['others']}"
            each = bucket["cpu_s"] / bucket["tournaments"]
            print(
                f"{deals:>4} deals  {kind:<8} {what}: {bucket['hits']} of {bucket['tournaments']} = "
                f"{bucket['share']:.1%} (95% {low:.1%}..{high:.1%}){extra}; {each:.1f} CPU s each"
            )
            if "p_below" in bucket:
                calibration = bucket["p_below"]
                shares = ", ".join(
                    f"p < {level}: {calibration[str(level)] / calibration['tests']:.2%}" for level in P_LEVELS
                )
                print(f"{'':>16}raw p-values of its {calibration['tests']} tests: {shares}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
