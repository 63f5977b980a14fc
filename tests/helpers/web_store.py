"""Tournament folders built in-process with the engine, for the web tests and bench/web.py.

The schedule, the store and the game records are the real ones (:func:`create_tournament`,
:class:`Store`, :func:`state_to_record`); only the games are played by
:func:`hearts_core.local.play_game` instead of bot processes over gRPC, which makes a
thousand-game tournament a matter of seconds.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

from hearts_client.bots import make_bot
from hearts_core.local import play_game
from hearts_core.record import record_json, state_to_record
from hearts_core.rules import Rules
from hearts_core.state import State
from hearts_tournaments.arena.job import ScheduledGame
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.league.play import block_game, plan_block
from hearts_tournaments.league.store import PENDING, LeagueStore
from hearts_tournaments.tournament.config import parse_config
from hearts_tournaments.tournament.folder import create_tournament
from hearts_tournaments.tournament.standings_snapshot import compute_snapshot
from hearts_tournaments.tournament.store import Store


def config_text(
    bots: Iterable[tuple[str, str]],
    *,
    table_size: int,
    deals: int,
    duplicate: bool,
    target_score: int,
    seed: str,
) -> str:
    """A tournament configuration of built-in bots (``(name, builtin)`` pairs)."""
    lines = [
        "[tournament]",
        'name = "webtest"',
        f"table_size = {table_size}",
        f"deals = {deals}",
        f"duplicate = {'true' if duplicate else 'false'}",
        f'seed = "{seed}"',
        f"target_score = {target_score}",
        "quarantine_after = 3",
    ]
    for name, builtin in bots:
        lines += ["", "[[bots]]", f'name = "{name}"', f'builtin = "{builtin}"']
    return "\n".join(lines) + "\n"


def create(folder: Path, text: str, fresh: bool = False) -> list[ScheduledGame]:
    """Creates the tournament of ``text`` in ``folder`` (``fresh``: replacing one); returns its games."""
    config = parse_config(text, folder)
    tournament = create_tournament(config, text, folder, fresh=fresh)
    with tournament.store:
        return list(tournament.store.schedule().games)


def play(game: ScheduledGame, builtin: dict[str, str], target_score: int, faults: int = 0) -> GameOutcome:
    """Plays one scheduled game in-process; ``faults`` pretends seat 0 made that many faults."""
    rules = Rules(players=len(game.seats), target_score=target_score)
    players = [make_bot(builtin[bot], seed) for bot, seed in zip(game.seats, game.bot_seeds, strict=True)]
    state = play_game(rules, game.seed, players)
    fault_list = [
        {"seat": 0, "kind": "timeout", "detail": "no answer within 1000 ms", "hand": 0} for _ in range(faults)
    ]
    return _stored(game, state, [], fault_list, (faults,) + (0,) * (len(game.seats) - 1))


def _stored(
    game: ScheduledGame,
    state: State,
    decisions: list[dict[str, Any]],
    fault_list: list[dict[str, Any]],
    faults: tuple[int, ...],
) -> GameOutcome:
    """The outcome of an in-process game as the runner stores it, its record included."""
    record = state_to_record(
        state,
        game_id=f"g-{game.key}",
        bots=list(game.seats),
        seed=game.seed,
        decision_ms=1000,
        time_bank_ms=60000,
        max_faults=5,
        decisions=decisions,
        faults=fault_list,
    )
    totals = tuple(state.totals)
    n = len(game.seats)
    return GameOutcome(
        key=game.key,
        game_id=f"g-{game.key}",
        seats=game.seats,
        totals=totals,
        places=tuple(1 + sum(1 for other in totals if other < mine) for mine in totals),
        winners=tuple(state.winners),
        hands=len(state.results),
        faults=faults,
        retired=(False,) * n,
        absent=(False,) * n,
        crashed=(False,) * n,
        never_answered=(False,) * n,
        record_json=record_json(record),
    )


def add_synthetic(folder: Path, games: Iterable[ScheduledGame], skill: dict[str, float], seed: str) -> None:
    """Stores ``games`` with made-up results, quickly (for bench/web.py's 10,000-game store).

    Each seat's total is ``skill[bot]`` plus the deal's luck for that seat (shared by its
    rotations) plus noise, one hand a game. There is no record: the game's page cannot be
    shown, only the standings and the lists. Inserted as :meth:`Store.add` does, in one
    transaction (one commit per game is what makes a real store slow to fill).
    """
    rng = random.Random(seed)
    luck: dict[tuple[int, int], float] = {}
    rows = []
    for game in games:
        totals = tuple(
            max(0, round(skill[bot] + luck.setdefault((game.deal, seat), rng.gauss(0, 6)) + rng.gauss(0, 4)))
            for seat, bot in enumerate(game.seats)
        )
        low, n = min(totals), len(totals)
        outcome = GameOutcome(
            key=game.key,
            game_id=f"g-{game.key}",
            seats=game.seats,
            totals=totals,
            places=tuple(1 + sum(1 for other in totals if other < mine) for mine in totals),
            winners=tuple(s for s, t in enumerate(totals) if t == low),
            hands=1,
            faults=(0,) * n,
            retired=(False,) * n,
            absent=(False,) * n,
            crashed=(False,) * n,
            never_answered=(False,) * n,
            record_json="",
        )
        rows.append((outcome.key, time.time(), json.dumps(outcome.summary_json()), ""))
    with closing(sqlite3.connect(Store.path_in(folder))) as db, db:
        db.executemany("INSERT INTO games (key, finished_at, summary, record) VALUES (?, ?, ?, ?)", rows)


def add_games(
    folder: Path,
    games: Iterable[ScheduledGame],
    builtin: dict[str, str],
    target_score: int,
    faults: dict[str, int] | None = None,
    snapshot: bool = True,
) -> None:
    """Plays ``games`` and stores each one, as the runner would (a log file per seat too), and
    then keeps the standings snapshot as a runner does at the end of a run (``snapshot``)."""
    faults = faults or {}
    with Store.open(folder) as store:
        for game in games:
            outcome = play(game, builtin, target_score, faults.get(game.key, 0))
            for seat, bot in enumerate(game.seats):
                log = folder / "logs" / bot / f"{game.key}-s{seat}.log"
                log.parent.mkdir(parents=True, exist_ok=True)
                lines = [f'{{"event": "game_started", "seat": {seat}}}']
                if seat == 0 and outcome.faults[0]:
                    lines.append('{"event": "thinking_too_long", "level": "warning"}')
                log.write_text("\n".join(lines) + "\n", encoding="utf-8")
            store.add(outcome)
    if snapshot:
        compute_snapshot(folder)


def league_game(
    game: ScheduledGame,
    builtin: dict[str, str],
    rules: Rules,
    ms: Callable[[str], float],
    faults: dict[str, int],
) -> GameOutcome:
    """Plays one game of a league block in-process. Each seat makes as many timed decisions a
    hand as a bot does (its pass, then a card per trick; ``ms(version)`` each, called seat by
    seat hand by hand); a version in ``faults`` has that many timeout faults at each of its seats."""
    players = [make_bot(builtin[bot], seed) for bot, seed in zip(game.seats, game.bot_seeds, strict=True)]
    state = play_game(rules, game.seed, players)
    n = len(game.seats)
    decisions: list[dict[str, Any]] = []
    for h in range(len(state.results)):
        for s, bot in enumerate(game.seats):
            decisions.append({"seat": s, "hand": h, "kind": "pass", "at": float(1000 * h + s), "ms": ms(bot)})
            for trick in range(rules.hand_size):
                at = float(1000 * h + 10 * (trick + 1) + s)
                play = trick * n + s
                decisions.append(
                    {"seat": s, "hand": h, "kind": "play", "at": at, "ms": ms(bot), "play": play}
                )
    fault_list = [
        {"seat": s, "kind": "timeout", "detail": f"no answer within 1000 ms (seat {s})", "hand": 0}
        for s, bot in enumerate(game.seats)
        for _ in range(faults.get(bot, 0))
    ]
    return _stored(game, state, decisions, fault_list, tuple(faults.get(bot, 0) for bot in game.seats))


def play_league(
    store: LeagueStore,
    blocks: int,
    ms: Callable[[str], float] = lambda vid: 12.5,
    faults: dict[str, int] | None = None,
) -> None:
    """Validates the league's pending versions and stores ``blocks`` blocks as ``hearts league
    run`` does: seated by its matchmaking (:func:`plan_block`), each block's deal played in every
    rotation, stored with the online ratings updated. Games are played in-process by built-in
    bots (a version that is no built-in plays as ``random``); see :func:`league_game`."""
    config = store.config
    rules = Rules(players=config.table_size, target_score=config.target_score, max_hands=config.max_hands)
    builtin = {v.id: v.spec.builtin or "random" for v in store.versions()}
    for version in store.versions():
        if version.status == PENDING:
            seats = (version.id,) * config.table_size
            game = ScheduledGame(0, f"validate-{version.id}", 0, 0, "validation", seats, ("v",) * len(seats))
            store.store_validation(version.id, league_game(game, builtin, rules, ms, {}), True, "passed")
    for _ in range(blocks):
        snapshot = store.snapshot()
        order = plan_block(store, snapshot)
        assert order is not None, "the league has too few active versions to seat a block"
        number = store.next_block()
        outcomes = [
            league_game(block_game(config, number, order, r), builtin, rules, ms, faults or {})
            for r in range(len(order))
        ]
        start = {vid: rating.state for vid, rating in store.ratings().items()}
        store.store_block(
            number,
            f"b{number}",
            order,
            snapshot.commands_seen,
            outcomes,
            store.rating.update(outcomes, start),
            {},
            [],
        )
