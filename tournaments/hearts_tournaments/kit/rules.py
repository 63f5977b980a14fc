"""The rules level: the scenario hands (:mod:`.scenarios`), dealt on purpose, one game each.

One warm process plays them all in turn, as a tournament's warm bot plays game after game (a
process that dies is replaced for the next game, so each scenario is judged on its own). Each
check passes when the rare path happened (read from the game's record) and the bot made every
decision of the game itself: in time, legal at the first try, never an answer its SDK made for
it.
"""

from __future__ import annotations

from pathlib import Path

from hearts_server.table.settings import LIMITS
from hearts_tournaments.arena.bots import BotSpec, Reuse
from hearts_tournaments.kit.report import CheckResult
from hearts_tournaments.kit.scenarios import Scenario, scenarios
from hearts_tournaments.kit.table import Competition, Judged, KitTable, Played, ProcessEnd
from hearts_tournaments.kit.verdicts import evidence, failed, first_failure, own, passed, rejections, told


async def rules_level(spec: BotSpec, competition: Competition, folder: Path) -> Judged:
    """Plays every scenario and judges the bot in each."""
    results = []
    async with KitTable("rules", spec, competition, folder, Reuse.BETWEEN_DEALS) as table:
        played = []
        for scenario in scenarios():
            game = await table.play(
                scenario.check,
                players=scenario.players,
                seat=scenario.seat,
                hands=scenario.hands,
                max_hands=len(scenario.hands) + scenario.then,
                # The scenario's hands are the game, however many points they give.
                target_score=LIMITS["target_score"],
                again=True,
            )
            played.append((scenario, game))
    for index, (scenario, game) in enumerate(played):
        end = table.end_of(game)
        after = ended_after(played[index + 1][1] if index + 1 < len(played) else None, end)
        results.append(judge(scenario, game, end.log if end is not None else None, after))
    return Judged(results, table.bot_cpu_s)


def ended_after(following: Played | None, end: ProcessEnd | None) -> str:
    """How the process that played a game ended right after it, if it did: the next game found
    it gone, or (the level's last game) it exited with an error once its session closed."""
    if following is not None and following.dead_before:
        return following.dead_before[0]
    if following is None and end is not None and end.code != 0 and not end.lingered:
        return f"it exited with status {end.code} after its last game"
    return ""


def judge(scenario: Scenario, game: Played, log: Path | None, after: str = "") -> CheckResult:
    """The scenario's verdict (``after``: how the bot's process ended right after the game)."""
    name = scenario.check
    if game.error:
        return failed(name, game.error, evidence(game, log))
    if after:
        return failed(
            name, f"its process ended right after the game's last events: {after}", evidence(game, log)
        )
    bad = first_failure(game)
    rejected = rejections(game)
    reached = scenario.reached(game.hands)
    if bad is not None:
        return failed(name, f"{told(bad, game.players)}; the hand: {scenario.what}", evidence(game, log, bad))
    if rejected:
        return failed(
            name,
            f"the referee rejected {len(rejected)} of its answers, the first: {rejected[0]}; the hand: "
            f"{scenario.what}",
            evidence(game, log),
        )
    if not own(game):
        return failed(name, f"it made no decision of its own; the hand: {scenario.what}", evidence(game, log))
    if reached is None:  # the kit's own deal went wrong: never for any bot (tests/test_kit_scenarios.py)
        return failed(
            name,
            f"the kit's deal did not lead to {scenario.what}: a fault of the kit, please report it",
            evidence(game, log),
            fix="report it to the platform's maintainers with this report",
        )
    return passed(
        name, f"{reached}; it made all {len(own(game))} of its decisions itself", evidence(game, None)
    )
