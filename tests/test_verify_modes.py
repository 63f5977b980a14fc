"""`hearts tournament verify` accepts an untouched tournament of every schedule kind: a
``permute`` seating and a gauntlet, not only the default rotate round robin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BASE = """
[tournament]
name = "v"
table_size = 6
deals = {deals}
duplicate = true
seating = "{seating}"
seed = 3
max_hands = 1
concurrency = 2
decision_ms = 5000
sandbox = "none"
{extra}
[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "dice"
builtin = "random"

[[bots]]
name = "dice2"
builtin = "random"
"""
GAUNTLET = """
[gauntlet]
candidate = "careful"
"""


def _hearts(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearts_tournaments", *args], capture_output=True, text=True, timeout=240
    )


@pytest.mark.parametrize(
    ("seating", "extra"), [("permute", ""), ("rotate", GAUNTLET)], ids=["permute", "gauntlet"]
)
def test_verify_accepts_an_untouched_tournament(tmp_path: Path, seating: str, extra: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(BASE.format(deals=1, seating=seating, extra=extra))
    output = tmp_path / "out"
    played = _hearts("tournament", "run", str(config), "--output", str(output))
    assert played.returncode == 0, played.stderr
    verified = _hearts("tournament", "verify", str(output))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("verify: ok"), verified.stdout
