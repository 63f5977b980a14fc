"""How many points per hand one bot takes against a field, compared with the field itself.

Hand ``i`` is dealt from ``(seed, i)`` with :func:`hearts_core.deal.deal_hand` (dealer and
pass direction as in hand ``i`` of a game, totals at zero, and never the game's last hand, so a
search bot plays it for points) and played twice: once with bot A in
seat ``i mod players`` and bots B everywhere else, once with B in every seat. A's score in that
seat is paired with B's score in the same seat on the same deal, so the difference is measured
hand by hand, which takes most of the deal's luck out of it. Scores are what the hand adds to
the seat's total (a moon shot included).

Usage::

    bench/strength.py --bot montecarlo --field heuristic --players 8 --hands 2000 [--json]
    bench/strength.py --bot ismcts --field heuristic --players 8 --hands 2000 --safety-limit none
    bench/strength.py --pool run1.json run2.json [--json]

Prints the mean points per hand of both with 95% confidence intervals (normal approximation),
the paired difference, the ratio of A's points to B's (the delta method's interval, keeping
the pairing), the wall time and A's time per decision, and, for a bot with a wall-clock safety
stop (``ismcts``), how many of its decisions that stop cut short: a budget-bound bot's figures
are its own only when that count is 0 or negligible. ``--json`` also holds every deal's two
scores, so that ``--pool`` can combine runs on different seeds into one set of figures.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hearts_client.bot import Bot
from hearts_client.bots import BUILTIN_BOTS, make_bot
from hearts_client.bots.ismcts import IsmctsBot, search_settings
from hearts_client.bots.montecarlo import DEFAULT_WORLDS, MonteCarloBot
from hearts_core.cards import Card
from hearts_core.deal import derive_seed
from hearts_core.local import Player, play_hand
from hearts_core.rules import MoonChoice, Rules
from hearts_core.state import State
from hearts_core.view import View

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Config:
    """One benchmark run.

    Attributes:
        bot: The bot measured (A).
        field: The bots it plays against (B), and the reference it is compared with.
        players: The table size.
        hands: How many deals to play.
        seed: Derives every deal and every bot's seed.
        worlds: Worlds per decision for ``montecarlo`` bots, or ``None`` for their default.
        time_limit: Seconds per decision for ``montecarlo`` bots, or ``None``.
        safety_limit: The wall-clock safety stop of ``ismcts`` bots in seconds, ``None`` for
            none, or ``"default"`` for the bot's own.
    """

    bot: str
    field: str
    players: int
    hands: int
    seed: str
    worlds: int | None = None
    time_limit: float | None = None
    safety_limit: float | str | None = "default"


@dataclass(frozen=True, slots=True)
class HandOutcome:
    """One deal played both ways: A's and B's score in the same seat, A's decision times.

    ``searched`` and ``cut_short`` count A's searched decisions and those its safety stop cut
    short (a bot with such a stop, as ``ismcts``; 0 for others).
    """

    seat: int
    bot_points: int
    field_points: int
    decision_seconds: tuple[float, ...]
    searched: int = 0
    cut_short: int = 0


class _Timed:
    """Wraps a bot to record how long each play decision takes."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.seconds: list[float] = []

    def choose_pass(self, view: View) -> Sequence[Card]:
        return self.bot.choose_pass(view)

    def choose_play(self, view: View) -> Card:
        start = time.perf_counter()
        card = self.bot.choose_play(view)
        self.seconds.append(time.perf_counter() - start)
        return card

    def choose_moon(self, view: View) -> MoonChoice:
        return self.bot.choose_moon(view)


def _bot(config: Config, name: str, seed: str) -> Bot:
    bot = make_bot(name, seed)
    if isinstance(bot, MonteCarloBot):
        if config.worlds is not None:
            bot.worlds = config.worlds
        bot.time_limit = config.time_limit
    if isinstance(bot, IsmctsBot) and config.safety_limit != "default":
        bot.safety_limit = None if config.safety_limit is None else float(config.safety_limit)
    return bot


def _score(config: Config, index: int, seats: Sequence[str]) -> tuple[list[int], _Timed | None]:
    """Plays deal ``index`` with the named bots per seat; returns the scores and A's timer."""
    # Deal hand ``index`` as in a game: hand index sets the dealer and the pass direction. The
    # game is long enough that this hand is not its last (the default hand limit is 200), so
    # the search bots play it for points, as the bench counts it, not for the game's placing.
    rules = Rules(players=config.players, max_hands=index + 2)
    state = State(rules)
    state.hand_index = index - 1
    bots = [
        _bot(config, name, derive_seed(config.seed, "bot", index, seat)) for seat, name in enumerate(seats)
    ]
    players: list[Player] = list(bots)
    timer = None
    measured = index % config.players
    if seats[measured] == config.bot and config.bot != config.field:
        timer = _Timed(bots[measured])
        players[measured] = timer
    play_hand(state, players, derive_seed(config.seed, "deals"))
    return list(state.results[-1].scores), timer


def play_deal(config: Config, index: int) -> HandOutcome:
    """Plays deal ``index`` with A in seat ``index mod players``, then with B everywhere."""
    seat = index % config.players
    field = [config.field] * config.players
    mixed = list(field)
    mixed[seat] = config.bot
    with_bot, timer = _score(config, index, mixed)
    alone, _ = _score(config, index, field)
    return HandOutcome(
        seat=seat,
        bot_points=with_bot[seat],
        field_points=alone[seat],
        decision_seconds=tuple(timer.seconds) if timer else (),
        searched=getattr(timer.bot, "decisions", 0) if timer else 0,
        cut_short=getattr(timer.bot, "cut_short", 0) if timer else 0,
    )


def _work(args: tuple[Config, int]) -> HandOutcome:
    return play_deal(*args)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% confidence interval of the mean of ``values`` (normal approximation)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def ratio_interval(bot: Sequence[float], field: Sequence[float]) -> tuple[float, float, float]:
    """The ratio of the means of paired ``bot`` and ``field`` values, with its 95% interval.

    The interval is the delta method's: the ratio ``R`` plus or minus 1.96 standard errors of
    ``mean(bot - R * field) / mean(field)``, which keeps the pairing of each deal.
    """
    mean_bot, mean_field = statistics.fmean(bot), statistics.fmean(field)
    if mean_field <= 0:
        return math.nan, math.nan, math.nan
    r = mean_bot / mean_field
    if len(bot) < 2:
        return r, r, r
    residual = [b - r * f for b, f in zip(bot, field, strict=True)]
    half = Z95 * statistics.stdev(residual) / math.sqrt(len(bot)) / mean_field
    return r, r - half, r + half


def summarize(bot: Sequence[float], field: Sequence[float]) -> dict[str, object]:
    """Means, the paired difference and the ratio of paired points per hand, with 95% intervals."""
    difference = [b - f for b, f in zip(bot, field, strict=True)]
    ratio, low, high = ratio_interval(bot, field)
    return {
        "bot_points_per_hand": statistics.fmean(bot),
        "field_points_per_hand": statistics.fmean(field),
        "difference": statistics.fmean(difference),
        "ratio": ratio,
        "ci95": {
            "bot": list(interval(bot)),
            "field": list(interval(field)),
            "difference": list(interval(difference)),
            "ratio": [low, high],
        },
    }


def pool(paths: Sequence[str]) -> dict[str, object]:
    """The figures of several earlier ``--json`` runs (of the same bots and settings) pooled.

    Raises:
        ValueError: if the runs measured different bots, table sizes, budgets or versions of
            ``ismcts`` (its search settings, recorded since they were), or hold no hands.
    """
    runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in paths]
    keys = ("bot", "field", "players", "worlds", "time_limit")
    # The settings as sorted JSON: hashable, and equal whatever order their keys were written in.
    kinds = {(*(r.get(k) for k in keys), json.dumps(r.get("ismcts"), sort_keys=True)) for r in runs}
    if len(kinds) != 1:
        raise ValueError(f"the runs measured different bots or settings: {sorted(map(str, kinds))}")
    bot = [float(x) for r in runs for x in r.get("bot_points", [])]
    field = [float(x) for r in runs for x in r.get("field_points", [])]
    if not bot or len(bot) != len(field):
        raise ValueError("the runs hold no per-hand points (made before --json printed them?)")
    ((bot_name, field_name, players, worlds, time_limit, _),) = kinds
    settings = runs[0].get("ismcts")
    stops = [r["safety_stop"] for r in runs if "safety_stop" in r]
    pooled_stops = (
        {k: sum(s[k] for s in stops) for k in ("decisions", "cut_short")} if len(stops) == len(runs) else None
    )
    return {
        "bot": bot_name,
        "field": field_name,
        "players": players,
        "worlds": worlds,
        "time_limit": time_limit,
        "hands": len(bot),
        "seed": [r["seed"] for r in runs],
        **({"ismcts": settings} if settings is not None else {}),
        **summarize(bot, field),
        **({"safety_stop": pooled_stops} if pooled_stops is not None else {}),
        "bot_points": bot,
        "field_points": field,
    }


def _worlds(config: Config) -> int | None:
    # The budget montecarlo bots actually used, or None when none took part.
    if "montecarlo" not in (config.bot, config.field):
        return None
    return config.worlds if config.worlds is not None else DEFAULT_WORLDS


def run(config: Config, jobs: int) -> dict[str, object]:
    """Plays every deal (over ``jobs`` processes) and summarizes.

    Returns:
        The figures, as printed with ``--json``.
    """
    start = time.perf_counter()
    tasks = [(config, i) for i in range(config.hands)]
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            outcomes = pool.map(_work, tasks, chunksize=max(1, config.hands // (jobs * 8)))
    else:
        outcomes = [_work(t) for t in tasks]
    seconds = time.perf_counter() - start
    bot = [float(o.bot_points) for o in outcomes]
    field = [float(o.field_points) for o in outcomes]
    decisions = sorted(s for o in outcomes for s in o.decision_seconds)
    figures: dict[str, object] = {
        "bot": config.bot,
        "field": config.field,
        "players": config.players,
        "hands": config.hands,
        "seed": config.seed,
        "worlds": _worlds(config),
        "time_limit": config.time_limit,
        **({"safety_limit": config.safety_limit} if IsmctsBot.name in (config.bot, config.field) else {}),
        **summarize(bot, field),
        "seconds": seconds,
        "jobs": jobs,
        "bot_points": [o.bot_points for o in outcomes],
        "field_points": [o.field_points for o in outcomes],
    }
    if IsmctsBot.name in (config.bot, config.field):
        figures["ismcts"] = search_settings()
    if config.bot == IsmctsBot.name:
        figures["safety_stop"] = {
            "decisions": sum(o.searched for o in outcomes),
            "cut_short": sum(o.cut_short for o in outcomes),
        }
    if decisions:
        figures["decision_seconds"] = {
            "count": len(decisions),
            "mean": statistics.fmean(decisions),
            "p95": decisions[min(len(decisions) - 1, int(0.95 * len(decisions)))],
            "max": decisions[-1],
        }
    return figures


def report(figures: dict[str, object]) -> str:
    """The figures as a few readable lines."""
    ci = figures["ci95"]
    assert isinstance(ci, dict)
    bot, field = figures["bot"], figures["field"]
    width = max(len(str(bot)), len(str(field)), len("difference"))

    def line(label: object, mean: object, bounds: list[float]) -> str:
        return f"  {label!s:<{width}}  {mean:6.2f}  (95% CI {bounds[0]:.2f} .. {bounds[1]:.2f})"

    seconds = f", {figures['seconds']:.1f} s" if "seconds" in figures else ""
    lines = [
        f"{bot} against a field of {field}: {figures['players']} players, "
        f"{figures['hands']} hands, seed {figures['seed']!r}{seconds}",
        "  points per hand, the same seats on the same deals:",
        line(bot, figures["bot_points_per_hand"], ci["bot"]),
        line(field, figures["field_points_per_hand"], ci["field"]),
        line("difference", figures["difference"], ci["difference"]),
        line("ratio", figures["ratio"], ci["ratio"]),
    ]
    timing = figures.get("decision_seconds")
    if isinstance(timing, dict):
        processes = f"{figures['jobs']} process" + ("es" if figures["jobs"] != 1 else "")
        lines.append(
            f"  {bot} time per decision: mean {timing['mean'] * 1000:.1f} ms, "
            f"p95 {timing['p95'] * 1000:.1f} ms, max {timing['max'] * 1000:.1f} ms "
            f"over {timing['count']} decisions ({processes})"
        )
    stops = figures.get("safety_stop")
    if isinstance(stops, dict):
        lines.append(
            f"  {bot} decisions cut short by its safety stop (wall clock): {stops['cut_short']} "
            f"of {stops['decisions']} searched"
        )
    return "\n".join(lines)


def _safety_limit(parser: argparse.ArgumentParser, text: str) -> float | str | None:
    if text in ("default", "none"):
        return None if text == "none" else text
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        parser.error(
            f"--safety-limit must be a positive number of seconds, 'none' or 'default', not {text!r}"
        )
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Parses the options, runs the benchmark and prints the figures."""
    names = sorted(BUILTIN_BOTS)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--bot", default="heuristic", choices=names, help="the bot measured")
    parser.add_argument("--field", default="random", choices=names, help="the bots around it")
    parser.add_argument("--players", type=int, default=8, help="table size, 6 to 11")
    parser.add_argument("--hands", type=int, default=2000, help="deals to play")
    parser.add_argument("--seed", default="strength", help="seeds the deals and the bots")
    parser.add_argument("--worlds", type=int, default=None, help="montecarlo worlds per decision")
    parser.add_argument("--time-limit", type=float, default=None, help="montecarlo seconds per decision")
    parser.add_argument(
        "--safety-limit",
        default="default",
        help="ismcts's wall-clock safety stop in seconds, or 'none' (default: the bot's own); "
        "its budgets decide unless the stop fires, and the decisions it cut short are counted",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--pool",
        nargs="+",
        metavar="FILE",
        help="pool the hands of earlier --json outputs instead of playing (same bots and settings)",
    )
    args = parser.parse_args(argv)
    if args.pool:
        try:
            figures = pool(args.pool)
        except (OSError, ValueError, KeyError, TypeError) as error:
            parser.exit(2, f"strength.py: error: cannot pool {' '.join(args.pool)}: {error}\n")
    else:
        if not 6 <= args.players <= 11:
            parser.error(f"--players must be 6 to 11, not {args.players}")
        if args.hands < 1 or args.jobs < 1:
            parser.error("--hands and --jobs must be at least 1")
        config = Config(
            bot=args.bot,
            field=args.field,
            players=args.players,
            hands=args.hands,
            seed=args.seed,
            worlds=args.worlds,
            time_limit=args.time_limit,
            safety_limit=_safety_limit(parser, args.safety_limit),
        )
        figures = run(config, args.jobs)
    print(json.dumps(figures) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
