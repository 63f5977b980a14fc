"""Seating designs (``schedule/base.py``: one :class:`SeatingDesign` per :class:`SeatingMode`)
seat every schedule exactly as the ``if seating is ...`` chains they replaced did.

The digests below were recorded from the schedule code before the designs existed (commit
72a466c): every stored schedule and every generated seating must stay byte-identical, for
each mode, a few table sizes, as many bots as seats, more, fewer, without duplicate deals and
with an older schedule design. A design registered by half (a mode without a design, a design
under another mode's name, a mode the docs or the config do not name) fails here too.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from hearts_tournaments.tournament.schedule import (
    SEATING_DESIGNS,
    SeatingMode,
    game_positions,
    make_schedule,
    per_deal_neighbours,
    seating_design,
)
from tests.conftest import ROOT

#: ``mode table_size bots deals duplicate design``: the digest of the stored schedule and its games.
SCHEDULES = {
    "rotate 6 8 8 True 3": "fe0a061ede1e1d86",
    "rotate 7 9 9 True 3": "0ee97f0ae9e350b9",
    "rotate 8 10 10 True 3": "e3b787c55098774c",
    "rotate 9 11 11 True 3": "827b00ed1a891b68",
    "rotate 11 13 13 True 3": "39ded46d103cddae",
    "rotate 8 8 3 True 3": "3af058718df92ad7",
    "rotate 11 11 3 True 3": "08e2faa0f6231035",
    "rotate 6 4 3 True 3": "7ef716943aa7e184",
    "rotate 7 9 9 False 3": "c50f5f3429bd0476",
    "rotate 9 11 11 True 1": "2d6db5f36f129190",
    "permute 6 8 8 True 3": "21ef9b8401697a88",
    "permute 7 9 9 True 3": "37e3c9f6fe490379",
    "permute 8 10 10 True 3": "5a4c5d3e86112263",
    "permute 9 11 11 True 3": "679e15de4abf064b",
    "permute 11 13 13 True 3": "ed2ebaacbb519079",
    "permute 8 8 3 True 3": "957a5389cafc38c8",
    "permute 11 11 3 True 3": "5e6dbc279045bcf6",
    "permute 6 4 3 True 3": "7ef716943aa7e184",
    "permute 7 9 9 False 3": "16cfff3c8c563bf0",
    "permute 9 11 11 True 1": "679a790ff48730e6",
    "balanced 6 8 8 True 3": "f1a8b82670005617",
    "balanced 7 9 9 True 3": "c01329ecfae0bf62",
    "balanced 8 10 10 True 3": "9ddf7e56ae4fb0a0",
    "balanced 9 11 11 True 3": "1f9bc9566a35906a",
    "balanced 11 13 13 True 3": "3a9b1d39dde96350",
    "balanced 8 8 3 True 3": "08911f023bcbd388",
    "balanced 11 11 3 True 3": "dbedb1422e00cf5a",
    "balanced 6 4 3 True 3": "7ef716943aa7e184",
    "balanced 7 9 9 False 3": "db161fd1c0b48994",
    "balanced 9 11 11 True 1": "37808d0bf0c2aa0c",
}
#: Per mode: the digest of :func:`game_positions` at 2..12 seats, with and without duplicate.
POSITIONS = {
    "rotate": "64b7e263e430cbb5",
    "permute": "6542888d1fef439a",
    "balanced": "3a2bca4833db6a95",
}
#: Per mode: the digest of the balance report's per-deal neighbour line at 3..11 seats.
NOTES = {
    "rotate": "aebba9dab5bbc4f0",
    "permute": "299c02cf552adc23",
    "balanced": "d92b1a868e57eb95",
}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", list(SCHEDULES))
def test_every_schedule_is_seated_as_before(case: str) -> None:
    mode, n, b, deals, duplicate, design = case.split()
    schedule = make_schedule(
        [f"b{i}" for i in range(int(b))],
        int(n),
        int(deals),
        "golden",
        duplicate=duplicate == "True",
        seating=SeatingMode(mode),
        design=int(design),
    )
    games = [[g.key, list(g.seats)] for g in schedule.games]
    assert _digest([schedule.to_json(), games]) == SCHEDULES[case]


@pytest.mark.parametrize("mode", list(SeatingMode))
def test_every_mode_lays_out_a_deal_and_reports_it_as_before(mode: SeatingMode) -> None:
    positions = [game_positions(n, d, mode) for n in range(2, 13) for d in (True, False)]
    assert _digest(positions) == POSITIONS[mode.value]
    assert _digest([per_deal_neighbours(n, mode) for n in range(3, 12)]) == NOTES[mode.value]


def test_every_mode_has_a_design_registered_under_its_name() -> None:
    assert set(SEATING_DESIGNS) == set(SeatingMode)
    for mode, design in SEATING_DESIGNS.items():
        assert design.mode is mode and seating_design(mode) is design
        assert type(design).__doc__, f"{type(design).__name__}: say what the {mode.value} seating does"


@pytest.mark.parametrize("mode", list(SeatingMode))
def test_every_design_is_a_latin_square_of_positions(mode: SeatingMode) -> None:
    for n in range(2, 13):
        games = seating_design(mode).positions(n)
        assert len(games) == n, (mode, n)
        for game in games:  # every game seats every position once
            assert sorted(game) == list(range(n)), (mode, n, game)
        for seat in range(n):  # every position holds every seat once over the deal
            assert sorted(game[seat] for game in games) == list(range(n)), (mode, n, seat)


def test_the_docs_describe_every_seating_mode() -> None:
    text = (ROOT / "docs" / "TOURNAMENTS.md").read_text(encoding="utf-8")
    described = set(re.findall(r'^- `seating = "([a-z_]+)"`', text, flags=re.M))
    assert described == {mode.value for mode in SeatingMode}
