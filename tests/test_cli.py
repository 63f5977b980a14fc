"""The ``hearts`` CLI as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import hearts


def test_play_prints_the_game_and_writes_a_replayable_record(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    result = hearts(
        "play", "--players", "7", "--bots", "heuristic,random", "--seed", "3", "--record", str(record)
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Hand 1" in out and "trick  1 led by" in out and "totals" in out and "winner" in out
    assert "kitty" in out  # 7 players leave a kitty of 6
    replayed = json.loads(hearts("replay", str(record)).stdout)
    assert replayed["error"] is None and replayed["game_over"] is True
    data = json.loads(record.read_text())
    assert data["bots"] == ["heuristic", "random"] * 3 + ["heuristic"]
    # The same seed gives the same game.
    again = hearts("play", "--players", "7", "--bots", "heuristic,random", "--seed", "3")
    assert again.stdout == out.replace(f"game record written to {record}\n", "")


def test_play_marks_cancelled_cards_and_set_aside_tricks() -> None:
    result = hearts("play", "--players", "11", "--bots", "random", "--seed", "5")
    assert result.returncode == 0
    assert "×" in result.stdout


def test_play_rejects_bad_input_with_one_line() -> None:
    for args, needle in [
        (("--players", "5"), "6 to 11 players"),
        (("--bots", "heuristic,nobody"), "unknown bot 'nobody'"),
        (("--bots", ","), "at least one bot"),
    ]:
        result = hearts("play", *args)
        assert result.returncode == 2, args
        assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_logs_are_json_lines_when_asked_and_stdlib_logging_goes_through_them() -> None:
    code = (
        "import logging; from hearts_server.logs import configure_logging, get_logger; "
        "configure_logging('json'); get_logger('t').info('trick_won', seat=3); "
        "logging.getLogger('grpc._server').warning('from grpc')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert lines[0]["event"] == "trick_won" and lines[0]["seat"] == 3 and lines[0]["level"] == "info"
    assert lines[1]["event"] == "from grpc" and lines[1]["logger"] == "grpc._server"


def test_help_lists_every_command() -> None:
    result = hearts("--help")
    for command in ("play", "replay", "serve", "host", "bot"):
        assert command in result.stdout
