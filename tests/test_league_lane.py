"""The priority lane of league matchmaking: a new or updated version plays its first blocks
before anything else, and games per entrant stay as even over a season as without it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hearts_tournaments.league.config import LeagueConfig, LeagueError
from hearts_tournaments.league.matchmaking import Candidate, choose_table, meeting_counts
from hearts_tournaments.league.store import LeagueStore
from tests.helpers.cli import hearts


def settled(n: int, blocks: int = 30) -> list[Candidate]:
    """``n`` active versions with settled ratings, each of its own entrant."""
    return [Candidate(f"e{i:03d}@v1", f"e{i:03d}", blocks + i % 3, 20.0 + i % 11, 1.5) for i in range(n)]


@pytest.mark.parametrize("entrants", [20, 100])
@pytest.mark.parametrize("seed", range(5))
def test_a_new_version_sits_at_the_first_block(entrants: int, seed: int) -> None:
    league = settled(entrants)
    new = Candidate("late@v1", "late", 0, 25.0, 25 / 3)
    seats = choose_table([*league, new], 8, {}, random.Random(seed), lane_blocks=2)
    assert new.id in seats
    # An updated version (v2 of a playing entrant, its v1 retired) takes the lane too.
    updated = Candidate("e005@v2", "e005", 0, 25.0, 25 / 3)
    rest = [c for c in league if c.entrant != "e005"]
    assert updated.id in choose_table([*rest, updated], 8, {}, random.Random(seed), lane_blocks=2)
    # The fewest blocks seat a lone new version first anyway; the lane holds whatever the sigmas:
    # in a young league (2 blocks each, ratings unsettled, so counted new_bonus blocks fewer), a
    # version whose rating settled in its first block still takes its second block at once.
    young = [Candidate(c.id, c.entrant, 2, c.mu, 8.0) for c in league]
    quick = Candidate("late@v1", "late", 1, 25.0, 3.5)
    assert quick.id in choose_table([*young, quick], 8, {}, random.Random(seed), lane_blocks=2)
    off = [choose_table([*young, quick], 8, {}, random.Random(s), lane_blocks=0) for s in range(20)]
    assert not any(quick.id in seats for seats in off)  # without the lane it waits


def blocks_until(
    league: list[Candidate], news: list[Candidate], lane_blocks: int, played: int
) -> dict[str, int]:
    """Blocks (counting from 1) until each new version played ``played`` blocks."""
    blocks = {c.id: c.blocks for c in [*league, *news]}
    info = {c.id: c for c in [*league, *news]}
    tables: list[tuple[str, ...]] = []
    reached: dict[str, int] = {}
    for number in range(1, 500):
        candidates = [Candidate(c.id, c.entrant, blocks[c.id], c.mu, c.sigma, c.side) for c in info.values()]
        seats = choose_table(
            candidates, 8, meeting_counts(tables), random.Random(number), lane_blocks=lane_blocks
        )
        tables.append(seats)
        for vid in set(seats):
            blocks[vid] += 1
        for c in news:
            if blocks[c.id] >= played and c.id not in reached:
                reached[c.id] = number
        if len(reached) == len(news):
            return reached
    raise AssertionError("the new versions never played")


@pytest.mark.parametrize("entrants", [20, 100])
def test_two_new_versions_both_play_within_two_blocks(entrants: int) -> None:
    news = [Candidate("new1@v1", "new1", 0, 25.0, 25 / 3), Candidate("new2@v1", "new2", 0, 25.0, 25 / 3)]
    assert max(blocks_until(settled(entrants), news, 2, 1).values()) <= 2
    # Two blocks each within the first few: the lane holds until lane_blocks were played.
    assert max(blocks_until(settled(entrants), news, 2, 2).values()) <= 4
    # Two versions of one entrant (update --keep) never share a table, even in the lane.
    kept = [Candidate("new1@v1", "new1", 0, 25.0, 25 / 3), Candidate("new1@v2", "new1", 0, 25.0, 25 / 3)]
    for seed in range(10):
        seats = choose_table([*settled(entrants), *kept], 8, {}, random.Random(seed), lane_blocks=2)
        assert seats.count("new1@v1") + seats.count("new1@v2") == 1
        assert "new1@v1" in seats  # the older upload first


@pytest.mark.parametrize("entrants", [20, 100])
def test_a_burst_of_uploads_plays_in_upload_order(entrants: int) -> None:
    """Twenty versions uploaded at once (a deadline rush) take the lane in upload order: the
    k-th plays in block k // 8 + 1, whatever their ratings."""
    rng = random.Random(3)
    news = [Candidate(f"n{k:02d}@v1", f"n{k:02d}", 0, rng.gauss(25, 5), 25 / 3) for k in range(20)]
    first = blocks_until(settled(entrants), news, 2, 1)
    assert [first[c.id] for c in news] == [k // 8 + 1 for k in range(20)]


def season(lane_blocks: int, entrants: int, blocks: int) -> tuple[int, dict[str, int], list[tuple[str, ...]]]:
    """A season of pure matchmaking with arrivals: a fifth of the entrants start, the others
    are added one by one; returns the worst max-min spread of blocks per entrant over the
    versions who were present since the same block, the final counts and the tables."""
    rng = random.Random(7)
    arrive = {f"e{i:03d}": 0 if i < entrants // 5 else rng.randrange(1, blocks // 2) for i in range(entrants)}
    mu = {e: rng.gauss(25, 4) for e in arrive}
    played: dict[str, int] = {}
    tables: list[tuple[str, ...]] = []
    for number in range(blocks):
        for e, at in arrive.items():
            if at == number:
                played[f"{e}@v1"] = 0
        candidates = [
            Candidate(v, v.split("@")[0], n, mu[v.split("@")[0]], 8.0 if n < 8 else 2.0)
            for v, n in played.items()
        ]
        seats = choose_table(
            candidates, 8, meeting_counts(tables), random.Random(f"{number}"), lane_blocks=lane_blocks
        )
        tables.append(seats)
        for v in set(seats):
            played[v] += 1
    # Versions that arrived at one block are comparable: the spread within each cohort.
    worst = 0
    for at in set(arrive.values()):
        cohort = [played[f"{e}@v1"] for e, a in arrive.items() if a == at]
        worst = max(worst, max(cohort) - min(cohort))
    return worst, played, tables


@pytest.mark.timeout(120)
def test_the_lane_keeps_games_per_entrant_as_even_over_a_season() -> None:
    for entrants in (20, 60):
        without, played_off, _ = season(0, entrants, 400)
        with_lane, played_on, tables = season(2, entrants, 400)
        assert with_lane <= without, (entrants, with_lane, without)
        # Overall spread at the season's end (late arrivals included) no wider either.
        assert max(played_on.values()) - min(played_on.values()) <= max(played_off.values()) - min(
            played_off.values()
        )
        # Every table is full and holds no entrant twice: each block is one deal in every
        # rotation of its seats, so duplicate rotations are as they were.
        assert all(len(t) == 8 and len({v.split("@")[0] for v in set(t)}) == len(set(t)) for t in tables)
        assert sum(len(set(t)) == 8 for t in tables) > 350


def test_lane_blocks_out_of_bounds_is_one_clear_line() -> None:
    assert LeagueConfig().lane_blocks == 2
    assert LeagueConfig(lane_blocks=0).lane_blocks == 0
    for bad in (-1, 9):
        with pytest.raises(LeagueError) as caught:
            LeagueConfig(lane_blocks=bad)
        message = str(caught.value)
        assert "\n" not in message and "lane-blocks must be 0 (no lane) to provisional-blocks (8)" in message
        assert f"not {bad}" in message
    assert LeagueConfig(provisional_blocks=3, lane_blocks=3).lane_blocks == 3
    with pytest.raises(LeagueError, match="lane-blocks"):
        LeagueConfig.from_json({**LeagueConfig().to_json(), "lane_blocks": 20})


def test_init_refuses_a_lane_out_of_bounds_in_one_line(tmp_path: Path) -> None:
    refused = hearts("league", "init", str(tmp_path / "l"), "--lane-blocks", "9")
    assert refused.returncode != 0 and refused.stderr.count("\n") == 1, refused.stderr
    assert "lane-blocks must be 0 (no lane) to provisional-blocks (8), not 9" in refused.stderr
    assert not (tmp_path / "l").exists() or not any((tmp_path / "l").iterdir())
    made = hearts("league", "init", str(tmp_path / "ok"), "--lane-blocks", "0")
    assert made.returncode == 0, made.stderr
    with LeagueStore.open(tmp_path / "ok", read_only=True) as store:
        assert store.config.lane_blocks == 0
