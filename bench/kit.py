"""The bot test kit's cost: ``hearts bot test`` on the Python stdio example (clients/stdio/lowest.py)
and the Java example (clients/java), each a fresh process run as an author runs it: wall seconds,
CPU seconds (the kit's own process and children, and its bots' as the sandbox's watchdog sampled
them: a sandboxed bot's CPU does not reach the kit's children's count), each level's seconds,
and whether every check passed. The aims (issue 35): at most 60 s for the Python example and 120
s for the Java one.

    nice -n 10 .venv/bin/python bench/kit.py [--runs 1] [--bots lowest,java] [--json]
    .venv/bin/python bench/kit.py --hands [--games 20]

``--hands`` measures instead what the timing level's time bank judgment assumes of a long game
(hearts_tournaments.kit.timing.GAME_HANDS): the most hands any of ``--games`` games of the built-in
heuristic bots lasted to 150 points, at each table size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Each bot: the folder the kit is run from, its command, its protocol, and the aim in seconds.
BOTS: dict[str, tuple[Path, list[str], str, float]] = {
    "lowest": (ROOT / "clients" / "stdio", [sys.executable, "lowest.py"], "stdio", 60.0),
    "java": (ROOT, ["clients/java/bot"], "grpc", 120.0),
}


def run_once(bot: str) -> dict[str, Any]:
    """One ``hearts bot test`` of ``bot``: wall s, CPU s (the command's and its children's), levels."""
    folder, command, protocol, aim = BOTS[bot]
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "report.json"
        before = os.times()
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "hearts_tournaments", "bot", "test", "--protocol", protocol,
             "--json", str(report_path), "--", *command],
            cwd=folder, capture_output=True, text=True, check=False, timeout=1800,
        )  # fmt: skip
        wall = time.perf_counter() - started
        after = os.times()
        if not report_path.exists():
            raise SystemExit(
                f"kit: hearts bot test of {bot} failed ({done.returncode}): {done.stderr[-800:]}"
            )
        report = json.loads(report_path.read_text())
    kit_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    bot_cpu = sum(report["bot_cpu_s"].values())
    return {
        "bot": bot,
        "wall_s": round(wall, 1),
        "cpu_s": round(kit_cpu + bot_cpu, 1),
        "kit_cpu_s": round(kit_cpu, 1),
        "bot_cpu_s": round(bot_cpu, 1),
        "aim_s": aim,
        "passed": report["passed"],
        "checks": report["counts"],
        "levels_s": report["seconds"],
    }


def game_hands(games: int) -> dict[int, int]:
    """The most hands a game of the heuristic bots lasted to 150 points, per table size."""
    from hearts_client.bots import make_bot
    from hearts_core.local import play_game
    from hearts_core.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

    most = {}
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        bots = [make_bot("heuristic", f"{g}/{s}") for g in range(games) for s in range(players)]
        most[players] = max(
            len(play_game(Rules(players=players), f"s{g}", bots[g * players : (g + 1) * players]).results)
            for g in range(games)
        )
    return most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Runs of each bot (default 1); medians shown.")
    parser.add_argument("--bots", default=",".join(BOTS), help=f"Which bots, of {', '.join(BOTS)}.")
    parser.add_argument("--json", action="store_true", help="Print the JSON object only.")
    parser.add_argument("--hands", action="store_true", help="Measure GAME_HANDS instead (see above).")
    parser.add_argument("--games", type=int, default=20, help="Games per table size for --hands.")
    args = parser.parse_args()
    if args.hands:
        from hearts_tournaments.kit.timing import GAME_HANDS

        measured = game_hands(args.games)
        out: dict[str, Any] = {"games": args.games, "game_hands": measured, "kit": GAME_HANDS}
        print(json.dumps(out) if args.json else "\n".join(
            f"{n} seats: the longest of {args.games} games lasted {h} hands (the kit assumes {GAME_HANDS[n]})"
            for n, h in measured.items()
        ))  # fmt: skip
        return
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    unknown = [b for b in bots if b not in BOTS]
    if unknown or args.runs < 1:
        parser.error(f"--bots takes {', '.join(BOTS)}; --runs at least 1")
    results = []
    for bot in bots:
        runs = [run_once(bot) for _ in range(args.runs)]
        median = {
            key: round(statistics.median(r[key] for r in runs), 1)
            for key in ("wall_s", "cpu_s", "kit_cpu_s", "bot_cpu_s")
        }
        results.append(
            {**runs[-1], **median, "runs": args.runs, "all_passed": all(r["passed"] for r in runs)}
        )
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"load_average": round(load, 1), "bots": results}))
        return
    for r in results:
        levels = ", ".join(f"{k} {v:.1f} s" for k, v in r["levels_s"].items())
        verdict = "every check passed" if r["all_passed"] else "a check FAILED"
        print(
            f"{r['bot']}: {r['wall_s']:.1f} s wall (aim {r['aim_s']:.0f} s), {r['cpu_s']:.1f} s CPU (kit "
            f"{r['kit_cpu_s']:.1f} s, bot {r['bot_cpu_s']:.1f} s), median of {r['runs']}; {verdict}; {levels}"
        )
    print(f"load average {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
