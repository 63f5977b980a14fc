"""Colluding entrants for the fair-play tests: ``colluding_bot.py`` (a real bot process) and a
tournament of two of them among heuristic bots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: The colluding bot's script.
COLLUDER = Path(__file__).parent / "colluding_bot.py"
#: Its partner (and the partner's) in the tournaments below; the other four are heuristic bots.
PAIR = ("mallory", "trent")
OTHERS = ("alice", "bob", "carol", "dave")


def config(settings: str, strategy: str) -> str:
    """A tournament's TOML: ``settings`` under [tournament], the colluding pair (``strategy``,
    each the other's partner) and four built-in heuristic bots."""
    command = [sys.executable, str(COLLUDER), "--strategy", strategy]
    pair = "".join(
        f'\n[[bots]]\nname = "{me}"\ncommand = {json.dumps([*command, "--partner", partner])}\n'
        f"files = {json.dumps(str(COLLUDER.parent))}\n"
        for me, partner in (PAIR, PAIR[::-1])
    )
    others = "".join(f'\n[[bots]]\nname = "{name}"\nbuiltin = "heuristic"\n' for name in OTHERS)
    return f"[tournament]\n{settings}\n{pair}{others}"


def run_tournament(folder: Path, text: str, env: dict[str, str] | None = None) -> Path:
    """Runs the tournament of ``text`` from ``folder`` (its output ``out``); returns the output."""
    (folder / "t.toml").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", "tournament", "run", "t.toml", "--progress", "never"],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        cwd=folder,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return folder / "out"


def learned(out: Path) -> list[dict[str, Any]]:
    """What each colluding process learned at each game (its ``LEARNED`` lines, from the logs)."""
    return [
        json.loads(line.removeprefix("LEARNED "))
        for log in sorted((out / "logs").rglob("*.log"))
        for line in log.read_text().splitlines()
        if line.startswith("LEARNED ")
    ]
