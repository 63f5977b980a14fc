"""The session level: the bot's stream, as a warm bot of a tournament keeps it game after game.

Three games of one hand, one after the other, on one warm process (``reuse =
"between_deals"``: a session token, each table's seat bound to it in turn). The kit's referee
refuses the bot's first legal answer to its first card (game 1), as a referee refuses an
illegal one, and closes a gRPC bot's stream once it has answered its second card (game 2), as
a lost connection ends it. Its checks:

- ``session.joins``: it joins with the token it is given;
- ``session.request_ids``: no answer of its names another request than the open one;
- ``session.games``: one process plays all three games, each decision its own;
- ``session.rejection``: it answers the refused request again;
- ``session.reconnect``: a gRPC bot reconnects and plays on (a stdio bot's bridge does it).
"""

from __future__ import annotations

from pathlib import Path

from hearts_server.table.script import NoteKind
from hearts_tournaments.arena.bots import BotProtocol, BotSpec, Reuse
from hearts_tournaments.arena.failures import first_error_line
from hearts_tournaments.kit.report import CheckResult
from hearts_tournaments.kit.table import Competition, Judged, KitTable, Played
from hearts_tournaments.kit.verdicts import (
    blocked,
    evidence,
    failed,
    first_failure,
    own,
    passed,
    skipped,
    told,
)

#: The bot's seat in the level's games.
SEAT = 1
#: Games on one stream.
GAMES = 3
#: The bot's decision (from 1) whose answer is refused in game 1: its first card (after its pass).
REFUSED = 2
#: The bot's decision after whose answer its stream is closed in game 2: its second card.
CUT = 3
#: An answer naming another request than the open one, as the referee (a gRPC bot) or the bridge
#: (a stdio bot) refuses it. (``NOT_YOUR_TURN``, an answer while no request is open, is a late
#: one: the decision it was for already timed out, which session.games tells.)
_STALE = ("STALE_REQUEST",)


async def session_level(spec: BotSpec, competition: Competition, folder: Path) -> Judged:
    """Plays the level's games and judges the stream."""
    grpc = spec.protocol is BotProtocol.GRPC
    games: list[Played] = []
    async with KitTable("session", spec, competition, folder, Reuse.BETWEEN_DEALS) as table:
        for number in range(1, GAMES + 1):
            games.append(
                await table.play(
                    f"session-{number}",
                    players=competition.table_size,
                    seat=SEAT,
                    max_hands=1,
                    target_score=competition.target_score,
                    refuse=frozenset({REFUSED}) if number == 1 else frozenset(),
                    cut=frozenset({CUT}) if number == 2 and grpc else frozenset(),
                )
            )
    log = table.ends[0].log if table.ends else None
    processes = len(table.ends)
    stale_bridge = sum(
        end.bridge.refused.get(code, 0) for end in table.ends if end.bridge is not None for code in _STALE
    )
    return Judged(judge(spec, games, processes, stale_bridge, log), table.bot_cpu_s)


def judge(
    spec: BotSpec, games: list[Played], processes: int, stale_bridge: int, log: Path | None
) -> list[CheckResult]:
    """The level's verdicts from its games, its process count and its log."""
    first = games[0]
    said = first_error_line(log) if log is not None else None
    results: list[CheckResult] = []
    joined = first.noted(NoteKind.JOINED)
    if not joined or not own(first):
        why = first.error or (
            "it never joined its session" if not joined else "it joined but never made a decision of its own"
        )
        results.append(
            failed(
                "session.joins",
                why + (f"; its log says {said!r}" if said else ""),
                evidence(first, log),
            )
        )
        rest = ("session.request_ids", "session.games", "session.rejection", "session.reconnect")
        return [*results, *(blocked(name, "session.joins") for name in rest)]
    results.append(
        passed("session.joins", f"joined its session {joined[0].at:.1f} s after the first table was made")
    )

    # session.request_ids
    stale = [f"{n.code}: {n.reason}" for g in games for n in g.noted(NoteKind.REJECTED) if n.code in _STALE]
    answers = sum(len(own(g)) for g in games)
    if stale or stale_bridge:
        count = len(stale) + stale_bridge
        shown = (
            f"; the first: {stale[0]}"
            if stale
            else " (the bridge refused them: their id was not the open request's)"
        )
        results.append(
            failed(
                "session.request_ids",
                f"{count} of its answers named another request than the open one{shown}",
                evidence(first, log, stale_answers=count),
            )
        )
    else:
        results.append(passed("session.request_ids", f"answered {answers} requests, each with its own id"))

    # session.games: judged up to the kit's closed stream when the bot did not come back after it
    # (session.reconnect tells that).
    second = games[1]
    came_back = any(n.reconnect for n in second.noted(NoteKind.JOINED))
    judged = games if came_back or not second.noted(NoteKind.CUT) else games[:2]
    if len(judged) < len(games) and own(second):
        results.append(
            passed(
                "session.games",
                "played on into its second game on the same stream (see session.reconnect for what followed)",
            )
        )
    else:
        results.append(_games(judged, processes, log, said))
    # session.rejection
    refused = first.noted(NoteKind.REFUSED)
    decisions = first.decisions()
    if not refused or len(decisions) < REFUSED:
        results.append(
            skipped("session.rejection", "not judged: it did not answer the request the kit meant to refuse")
        )
    else:
        entry = decisions[REFUSED - 1]
        request = refused[0].request_id
        if entry.by_referee is None:
            results.append(
                passed(
                    "session.rejection",
                    f"answered request {request} again after its first answer was rejected (NOT_IN_HAND)",
                )
            )
        else:
            results.append(
                failed(
                    "session.rejection",
                    f"did not answer request {request} again after its first answer was rejected: "
                    + told(entry, first.players),
                    evidence(first, log, entry),
                )
            )

    # session.reconnect
    if spec.protocol is BotProtocol.STDIO:
        results.append(
            skipped("session.reconnect", "a stdio bot's bridge holds its stream and reconnects for it")
        )
    else:
        second = games[1]
        cut = second.noted(NoteKind.CUT)
        if not cut:
            results.append(
                skipped(
                    "session.reconnect",
                    "not judged: it did not reach the answer after which the kit closes its stream",
                )
            )
        else:
            back = [n for n in second.noted(NoteKind.JOINED) if n.reconnect and n.at >= cut[0].at]
            after = [d for d in second.decisions()[CUT:] if d.by_referee is None]
            if not back:
                results.append(
                    failed(
                        "session.reconnect",
                        "did not reconnect after the kit closed its stream (UNAVAILABLE)",
                        evidence(second, log),
                    )
                )
            elif not after:
                results.append(
                    failed(
                        "session.reconnect",
                        f"reconnected {back[0].at - cut[0].at:.1f} s after its stream was closed but made "
                        "no decision after",
                        evidence(second, log),
                    )
                )
            else:
                results.append(
                    passed(
                        "session.reconnect",
                        f"reconnected {back[0].at - cut[0].at:.1f} s after its stream was closed and made "
                        f"{len(after)} decisions itself after it",
                        evidence(None, None, reconnect_s=round(back[0].at - cut[0].at, 3)),
                    )
                )
    return results


def _games(games: list[Played], processes: int, log: Path | None, said: str | None) -> CheckResult:
    """session.games: one process played every game, each decision its own."""
    unplayed = next((g for g in games if g.error or not own(g)), None)
    broken = next(((g, e) for g in games if (e := first_failure(g, _allowed(g))) is not None), None)
    if processes > 1:
        return failed(
            "session.games",
            f"{processes} processes played its {len(games)} games: its first process ended after its first "
            "game(s)" + (f"; its log says {said!r}" if said else ""),
            evidence(games[0], log, processes=processes),
        )
    if unplayed is not None:
        why = unplayed.error or "it stopped answering after the game(s) before"
        return failed(
            "session.games", f"it made no decision in {unplayed.name}: {why}", evidence(unplayed, log)
        )
    if broken is not None:
        game, entry = broken
        return failed(
            "session.games", f"in {game.name}, {told(entry, game.players)}", evidence(game, log, entry)
        )
    return passed(
        "session.games",
        f"played {len(games)} games on one stream (game_started and game_completed {len(games)} times), "
        "one process",
        evidence(None, None, processes=processes, decisions=sum(len(own(g)) for g in games)),
    )


def _allowed(game: Played) -> frozenset[int]:
    """Decisions a game's own trials may cost the bot: the refused one (its SDK may answer it),
    and those that fall due while a closed stream reconnects."""
    if game.name == "session-1":
        return frozenset({REFUSED})
    if game.noted(NoteKind.CUT):
        # Until it is back, the referee plays for it (faults): session.reconnect judges that.
        decisions = game.decisions()
        back = next(
            (n for n, d in enumerate(decisions, 1) if n > CUT and d.by_referee is None), len(decisions) + 1
        )
        return frozenset(n for n in range(CUT + 1, back))
    return frozenset()
