"""Who sits next to whom, recounted from the printed schedule (`hearts tournament schedule`),
never from the project's own balance report: within a deal and across deals, at every table
size, with the default seating."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hearts_tournaments.cli import app

SIZES = range(6, 12)


def config_text(bots: int, size: int, deals: int, extra: str = "") -> str:
    entries = "\n".join(f'[[bots]]\nname = "b{i}"\nbuiltin = "random"\n' for i in range(bots))
    return f"[tournament]\ntable_size = {size}\ndeals = {deals}\n{extra}\n\n{entries}\n"


def printed_games(tmp_path: Path, bots: int, size: int, deals: int, extra: str = "") -> dict[str, list[tuple[str, ...]]]:
    """The games the schedule command prints, per deal: ``d003-r02  b1 b4 ...`` lines."""
    config = tmp_path / f"t{bots}-{size}-{deals}.toml"
    config.write_text(config_text(bots, size, deals, extra))
    result = CliRunner().invoke(app, ["tournament", "schedule", str(config)])
    assert result.exit_code == 0, result.output
    deals_games: dict[str, list[tuple[str, ...]]] = {}
    for line in result.stdout.splitlines():
        key, _, seats = line.partition("  ")
        if key.startswith("d") and "-r" in key and seats:
            deals_games.setdefault(key.split("-")[0], []).append(tuple(seats.split()))
    assert len(deals_games) == deals
    return deals_games


def lefts(games: list[tuple[str, ...]], offset: int) -> Counter[tuple[str, str]]:
    """Games in which the second bot sits ``offset`` seats left of the first."""
    return Counter((g[s], g[(s + offset) % len(g)]) for g in games for s in range(len(g)))


def check_latin(games: list[tuple[str, ...]]) -> None:
    size = len(games[0])
    assert len(games) == size
    bots = set(games[0])
    assert len(bots) == size
    for g in games:
        assert set(g) == bots
    for seat in range(size):
        assert {g[seat] for g in games} == bots  # every bot holds every seat once


#: The fewest ordered pairs of table-mates a deal's Latin square leaves outside "within one of
#: the mean" (left neighbours in 1 or 2 of the deal's n games) that the searches found: none at
#: even sizes; at odd sizes none is impossible (see the test below and bench/seating_layouts.py).
FEWEST_FOUND_OUTSIDE = {6: 0, 7: 4, 8: 0, 9: 6, 10: 0, 11: 10}


@pytest.mark.parametrize("size", SIZES)
def test_a_deals_games_give_every_table_mate_as_left_neighbour_within_one_of_the_mean(
    tmp_path: Path, size: int
) -> None:
    # As many bots as seats, and one more (a different bot sits out each deal): each deal
    # recounted on its own from the printed games.
    for bots, deals in ((size, 2), (size + 1, size + 1)):
        for deal, games in printed_games(tmp_path, bots, size, deals).items():
            check_latin(games)
            mates = sorted(set(games[0]))
            pairs = [(a, b) for a in mates for b in mates if a != b]
            # n games times n seats over n (n - 1) ordered pairs: the mean is n / (n - 1), in
            # 1..1.2, so within one of it means once or twice.
            counts = lefts(games, 1)
            assert sum(counts[p] for p in pairs) == size * size
            outside = [p for p in pairs if not 1 <= counts[p] <= 2]
            assert len(outside) <= FEWEST_FOUND_OUTSIDE[size], (deal, bots, outside)
            if size % 2 == 0:
                assert not outside
