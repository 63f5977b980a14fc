#!/usr/bin/env python3
"""Decisions per second that each language's example bot sustains against the real server.

For each of Python (the built-in heuristic bot), Go, Rust, Java, TypeScript and C++, one table of
6 seats, every seat that language's bot as its own process (``clients/<language>/bot``), plays a
game; the figure is its decisions over the wall time from the first decision to the last (the
referee's clock). Languages whose toolchain is missing are reported as such. ``--json`` prints
one JSON object mapping language to decisions per second (null when skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from referee import decisions_per_second, run_tables

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAINS = {
    "go": ["go"],
    "rust": ["cargo"],
    "java": ["java", "mvn"],
    "typescript": ["node"],
    "cpp": ["g++"],
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--target", type=int, default=100, help="target score of the game")
    args = parser.parse_args()
    figures: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        records = asyncio.run(run_tables(1, 6, args.target, Path(tmp) / "python"))
        figures["python"] = round(decisions_per_second(records))
        for language, tools in TOOLCHAINS.items():
            if any(shutil.which(t) is None for t in tools):
                figures[language] = None
                continue
            bot = ROOT / "clients" / language / "bot"
            subprocess.run([str(ROOT / "clients" / language / "build")], check=True)

            def command(address: str, token: str, seat: int, bot: Path = bot) -> list[str]:
                return [str(bot), "--server", address, "--token", token]

            records = asyncio.run(run_tables(1, 6, args.target, Path(tmp) / language, command))
            figures[language] = round(decisions_per_second(records))
    if args.json:
        print(json.dumps(figures))
        return
    print("Decisions per second, one 6-seat table of the same example bot (each seat a process)")
    for language, value in figures.items():
        print(f"  {language:<11} {'toolchain missing' if value is None else f'{value:,}'}")


if __name__ == "__main__":
    main()
