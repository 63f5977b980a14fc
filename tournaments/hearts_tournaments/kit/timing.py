"""The timing level: how long the bot thinks at every table size, by the referee's own clock.

One warm process plays a game of :data:`HANDS` hands at each table size, 6 to 11. Each decision's
time is the record's ``ms``: the referee's clock from writing the request to the seat's stream to
reading its answer, exactly what a tournament charges the seat. Per table size the check reports
the median, the 99th percentile (nearest rank) and the slowest turn, and fails only against the
referee's limits, never against this machine's speed:

- a decision the referee had to make for the bot because its time ran out (the decision limit
  or the time bank): the same fault in a tournament;
- a whole game's decisions, at the bot's mean time per decision, that would not fit in the time
  bank: a game at ``n`` seats asks a seat about ``GAME_HANDS[n] × (hand size + 1)`` decisions
  (scaled to the competition's target score), where :data:`GAME_HANDS` is the most hands any of
  20 games of the built-in heuristic bots lasted to 150 points (``python -m bench.kit --hands``
  measures it again). The margin is the bank itself: the check fails when the bot's own mean,
  over a long game, would use up more than all of it.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import fmean, median

from hearts_core.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from hearts_server.table.settings import LIMITS
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.kit.report import CheckResult
from hearts_tournaments.kit.table import Competition, Judged, KitTable, Played
from hearts_tournaments.kit.verdicts import evidence, failed, own, passed

#: Hands per game the level plays at each table size.
HANDS = 2
#: The most hands a game to 150 points lasted, per table size (20 games of the heuristic bots).
GAME_HANDS = {6: 16, 7: 16, 8: 19, 9: 20, 10: 22, 11: 24}
#: The target score GAME_HANDS was measured at.
GAME_HANDS_TARGET = 150
#: The faults that mean the bot's time ran out.
_OUT_OF_TIME = ("timeout", "time_bank_exhausted")


def decisions_per_game(players: int, target_score: int) -> int:
    """The decisions a seat makes in a long game at ``players`` seats and ``target_score``."""
    hands = math.ceil(GAME_HANDS[players] * target_score / GAME_HANDS_TARGET)
    return hands * (Rules(players=players).hand_size + 1)


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` of 1) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


async def timing_level(spec: BotSpec, competition: Competition, folder: Path) -> Judged:
    """Plays a game at every table size and judges the bot's time."""
    played = []
    async with KitTable("timing", spec, competition, folder, Reuse.BETWEEN_DEALS) as table:
        for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            game = await table.play(
                f"timing-{players}",
                players=players,
                seat=players - 1,
                max_hands=HANDS,
                target_score=LIMITS["target_score"],
                again=True,
            )
            played.append(game)
    results = []
    for game in played:
        end = table.end_of(game)
        results.append(judge(game, competition, end.log if end is not None else None))
    return Judged(results, table.bot_cpu_s)


def judge(game: Played, competition: Competition, log: Path | None) -> CheckResult:
    """The verdict at one table size."""
    players = game.players
    name = f"timing.table_size.{players}"
    policy = competition.policy
    times = [d.ms for d in own(game)]
    if game.error or not times:
        return failed(
            name,
            f"at {players} seats it made no decision of its own" + (f": {game.error}" if game.error else ""),
            evidence(game, log),
        )
    late = [d for d in game.decisions() if d.by_referee in _OUT_OF_TIME]
    mean = fmean(times)
    per_game = decisions_per_game(players, competition.target_score)
    projected_s = mean * per_game / 1000
    bank_s = policy.time_bank_ms / 1000
    figures = {
        "decisions": len(times),
        "p50_ms": round(median(times), 1),
        "p99_ms": round(percentile(times, 0.99), 1),
        "slowest_ms": round(max(times), 1),
        "mean_ms": round(mean, 1),
        "limit_ms": policy.decision_ms,
        "game_decisions": per_game,
        "game_s": round(projected_s, 1),
        "bank_s": bank_s,
    }
    measured = (
        f"at {players} seats: p50 {figures['p50_ms']:.0f} ms, p99 {figures['p99_ms']:.0f} ms, slowest "
        f"{figures['slowest_ms']:.0f} ms over {len(times)} decisions (limit {policy.decision_ms} ms)"
    )
    if late:
        return failed(
            name,
            f"{measured}; {len(late)} decision(s) ran out of time and the referee played them (a fault each)",
            evidence(game, log, late[0], **figures),
        )
    if projected_s > bank_s:
        return failed(
            name,
            f"{measured}; a long game asks it about {per_game} decisions: at its mean of {mean:.0f} ms "
            f"that is {projected_s:.0f} s, more than its time bank of {bank_s:.0f} s",
            evidence(game, log, **figures),
        )
    return passed(
        name,
        f"{measured}; a long game's {per_game} decisions ≈ {projected_s:.1f} s of its {bank_s:.0f} s "
        "time bank",
        evidence(game, None, **figures),
    )
