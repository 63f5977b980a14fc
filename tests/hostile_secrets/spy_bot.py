"""A hostile tournament entrant: it plays legal cards and tries every way to learn other hands.

Run as a ``command`` bot: ``python spy_bot.py --spy-dir DIR --config FILE --output DIR`` plus the
runner's ``--server ADDRESS --token TOKEN`` (or ``--token-file``). Before joining it gathers
candidate deal seeds by every route an entrant has:

* ``config``: the tournament's config file, if it can read it, and what its ``seed`` derives;
* ``revealed``: seeds that GameCompleted told it in earlier games (kept in ``--spy-dir``, which
  outlives the process, as a real attacker's /tmp would), and what each derives;
* ``admin``: the admin API, with no token, with every token-looking value of its environment and
  with its own seat token: GetGameRecord of every game it saw before, GetTable, CreateTable;
* ``db`` / ``records``: the tournament's database and record files, if it can open them;
* ``commitment``: small seeds and config-derived guesses tested against GameStarted's
  commitment (the default seed ``1`` fell in 22 guesses);
* ``memory``: the hands it held itself in earlier games of the same deal (every rotation of a
  deal has the same commitment), which another seat holds now. Only a sandbox that leaves a bot
  no storage surviving its game closes this one.

At each hand it keeps the candidates whose deal gives exactly its own hand, and prints their
guesses of every other seat's hand, with what it tried, as one ``SPY-REPORT {json}`` line on
stdout at the end (the runner keeps it in the bot's log, sandboxed or not). The test compares
those guesses with the records afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import sys
import tomllib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from cancellation_hearts.v1 import admin_service_pb2_grpc as agrpc
from cancellation_hearts.v1 import referee_service_pb2 as rpb
from cancellation_hearts.v1 import referee_service_pb2_grpc as rgrpc
from hearts_client.sdk import safe_answer
from hearts_core.deal import deal_hand, derive_seed, keyed_seed, seed_commitment
from hearts_core.rules import Rules

#: What starts the report line on stdout.
REPORT_PREFIX = "SPY-REPORT "
#: Small seeds tried against the commitment...
SMALL_SEEDS = 2000
#: ... and small config seeds whose schedule derivation is tried.
SMALL_CONFIG_SEEDS = 100


async def play_seat(address: str, token: str, on_event: Callable[[rpb.Event], None]) -> None:
    """Plays a seat with always-legal answers, handing every event to ``on_event``."""
    async with grpc.aio.insecure_channel(address) as channel:
        outgoing: asyncio.Queue[rpb.PlayRequest | None] = asyncio.Queue()
        outgoing.put_nowait(rpb.PlayRequest(join=rpb.Join(token=token, bot_name="spy", protocol_version=1)))

        async def requests() -> AsyncIterator[rpb.PlayRequest]:
            while (request := await outgoing.get()) is not None:
                yield request

        call = rgrpc.RefereeServiceStub(channel).Play(requests())
        try:
            async for response in call:
                kind = response.WhichOneof("message")
                if kind == "decision_request":
                    outgoing.put_nowait(rpb.PlayRequest(decision=safe_answer(response.decision_request)))
                elif kind == "event":
                    on_event(response.event)
                elif kind == "events":
                    for event in response.events.events:
                        on_event(event)
        finally:
            outgoing.put_nowait(None)


class Spy:
    """Everything the spy learns in one game."""

    def __init__(self, args: argparse.Namespace, token: str) -> None:
        self.args = args
        self.token = token
        self.spy_dir = Path(args.spy_dir)
        # What earlier processes learned (one file each: two seats of a game run at once).
        self.memory: dict[str, list[Any]] = {"seeds": [], "games": [], "hands": []}
        with contextlib.suppress(OSError):  # a sandbox may leave it nothing that outlives a game
            for path in sorted(self.spy_dir.glob("memory-*.json")):
                earlier = json.loads(path.read_text())
                for key in self.memory:
                    self.memory[key] += earlier[key]
        self.learned: dict[str, list[Any]] = {"seeds": [], "games": [], "hands": []}
        self.commitment = ""
        self.report: dict[str, Any] = {
            "pid": os.getpid(),
            "config_readable": False,
            "db_readable": False,
            "records_readable": 0,
            "admin": [],
            "completed_seeds": [],
            "hands_seen": 0,
            "guesses": [],
            "bot_seed_predicted": False,
            # Secrets a careless runner would hand down in the environment.
            "env": sorted(name for name in os.environ if "SECRET" in name or "ADMIN" in name),
        }
        self.candidates: list[tuple[str, str]] = []
        self.config_seed: str | None = None
        self.game_id = ""
        self.seat = -1
        self.players = 0

    # ------------------------------------------------------------------ routes
    def gather(self, address: str) -> None:
        self._from_config()
        for seed in self.memory["seeds"]:
            self._add("revealed", seed, derive=True)
        self._from_files()
        asyncio.run(self._from_admin(address))

    def _add(self, route: str, seed: str, derive: bool = False) -> None:
        self.candidates.append((route, seed))
        if derive:
            self.candidates.extend((route, derive_seed(seed, "game", k)) for k in range(1, 4))

    def _from_config(self) -> None:
        try:
            data = tomllib.loads(Path(self.args.config).read_text())
        except (OSError, ValueError):
            return
        self.report["config_readable"] = True
        table = data.get("tournament", {})
        self.config_seed = str(table.get("seed", "1"))
        self._add("config", self.config_seed, derive=True)
        for deal in range(int(table.get("deals", 1))):
            self._add("config", derive_seed(self.config_seed, "deal", deal), derive=True)
        # The bots' own seeds, as the schedule once derived them from the config seed.
        mine = os.environ.get("HEARTS_SEED", "")
        keys = [f"d{d:03d}-r{r:02d}" for d in range(int(table.get("deals", 1))) for r in range(12)]
        keys += [f"d{d:03d}" for d in range(int(table.get("deals", 1)))]
        self.report["bot_seed_predicted"] = any(
            mine == derive_seed(self.config_seed, "bot", key, s) for key in keys for s in range(11)
        )

    def _from_files(self) -> None:
        output = Path(self.args.output)
        try:
            db = sqlite3.connect(f"file:{output / 'tournament.sqlite'}?mode=ro", uri=True)
            rows = db.execute("SELECT key, value FROM meta").fetchall()
            meta = dict(rows)
            self.report["db_readable"] = True
            for (record,) in db.execute("SELECT record FROM games").fetchall():
                self._add("db", json.loads(record).get("seed", ""))
            secret = meta.get("deal_secret")
            schedule = json.loads(meta["schedule"])
            for seating in schedule["seatings"]:
                self._add("db", seating["seed"])
                if secret:
                    self._add("db", keyed_seed(bytes.fromhex(secret), "deal", seating["seed"]))
        except (sqlite3.Error, OSError, KeyError, ValueError):
            pass
        try:
            for path in (output / "records").glob("*.json"):
                self._add("records", json.loads(path.read_text()).get("seed", ""))
                self.report["records_readable"] += 1
        except (OSError, ValueError):
            pass

    async def _from_admin(self, address: str) -> None:
        tokens = {"": ()}
        for name, value in os.environ.items():
            if "TOKEN" in name or "SECRET" in name:
                tokens[name] = (("authorization", f"Bearer {value}"),)
        tokens["seat token"] = (("authorization", f"Bearer {self.token}"),)
        async with grpc.aio.insecure_channel(address) as channel:
            admin = agrpc.AdminServiceStub(channel)
            for label, metadata in tokens.items():
                calls: list[tuple[str, Any]] = [
                    (
                        "CreateTable",
                        admin.CreateTable(
                            apb.CreateTableRequest(config=apb.TableConfig(players=6, bot_names=["x"] * 6)),
                            metadata=metadata,
                            timeout=10,
                        ),
                    ),
                ]
                for game_id in self.memory["games"]:
                    calls.append(
                        (
                            "GetGameRecord",
                            admin.GetGameRecord(
                                apb.GetGameRecordRequest(game_id=game_id), metadata=metadata, timeout=10
                            ),
                        )
                    )
                    calls.append(
                        (
                            "GetTable",
                            admin.GetTable(
                                apb.GetTableRequest(table_id=game_id), metadata=metadata, timeout=10
                            ),
                        )
                    )
                for method, call in calls:
                    try:
                        response = await call
                    except grpc.aio.AioRpcError as exc:
                        self.report["admin"].append(
                            {"token": label, "method": method, "code": exc.code().name}
                        )
                        continue
                    self.report["admin"].append({"token": label, "method": method, "code": "OK"})
                    if isinstance(response, apb.GetGameRecordResponse):
                        self._add("admin", json.loads(response.record_json).get("seed", ""), derive=True)
                    if isinstance(response, apb.GetTableResponse):
                        for game in response.games:
                            self._add("admin", json.loads(game.record_json).get("seed", ""), derive=True)

    # ------------------------------------------------------------------ the game
    def on_event(self, event: rpb.Event) -> None:
        which = event.WhichOneof("event")
        if which == "game_started":
            started = event.game_started
            self.game_id, self.seat, self.players = started.game_id, started.your_seat, started.players
            self.commitment = started.seed_commitment
            self.rules = Rules(players=started.players, target_score=started.target_score)
            # A seed is a small number, or the schedule's derivation of a small config seed.
            guesses = [str(n) for n in range(SMALL_SEEDS)]
            guesses += [derive_seed(str(n), "deal", d) for n in range(SMALL_CONFIG_SEEDS) for d in range(8)]
            if self.config_seed is not None:
                guesses += [derive_seed(self.config_seed, "deal", d) for d in range(64)]
            for guess in guesses:
                if seed_commitment(guess) == started.seed_commitment:
                    self._add("commitment", guess, derive=True)
        elif which == "hand_started":
            hand = event.hand_started
            self.report["hands_seen"] += 1
            mine = sorted(hand.hand)
            self.learned["hands"].append(
                {"commitment": self.commitment, "hand": hand.hand_index, "seat": self.seat, "cards": mine}
            )
            for held in self.memory["hands"]:
                same_deal = (held["commitment"], held["hand"]) == (self.commitment, hand.hand_index)
                if same_deal and held["seat"] != self.seat:
                    self.report["guesses"].append(
                        {
                            "route": "memory",
                            "game_id": self.game_id,
                            "hand": hand.hand_index,
                            "seat": held["seat"],
                            "cards": held["cards"],
                        }
                    )
            for route, seed in dict.fromkeys(self.candidates):
                if not seed:
                    continue
                deal, _ = deal_hand(self.rules, seed, hand.hand_index)
                if sorted(str(c) for c in deal[self.seat]) != mine:
                    continue
                for seat, cards in enumerate(deal):
                    if seat != self.seat:
                        self.report["guesses"].append(
                            {
                                "route": route,
                                "game_id": self.game_id,
                                "hand": hand.hand_index,
                                "seat": seat,
                                "cards": sorted(str(c) for c in cards),
                            }
                        )
        elif which == "game_completed":
            done = event.game_completed
            self.report["completed_seeds"].append(done.seed)
            if done.seed:
                self.learned["seeds"].append(done.seed)

    def save(self) -> None:
        if self.game_id:
            self.learned["games"].append(self.game_id)
        with contextlib.suppress(OSError):
            (self.spy_dir / f"memory-{os.getpid()}.json").write_text(json.dumps(self.learned))
        print(REPORT_PREFIX + json.dumps(self.report), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spy-dir", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--server", default=os.environ.get("HEARTS_SERVER"))
    parser.add_argument("--token", default=os.environ.get("HEARTS_TOKEN"))
    parser.add_argument("--token-file", default=os.environ.get("HEARTS_TOKEN_FILE"))
    args = parser.parse_args()
    token = Path(args.token_file).read_text().strip() if args.token_file else args.token
    spy = Spy(args, token)
    spy.gather(args.server)
    try:
        asyncio.run(play_seat(args.server, token, spy.on_event))
    finally:
        spy.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
