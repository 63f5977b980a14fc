"""Kept bench output reproduces: the cheap runs of docs/FIGURES.md played again, here and now.

``tests/test_figures.py`` checks that the figures quote the JSON kept in ``bench/figures/``;
this module reruns the commands that take seconds and checks they print the same figures (the
benches are seeded; only their wall time may differ).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.timeout(600)
def test_the_synthetic_league_run_reproduces_its_kept_output() -> None:
    kept = json.loads((ROOT / "bench" / "figures" / "league_synthetic_a.json").read_text())
    command = [
        "bench/league.py",
        "--entrants",
        "50",
        "--blocks",
        "120",
        "--every",
        "10",
        "--seed",
        "a",
        "--json",
    ]
    run = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    again = json.loads(run.stdout)
    kept.pop("seconds")
    again.pop("seconds")
    assert again == kept
