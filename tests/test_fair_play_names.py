"""Whether bots see their table-mates' names is the organiser's choice.

The attack: a bot that reads the names the referee announces (``GameStarted.seats``) and takes the
seats of its partner from them (``tests/colluding/colluding_bot.py``). With ``hide_names`` it must
learn labels that say where a bot sits, never who it is, in every message a seat or a spectator
gets, while the organiser's records and admin API keep the names.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import spectator_service_pb2 as spb
from cancellation_hearts.v1 import spectator_service_pb2_grpc as sgrpc
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_core.record import GameRecord
from hearts_server.redacted import seat_messages
from hearts_tournaments.league.config import LeagueConfig
from hearts_tournaments.league.play import play_settings
from hearts_tournaments.league.store import LeagueStore
from hearts_tournaments.tournament.config import ConfigError, parse_config
from tests.colluding import config as colluders
from tests.colluding import learned, run_tournament
from tests.helpers.cli import hearts
from tests.helpers.harness import await_table, create_table, running_server

NAMES = ["mallory", "trent", "alice", "bob", "carol", "dave"]
LABELS = [f"seat-{i}" for i in range(6)]


def _names_in(message: Any) -> list[list[str]]:
    """Every list of seat names a message carries (GameStarted.seats, GameCompleted.results)."""
    found = []
    kind = message.WhichOneof("message") if isinstance(message, rpb.PlayResponse) else "event"
    if kind == "event":
        events = [message.event] if isinstance(message, rpb.PlayResponse) else [message]
    elif kind == "events":
        events = list(message.events.events)
    elif kind == "decision_request":
        events = list(message.decision_request.events)
    else:
        events = []
    for event in events:
        which = event.WhichOneof("event")
        if which == "game_started":
            found.append([s.bot_name for s in sorted(event.game_started.seats, key=lambda s: s.seat)])
        elif which == "game_completed":
            found.append([r.bot_name for r in sorted(event.game_completed.results, key=lambda r: r.seat)])
    return [names for names in found if names]  # a replay's GameCompleted lists no results


@pytest.mark.timeout(300)
@pytest.mark.parametrize("hidden", [True, False])
def test_every_message_to_a_seat_or_a_spectator_names_seats_by_label_when_hidden(
    tmp_path: Path, hidden: bool
) -> None:
    async def scenario() -> tuple[list[list[list[str]]], list[list[str]], Any]:
        async with running_server(tmp_path) as server:
            table = await create_table(server.address, NAMES, hide_bot_names=hidden, max_hands=2, games=2)
            heard: list[list[list[str]]] = [[] for _ in NAMES]
            bots = [
                asyncio.create_task(
                    run_async(
                        make_bot("heuristic", str(seat)),
                        server.address,
                        token.token,
                        on_message=lambda m, seat=seat: heard[seat].extend(_names_in(m)),
                    )
                )
                for seat, token in enumerate(sorted(table.seats, key=lambda s: s.seat))
            ]
            done = await await_table(server.address, table.table_id)
            await asyncio.gather(*bots)
            async with grpc.aio.insecure_channel(server.address) as channel:
                spectator = sgrpc.SpectatorServiceStub(channel)
                public = [r async for r in spectator.Watch(spb.WatchRequest(table_id=table.table_id))]
            watched = [names for r in public for names in _names_in(r.event)]
            return heard, watched, done

    heard, watched, done = asyncio.run(scenario())
    shown = LABELS if hidden else NAMES
    for seat in heard:
        assert seat and all(names == shown for names in seat)  # two starts, two results, at least
    assert watched and all(names == shown for names in watched)
    # The organiser's side keeps the names: the admin API and the records.
    for game in done.games:
        assert [r.bot_name for r in sorted(game.result.results, key=lambda r: r.seat)] == NAMES
        record = GameRecord.read(game.record_json)
        assert list(record.bots or ()) == NAMES and record.names_hidden is (True if hidden else None)
        # `hearts replay --seat` shows what that seat saw: the labels, when they were hidden.
        replayed = [names for m in seat_messages(record, 2) for names in _names_in(m)]
        assert replayed and all(names == shown for names in replayed)


def _run(folder: Path, hide: bool) -> list[dict[str, Any]]:
    """A real tournament (runner, sandbox, referee) of one game: what each colluder learned."""
    settings = "table_size = 6\ndeals = 1\nduplicate = false\ntarget_score = 30\noutput = 'out'\n"
    settings += f"hide_names = {json.dumps(hide)}"
    return learned(run_tournament(folder, colluders(settings, "none")))


@pytest.mark.timeout(900)
def test_a_bot_process_learns_its_partners_seat_only_when_the_organiser_shows_names(tmp_path: Path) -> None:
    (tmp_path / "shown").mkdir()
    (tmp_path / "hidden").mkdir()
    shown = _run(tmp_path / "shown", hide=False)
    assert len(shown) == 2
    for entry in shown:
        assert sorted(entry["names"]) == sorted(NAMES)
        assert entry["names"][entry["partner_seats"][0]] in ("mallory", "trent")
    hidden = _run(tmp_path / "hidden", hide=True)
    assert len(hidden) == 2
    for entry in hidden:
        assert entry["names"] == LABELS and entry["partner_seats"] == []
    # The stored record keeps the names, for the organiser and the audit.
    check = hearts("tournament", "verify", str(tmp_path / "hidden" / "out"))
    assert check.returncode == 0, check.stdout + check.stderr


def test_hide_names_is_a_tournament_key_and_a_league_setting(tmp_path: Path) -> None:
    bots = '[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "random"\n'
    base = "[tournament]\ntable_size = 6\n{extra}\n" + bots
    assert parse_config(base.format(extra=""), tmp_path).hide_names is False
    assert parse_config(base.format(extra="hide_names = true"), tmp_path).hide_names is True
    with pytest.raises(ConfigError, match=r"tournament.hide_names: must be true or false, not \"yes\""):
        parse_config(base.format(extra='hide_names = "yes"'), tmp_path)
    made = hearts("league", "init", str(tmp_path / "lg"), "--hide-names")
    assert made.returncode == 0, made.stderr
    with LeagueStore.open(tmp_path / "lg") as store:
        assert store.config.hide_names is True
        assert play_settings(store).hide_names is True
    assert LeagueConfig.from_json({}).hide_names is False  # a league from before the setting
