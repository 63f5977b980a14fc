"""docs/SIMULATOR.md's three examples run exactly as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hearts_core.local import play_game
from hearts_core.rules import Rules
from tests.conftest import ROOT

DOC = ROOT / "docs" / "SIMULATOR.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_doc_has_three_examples() -> None:
    assert len(python_blocks()) == 3


def test_the_rollout_bot_plays_legal_games() -> None:
    rollout_code = python_blocks()[0]
    namespace: dict[str, object] = {}
    exec(compile(rollout_code, str(DOC), "exec"), namespace)
    bot_class = namespace["RolloutBot"]
    from hearts_client.bots.heuristic import HeuristicBot

    seats = [bot_class(0) if seat == 0 else HeuristicBot(seat) for seat in range(6)]  # type: ignore[operator]
    # The engine raises on any illegal decision; the game must end normally.
    state = play_game(Rules(6, target_score=30), "docs-rollout", seats)
    assert state.game_over and state.results


@pytest.mark.parametrize("index", [1, 2])
def test_the_loops_run(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(python_blocks()[index])
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr
    if index == 1:
        assert done.stdout.startswith("{'player_0': ")
    else:
        assert "12800 decisions" in done.stdout
