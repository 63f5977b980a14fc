"""``hearts host``: try a bot against the built-in ones on a local referee.

It starts a referee server on a free port (and a private Unix socket), creates one table through
the admin API, starts the built-in bots exactly as the arena does
(:class:`~hearts_tournaments.arena.entrants.BotProcess`: in their sandbox, reaching the referee
through the Unix socket, each token in a file), prints the address and, for every ``external``
seat, the path of a file holding its token, waits for those bots, plays the games and writes
each game record to ``DIR/<game_id>.json``.

Tokens never appear on a command line or in the output, where other processes and logs could
read them: each external seat's token is written to its own 0600 file in a private (0700)
temporary folder, removed when the games are over, and the user's bot reads it with
``--token-file PATH``. The server requires a random admin token that only this process holds:
``hearts host`` creates its table and waits for it over the admin API (``CreateTable``,
``AwaitTable``) exactly as the tournament runner does, never reaching into the server's
objects, and never blocks the event loop (file work runs in a worker thread). Without
``--seed`` every game gets its own fresh, unguessable deal seed.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from cancellation_hearts.v1 import admin_service_pb2 as apb
from hearts_client.bots import BUILTIN_BOTS
from hearts_core.deal import new_seed
from hearts_core.defaults import DEFAULT_POLICY, TablePolicy
from hearts_core.rules import DEFAULT_TARGET_SCORE, Rules
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import BotProcess, SeatAccess
from hearts_tournaments.arena.local import Referee
from hearts_tournaments.arena.sandbox import Limits, SandboxKind, Watchdog, require_bwrap

EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class HostOptions:
    """What ``hearts host`` was asked to do."""

    seats: tuple[str, ...]
    games: int = 1
    seed: str | None = None
    out: Path = Path("games")
    port: int = 0
    host: str = "127.0.0.1"
    target_score: int = DEFAULT_TARGET_SCORE
    policy: TablePolicy = DEFAULT_POLICY
    sandbox: SandboxKind = SandboxKind.BWRAP
    limits: Limits = field(default_factory=Limits)


def parse_seats(text: str) -> tuple[str, ...]:
    """Parses ``--seats heuristic,random,external,...``.

    Raises:
        ValueError: on an unknown bot name or a table size outside 6..11.
    """
    seats = tuple(s.strip() for s in text.split(",") if s.strip())
    known = [*sorted(BUILTIN_BOTS), EXTERNAL]
    for name in seats:
        if name not in known:
            raise ValueError(f"unknown seat {name!r} in --seats: use one of {', '.join(known)}")
    Rules(players=len(seats))
    return seats


def write_token_file(folder: Path, seat: int, token: str) -> Path:
    """Writes a seat's token to ``folder/seat-K.token``, readable by its owner only (0600)."""
    path = folder / f"seat-{seat}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
    return path


def bot_command(name: str, address: str, token_file: Path, seed: str) -> list[str]:
    """A command that runs built-in bot ``name`` as its own process, unsandboxed (for tests)."""
    return [
        sys.executable,
        "-m",
        "hearts_tournaments.arena.builtin_bot",
        name,
        f"--server={address}",
        f"--token-file={token_file}",
        f"--seed={seed}",
    ]


async def host_games(options: HostOptions, emit: Callable[[str], None]) -> list[dict[str, Any]]:
    """Runs the server and the built-in bots until every game is over.

    Args:
        options: What to host.
        emit: Prints one line for the user (stdout).

    Returns:
        One summary per finished game: game id, record path, totals, winners, faults, and the
        name each external seat's bot gave itself in its Join (self-declared: the seat is
        ``external-K`` in the record's ``bots``, and this name is its ``declared_names``).

    Raises:
        SandboxError: if the bots are to be sandboxed and bwrap is missing.
        HostError: if the referee refuses the table or stops it before its games are over.
    """
    if options.sandbox is SandboxKind.BWRAP and any(s != EXTERNAL for s in options.seats):
        require_bwrap()
    # Nothing here blocks the event loop: the folder's creation and removal and the watchdog's
    # stop (a thread join) run in a worker thread.
    private = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hearts-host-"))
    watchdog = Watchdog()
    watchdog.start()
    try:
        return await _host(options, emit, private, watchdog)
    finally:
        await asyncio.to_thread(watchdog.stop)
        await asyncio.to_thread(shutil.rmtree, private, True)


class HostError(Exception):
    """The referee refused the table, or stopped it before its games were over."""


def _prepare(out: Path, logs: Path) -> None:
    for folder in (out, logs):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)


def _write_token_files(private: Path, tokens: dict[int, str]) -> dict[int, Path]:
    return {seat: write_token_file(private, seat, token) for seat, token in tokens.items()}


async def _host(
    options: HostOptions, emit: Callable[[str], None], private: Path, watchdog: Watchdog
) -> list[dict[str, Any]]:
    out = options.out
    logs = out / "logs"
    await asyncio.to_thread(_prepare, out, logs)
    names = tuple(f"{EXTERNAL}-{i}" if name == EXTERNAL else name for i, name in enumerate(options.seats))
    processes: list[BotProcess] = []
    done = False
    # The admin token lives only in the referee object's memory: no seat can read records or
    # create tables behind the host's back. The host uses the admin API as the tournament's
    # arena does: CreateTable, then AwaitTable, then GetTable until every external seat was told.
    async with Referee(out, host=options.host, port=options.port) as referee:
        admin, metadata, socket = referee.admin, referee.metadata, referee.socket
        try:
            config = apb.TableConfig(
                players=len(options.seats),
                bot_names=list(names),
                target_score=options.target_score,
                games=options.games,
                seed=options.seed or "",  # empty: a fresh seed per game
                decision_time_ms=options.policy.decision_ms,
                time_bank_ms=options.policy.time_bank_ms,
                max_faults=options.policy.max_faults,
                join_timeout_ms=options.policy.join_timeout_ms,
                label="hearts host",
            )
            try:
                created = await admin.CreateTable(apb.CreateTableRequest(config=config), metadata=metadata)
            except grpc.aio.AioRpcError as exc:
                raise HostError(f"the referee refused the table: {exc.details()}") from None
            tokens = {s.seat: s.token for s in created.seats}
            token_files = await asyncio.to_thread(
                _write_token_files,
                private,
                {seat: token for seat, token in tokens.items() if options.seats[seat] == EXTERNAL},
            )
            emit(json.dumps(_invitation(referee.address, f"unix:{socket}", created.table_id, token_files)))
            for seat, name in enumerate(options.seats):
                if name == EXTERNAL:
                    continue
                process = await BotProcess.start(
                    seat,
                    BotSpec(name=name, builtin=name),
                    SeatAccess(
                        socket, tokens[seat], f"{options.seed}/{seat}" if options.seed else new_seed()
                    ),
                    logs / f"{created.table_id}-seat{seat}-{names[seat]}.log",
                    sandbox=options.sandbox,
                    limits=options.limits,
                    watchdog=watchdog,
                )
                processes.append(process)
            try:
                awaited = await admin.AwaitTable(
                    apb.AwaitTableRequest(table_id=created.table_id), metadata=metadata
                )
            except grpc.aio.AioRpcError as exc:
                raise HostError(f"the referee stopped the table: {exc.details()}") from None
            done = True

            # A bot that was away at the end comes back to be told the result (status OK).
            async def told() -> Sequence[bool]:
                request = apb.GetTableRequest(table_id=created.table_id)
                return list((await admin.GetTable(request, metadata=metadata)).results_told)

            await _grace(told, set(token_files))
        finally:
            if done:
                await asyncio.gather(*(p.stop() for p in processes))
            else:
                for process in processes:
                    process.kill()
    table = awaited.table
    if table.status != apb.TABLE_STATUS_DONE:
        why = f": {table.stop_reason}" if table.stop_reason else ""
        raise HostError(f"the referee stopped table {table.table_id} before its games were over{why}")
    return [
        {
            "game_id": game.game_id,
            "record": str(out / f"{game.game_id}.json"),
            "totals": list(game.result.totals),
            "winners": list(game.result.winners),
            "faults": [r.faults for r in game.result.results],
            "bot_errors": [r.bot_errors for r in game.result.results],
            "declared_names": _declared(game.record_json, options.seats),
        }
        for game in table.games
    ]


def _declared(record_json: str, seats: Sequence[str]) -> list[dict[str, Any]]:
    """The names the external seats' bots gave themselves, from the game's record."""
    declared = json.loads(record_json).get("declared_names") or [""] * len(seats)
    return [
        {"seat": seat, "name": name}
        for seat, (kind, name) in enumerate(zip(seats, declared, strict=True))
        if kind == EXTERNAL and name
    ]


#: How long ``hearts host`` keeps serving after the last game for an external bot that was away
#: at the end to come back and be told the result (its final status OK).
HOST_GRACE_S = 10.0
#: Seconds between two looks at the table during that grace.
GRACE_POLL_S = 0.05


async def _grace(told: Callable[[], Awaitable[Sequence[bool]]], external: set[int]) -> None:
    """Waits (at most HOST_GRACE_S) until every external seat has been told every game's end.

    ``told`` asks the referee, per seat, whether its bot was told every result (``GetTable``).
    """
    loop = asyncio.get_running_loop()
    until = loop.time() + HOST_GRACE_S
    while True:
        seats = await told()
        if all(seats[i] for i in external if i < len(seats)) or loop.time() >= until:
            return
        await asyncio.sleep(GRACE_POLL_S)


def invitation_lines(line: str) -> list[str]:
    """The invitation :func:`host_games` emits first (one JSON line), as a person reads it."""
    invitation = json.loads(line)
    lines = [
        f"referee listening on {invitation['address']}",
        f"                 and on {invitation['unix']} (as in a tournament's sandbox)",
    ]
    lines += [f"  seat {seat['seat']}: {seat['command']}" for seat in invitation["seats"]]
    if not invitation["seats"]:
        lines.append("  (no external seats: built-in bots only)")
    lines.append("waiting for the bots...")
    return lines


def result_line(game: dict[str, Any]) -> str:
    """One finished game's summary (an item of what :func:`host_games` returns), as a person reads it."""
    joined = "".join(
        f"; seat {d['seat']} joined as {json.dumps(d['name'])} (self-declared)"
        for d in game["declared_names"]
    )
    return (
        f"game {game['game_id']}: totals {game['totals']} winners {game['winners']} "
        f"faults {game['faults']} bot errors {game['bot_errors']} record {game['record']}{joined}"
    )


def _invitation(address: str, unix: str, table_id: str, token_files: dict[int, Path]) -> dict[str, Any]:
    """What the user needs to seat their bots: the addresses (TCP, and the Unix socket a
    tournament's bot gets), and per external seat its token file."""
    return {
        "address": address,
        "unix": unix,
        "table_id": table_id,
        "seats": [
            {
                "seat": seat,
                "token_file": str(path),
                "command": f"<your bot> --server {address} --token-file {path}",
                "unix_command": f"<your bot> --server {unix} --token-file {path}",
            }
            for seat, path in sorted(token_files.items())
        ],
    }
