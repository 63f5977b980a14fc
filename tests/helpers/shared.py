"""What several test files use: the small tournaments' bots and a played game's outcome, a bot
that hangs, a witness of a bot's decisions, and a ``python`` shim the sandbox cannot run."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from hearts_client.bot import Bot
from hearts_core.cards import Card
from hearts_core.rules import MoonChoice
from hearts_core.view import View
from hearts_tournaments.arena.outcome import GameOutcome
from hearts_tournaments.tournament.schedule import Schedule

#: The bots of the small real tournaments (a config's ``[[bots]]`` tables): built-ins, a careful
#: one and a random one.
CAREFUL_AND_DICE = """
[[bots]]
name = "careful"
builtin = "heuristic"

[[bots]]
name = "dice"
builtin = "random"
"""
#: The same and a second random bot.
CAREFUL_AND_TWO_DICE = (
    CAREFUL_AND_DICE
    + """
[[bots]]
name = "dice2"
builtin = "random"
"""
)


def outcome(
    schedule: Schedule, index: int, totals: list[int], retired: tuple[int, ...] = (), hands: int = 4
) -> GameOutcome:
    """The outcome of the schedule's game ``index`` as if played to ``totals`` (lowest wins),
    the seats in ``retired`` retired (five faults each)."""
    game = schedule.games[index]
    outcome = GameOutcome.clean(game.key, game.seats, totals, game_id=f"g{index}", hands=hands)
    if not retired:
        return outcome
    seats = range(len(totals))
    faults = tuple(5 if s in retired else 0 for s in seats)
    return replace(outcome, faults=faults, retired=tuple(s in retired for s in seats))


#: A bot process that joins and then never answers (its script's source).
HANG_BOT = """
import os
import time

from hearts_client import Bot, run
from hearts_client.sdk import read_token


class Hang(Bot):
    def choose_pass(self, view):
        time.sleep(3600)

    def choose_play(self, view):
        time.sleep(3600)


run(Hang(), os.environ["HEARTS_SERVER"], read_token(None, os.environ["HEARTS_TOKEN_FILE"]))
"""


class Witness:
    """Passes a bot's decisions through, checking each against its View: three cards passed,
    each held (copies counted), every play legal; counts them."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.passes = self.plays = 0

    def choose_pass(self, view: View) -> Sequence[Card]:
        cards = list(self.bot.choose_pass(view))
        assert len(cards) == 3
        hand = view.hand.copy()
        for card in cards:
            hand.remove(card)  # raises if not held (copies counted)
        self.passes += 1
        return cards

    def choose_play(self, view: View) -> Card:
        card = self.bot.choose_play(view)
        assert card in view.legal
        self.plays += 1
        return card

    def choose_moon(self, view: View) -> MoonChoice:
        return self.bot.choose_moon(view)


def shim_folder(tmp_path: Path) -> Path:
    """A folder whose ``python`` works outside the sandbox and not inside (as pyenv's shims): a
    script that execs a file in a folder the sandbox does not show."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    real = hidden / "realpython"
    real.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    real.chmod(0o755)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python").write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    (shims / "python").chmod(0o755)
    return shims
