"""The leak test on the live referee: what a seat receives over gRPC depends only on what it may see.

Two real servers play the same table (same seed, the same deterministic bots over real gRPC
streams). The second builds every View it sends from a copy of the true state in which every
card the seat cannot see was re-dealt (:func:`tests.test_leak.redeal_hidden`). If nothing hidden
reaches a seat, its bot sees the same things, decides the same way, and every message it
receives is byte-identical to the first server's (once the table id and the time fields, which
differ between any two runs, are blanked).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from cancellation_hearts.v1 import referee_service_pb2 as rpb
from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_core.state import State
from hearts_core.view import View, build_view
from tests.helpers.harness import await_table, create_table, running_server
from tests.test_leak import redeal_hidden


def _normalised(message: rpb.PlayResponse) -> bytes:
    """The message with what differs between any two runs blanked: table ids and clock readings."""
    out = rpb.PlayResponse()
    out.CopyFrom(message)
    events = []
    if out.HasField("event"):
        events.append(out.event)
    if out.HasField("events"):
        events.extend(out.events.events)
    for event in events:
        which = event.WhichOneof("event")
        if which in ("game_started", "game_completed"):
            getattr(event, which).game_id = ""
    if out.HasField("decision_request"):
        out.decision_request.time_left_ms = 0
        out.decision_request.time_bank_ms = 0
    return out.SerializeToString(deterministic=True)


#: Makes the View builder of a run from its random generator (None: the referee's own).
Builder = Callable[[random.Random], Callable[[State, int], View]] | None


def _redealt(rng: random.Random) -> Callable[[State, int], View]:
    return lambda state, seat: build_view(redeal_hidden(state, seat, rng), seat)


async def _play(tmp: Path, players: int, seed: str, builder: Builder) -> list[list[bytes]]:
    async with running_server(tmp) as server:
        if builder is not None:
            server.registry.view_builder = builder(random.Random(players))
        names = [("heuristic" if s % 2 else "random") for s in range(players)]
        table = await create_table(
            server.address, names, seed=seed, target_score=50, decision_time_ms=10_000, time_bank_ms=600_000
        )
        received: list[list[bytes]] = [[] for _ in range(players)]

        def recorder(seat: int) -> Callable[[rpb.PlayResponse], None]:
            return lambda message: received[seat].append(_normalised(message))

        bots = [
            asyncio.create_task(
                run_async(
                    make_bot(names[s.seat], f"live/{s.seat}"),
                    server.address,
                    s.token,
                    on_message=recorder(s.seat),
                )
            )
            for s in table.seats
        ]
        result = await await_table(server.address, table.table_id)
        await asyncio.gather(*bots)
        assert result.games and all(r.faults == 0 for r in result.games[0].result.results)
        return received


@pytest.mark.parametrize("players", [6, 9, 11])
def test_live_seat_streams_do_not_depend_on_hidden_cards(tmp_path: Path, players: int) -> None:
    truth = asyncio.run(_play(tmp_path / "a", players, f"live-{players}", None))
    shuffled = asyncio.run(_play(tmp_path / "b", players, f"live-{players}", _redealt))
    for seat in range(players):
        assert len(truth[seat]) > players
        assert truth[seat] == shuffled[seat], f"seat {seat} of a live {players}-player game sees hidden cards"


def test_the_live_leak_test_catches_a_leak(tmp_path: Path) -> None:
    # Guards the test itself: a referee that tells each seat one kitty card (hidden) must be caught.
    def leaky(perturb: bool) -> Builder:
        def make(rng: random.Random) -> Callable[[State, int], View]:
            def build(state: State, seat: int) -> View:
                source = redeal_hidden(state, seat, rng) if perturb else state
                view = build_view(source, seat)
                return dataclasses.replace(view, set_aside=tuple(source.kitty[:1]))

            return build

        return make

    truth = asyncio.run(_play(tmp_path / "a", 6, "leaky", leaky(False)))
    shuffled = asyncio.run(_play(tmp_path / "b", 6, "leaky", leaky(True)))
    assert truth != shuffled
