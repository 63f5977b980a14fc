"""The seam that deals chosen hands (``hearts_server.table.script``) is the bot test kit's alone.

A chosen deal in a rated game would be the end of a competition. The attacks, played: a
tournament config and a league's stored settings that try to name a deal or a script are
refused or ignored; the admin API has no field that reaches a script (a referee made as
``hearts serve`` makes it deals a kit script's seed from the seed, and one made with scripts
refuses a caller without its admin token); only the kit hands a referee scripts; and a scripted
game's record never passes for a real one (``hearts replay`` finds its deals are not its seed's).
"""

from __future__ import annotations

import ast
import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from hearts_core.cards import Card
from hearts_core.deal import deal_hand
from hearts_core.record import GameRecord
from hearts_core.replay import verify_seed
from hearts_core.rules import Rules
from hearts_protocol.transport import own_channel
from hearts_server.server import make_server
from hearts_server.table.script import ScriptedHand, TableScript
from hearts_tournaments.tournament.config import ConfigError, parse_config
from tests.conftest import ROOT
from tests.helpers.cli import hearts
from tests.helpers.harness import admin_metadata, await_table, create_table

PACKAGE = ROOT / "tournaments" / "hearts_tournaments"
#: A seed a kit script would use.
SEED = "kit-scripted-seed"
BOTS = '[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "random"\n'


def _chosen() -> ScriptedHand:
    """A hand no seed deals: every seat's cards in card order."""
    rules = Rules(players=6)
    deck = sorted(Card(i) for i in range(52) for _ in range(2))
    size = rules.hand_size
    hands = tuple(tuple(deck[s * size : (s + 1) * size]) for s in range(6))
    return ScriptedHand(hands, tuple(deck[6 * size :]))


async def _play_released(address: str, token: str | None, seed: str) -> dict[str, Any]:
    """A table of six seats nobody plays, dealt from ``seed``: its record."""
    created = await create_table(
        address, [f"s{i}" for i in range(6)], admin_token=token, seed=seed, max_hands=1
    )
    async with own_channel(address) as channel:
        admin = agrpc.AdminServiceStub(channel)
        for seat in range(6):
            await admin.ReleaseSeat(
                apb.ReleaseSeatRequest(table_id=created.table_id, seat=seat),
                metadata=admin_metadata(token),
            )
    table = await await_table(address, created.table_id, token)
    (game,) = table.games
    record: dict[str, Any] = json.loads(game.record_json)
    return record


@pytest.mark.timeout(120)
def test_no_tournament_config_key_names_a_deal_or_a_script(tmp_path: Path) -> None:
    head = '[tournament]\nname = "t"\ntable_size = 6\n'
    attempts = {
        "tournament.scripts": head + "scripts = [1]\n" + BOTS,
        "tournament.script": head + 'script = "deal.json"\n' + BOTS,
        "tournament.hands": head + 'hands = [["2C"]]\n' + BOTS,
        "scripts": head + BOTS + '[scripts]\nseed = "x"\n',
        "bots[0].script": head + BOTS.replace('builtin = "random"', 'builtin = "random"\nscript = "x"', 1),
        "bots[0].hands": head + BOTS.replace('builtin = "random"', 'builtin = "random"\nhands = ["2C"]', 1),
    }
    for key, text in attempts.items():
        with pytest.raises(ConfigError) as refused:
            parse_config(text, tmp_path)
        assert str(refused.value).startswith(key), (key, str(refused.value))
    # `deals` is the number of deals, never the deals themselves.
    with pytest.raises(ConfigError):
        parse_config(head + 'deals = [["2C", "2C"]]\n' + BOTS, tmp_path)
    # And as a user meets it: one line, exit 2, nothing played.
    config = tmp_path / "t.toml"
    config.write_text(attempts["tournament.scripts"])
    result = hearts("tournament", "run", str(config), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "unknown key" in result.stderr, result.stderr
    assert not (tmp_path / "out" / "tournament.sqlite").exists()


@pytest.mark.timeout(300)
def test_a_league_s_stored_settings_cannot_name_a_deal(tmp_path: Path) -> None:
    """The settings a league stores: a key smuggled into them is not read, and its games are
    dealt from their seeds (every record verifies)."""
    league = tmp_path / "lg"
    assert hearts("league", "init", str(league), "--max-hands", "1").returncode == 0
    with sqlite3.connect(league / "league.sqlite") as db:
        (value,) = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        settings = json.loads(value)
        settings["scripts"] = {"x": {"hands": [[["2C"]]]}}
        settings["hands"] = [[["2C"]]]
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(settings),))
    for name in ("a", "b"):
        assert hearts("league", "add", str(league), name, "--builtin", "random").returncode == 0
    played = hearts("league", "run", str(league), "--blocks", "1", timeout=240)
    assert played.returncode == 0, played.stderr
    records = sorted((league / "records").rglob("*.json"))
    assert records
    for path in records:
        assert verify_seed(GameRecord.read(path.read_text(), name=str(path))) == [], path


@pytest.mark.timeout(120)
def test_the_admin_api_has_no_field_that_reaches_a_script(tmp_path: Path) -> None:
    # Every field a caller can set: a new one must be looked at here before it ships.
    assert {f.name for f in apb.CreateTableRequest.DESCRIPTOR.fields} == {"config"}
    assert {f.name for f in apb.TableConfig.DESCRIPTOR.fields} == {
        "players",
        "bot_names",
        "target_score",
        "max_hands",
        "games",
        "seed",
        "game_seeds",
        "reveal_seed",
        "decision_time_ms",
        "time_bank_ms",
        "max_faults",
        "join_timeout_ms",
        "label",
        "first_dealer",
        "hide_bot_names",  # what the seats are told of each other's names: no script reaches it
    }

    async def attack() -> None:
        # A referee as `hearts serve` makes one: the kit's seed is dealt from the seed.
        plain = make_server(tmp_path / "plain", admin_token="organiser")
        await plain.start()
        try:
            record = await _play_released(plain.address, "organiser", SEED)
        finally:
            await plain.stop(0.5)
        dealt, _ = deal_hand(Rules(players=6), SEED, 0)
        assert record["hands"][0]["deal"] == [[str(c) for c in h] for h in dealt]
        # The kit's referee: its admin API answers only the kit's token.
        scripted = make_server(
            tmp_path / "kit", admin_token="the-kit-only", scripts={SEED: TableScript(hands=(_chosen(),))}
        )
        await scripted.start()
        try:
            for token in (None, "organiser"):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await create_table(
                        scripted.address, [f"s{i}" for i in range(6)], admin_token=token, seed=SEED
                    )
                assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        finally:
            await scripted.stop(0.5)

    asyncio.run(attack())


def test_only_the_kit_hands_a_referee_scripts() -> None:
    """Who passes ``scripts=`` or builds a ``TableScript``: the kit, and the arena's plumbing
    from its ``Arena`` to ``make_server``; never the tournament, the league, the portal or the CLI."""
    allowed = {"hearts_tournaments.arena.local"}
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if any(k.arg == "scripts" for k in node.keywords) or called in ("TableScript", "ScriptedHand"):
                found.setdefault(module, set()).add(called)
    outside = {
        m: calls
        for m, calls in found.items()
        if m not in allowed and not m.startswith("hearts_tournaments.kit.")
    }
    assert outside == {}, outside
    assert found.get("hearts_tournaments.arena.local") == {"Referee", "make_server"}


@pytest.mark.timeout(120)
def test_a_scripted_game_never_passes_for_a_real_one(tmp_path: Path) -> None:
    async def play() -> dict[str, Any]:
        server = make_server(tmp_path, open_admin=True, scripts={SEED: TableScript(hands=(_chosen(),))})
        await server.start()
        try:
            return await _play_released(server.address, None, SEED)
        finally:
            await server.stop(0.5)

    record = asyncio.run(play())
    chosen = _chosen()
    assert record["hands"][0]["deal"] == [[str(c) for c in h] for h in chosen.deal]  # it was scripted
    assert any("deal" in problem for problem in verify_seed(GameRecord.from_json(record)))
    path = tmp_path / "scripted.json"
    path.write_text(json.dumps(record))
    replayed = hearts("replay", str(path))
    assert replayed.returncode == 1 and "deal" in replayed.stderr, replayed.stderr
