"""The ``hearts`` CLI as a user runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli import hearts


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


TRICK_LINE = re.compile(r"^  trick +\d+ led by +(\d+): (.*)  → (won by (\d+)|SET ASIDE)$")


def test_play_marks_cancelled_cards_and_set_aside_tricks(tmp_path: Path) -> None:
    # 11 random bots, seed 1: a game with cancelled cards and a set-aside trick.
    record = tmp_path / "game.json"
    result = hearts("play", "--players", "11", "--bots", "random", "--seed", "1", "--record", str(record))
    assert result.returncode == 0, result.stderr
    tricks = [m for line in result.stdout.splitlines() if (m := TRICK_LINE.match(line))]
    played: list[str] = []
    marked = set_aside = 0
    for match in tricks:
        shown = [entry.split(":") for entry in match[2].split()]
        cards = [card.removesuffix("×") for _, card in shown]
        played.extend(cards)
        # A card is marked exactly when its twin is in the same trick (RULES.md: they cancel) ...
        for (_, card), plain in zip(shown, cards, strict=True):
            assert card.endswith("×") == (cards.count(plain) == 2), match[0]
            marked += card.endswith("×")
        # ... and the trick goes to the highest led-suit card played once, or is set aside.
        led = cards[0][1]
        once = [i for i, c in enumerate(cards) if c[1] == led and cards.count(c) == 1]
        if once:
            best = max(once, key=lambda i: "23456789TJQKA".index(cards[i][0]))
            assert match[4] == shown[best][0], match[0]
        else:
            assert match[3] == "SET ASIDE", match[0]
            set_aside += 1
    assert marked and set_aside, "the game shows no cancelled card or no set-aside trick"
    # The tricks printed are the game played: every play of the record, in order.
    data = json.loads(record.read_text())
    assert played == [card for hand in data["hands"] for card in hand["plays"]]


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


def test_a_logger_that_has_logged_follows_a_later_configuration() -> None:
    """A module's logger that logged once keeps following configuration: a second
    configure_logging in the process, or a test's capture_logs, sees its next lines (a cached
    logger kept the first configuration's processors, and the referee's lines went missing)."""
    code = (
        "import structlog; from hearts_server.logs import configure_logging, get_logger\n"
        "configure_logging('json'); log = get_logger('t'); log.info('first')\n"
        "configure_logging('json')\n"
        "with structlog.testing.capture_logs() as logs:\n"
        "    log.bind(seat=2).info('second')\n"
        "print([e['event'] for e in logs])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "['second']", (result.stdout, result.stderr)


def help_commands(*args: str) -> set[str]:
    """The command names listed in the ``Commands`` panel of ``hearts ... --help``."""
    result = hearts(*args, "--help")
    assert result.returncode == 0, result.stderr
    lines = iter(result.stdout.splitlines())
    assert any(line.startswith("╭─ Commands ") for line in lines), result.stdout
    names: set[str] = set()
    for line in lines:
        if line.startswith("╰"):
            return names
        # "│ name   description │"; a description's continuation lines start with spaces.
        if match := re.match(r"│ (\S+) ", line):
            names.add(match[1])
    raise AssertionError(f"the Commands panel does not end:\n{result.stdout}")


def test_help_lists_every_command() -> None:
    assert help_commands() >= {"play", "replay", "serve", "host", "bot", "tournament"}
    assert help_commands("tournament") >= {"run", "resume", "report", "schedule"}
