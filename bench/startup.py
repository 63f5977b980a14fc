"""Start-up of the ``hearts`` command: ``hearts --help`` and ``hearts replay FILE``, each a fresh
process, wall and CPU seconds (median of ``--runs``), and how many modules it imports.

Every ``hearts`` process pays its start-up before doing anything, and so does every test that
runs the command. The record replayed is a one-game ``hearts play --record`` made first.

    .venv/bin/python bench/startup.py [--runs 9] [--json]
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

#: Run in the child instead of the console script: the same ``main()``, then the modules it
#: imported on stderr's last line (printed at exit, after the command's own output).
CHILD = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('modules', len(sys.modules), file=sys.stderr))\n"
    "from hearts_tournaments.cli.main import main\n"
    "sys.argv[0] = 'hearts'\n"
    "main()\n"
)


def _once(args: list[str]) -> tuple[float, float, int]:
    """One run of ``hearts ARGS``: wall s, CPU s (user + system of the child), modules imported."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=False, timeout=120
    )
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if done.returncode != 0 or not last.startswith("modules "):
        raise SystemExit(f"startup: hearts {' '.join(args)} failed ({done.returncode}): {done.stderr[-500:]}")
    return wall, cpu, int(last.split()[1])


def measure(args: list[str], runs: int) -> dict[str, Any]:
    """The median wall and CPU seconds of ``runs`` runs (after one not counted) and the modules."""
    _once(args)
    results = [_once(args) for _ in range(runs)]
    walls, cpus, modules = zip(*results, strict=True)
    return {
        "command": "hearts " + " ".join(args),
        "runs": runs,
        "wall_s_median": round(statistics.median(walls), 3),
        "wall_s_min": round(min(walls), 3),
        "cpu_s_median": round(statistics.median(cpus), 3),
        "modules": max(modules),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="Counted runs of each command (default 9).")
    parser.add_argument("--json", action="store_true", help="Print the JSON object only.")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "game.json"
        made = subprocess.run(
            [sys.executable, "-c", CHILD, "play", "--quiet", "--seed", "startup", "--record", str(record)],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            raise SystemExit(f"startup: hearts play failed: {made.stderr[-500:]}")
        figures = [measure(["--help"], args.runs), measure(["replay", str(record)], args.runs)]
    figures[1]["command"] = "hearts replay FILE"
    result = {"bench": "startup", "python": sys.version.split()[0], "commands": figures}
    if not args.json:
        for figure in figures:
            print(
                f"{figure['command']}: wall {figure['wall_s_median']} s median "
                f"(min {figure['wall_s_min']}), CPU {figure['cpu_s_median']} s, "
                f"{figure['modules']} modules"
            )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
