#!/usr/bin/env python3
"""What the bwrap sandbox costs a Python bot: start-up time and time per decision.

Start-up: wall time to start a process that imports the SDK (what every bot does first) and
exits, unconfined and in the sandbox exactly as the runner starts it (prlimit + bwrap with the
same binds), the median of ``--starts`` runs each; also bare ``true``, to show bwrap's own part.

Per decision: ``hearts host`` with six built-in ``random`` bots as processes (through the same
:class:`~hearts_tournaments.arena.entrants.BotProcess` as the runner), one game to 150, unconfined
and sandboxed; seat 0's play time (its log's ``game_started`` to ``game_completed``) divided
by the decisions in the record, the median of ``--games`` games each. The whole game's wall
time (start-up included) is printed too.

Wall times on a shared machine are noisy: read the figures, do not assert them. On a loaded
machine with ``sched_autogroup`` a sandboxed bot can even come out faster: bwrap's
``--new-session`` gives each bot a scheduling group of its own. ``--json`` prints one JSON
object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from hearts_server.logs import LogFormat, configure_logging
from hearts_tournaments.arena.host import HostOptions, host_games
from hearts_tournaments.arena.sandbox import (
    Limits,
    SandboxKind,
    SandboxSpec,
    bot_environment,
    bwrap_argv,
    require_bwrap,
    rlimit_prefix,
    runtime_paths,
)

IMPORT_SDK = (sys.executable, "-c", "import hearts_client.sdk")


def start_times(command: tuple[str, ...], starts: int) -> tuple[float, float]:
    """Median seconds to run ``command`` to its end, unconfined and sandboxed (interleaved)."""
    plain: list[float] = []
    boxed: list[float] = []
    with tempfile.TemporaryDirectory() as private:
        token = Path(private) / "token"
        token.write_text("0" * 48)
        socket = Path(private) / "referee.sock"
        socket.touch()
        spec = SandboxSpec(command=command, socket=socket, token_file=token, extra=runtime_paths())
        confined = [*rlimit_prefix(Limits()), *bwrap_argv(require_bwrap(), spec)]
        env = bot_environment({}, Path(private))
        for _ in range(starts):
            for argv, times in ((list(command), plain), (confined, boxed)):
                start = time.perf_counter()
                subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
                times.append(time.perf_counter() - start)
    return statistics.median(plain), statistics.median(boxed)


def game_times(games: int) -> dict[SandboxKind, tuple[float, float, int]]:
    """Per sandbox: median seconds of a hosted game of six random bots (start-up included), of
    its play alone (seat 0's ``game_started`` to ``game_completed``), and its decisions."""
    runs: dict[SandboxKind, list[tuple[float, float, int]]] = {SandboxKind.NONE: [], SandboxKind.BWRAP: []}
    for index in range(games):
        for sandbox, results in runs.items():  # interleaved: the machine's load drifts
            with tempfile.TemporaryDirectory() as out:
                seats = ("random",) * 6
                options = HostOptions(seats=seats, seed=f"bench-{index}", out=Path(out), sandbox=sandbox)
                start = time.perf_counter()
                (game,) = asyncio.run(host_games(options, lambda line: None))
                total = time.perf_counter() - start
                decisions = len(json.loads(Path(game["record"]).read_text())["decisions"])
                (log,) = Path(out, "logs").glob("*-seat0-*.log")
                results.append((total, play_seconds(log), decisions))
    return {
        sandbox: (
            statistics.median(r[0] for r in results),
            statistics.median(r[1] for r in results),
            results[-1][2],
        )
        for sandbox, results in runs.items()
    }


def play_seconds(log: Path) -> float:
    """Seconds from ``game_started`` to ``game_completed`` in a bot's JSON log."""
    stamps = {}
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            stamps[entry.get("event")] = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
    return (stamps["game_completed"] - stamps["game_started"]).total_seconds()


def measure(starts: int, games: int) -> dict[str, Any]:
    """Every figure, in milliseconds."""
    figures: dict[str, Any] = {}
    for name, command in (("true", ("true",)), ("python_sdk", IMPORT_SDK)):
        plain, boxed = start_times(command, starts)
        figures[f"start_{name}_ms"] = {
            "none": round(plain * 1000, 1),
            "bwrap": round(boxed * 1000, 1),
            "overhead": round((boxed - plain) * 1000, 1),
        }
    games_by = game_times(games)
    (plain_total, plain_play, decisions) = games_by[SandboxKind.NONE]
    (boxed_total, boxed_play, _) = games_by[SandboxKind.BWRAP]
    figures["decisions_per_game"] = decisions
    figures["per_decision_ms"] = {
        "none": round(plain_play / decisions * 1000, 3),
        "bwrap": round(boxed_play / decisions * 1000, 3),
        "overhead": round((boxed_play - plain_play) / decisions * 1000, 3),
    }
    figures["game_s"] = {"none": round(plain_total, 2), "bwrap": round(boxed_total, 2)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=10, help="Process starts per variant.")
    parser.add_argument("--games", type=int, default=3, help="Games per variant.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    configure_logging(LogFormat.JSON, "WARNING")
    figures = measure(args.starts, args.games)
    if args.json:
        print(json.dumps(figures))
        return
    for name in ("true", "python_sdk"):
        f = figures[f"start_{name}_ms"]
        overhead = f"(+{f['overhead']} ms)"
        print(f"start {name:<10}  none {f['none']:7.1f} ms  bwrap {f['bwrap']:7.1f} ms  {overhead}")
    f = figures["per_decision_ms"]
    print(
        f"per decision      none {f['none']:7.3f} ms  bwrap {f['bwrap']:7.3f} ms  (+{f['overhead']} ms; "
        f"{figures['decisions_per_game']} decisions; whole games {figures['game_s']} s)"
    )


if __name__ == "__main__":
    main()
