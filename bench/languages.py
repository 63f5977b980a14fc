#!/usr/bin/env python3
"""Decisions per second that each language's example bot sustains against the real server.

For each of Python (the built-in heuristic bot), Go, Rust, Java, TypeScript and C++, one table of
6 seats, every seat that language's bot as its own process (``clients/<language>/bot``), plays a
game over TCP (``--server HOST:PORT``) and one over the referee's Unix socket (``--server
unix:PATH``), the way the tournament's sandbox connects them; every bot reads its seat token from
a file (``--token-file``). The figure is a game's decisions over the wall time from its first
decision to its last (the referee's clock), the best of ``--repeat`` games per transport (the
games alternate between the transports; on a shared machine the best run is the least
disturbed). Languages whose toolchain is missing are reported as such. ``--json`` prints one
JSON object mapping language to ``{"tcp": d/s, "unix": d/s}`` (null when skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from referee import decisions_per_second, run_tables

from hearts_server.logs import configure_logging

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAINS = {
    "go": ["go"],
    "rust": ["cargo"],
    "java": ["java", "mvn"],
    "typescript": ["node"],
    "cpp": ["g++"],
}
TRANSPORTS = ("tcp", "unix")
Command = Callable[[str, str, int], list[str]]


def with_token_file(folder: Path, argv: Callable[[str, Path, int], list[str]]) -> Command:
    """A seat's command that gets its token in a 0600 file under ``folder``, never on its argv."""

    def command(address: str, token: str, seat: int) -> list[str]:
        path = folder / f"token-{seat}"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token)
        return argv(address, path, seat)

    return command


def python_argv(address: str, token_file: Path, seat: int) -> list[str]:
    """The built-in heuristic bot, as the tournament runner starts it."""
    module = "hearts_tournaments.builtin_bot"
    seed = ["--seed", str(seat)]
    return [
        sys.executable,
        "-m",
        module,
        "heuristic",
        *seed,
        "--server",
        address,
        "--token-file",
        f"{token_file}",
    ]


def example_argv(language: str) -> Callable[[str, Path, int], list[str]]:
    """The example bot of ``language``."""
    bot = ROOT / "clients" / language / "bot"

    def argv(address: str, token_file: Path, seat: int) -> list[str]:
        return [str(bot), "--server", address, "--token-file", str(token_file)]

    return argv


def measure(
    folder: Path, target: int, repeat: int, argv: Callable[[str, Path, int], list[str]]
) -> dict[str, int]:
    """Decisions per second per transport: the best of ``repeat`` 6-seat games."""
    best = dict.fromkeys(TRANSPORTS, 0.0)
    for run in range(repeat):
        for transport in TRANSPORTS:
            out = folder / f"{transport}-{run}"
            out.mkdir(parents=True)
            command = with_token_file(out, argv)
            records = asyncio.run(run_tables(1, 6, target, out, command, unix=transport == "unix"))
            best[transport] = max(best[transport], decisions_per_second(records))
    return {transport: round(value) for transport, value in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--target", type=int, default=100, help="target score of the game")
    parser.add_argument("--repeat", type=int, default=3, help="games per language and transport")
    args = parser.parse_args()
    configure_logging(level="WARNING")  # the referee's per-seat lines would drown the figures
    figures: dict[str, dict[str, int] | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures["python"] = measure(Path(tmp) / "python", args.target, args.repeat, python_argv)
        for language, tools in TOOLCHAINS.items():
            if any(shutil.which(t) is None for t in tools):
                figures[language] = None
                continue
            subprocess.run([str(ROOT / "clients" / language / "build")], check=True)
            figures[language] = measure(
                Path(tmp) / language, args.target, args.repeat, example_argv(language)
            )
    if args.json:
        print(json.dumps(figures))
        return
    print("Decisions per second, one 6-seat table of the same example bot (each seat a process),")
    print(f"best of {args.repeat} games per transport")
    print(f"  {'':<11} {'tcp':>7} {'unix':>7}")
    for language, value in figures.items():
        if value is None:
            print(f"  {language:<11} toolchain missing")
        else:
            print(f"  {language:<11} {value['tcp']:>7,} {value['unix']:>7,}")


if __name__ == "__main__":
    main()
