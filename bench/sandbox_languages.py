#!/usr/bin/env python3
"""What the bwrap sandbox costs each example bot: start-up to join, and time per decision.

For every language (Python's built-in heuristic bot, and the Go, Rust, Java, TypeScript and C++
example bots, which must be built: ``clients/build-all``), one seat of a real referee table (on
its Unix socket) is played by that bot, started exactly as the tournament runner starts it
(:meth:`~hearts_tournaments.arena.entrants.BotProcess.start`), unconfined and in the sandbox, in turn;
the other five seats are SDK ``random`` bots in this process. Figures, the median of ``--games``
games per variant:

- start-up: wall time from starting the process to the referee seeing the seat join;
- per decision: the bot's own mean time per decision, as the referee measured it (the record's
  ``ms``).

Wall times on a shared machine are noisy: read the figures, do not assert them. ``--json`` prints
one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hearts_client.bots import make_bot
from hearts_client.sdk import run_async
from hearts_core.record import GameRecord
from hearts_core.rules import Rules
from hearts_server.logs import LogFormat, configure_logging
from hearts_server.server import make_server
from hearts_server.table import TableSettings
from hearts_tournaments.arena.bots import BotSpec
from hearts_tournaments.arena.entrants import BotProcess, SeatAccess
from hearts_tournaments.arena.sandbox import SandboxKind, Watchdog

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("python", "go", "rust", "java", "typescript", "cpp")


def spec_of(language: str) -> BotSpec:
    """The bot of a language, as a tournament config would enter it."""
    if language == "python":
        return BotSpec(name="python", builtin="heuristic")
    folder = ROOT / "clients" / language
    return BotSpec(name=language, command=(str(folder / "bot"),), workdir=folder, files=(folder,))


async def one_game(language: str, sandbox: SandboxKind, seed: str, watchdog: Watchdog) -> tuple[float, float]:
    """Seconds from start to join, and the bot's mean ms per decision, for one game."""
    with tempfile.TemporaryDirectory() as tmp:
        socket = Path(tmp) / "referee.sock"
        server = make_server(Path(tmp) / "records", admin_token="bench", unix_socket=socket)
        await server.start()
        try:
            names = (language, *("random",) * 5)
            table = server.registry.create(
                TableSettings(rules=Rules(players=6, target_score=60), bot_names=names, seed=seed)
            )
            address = f"unix:{socket}"
            others = [
                asyncio.create_task(run_async(make_bot("random", f"{seed}/{s.index}"), address, s.token))
                for s in table.seats[1:]
            ]
            started = time.perf_counter()
            process = await BotProcess.start(
                0,
                spec_of(language),
                SeatAccess(socket, table.seats[0].token, seed),
                Path(tmp) / "bot.log",
                sandbox=sandbox,
                watchdog=watchdog,
            )
            while table.seats[0].connection is None and not table.done.is_set():
                await asyncio.sleep(0.002)
            joined = time.perf_counter() - started
            await table.done.wait()
            await asyncio.gather(*others)
            await process.stop()
            (game,) = table.finished
            record = GameRecord.from_json(json.loads(game.record_json))
            own = [d.ms for d in record.decisions or () if d.seat == 0 and d.by_referee is None]
            if not own:
                raise SystemExit(f"{language} ({sandbox}) made no decision: see a run by hand")
            return joined, statistics.fmean(own)
        finally:
            await server.stop(grace=0.2)


def measure(languages: tuple[str, ...], games: int) -> dict[str, Any]:
    """Every figure: per language, start-up (ms) and per-decision (ms), none and bwrap."""
    out: dict[str, Any] = {}
    with Watchdog() as watchdog:
        for language in languages:
            runs: dict[SandboxKind, list[tuple[float, float]]] = {SandboxKind.NONE: [], SandboxKind.BWRAP: []}
            for index in range(games):
                for sandbox, results in runs.items():  # interleaved: the machine's load drifts
                    results.append(asyncio.run(one_game(language, sandbox, f"bench-{index}", watchdog)))
            figures: dict[str, Any] = {}
            for sandbox, results in runs.items():
                figures[str(sandbox)] = {
                    "start_ms": round(statistics.median(r[0] for r in results) * 1000, 1),
                    "decision_ms": round(statistics.median(r[1] for r in results), 3),
                }
            figures["start_overhead_ms"] = round(
                figures["bwrap"]["start_ms"] - figures["none"]["start_ms"], 1
            )
            figures["decision_overhead_ms"] = round(
                figures["bwrap"]["decision_ms"] - figures["none"]["decision_ms"], 3
            )
            out[language] = figures
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=3, help="Games per language and variant.")
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    configure_logging(LogFormat.JSON, "ERROR")
    figures = measure(tuple(args.languages), args.games)
    if args.json:
        print(json.dumps(figures))
        return
    header = ("bot", "start none", "start bwrap", "(+)", "ms/decision none", "bwrap")
    print("{:<11} {:>11} {:>12} {:>8}   {:>16} {:>7}".format(*header))
    for language, f in figures.items():
        print(
            f"{language:<11} {f['none']['start_ms']:9.1f}ms {f['bwrap']['start_ms']:10.1f}ms "
            f"{f['start_overhead_ms']:+7.1f}   {f['none']['decision_ms']:14.3f}ms "
            f"{f['bwrap']['decision_ms']:6.3f}ms"
        )


if __name__ == "__main__":
    sys.exit(main())
